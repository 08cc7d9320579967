from engine.bundle.calibration import by_name
from engine.bundle.numbers import compare


def test_ranked_rows_compare_by_model_so_a_reordering_names_only_the_moved_numbers():
    stored = {"rows": [{"model": "a", "score": 1.0, "rank": 1}, {"model": "b", "score": 0.5, "rank": 2}]}
    recomputed = {"rows": [{"model": "b", "score": 1.2, "rank": 1}, {"model": "a", "score": 1.0, "rank": 2}]}
    differing = [c.path for c in compare(by_name(stored), by_name(recomputed)) if not c.identical]
    assert differing == ["rows.a.rank", "rows.b.rank", "rows.b.score"]


def test_budget_pairs_and_coefficients_are_keyed_by_their_names():
    value = by_name({"budget": [{"better": "a", "worse": "b", "labels_needed": 3}],
                     "coefficients": [{"feature": "words", "gamma": 0.1}], "plain": [1, 2]})
    assert value == {"budget": {"a > b": {"better": "a", "worse": "b", "labels_needed": 3}},
                     "coefficients": {"words": {"feature": "words", "gamma": 0.1}}, "plain": [1, 2]}
