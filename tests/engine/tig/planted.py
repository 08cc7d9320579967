"""Synthetic task populations with known clichés, for the TIG tests and benchmark.

Every idea reads "<Subject> <verb>ing into <object>, symbolising <purpose>." with its own subject, object
and purpose, so nothing recurs by accident; a planted motif replaces the object in the ideas chosen to
carry it, phrased differently each time.
"""

from __future__ import annotations

MODELS = tuple(f"model-{i:02d}" for i in range(14))
SAMPLES = (1, 2, 3)

SUBJECTS = (
    "a paper boat",
    "a teacup",
    "an hourglass",
    "a violin",
    "a kite",
    "a snail shell",
    "a subway map",
    "a beehive",
    "a chess board",
    "a typewriter",
    "a bonsai tree",
    "a pocket watch",
    "a glass jar",
    "an origami crane",
    "a bicycle wheel",
    "a spiral staircase",
    "a brass compass",
    "a tea kettle",
    "a library ladder",
    "an umbrella",
    "a chandelier",
    "a vinyl record",
    "a fishing net",
    "a patchwork quilt",
    "a birdcage",
    "a telescope",
    "a windmill",
    "a sandcastle",
    "a ferris wheel",
    "a mailbox",
    "a spool of thread",
    "a pair of scissors",
    "a greenhouse",
    "a harbour crane",
    "a paintbrush",
    "a loaf of bread",
    "a rusty key",
    "a sewing machine",
    "a diving helmet",
    "a piano",
    "a weather vane",
    "a chalkboard",
    "a porcelain doll",
    "a rowing boat",
)
OBJECTS = (
    "a mailbox of letters",
    "a flock of swallows",
    "a coral reef",
    "a desert caravan",
    "a wheat field",
    "a marble staircase",
    "a circus tent",
    "a honeycomb",
    "a glacier",
    "a circuit board",
    "a cathedral",
    "a river delta",
    "a termite mound",
    "a volcano",
    "a jazz trumpet",
    "a chess knight",
    "a pinecone",
    "a bowl of noodles",
    "a hot air balloon",
    "a pomegranate",
    "a rice paddy",
    "a carousel horse",
    "a stack of books",
    "a rope bridge",
    "a pearl necklace",
    "a tangle of roots",
    "a swarm of fireflies",
    "a paper lantern",
    "a cactus",
    "a barn owl",
    "a suspension bridge",
    "a mushroom ring",
    "a clock tower",
    "a sunflower",
    "a fishing village",
    "a train station",
    "a wedding cake",
    "an anthill",
    "a kelp forest",
    "a rocking chair",
    "a beetle shell",
    "a harp",
)
PURPOSES = (
    "quiet resilience",
    "the weight of memory",
    "shared grief",
    "patience",
    "renewal after loss",
    "curiosity",
    "belonging",
    "fragile trust",
    "stubborn joy",
    "the cost of speed",
    "forgotten labour",
    "collective courage",
    "inherited knowledge",
    "solitude",
    "generosity",
    "playful rebellion",
    "tenderness",
    "ambition",
    "homesickness",
    "wonder at small things",
    "slow healing",
    "civic pride",
    "friendship",
    "hidden strength",
    "gratitude",
    "nostalgia",
    "the passing of seasons",
    "hospitality",
    "discipline",
    "migration",
    "forgiveness",
    "craftsmanship",
    "mischief",
    "devotion",
    "scarcity",
    "abundance",
    "balance",
    "anticipation",
    "the thrill of discovery",
    "humility",
    "mutual aid",
    "restlessness",
)
VERBS = ("melting", "dissolving", "unfolding", "folding", "splitting", "morphing", "crumbling")

LIGHTHOUSE = ("a lighthouse", "the old lighthouse", "lighthouses", "a lone lighthouse", "a lighthouse tower")


def idea_text(index: int, obj: str | None = None) -> str:
    subject = SUBJECTS[index % len(SUBJECTS)]
    verb = VERBS[index % len(VERBS)]
    target = obj if obj is not None else OBJECTS[index % len(OBJECTS)]
    purpose = PURPOSES[index % len(PURPOSES)]
    return f"{subject[0].upper()}{subject[1:]} {verb} into {target}, symbolising {purpose}."


def planted_population(
    *,
    motif: tuple[str, ...] = LIGHTHOUSE,
    carriers: tuple[str, ...] = MODELS[:10],
    task: str = "task-calm",
    offset: int = 0,
) -> list[dict]:
    """14 models x 3 samples; sample 1 of every carrier model uses ``motif`` (paraphrases in turn)."""
    ideas = []
    k = 0
    for mi, model in enumerate(MODELS):
        for sample in SAMPLES:
            index = offset + mi * len(SAMPLES) + sample - 1
            obj = None
            if model in carriers and sample == 1:
                obj = motif[k % len(motif)]
                k += 1
            ideas.append({"model": model, "sample": sample, "core_idea": idea_text(index, obj), "task": task})
    return ideas


class TableEmbedder:
    """Embeds labels by a hand-written table of vectors (unit-normalised); an unknown label gets the axis
    ``sum(ord) mod dim``. Records every call."""

    backend = "table"
    model = "hand"

    def __init__(self, vectors: dict[str, list[float]] | None = None, dim: int = 8):
        self.vectors = vectors or {}
        self.dim = dim
        self.calls: list[list[str]] = []

    def embed(self, texts):
        import numpy as np

        from engine.embed import l2_normalise

        self.calls.append(list(texts))
        rows = []
        for t in texts:
            if t in self.vectors:
                v = list(self.vectors[t]) + [0.0] * (self.dim - len(self.vectors[t]))
            else:
                v = [0.0] * self.dim
                v[sum(map(ord, t)) % self.dim] = 1.0
            rows.append(v)
        return l2_normalise(np.asarray(rows, dtype=np.float32).reshape(-1, self.dim))


class ScriptedExtractor:
    """Returns hand-written atoms per response id (``{response_id: [(type, label), ...]}``) plus optional
    relations ``{response_id: [(source, relation, target), ...]}``; records which responses it saw."""

    name = "scripted"

    def __init__(self, atoms: dict, relations: dict | None = None):
        self.atoms = atoms
        self.relations = relations or {}
        self.seen: list[str] = []

    def extract(self, idea):
        from engine.tig.atoms import Atom, Relation, ResponseAtoms

        self.seen.append(idea.response_id)
        return ResponseAtoms(
            response_id=idea.response_id,
            model=idea.model,
            task=idea.task,
            sample=idea.sample,
            extractor=self.name,
            atoms=[Atom(t, label) for t, label in self.atoms.get(idea.response_id, [])],
            relations=[Relation(s, r, t) for s, r, t in self.relations.get(idea.response_id, [])],
        )


def hand_graph():
    """Four responses, three models: r0, r1 (m0, m1) have motifs "aa" and "bb" (cos 0.9); r2 and r3 (both
    m2) have motif "cc", and r3 adds purpose "pp" with "cc supports pp". No synonym merging."""
    import math

    from engine.tig.atoms import Atom, AtomTable, Relation, ResponseAtoms
    from engine.tig.canonical import EmbeddingCanonicaliser, canonicalise
    from engine.tig.graph import build_graph

    exts = [
        ResponseAtoms("r0", "m0", "t", 1, "x", [Atom("motif", "aa"), Atom("motif", "bb")]),
        ResponseAtoms("r1", "m1", "t", 1, "x", [Atom("motif", "aa"), Atom("motif", "bb")]),
        ResponseAtoms("r2", "m2", "t", 1, "x", [Atom("motif", "cc")]),
        ResponseAtoms(
            "r3",
            "m2",
            "t",
            2,
            "x",
            [Atom("motif", "cc"), Atom("purpose", "pp")],
            [Relation(0, "supports", 1)],
        ),
    ]
    vectors = {"aa": [1, 0], "bb": [0.9, math.sqrt(1 - 0.81)], "cc": [0, 1], "pp": [0, 1]}
    table = AtomTable.build(exts, TableEmbedder(vectors).embed, task="t")
    return build_graph(canonicalise(table, EmbeddingCanonicaliser(threshold=1.01)))
