from engine.bundle.calibration import by_name, label_link_checks
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


def test_labels_whose_responses_are_not_this_runs_are_named_at_their_line():
    # labels of another run: the same models' names, responses this bundle does not hold (or another task's)
    responses = {25: {"model": "m1", "task": "t1"}, 28: {"model": "m2", "task": "t1"}}
    labels = [{"item": 1, "task": "t1", "response_a": 25, "response_b": 28, "model_a": "m1", "model_b": "m2"},
              {"item": 1, "task": "t1", "response_a": 25, "response_b": 28, "model_a": "m1", "model_b": "m2"},
              {"item": 7, "task": "t9", "response_a": 901, "response_b": 28, "model_a": "m1", "model_b": "m2"}]
    checks = label_link_checks(labels, responses, "records/human_labels.jsonl")
    assert len(checks) == 4  # one per item and side
    assert [c.describe() for c in checks if not c.identical] == [
        'records/human_labels.jsonl line 3 (item 7).response_a 901: model and task: stored "m1 on task t9", '
        'recomputed "(no such response in records/responses.jsonl)"',
        'records/human_labels.jsonl line 3 (item 7).response_b 28: model and task: stored "m2 on task t9", '
        'recomputed "m2 on task t1"']
