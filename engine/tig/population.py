"""Leave-two-models-out Typed Idea Graphs for judged pairs (Ekphrasis §4.2, App. G.5, Algorithm 3).

For a judged pair q = {m_a, m_b} on task t the reference population is every sample of every other model
(with 14 models x 3 samples: 36 ideas). Neither candidate's atoms may influence the graph, the clusters,
the scores or the item wording, so everything population-dependent -- canonicalisation, graph, clusters,
scores, labels, items -- is computed on the reference responses only.

Work that does not depend on the population is done once per response and reused by every context that
includes it: :class:`PopulationIndex` extracts each response's atoms and embeds each distinct atom label
once per task, keeps them in an :class:`~engine.tig.atoms.AtomTable`, and builds a context by slicing that
table. Contexts are built lazily (only for the pairs asked for) and cached by
``(task, pair, population version)``. :class:`TIGWorkspace` holds the indexes of many tasks, shares the
per-response extraction store and the embedder between them, and offers the generic-anchor ablation mode.

Entry point for one population: :func:`cliche_clusters`.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.tig.atoms import ATOM_TYPES, AtomTable, Extractor, IdeaRecord, ResponseAtoms, idea_record
from engine.tig.canonical import CANONICAL_MERGE_THRESHOLD, Canonicaliser, canonicalise
from engine.tig.checklist import (
    MATERIALISED_TYPES,
    MIN_MODELS,
    ChecklistItem,
    generic_novelty_items,
    materialise_items,
)
from engine.tig.clusters import LEIDEN_SEED, same_type_labels
from engine.tig.graph import IdeaGraph, build_graph, cluster_members_explained, graph_export
from engine.tig.leaveout import LeaveOutBasis
from engine.tig.offline import OfflineExtractor
from engine.tig.score import Cluster, ScoredClusters, score_partition

__all__ = [
    "ENGINE_VERSION",
    "NoveltyContext",
    "PopulationIndex",
    "Progress",
    "TIGWorkspace",
    "cliche_clusters",
    "extraction_key",
    "load_compiled_kernels",
    "pair_context_key",
    "population_version",
]

# Bump when extraction rules, canonicalisation or scoring change: it is part of every population version.
# tig-2: every alias within the canonicalisation threshold of its label (canonical.alias_split).
# tig-3: Conv(C) over a cluster's canonical atoms, as App. G.3 writes it (input atoms only for a single atom).
ENGINE_VERSION = "tig-3"
# Django's ChecklistItem.context_key is a CharField(max_length=100)
_CONTEXT_KEY_MAX = 100

Progress = Callable[[str, int, int], None]
"""Progress hook ``progress(stage, done, total)``; stages ``"extract"``, ``"embed"``, ``"context"``."""


# Leiden results kept per task: a task has 91 pairs x 5 types of subgraphs at most, plus re-partitions
_LEIDEN_MEMO_MAX = 2048


class _BoundedMemo(OrderedDict):
    """A dict that drops its oldest entry beyond ``limit`` entries."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        if len(self) > self.limit:
            self.popitem(last=False)


def _embedder_name(embedder: Any) -> str:
    return f"{getattr(embedder, 'backend', type(embedder).__name__)}:{getattr(embedder, 'model', '')}"


def _embed_function(embedder: Any) -> Callable[[Sequence[str]], np.ndarray]:
    if embedder is None:
        from engine.embed import text_embedder

        return text_embedder("minilm").embed
    if hasattr(embedder, "embed"):
        return embedder.embed
    if callable(embedder):
        return embedder
    raise TypeError(f"embedder must have .embed(texts) or be callable, got {embedder!r}")


def extraction_key(extractor_name: str, idea: IdeaRecord) -> str:
    """Store key of one response's extraction: extractor, response id and a hash of its Core Idea. A provider
    extractor's name carries its prompt's version (:class:`engine.tig.llm.LLMExtractor`), so an extraction
    made with another prompt has another key and is never read back as this prompt's."""
    digest = hashlib.sha256(idea.core_idea.encode("utf-8")).hexdigest()[:16]
    return f"{extractor_name}|{idea.response_id}|{digest}"


def population_version(
    ideas: Iterable[IdeaRecord], *, extractor: str, embedder: str, canonicaliser: str = "embedding"
) -> str:
    """A short hash of everything a task's contexts depend on: the responses (ids and Core Ideas), the
    extractor, the embedder, the canonicaliser and :data:`ENGINE_VERSION`."""
    h = hashlib.sha256()
    for part in (ENGINE_VERSION, extractor, embedder, canonicaliser):
        h.update(part.encode())
        h.update(b"\x1e")
    for idea in sorted(ideas, key=lambda i: i.response_id):
        h.update(f"{idea.response_id}\x1f{idea.model}\x1f{idea.sample}\x1f{idea.core_idea}\x1e".encode())
    return h.hexdigest()[:16]


def pair_context_key(pair: Sequence[str]) -> str:
    """``"m_a|m_b"`` with the two models sorted; a hash if that exceeds 100 characters."""
    a, b = sorted(str(m) for m in pair)
    key = f"{a}|{b}"
    if len(key) <= _CONTEXT_KEY_MAX:
        return key
    return "pair-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def _normal_pair(pair: Sequence[str]) -> tuple[str, str]:
    models = tuple(sorted(str(m) for m in pair))
    if len(models) != 2:
        raise ValueError(f"a judged pair has two models, got {pair!r}")
    return models[0], models[1]


@dataclass
class NoveltyContext:
    """The Novelty anchors of one judged pair on one task: ranked clusters and materialised items built on
    the leave-two-models-out reference population (``reference_models``, ``n_reference_ideas``).

    ``clusters`` are built from ``scored`` on first access (most contexts only ever need their items);
    ``scored`` itself -- every type's clusters -- is computed on first access: a context's items need only
    the clusters of :data:`~engine.tig.checklist.MATERIALISED_TYPES`, which are the same whether or not
    the other types are clustered (:func:`~engine.tig.clusters.same_type_labels`, ``only_types``)."""

    task: str
    pair: tuple[str, str]
    context_key: str
    population_version: str
    mode: str  # "tig" or "generic"
    reference_models: list[str]
    n_reference_ideas: int
    _scored: ScoredClusters | None = field(default=None, repr=False)
    items: list[ChecklistItem] = field(default_factory=list)
    graph: IdeaGraph | None = field(default=None, repr=False)
    _build_scored: Callable[[], ScoredClusters] | None = field(default=None, repr=False, compare=False)

    @property
    def scored(self) -> ScoredClusters | None:
        """Every cluster of the reference graph, scored (computed on first access)."""
        if self._scored is None and self._build_scored is not None:
            self._scored, self._build_scored = self._build_scored(), None
        return self._scored

    @property
    def clusters(self) -> list[Cluster]:
        """Every cluster of the reference graph, ClicheScore order."""
        return self.scored.ranked() if self.scored is not None else []

    @property
    def anchor(self) -> ChecklistItem | None:
        """The slot-1 Novelty item (App. E.3), or None when no cluster qualified."""
        return self.items[0] if self.items else None

    def to_dict(self, *, with_models: bool = True) -> dict[str, Any]:
        return {
            "task": self.task,
            "pair": list(self.pair),
            "context_key": self.context_key,
            "population_version": self.population_version,
            "mode": self.mode,
            "reference_models": list(self.reference_models) if with_models else len(self.reference_models),
            "n_reference_ideas": self.n_reference_ideas,
            "clusters": [c.to_dict(with_models=with_models) for c in self.clusters],
            "items": [i.to_dict() for i in self.items],
        }


class PopulationIndex:
    """One task's responses, extracted and embedded once; builds leave-out contexts on demand.

    ``ideas``: records with ``model``, ``sample``, ``core_idea`` (dicts or objects; optional ``task``,
    ``response_id``, ``brief``). ``extractor`` defaults to the offline rules, ``embedder`` to offline
    MiniLM, ``canonicaliser`` to embedding grouping. ``extractions`` is a mutable mapping used as the
    per-response store (read before extracting, written after): pass the same mapping to several indexes,
    or a persistent one, to extract each response once across tasks and runs. ``version`` overrides the
    computed :func:`population_version`. ``progress(stage, done, total)`` is called during extraction and
    embedding. ``max_contexts`` bounds the context cache (least recently used dropped first).
    ``reuse``: build each population's canonicalisation and graph from the task's
    :class:`~engine.tig.leaveout.LeaveOutBasis` and read Leiden results back from the task's memo (the
    same results, bit for bit); ``False`` builds every population from its own table alone, sharing
    nothing with the task's other populations.
    """

    def __init__(
        self,
        ideas: Iterable[Any],
        *,
        task: str = "",
        brief: str = "",
        extractor: Extractor | None = None,
        embedder: Any = None,
        canonicaliser: Canonicaliser | None = None,
        extractions: MutableMapping[str, ResponseAtoms] | None = None,
        version: str | None = None,
        progress: Progress | None = None,
        clustering: str = "leiden",
        seed: int = LEIDEN_SEED,
        max_contexts: int | None = 4096,
        reuse: bool = True,
    ) -> None:
        records = [idea_record(i, task=task, brief=brief) for i in ideas]
        records.sort(key=lambda r: (r.model, str(r.sample), r.response_id))
        if len({r.response_id for r in records}) != len(records):
            raise ValueError("two ideas share a response id")
        self.task = task or (records[0].task if records else "")
        self.brief = brief
        self.ideas = records
        self.extractor: Extractor = extractor or OfflineExtractor()
        self.canonicaliser = canonicaliser
        # every alias is within this cosine of its canonical label (engine.tig.canonical.alias_split)
        self.alias_threshold = float(getattr(canonicaliser, "threshold", CANONICAL_MERGE_THRESHOLD))
        self.clustering = clustering
        self.seed = seed
        self._embed = _embed_function(embedder)
        self.embedder_name = _embedder_name(embedder) if embedder is not None else "minilm:" + _minilm_name()
        canon_name = getattr(canonicaliser, "name", "embedding") if canonicaliser is not None else "embedding"
        self.version = version or population_version(
            records, extractor=self.extractor.name, embedder=self.embedder_name, canonicaliser=canon_name
        )
        self.extractions: MutableMapping[str, ResponseAtoms] = extractions if extractions is not None else {}
        self._contexts: OrderedDict[tuple[str, str, str, int], NoveltyContext] = OrderedDict()
        self.max_contexts = max_contexts
        # Leiden labels by exact same-type subgraph input, shared by this task's leave-out populations
        # (engine.tig.clusters.same_type_labels, memo); bounded like the contexts
        self._leiden_memo: _BoundedMemo = _BoundedMemo(_LEIDEN_MEMO_MAX)
        extracted = self._extract_all(progress)
        if progress:
            progress("embed", 0, 1)
        self.table = AtomTable.build(extracted, self._embed, task=self.task)
        if progress:
            progress("embed", 1, 1)
        self.models = sorted(set(self.table.models))
        self.reuse = reuse
        self._basis: LeaveOutBasis | None = None

    def _extract_all(self, progress: Progress | None) -> list[ResponseAtoms]:
        keys = [extraction_key(self.extractor.name, idea) for idea in self.ideas]
        missing = [i for i, key in enumerate(keys) if self.extractions.get(key) is None]
        total = len(self.ideas)
        if progress:
            progress("extract", total - len(missing), total)
        if missing and hasattr(self.extractor, "extract_many"):
            # one concurrent batch (provider extractors); stored before anything else can fail
            for i, ext in zip(missing, self.extractor.extract_many([self.ideas[i] for i in missing])):
                self.extractions[keys[i]] = ext
            if progress:
                progress("extract", total, total)
        else:
            for done, i in enumerate(missing, start=total - len(missing) + 1):
                self.extractions[keys[i]] = self.extractor.extract(self.ideas[i])
                if progress:
                    progress("extract", done, total)
        return [self.extractions[key] for key in keys]

    # -- populations ---------------------------------------------------------------------------------

    def _keep(self, exclude_models: Iterable[str]) -> np.ndarray:
        excluded = set(exclude_models)
        return np.asarray([m not in excluded for m in self.table.models], dtype=bool)

    def reference_table(self, exclude_models: Iterable[str] = ()) -> AtomTable:
        """The atom table of every response whose model is not excluded."""
        return self.table.subset(self._keep(exclude_models))

    @property
    def basis(self) -> LeaveOutBasis:
        """The task-level tables every leave-out population slices (built on first use)."""
        if self._basis is None:
            self._basis = LeaveOutBasis(self.table, self.alias_threshold)
        return self._basis

    def graph(self, exclude_models: Iterable[str] = ()) -> IdeaGraph:
        """The Typed Idea Graph of the population without ``exclude_models``."""
        keep = self._keep(exclude_models)
        table = self.table.subset(keep)
        if not self.reuse:
            return build_graph(canonicalise(table, self.canonicaliser))
        pairs = self.basis.pair_table(keep[self.table.response])
        return build_graph(canonicalise(table, self.canonicaliser, pairs=pairs))

    def scored_clusters(
        self, exclude_models: Iterable[str] = (), *, graph: IdeaGraph | None = None,
        only_types: Sequence[str] | None = None,
    ) -> tuple[ScoredClusters, IdeaGraph]:
        """Every cluster of the population without ``exclude_models``, scored (compact), and the graph;
        ``only_types``: cluster only those types (every other node a singleton: enough for items)."""
        graph = graph if graph is not None else self.graph(exclude_models)
        codes = None if only_types is None else {ATOM_TYPES.index(t) for t in only_types}
        labels = same_type_labels(graph.weight, graph.canon.node_type, method=self.clustering, seed=self.seed,
                                  only_types=codes, memo=self._leiden_memo if self.reuse else None)
        return score_partition(graph, labels), graph

    def clusters(self, exclude_models: Iterable[str] = ()) -> tuple[list[Cluster], IdeaGraph]:
        """Ranked clusters (ClicheScore, highest first) and the graph they came from."""
        scored, graph = self.scored_clusters(exclude_models)
        return scored.ranked(), graph

    def context(self, pair: Sequence[str], *, top_k: int = 3, keep_graph: bool = False) -> NoveltyContext:
        """The leave-two-models-out context of ``pair`` (Algorithm 3, lines 4-8), cached by
        (task, pair, population version, top_k)."""
        a, b = _normal_pair(pair)
        cache_key = (a, b, self.version, top_k)
        hit = self._contexts.get(cache_key)
        if hit is not None and (hit.graph is not None or not keep_graph):
            self._contexts.move_to_end(cache_key)
            return hit
        # Items need only the materialised types' clusters; the rest is clustered if someone asks.
        item_clusters, graph = self.scored_clusters((a, b), only_types=MATERIALISED_TYPES)
        context_key = pair_context_key((a, b))
        ctx = NoveltyContext(
            task=self.task,
            pair=(a, b),
            context_key=context_key,
            population_version=self.version,
            mode="tig",
            reference_models=list(graph.models),
            n_reference_ideas=graph.n_responses,
            items=materialise_items(
                item_clusters.iter_ranked(types=MATERIALISED_TYPES, min_models=MIN_MODELS, distinct_labels=True),
                task=self.task,
                context_key=context_key,
                population_version=self.version,
                top_k=top_k,
            ),
            graph=graph if keep_graph else None,
            _build_scored=(lambda: self.scored_clusters((a, b), graph=graph)[0]) if keep_graph
            else (lambda: self.scored_clusters((a, b))[0]),
        )
        if self.max_contexts is None or self.max_contexts > 0:
            self._contexts[cache_key] = ctx
            if self.max_contexts is not None and len(self._contexts) > self.max_contexts:
                self._contexts.popitem(last=False)
        return ctx

    def contexts(
        self, pairs: Iterable[Sequence[str]], *, top_k: int = 3, progress: Progress | None = None
    ) -> list[NoveltyContext]:
        """Contexts for many pairs (cached ones are reused); ``progress("context", done, total)``."""
        pairs = list(pairs)
        out = []
        for i, pair in enumerate(pairs):
            out.append(self.context(pair, top_k=top_k))
            if progress:
                progress("context", i + 1, len(pairs))
        return out

    def viewer_data(self, pair: Sequence[str] | None = None, *, layout_seed: int = 0) -> dict[str, Any]:
        """Graph nodes/edges with a spring layout, ranked clusters and items for the TIG viewer; ``pair=None``
        shows the whole task population (no items: items exist only per judged pair)."""
        if pair is None:
            clusters, graph = self.clusters(())
            items: list[ChecklistItem] = []
            key = ""
        else:
            ctx = self.context(pair, keep_graph=True)
            clusters, graph, items, key = ctx.clusters, ctx.graph, ctx.items, ctx.context_key
        data = graph_export(graph, clusters, layout_seed=layout_seed)
        cluster_rows = []
        for c in clusters:
            row = c.to_dict()
            row["member_atoms"] = cluster_members_explained(graph, c)
            cluster_rows.append(row)
        data.update(
            task=self.task,
            context_key=key,
            population_version=self.version,
            alias_threshold=self.alias_threshold,
            clusters=cluster_rows,
            items=[i.to_dict() for i in items],
        )
        return data


def _minilm_name() -> str:
    from engine.embed import MINILM_MODEL_NAME

    return MINILM_MODEL_NAME


def cliche_clusters(
    ideas: Iterable[Any],
    *,
    exclude_models: Iterable[str] = (),
    extractor: Extractor | None = None,
    embedder: Any = None,
) -> list[Cluster]:
    """Ranked population-cliché clusters of ``ideas`` without ``exclude_models`` (Ekphrasis App. G.3-G.5).

    ``ideas`` are records with ``model``, ``sample``, ``core_idea`` (dicts or objects). Excluded models'
    ideas are dropped before anything else, so they are never extracted, embedded or seen. ``extractor=None``
    is the offline rule extractor, ``embedder=None`` the offline MiniLM embedder. Each :class:`Cluster` has
    ``type``, ``label``, ``aliases``, ``score``, ``model_coverage``, ``centrality``, ``convergence``;
    sorted by score, highest first.
    """
    excluded = {str(m) for m in exclude_models}
    records = [idea_record(i) for i in ideas]
    kept = [r for r in records if r.model not in excluded]
    if not kept:
        return []
    index = PopulationIndex(kept, extractor=extractor, embedder=embedder, max_contexts=0)
    clusters, _ = index.clusters(())
    return clusters


#: Four models' ideas that share a subject, a cliché and a relation: enough for a context whose graph has
#: co-occurrences, same-type similarities and typed relations, so every compiled kernel is reached.
_KERNEL_PROBE_IDEAS = tuple(
    {"model": model, "sample": 1, "core_idea": f"A lighthouse keeper turns into a {thing} beside a red door, "
                                                f"symbolising hope, for children."}
    for model, thing in (("m1", "paper crane"), ("m2", "paper crane"), ("m3", "glass whale"), ("m4", "stone owl"))
)


def _probe_embedding(texts: Sequence[str]) -> np.ndarray:
    """A fixed unit vector per text from its letters' counts (no model to load): similar texts come out close."""
    out = np.zeros((len(texts), 26))
    for row, text in enumerate(texts):
        for ch in text.lower():
            if "a" <= ch <= "z":
                out[row, ord(ch) - 97] += 1.0
    out[:, 0] += 1.0  # no all-zero row
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def load_compiled_kernels() -> None:
    """Load the compiled kernels of a Novelty context (``engine.tig.graph_kernel``, ``engine.tig.score_kernel``)
    into this process by building one context of four made-up ideas. A process's first context otherwise loads
    them from numba's disk cache (or compiles them, the first time on a machine): a Celery worker does it once
    before it forks its pool, rather than each forked process on its first chunk at a run's start."""
    index = PopulationIndex(_KERNEL_PROBE_IDEAS, task="kernel-probe", embedder=_probe_embedding, max_contexts=0)
    index.context(("m1", "m2"))
    index.context(("m3", "m4"))


class TIGWorkspace:
    """Novelty contexts for many tasks with per-response reuse (App. G.5, built lazily).

    One extraction store and one embedder are shared by every task's :class:`PopulationIndex`; an index is
    rebuilt only when its population version changes (a response added or edited), and even then only new
    responses are extracted. ``mode="generic"`` is the Novelty ablation: :meth:`context` returns the generic
    anchors without building any graph.
    """

    def __init__(
        self,
        *,
        extractor: Extractor | None = None,
        embedder: Any = None,
        canonicaliser: Canonicaliser | None = None,
        extractions: MutableMapping[str, ResponseAtoms] | None = None,
        mode: str = "tig",
        top_k: int = 3,
        clustering: str = "leiden",
    ) -> None:
        if mode not in ("tig", "generic"):
            raise ValueError(f"mode must be 'tig' or 'generic', got {mode!r}")
        if embedder is None:
            from engine.embed import text_embedder

            embedder = text_embedder("minilm")
        self.extractor = extractor or OfflineExtractor()
        self.embedder = embedder
        self.canonicaliser = canonicaliser
        self.extractions: MutableMapping[str, ResponseAtoms] = extractions if extractions is not None else {}
        self.mode = mode
        self.top_k = top_k
        self.clustering = clustering
        self._indexes: dict[str, PopulationIndex] = {}
        self._ideas: dict[str, list[Any]] = {}

    def add_task(
        self, task: str, ideas: Iterable[Any], *, brief: str = "", progress: Progress | None = None
    ) -> None:
        """Register (or replace) a task's responses; the index is built on first use."""
        self._ideas[task] = [idea_record(i, task=task, brief=brief) for i in ideas]
        old = self._indexes.pop(task, None)
        if old is not None:
            records = sorted(self._ideas[task], key=lambda r: (r.model, str(r.sample), r.response_id))
            if old.ideas == records:
                self._indexes[task] = old
        if progress is not None:
            self.population(task, progress=progress)

    def population(self, task: str, *, progress: Progress | None = None) -> PopulationIndex:
        """The task's index (built now if needed)."""
        index = self._indexes.get(task)
        if index is None:
            if task not in self._ideas:
                raise KeyError(f"unknown task {task!r}; call add_task first")
            index = PopulationIndex(
                self._ideas[task],
                task=task,
                extractor=self.extractor,
                embedder=self.embedder,
                canonicaliser=self.canonicaliser,
                extractions=self.extractions,
                progress=progress,
                clustering=self.clustering,
            )
            self._indexes[task] = index
        return index

    def context(self, task: str, pair: Sequence[str]) -> NoveltyContext:
        """The Novelty context of ``pair`` on ``task`` (cached by task, pair and population version)."""
        a, b = _normal_pair(pair)
        if self.mode == "generic":
            models = sorted({r.model for r in self._ideas.get(task, [])} - {a, b})
            key = pair_context_key((a, b))
            return NoveltyContext(
                task=task,
                pair=(a, b),
                context_key=key,
                population_version="generic",
                mode="generic",
                reference_models=models,
                n_reference_ideas=sum(1 for r in self._ideas.get(task, []) if r.model not in (a, b)),
                items=generic_novelty_items(task=task, context_key=key),
            )
        return self.population(task).context((a, b), top_k=self.top_k)
