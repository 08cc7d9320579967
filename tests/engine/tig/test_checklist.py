import json
from dataclasses import asdict

from engine.tig.checklist import (
    GENERIC_NOVELTY_ITEMS,
    ITEM_TEMPLATE,
    ChecklistItem,
    generic_novelty_items,
    items_from_jsonl,
    items_to_jsonl,
    materialise_items,
)
from engine.tig.score import Cluster

G6_EXAMPLE = (
    "Which response avoids relying on common plant-growth imagery unless it transforms that motif into a more "
    "specific visual mechanism?"
)


def cluster(label, score, *, type="motif", n_models=5, models=("secret-model-a", "secret-model-b")):
    return Cluster(
        id=f"{type}-{label}",
        type=type,
        label=label,
        aliases=[label, f"{label}s"],
        score=score,
        model_coverage=n_models / 12,
        centrality=0.5,
        convergence=0.5,
        n_models=n_models,
        n_samples=n_models + 1,
        population_models=12,
        population_samples=36,
        members=[label],
        models=list(models),
    )


CLUSTERS = [
    cluster("calm", 0.9, type="purpose"),
    cluster("lighthouse", 0.8),
    cluster("one-off kite", 0.7, n_models=1),
    cluster("melting clock", 0.6, type="mechanism"),
    cluster("lighthouse", 0.55, type="concept"),
    cluster("paper boat", 0.5, type="concept"),
    cluster("owl", 0.4),
]


def test_the_template_is_the_app_g6_wording():
    assert ITEM_TEMPLATE.format(pattern="plant-growth") == G6_EXAMPLE


def test_top_visual_clusters_shared_by_several_models_become_items_in_rank_order():
    items = materialise_items(CLUSTERS, top_k=3)
    assert [i.cluster_label for i in items] == ["lighthouse", "melting clock", "paper boat"]
    assert [i.rank for i in items] == [1, 2, 3]
    assert items[0].text == ITEM_TEMPLATE.format(pattern="lighthouse")


def test_items_keep_cluster_id_summary_score_and_provenance_counts():
    item = materialise_items(CLUSTERS, task="t1", context_key="a|b", population_version="v1", top_k=1)[0]
    assert (item.cluster_id, item.score, item.n_models, item.n_samples) == ("motif-lighthouse", 0.8, 5, 6)
    assert (item.population_models, item.population_samples) == (12, 36)
    assert item.cluster_summary == CLUSTERS[1].summary
    assert (item.task, item.context_key, item.population_version, item.slot, item.source) == (
        "t1",
        "a|b",
        "v1",
        1,
        "tig",
    )


def test_items_never_name_the_models_that_share_the_pattern():
    for item in materialise_items(CLUSTERS, top_k=5):
        text = json.dumps(item.to_dict()) + item.text + json.dumps(item.audit_record())
        assert "secret-model" not in text


def test_item_ids_are_deterministic_and_distinct():
    a = materialise_items(CLUSTERS, task="t", context_key="k", population_version="v")
    b = materialise_items(CLUSTERS, task="t", context_key="k", population_version="v")
    assert [i.item_id for i in a] == [i.item_id for i in b]
    assert len({i.item_id for i in a}) == len(a)
    other = materialise_items(CLUSTERS, task="t", context_key="other", population_version="v")
    assert a[0].item_id != other[0].item_id


def test_jsonl_export_carries_the_audit_fields_and_parses_back():
    items = materialise_items(CLUSTERS, task="t1", context_key="a|b", population_version="v1")
    text = items_to_jsonl(items)
    assert text.count("\n") == len(items)
    records = items_from_jsonl(text)
    assert records[0]["checklist_text"] == items[0].text
    assert {
        "task_id",
        "comparison_key",
        "checklist_item_id",
        "checklist_text",
        "cluster_id",
        "cluster_summary",
        "score",
        "n_models",
        "n_samples",
    } <= set(records[0])
    assert records[0]["comparison_key"] == "a|b" and records[0]["cluster_id"] == "motif-lighthouse"


def test_generic_anchor_mode_gives_three_slots_without_a_cluster():
    items = generic_novelty_items(task="t1", context_key="a|b")
    assert [i.slot for i in items] == [1, 2, 3]
    assert [i.text for i in items] == list(GENERIC_NOVELTY_ITEMS)
    assert all(i.source == "generic" and i.cluster_id is None for i in items)


def test_nothing_qualifies_when_no_pattern_recurs_across_models():
    assert materialise_items([cluster("kite", 0.9, n_models=1)]) == []


def test_provenance_is_every_field_but_the_row_columns_in_field_order():
    item = ChecklistItem("ni-1", "text", 1, 1, "tig", "t1", "a|b", "v1", cluster_id="motif-1", score=0.5,
                         aliases=["kite", "kites"])
    expected = {k: v for k, v in asdict(item).items()
                if k not in ("text", "slot", "source", "inspects", "task", "context_key")}
    assert list(item.provenance.items()) == list(expected.items())
    assert item.provenance["aliases"] is not item.aliases  # a copy: the stored JSON never aliases the item
