from dataclasses import dataclass

import pytest

from engine.tig.population import PopulationIndex, TIGWorkspace, cliche_clusters, pair_context_key
from tests.engine.tig.planted import MODELS, ScriptedExtractor, TableEmbedder, planted_population

WHALE = ("an origami whale", "origami whales", "a folded paper whale")


def mentions_whale(context):
    texts = [a for c in context.clusters for a in c.aliases + [c.label] + c.members]
    texts += [i.text for i in context.items] + [i.cluster_summary or "" for i in context.items]
    return any("whale" in t for t in texts)


@pytest.fixture(scope="module")
def lighthouse_clusters():
    return cliche_clusters(planted_population())


def test_a_motif_in_most_models_ideas_is_the_top_cluster(lighthouse_clusters):
    top = lighthouse_clusters[0]
    assert top.type == "motif"
    assert "lighthouse" in top.label
    # every phrasing is in the cluster: as an alias of its label or as a member atom of its own
    assert {"lighthouse", "old lighthouse", "lighthouses", "lone lighthouse", "lighthouse tower"} <= set(
        top.aliases
    ) | set(top.members)
    assert top.n_models == 10 and top.model_coverage == pytest.approx(10 / 14)


def test_clusters_carry_the_contract_fields_sorted_by_score(lighthouse_clusters):
    for c in lighthouse_clusters:
        assert {c.type, c.label} and isinstance(c.aliases, list)
        assert 0 <= c.model_coverage <= 1 and 0 <= c.centrality <= 1 and 0 <= c.convergence <= 1
    scores = [c.score for c in lighthouse_clusters]
    assert scores == sorted(scores, reverse=True)


@pytest.fixture(scope="module")
def whale_index():
    # the whale motif is used only by the last two models
    return PopulationIndex(planted_population(motif=WHALE, carriers=MODELS[12:]))


def test_a_motif_used_only_by_the_two_candidates_is_nowhere_in_their_context(whale_index):
    context = whale_index.context((MODELS[12], MODELS[13]), keep_graph=True)
    assert not mentions_whale(context)
    assert not any("whale" in label for label in context.graph.canon.node_label)
    assert context.n_reference_ideas == 36 and MODELS[12] not in context.reference_models


def test_the_same_motif_appears_in_contexts_where_other_models_use_it(whale_index):
    context = whale_index.context((MODELS[0], MODELS[1]))
    assert mentions_whale(context)
    assert context.items[0].cluster_label == "origami whale"


def test_one_candidate_using_the_motif_still_keeps_the_other_users_in(whale_index):
    assert mentions_whale(whale_index.context((MODELS[12], MODELS[0])))


def test_candidates_responses_do_not_change_their_context_at_all():
    plain = planted_population()
    swapped = [
        {**i, "core_idea": "A lighthouse melting into an origami whale, symbolising lighthouses everywhere."}
        if i["model"] in MODELS[12:]
        else i
        for i in plain
    ]
    pair = (MODELS[12], MODELS[13])
    a = PopulationIndex(plain, embedder=TableEmbedder()).context(pair)
    b = PopulationIndex(swapped, embedder=TableEmbedder()).context(pair)
    assert a.population_version != b.population_version
    assert [c.to_dict() for c in a.clusters] == [c.to_dict() for c in b.clusters]
    assert [i.text for i in a.items] == [i.text for i in b.items]


def test_excluded_models_are_never_extracted():
    ideas = planted_population()
    extractor = ScriptedExtractor({})
    cliche_clusters(
        ideas, exclude_models=[MODELS[0], MODELS[1]], extractor=extractor, embedder=TableEmbedder()
    )
    assert len(extractor.seen) == 36
    assert not any(MODELS[0] in r or MODELS[1] in r for r in extractor.seen)


def test_cliche_clusters_accepts_objects_with_the_three_fields():
    @dataclass
    class Row:
        model: str
        sample: int
        core_idea: str

    rows = [Row(i["model"], i["sample"], i["core_idea"]) for i in planted_population()]
    from_objects = cliche_clusters(rows, embedder=TableEmbedder())
    from_dicts = cliche_clusters(planted_population(), embedder=TableEmbedder())
    assert [(c.label, round(c.score, 9)) for c in from_objects] == [
        (c.label, round(c.score, 9)) for c in from_dicts
    ]


def test_a_context_equals_cliche_clusters_on_the_leave_out_population():
    ideas = planted_population()
    pair = (MODELS[3], MODELS[7])
    index = PopulationIndex(ideas, embedder=TableEmbedder())
    direct = cliche_clusters(ideas, exclude_models=pair, embedder=TableEmbedder())
    assert [c.to_dict() for c in index.context(pair).clusters] == [c.to_dict() for c in direct]


def test_each_response_is_extracted_and_each_label_embedded_once_across_contexts():
    extractor = CountingOffline()
    embedder = TableEmbedder()
    index = PopulationIndex(planted_population(), extractor=extractor, embedder=embedder)
    index.contexts([(MODELS[a], MODELS[b]) for a in range(5) for b in range(a + 1, 5)])
    assert extractor.calls == 42
    assert len(embedder.calls) == 1
    assert len(embedder.calls[0]) == len(set(embedder.calls[0]))


def test_contexts_are_cached_by_pair_in_either_order():
    index = PopulationIndex(planted_population(), embedder=TableEmbedder())
    assert index.context((MODELS[1], MODELS[2])) is index.context((MODELS[2], MODELS[1]))
    assert index.context((MODELS[1], MODELS[2])).context_key == pair_context_key((MODELS[2], MODELS[1]))


def test_population_version_changes_when_a_core_idea_changes():
    ideas = planted_population()
    before = PopulationIndex(ideas, embedder=TableEmbedder()).version
    ideas[5] = {**ideas[5], "core_idea": "A kite folding into a harp, symbolising mischief."}
    assert PopulationIndex(ideas, embedder=TableEmbedder()).version != before


def test_workspace_re_extracts_only_the_edited_response():
    extractor = CountingOffline()
    ws = TIGWorkspace(extractor=extractor, embedder=TableEmbedder())
    ideas = planted_population()
    ws.add_task("t", ideas)
    first = ws.context("t", (MODELS[0], MODELS[1]))
    ideas[5] = {**ideas[5], "core_idea": "A kite folding into a harp, symbolising mischief."}
    ws.add_task("t", ideas)
    second = ws.context("t", (MODELS[0], MODELS[1]))
    assert extractor.calls == 43
    assert first.population_version != second.population_version


def test_generic_mode_gives_generic_anchors_without_building_a_graph():
    extractor = CountingOffline()
    ws = TIGWorkspace(extractor=extractor, embedder=TableEmbedder(), mode="generic")
    ws.add_task("t", planted_population())
    context = ws.context("t", (MODELS[0], MODELS[1]))
    assert extractor.calls == 0
    assert context.mode == "generic" and context.clusters == []
    assert [i.source for i in context.items] == ["generic"] * 3
    assert context.n_reference_ideas == 36


def test_progress_hook_reports_extraction_and_embedding():
    seen = []
    PopulationIndex(planted_population(), embedder=TableEmbedder(), progress=lambda *a: seen.append(a))
    assert ("extract", 42, 42) in seen and seen[-1] == ("embed", 1, 1)


def test_viewer_data_has_laid_out_nodes_ranked_clusters_and_items():
    index = PopulationIndex(planted_population(), embedder=TableEmbedder())
    data = index.viewer_data((MODELS[0], MODELS[1]))
    assert data["nodes"] and all(isinstance(n["x"], float) for n in data["nodes"])
    assert data["clusters"][0]["score"] >= data["clusters"][-1]["score"]
    assert data["items"] and data["context_key"] == pair_context_key((MODELS[0], MODELS[1]))
    assert index.viewer_data()["items"] == []


def test_a_pair_must_have_two_models():
    index = PopulationIndex(planted_population()[:3], embedder=TableEmbedder())
    with pytest.raises(ValueError):
        index.context((MODELS[0],))


def test_long_model_names_give_a_hashed_context_key_within_100_characters():
    key = pair_context_key(("x" * 80, "y" * 80))
    assert len(key) <= 100 and key == pair_context_key(("y" * 80, "x" * 80))


class CountingOffline:
    name = "offline-rules"

    def __init__(self):
        from engine.tig.offline import OfflineExtractor

        self.inner = OfflineExtractor()
        self.calls = 0

    def extract(self, idea):
        self.calls += 1
        return self.inner.extract(idea)


@pytest.mark.parametrize("pair", [(MODELS[0], MODELS[1]), (MODELS[3], MODELS[7]), (MODELS[12], MODELS[13])])
def test_context_items_equal_the_items_of_every_type_clustered(pair):
    # a context clusters only the materialised types for its items; the full clustering is done on demand
    from engine.tig.checklist import MATERIALISED_TYPES, MIN_MODELS, materialise_items

    index = PopulationIndex(planted_population(), embedder=TableEmbedder())
    context = index.context(pair)
    full, _ = index.scored_clusters(pair)
    expected = materialise_items(full.iter_ranked(types=MATERIALISED_TYPES, min_models=MIN_MODELS),
                                 task=context.task, context_key=context.context_key,
                                 population_version=index.version)
    assert [i.to_dict() for i in context.items] == [i.to_dict() for i in expected]
    assert context.items
    assert [c.to_dict() for c in context.clusters] == [c.to_dict() for c in full.ranked()]
    assert {c.type for c in context.clusters} - set(MATERIALISED_TYPES)  # purpose/audience clustered too


def test_a_top_1_context_has_the_anchor_of_the_top_3_context_on_every_pair():
    # the Ekphrasis run stores only the slot-1 anchor and asks for top_k=1 (leaderboard/ekphrasis/tig.py)
    from itertools import combinations

    index = PopulationIndex(planted_population(), embedder=TableEmbedder(), max_contexts=0)
    anchors = 0
    for pair in combinations(MODELS, 2):
        one, three = index.context(pair, top_k=1), index.context(pair, top_k=3)
        assert len(one.items) == min(1, len(three.items))
        assert (one.anchor and one.anchor.to_dict()) == (three.anchor and three.anchor.to_dict())
        assert one.anchor is None or one.anchor.provenance == three.anchor.provenance
        assert one.n_reference_ideas == three.n_reference_ideas
        anchors += one.anchor is not None
    assert anchors


def test_loading_the_compiled_kernels_compiles_the_signatures_a_real_context_calls():
    """load_compiled_kernels (a Celery worker calls it before it forks) must reach every kernel of a context with
    the argument types a real population passes, or each forked process would still load another on its first
    chunk."""
    from engine.tig import graph_kernel, score_kernel
    from engine.tig.population import load_compiled_kernels

    kernels = (graph_kernel.graph_counts, graph_kernel.assemble_weight, score_kernel.cluster_sums)
    load_compiled_kernels()
    loaded = [list(kernel.signatures) for kernel in kernels]
    assert all(loaded)
    index = PopulationIndex(planted_population(), embedder=TableEmbedder(), max_contexts=0)
    for pair in ((MODELS[0], MODELS[1]), (MODELS[2], MODELS[3])):
        index.context(pair)
    assert [list(kernel.signatures) for kernel in kernels] == loaded
