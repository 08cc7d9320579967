"""U, O, S and their aggregation (c2-eval.txt §3.2), checked against the paper's Tables 1 and 2.

Table checks (values copied from c2-eval.txt; tables round to 0.1, so agreement is within 0.05 plus
the rounding of the inputs, ``TABLE_TOLERANCE``):
* Crea. = mean(Use., Orig., Surp.) holds for every row's QA, Code, Story (Table 1) and VQA, Visual
  Story (Table 2) columns; Table 1's Idea Generation Crea. does NOT (it is 2–7 points above the mean in
  every row, e.g. Qwen2.5-7B 25.3/22.3/15.0 → 20.9, printed 23.9), so it is not used here.
* Combined = mean of the task types' Crea. holds for every row of both tables except Qwen3-8B in
  Table 1 (mean 45.35, printed 40.2).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.c2.uos import (
    PromptScores,
    cluster_labels,
    combined_creativity,
    convergent_prompt_scores,
    creativity,
    divergent_prompt_scores,
    originality_clusters,
    originality_score,
    paired_bootstrap_difference,
    surprise,
    task_type_scores,
    usefulness,
)

#: Printed values are rounded to 0.1: a mean of rounded values can differ by up to 0.05 + 0.05.
TABLE_TOLERANCE = 0.1

# Table 1 rows: (U, O, S, Crea.) for QA, Code, Story, Idea and the Combined column
TABLE1 = {
    "Qwen2.5-7B": (31.9, [(52.8, 13.9, 19.5, 28.7), (22.7, 30.0, 25.5, 26.1), (52.7, 53.4, 39.9, 48.7), (25.3, 22.3, 15.0, 23.9)]),
    "Qwen3-235B": (58.3, [(86.6, 12.2, 9.6, 36.1), (91.2, 78.4, 22.8, 64.1), (85.5, 90.7, 77.6, 84.6), (52.4, 42.8, 33.0, 48.4)]),
    "o4-mini": (57.7, [(86.6, 8.1, 17.1, 37.3), (86.2, 70.9, 19.5, 58.9), (78.1, 86.6, 66.8, 77.2), (57.0, 57.4, 46.5, 57.4)]),
}
# Table 2 rows: VQA and Visual Story
TABLE2 = {
    "Qwen2.5-VL-32B": (48.4, [(58.8, 15.4, 12.6, 28.9), (63.8, 85.0, 54.6, 67.8)]),
    "o4-mini": (59.5, [(73.0, 30.6, 36.2, 46.6), (67.2, 90.6, 59.4, 72.4)]),
    "Claude3.5": (46.9, [(62.5, 19.4, 7.9, 29.9), (61.6, 82.6, 47.4, 63.8)]),
}


@pytest.mark.parametrize("model", sorted(TABLE1))
def test_creativity_is_the_mean_of_u_o_s_in_table1_for_qa_code_story(model: str) -> None:
    for u, o, s, crea in TABLE1[model][1][:3]:
        assert creativity(u, o, s) == pytest.approx(crea, abs=TABLE_TOLERANCE)


@pytest.mark.parametrize("model", sorted(TABLE2))
def test_creativity_is_the_mean_of_u_o_s_in_table2(model: str) -> None:
    for u, o, s, crea in TABLE2[model][1]:
        assert creativity(u, o, s) == pytest.approx(crea, abs=TABLE_TOLERANCE)


@pytest.mark.parametrize("table", [TABLE1, TABLE2])
def test_combined_creativity_is_the_mean_of_task_creativity(table: dict) -> None:
    for combined, tasks in table.values():
        assert combined_creativity([task[3] for task in tasks]) == pytest.approx(combined, abs=TABLE_TOLERANCE)


def test_combined_creativity_accepts_a_mapping() -> None:
    assert combined_creativity({"qa": 10.0, "story": 30.0}) == 20.0


def test_usefulness_is_accuracy() -> None:
    assert usefulness([True, False, True, True]) == 0.75


def test_clusters_are_connected_components_so_the_rule_is_transitive() -> None:
    # a~b and b~c (cos ≥ 0.9) but a and c below τ: one chain, so one cluster
    angle = np.deg2rad(20)  # cos 20° ≈ 0.94; cos 40° ≈ 0.77
    vectors = np.array([[1, 0], [np.cos(angle), np.sin(angle)], [np.cos(2 * angle), np.sin(2 * angle)]])
    assert float(vectors[0] @ vectors[2]) < 0.9
    assert originality_clusters(vectors, 0.9) == 1
    assert originality_clusters(vectors, 0.95) == 3


def test_cosine_equal_to_tau_joins_two_samples() -> None:
    vectors = np.array([[1.0, 0.0], [0.6, 0.8]])  # cosine exactly 0.6
    assert originality_clusters(vectors, 0.6) == 1
    assert originality_clusters(vectors, 0.6000001) == 2


def test_cluster_labels_number_clusters_by_first_appearance() -> None:
    vectors = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0]])
    assert cluster_labels(vectors).tolist() == [0, 1, 0]


def test_no_correct_sample_has_no_cluster() -> None:
    assert originality_clusters(np.zeros((0, 4))) == 0


def test_originality_is_scaled_by_n() -> None:
    assert originality_score(2, 5) == 40.0


def test_surprise_is_one_minus_mean_confidence_of_correct_samples() -> None:
    # C = (0.9 + 0.5) / 2 = 0.7 (the wrong sample's confidence is ignored)
    assert surprise([True, True, False], [0.9, 0.5, 0.1]) == pytest.approx(0.3)


def test_surprise_with_no_correct_sample_follows_the_policy() -> None:
    assert surprise([False, False], [0.2, 0.4]) == 0.0
    assert surprise([False, False], [0.2, 0.4], none_correct="formula") == 1.0  # 1 − 0 / max(1, 0)


def test_surprise_leaves_out_missing_confidences() -> None:
    assert surprise([True, True], [None, 0.8]) == pytest.approx(0.2)
    assert surprise([True], [None]) == 0.0  # nothing known: the policy applies, nothing invented


def test_surprise_rejects_an_unknown_policy() -> None:
    with pytest.raises(ValueError):
        surprise([True], [0.5], none_correct="one")  # type: ignore[arg-type]


def test_convergent_prompt_scores_combine_u_o_s() -> None:
    scores = convergent_prompt_scores(
        "p1", [True, True, False, False], [0.8, 0.6, 0.9, None], [[1.0, 0.0], [0.0, 1.0]]
    )
    assert (scores.usefulness, scores.originality, scores.surprise) == pytest.approx((50.0, 50.0, 30.0))
    assert scores.creativity == pytest.approx(130.0 / 3)


def test_convergent_prompt_scores_need_one_embedding_per_correct_sample() -> None:
    with pytest.raises(ValueError):
        convergent_prompt_scores("p", [True, True], [0.5, 0.5], [[1.0, 0.0]])


def test_divergent_prompt_scores_are_sample_means_times_twenty() -> None:
    scores = divergent_prompt_scores("p", [(5, 3, 1), (4, 2, 2)])
    assert (scores.usefulness, scores.originality, scores.surprise) == (90.0, 50.0, 30.0)


def test_task_type_interval_contains_the_mean_and_is_reproducible() -> None:
    prompts = [PromptScores(f"p{i}", 10.0 * i, 5.0, 50.0) for i in range(10)]
    first = task_type_scores(prompts, resamples=500, seed=3)
    again = task_type_scores(prompts, resamples=500, seed=3)
    assert first == again
    assert first.usefulness.value == 45.0
    assert first.usefulness.low < 45.0 < first.usefulness.high
    assert first.originality.low == first.originality.high == 5.0  # no spread, no width


def test_paired_bootstrap_uses_only_prompts_scored_under_both_templates() -> None:
    creative = {"a": 60.0, "b": 70.0, "c": 80.0, "extra": 0.0}
    standard = {"a": 50.0, "b": 65.0, "c": 70.0}
    result = paired_bootstrap_difference(creative, standard, resamples=500)
    assert result.n_prompts == 3
    assert result.difference.value == pytest.approx((10 + 5 + 10) / 3)
    assert 5.0 <= result.difference.low <= result.difference.high <= 10.0
    assert "paired" in result.difference.method


def test_soft_accuracy_sets_usefulness_while_correctness_sets_o_and_s() -> None:
    scores = convergent_prompt_scores(
        "vqa", [True, False], [0.6, None], [[1.0, 0.0]], accuracy=[0.6, 0.0]
    )
    assert scores.usefulness == pytest.approx(30.0)
    assert (scores.originality, scores.surprise) == pytest.approx((50.0, 40.0))
    assert scores.missing_confidences == 1 and scores.clusters == 1
