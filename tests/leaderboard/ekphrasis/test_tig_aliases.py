"""The demo population's synonym grouping (issue 15): every alias is a paraphrase of its canonical atom --
within the canonicalisation threshold of its label under the embedder the demo build uses -- and the TIG
viewer says why atoms were grouped."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.tig.canonical import CANONICAL_MERGE_THRESHOLD
from leaderboard.demo import demo_catalogue_load
from leaderboard.ekphrasis.tig import TIGComponents, task_population_index
from leaderboard.models import Task
from leaderboard.providers import OFFLINE_EMBEDDER, text_embedder_named
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

# Clusters the demo showed before the fix: "time (pot, ring, table, valley)" and "meditation cushion (knees,
# years, wooden floor, shallow hollows)" -- label, then a word that is no paraphrase of it.
UNRELATED = [
    ("demo-abs-01", "time", "pot"),
    ("demo-abs-01", "time", "valley"),
    ("demo-abs-01", "time", "ring"),
    ("demo-abs-01", "time", "table"),
    ("demo-abs-01", "meditation cushion", "knees"),
    ("demo-abs-01", "meditation cushion", "years"),
    ("demo-abs-01", "meditation cushion", "wooden floor"),
    ("demo-abs-01", "meditation cushion", "shallow hollows"),
]

_GROUPINGS: dict[str, dict] = {}


def demo_groupings() -> dict[str, dict]:
    """Per demo task, the label and aliases of every canonical atom and of every cluster of the whole
    population, built as the demo builds them (offline extractor, MiniLM, embedding grouping). Plain data,
    computed once: it does not depend on database ids, only on the demo files."""
    if not _GROUPINGS:
        assert TIGComponents() == TIGComponents("offline", OFFLINE_EMBEDDER, "embedding")  # the demo build's
        demo = demo_catalogue_load()
        for task in Task.objects.filter(task_set=demo.task_set).order_by("external_id"):
            index = task_population_index(task)
            canon = index.graph().canon
            clusters, _ = index.clusters(())
            _GROUPINGS[task.external_id] = {
                "atoms": [(canon.node_label[v], canon.node_aliases[v]) for v in range(canon.n_nodes)],
                "clusters": [(c.label, c.aliases) for c in clusters],
            }
    return _GROUPINGS


def cosine(a: str, b: str) -> float:
    """Cosine of two phrases under the demo's embedder, computed afresh (not read from the grouping)."""
    x, y = np.asarray(text_embedder_named(OFFLINE_EMBEDDER).embed([a, b]), dtype=np.float64)
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


def test_every_alias_of_every_demo_atom_and_cluster_is_within_the_threshold_of_its_label():
    groups = [
        (label, aliases) for g in demo_groupings().values() for label, aliases in g["atoms"] + g["clusters"]
    ]
    with_aliases = [(label, aliases) for label, aliases in groups if len(aliases) > 1]
    assert (
        with_aliases
    )  # the demo does group paraphrases ("front of meditation cushion" with "meditation cushion")
    too_far = [
        (label, alias, round(cosine(label, alias), 3))
        for label, aliases in with_aliases
        for alias in aliases[1:]
        if cosine(label, alias) < CANONICAL_MERGE_THRESHOLD - 1e-6
    ]
    assert too_far == []


def test_known_unrelated_demo_words_are_never_aliases_of_one_another():
    groupings = demo_groupings()
    for task, label, other in UNRELATED:
        assert cosine(label, other) < CANONICAL_MERGE_THRESHOLD  # unrelated by the stated measure
        g = groupings[task]
        assert not any(label in aliases and other in aliases for _, aliases in g["atoms"]), (label, other)
        assert not any(c_label == label and other in aliases for c_label, aliases in g["clusters"]), (
            label,
            other,
        )


def test_the_viewer_says_why_aliases_were_grouped_and_lists_related_atoms_apart(client, rita):
    demo = demo_catalogue_load()
    task = Task.objects.get(task_set=demo.task_set, external_id="demo-abs-01")
    client.login(username=rita.username, password=PASSWORD)
    body = client.get(f"/task-sets/{demo.task_set.pk}/tig/{task.pk}/").content.decode()
    why = dict(
        (label, aliases)
        for aliases, label in re.findall(
            r'class="tig-aliases">also written (.*?)\s*— grouped because cosine ≥ 0\.85 with <q>(.*?)</q>',
            body,
            re.S,
        )
    )
    assert "<q>front of meditation cushion</q>" in why["meditation cushion"]
    assert re.search(
        r"<q>front of meditation cushion</q> <span class=\"tig-cosine\">\(cosine 0\.8[5-9]\)", body
    )
    assert "knees" not in why["meditation cushion"]
    # the cushion's cluster neighbours are shown as related atoms, each with the edge that put it there
    row = body.split("<strong>meditation cushion</strong>", 1)[1].split("</tr>", 1)[0]
    members = row.split("related atoms in this cluster", 1)[1].split("</details>", 1)[0]
    assert "<strong>knees</strong>" in members and "with “" in members and "co-occurs (NPMI" in members
