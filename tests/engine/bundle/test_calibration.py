import pytest

from engine.bundle.calibration import _method_version_checks, by_name, label_link_checks
from engine.bundle.manifest import FieldTypeError
from engine.bundle.numbers import NumberCheck, compare
from engine.calibration_views import CALIBRATION_METHOD_VERSION


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


def _campaign_numbers(*, differing: bool) -> list[NumberCheck]:
    return [NumberCheck("calibration[campaign 3].dimensions.U.people_only.m1.score", 0.5, 0.75 if differing else 0.5)]


def test_a_calibrated_board_of_another_method_version_whose_numbers_differ_is_refused_naming_both_versions():
    notes: list[str] = []
    (check,) = _method_version_checks({"campaign": 3, "method_version": CALIBRATION_METHOD_VERSION + 1},
                                      _campaign_numbers(differing=True), "calibration[campaign 3].", notes)
    assert not check.identical
    assert check.path.startswith("calibration[campaign 3].method_version")
    assert (check.stored, check.recomputed) == (CALIBRATION_METHOD_VERSION + 1, CALIBRATION_METHOD_VERSION)
    assert notes == [f"calibration[campaign 3]: recomputed with calibration method version {CALIBRATION_METHOD_VERSION}; "
                     f"the bundle's board was computed with version {CALIBRATION_METHOD_VERSION + 1}"]


def test_a_calibrated_board_of_another_method_version_whose_numbers_agree_verifies_with_a_note():
    notes: list[str] = []
    assert _method_version_checks({"campaign": 3, "method_version": CALIBRATION_METHOD_VERSION + 1},
                                  _campaign_numbers(differing=False), "calibration[campaign 3].", notes) == []
    assert f"version {CALIBRATION_METHOD_VERSION + 1}" in notes[0]


def test_a_bundle_without_a_recorded_method_version_reads_as_version_zero():
    notes: list[str] = []
    (check,) = _method_version_checks({"campaign": 3}, _campaign_numbers(differing=True), "calibration[campaign 3].", notes)
    assert check.stored == 0 and "computed with version 0" in notes[0]


@pytest.mark.parametrize("version", ["1", 1.5, True, None, [1]])
def test_a_method_version_that_is_not_an_integer_is_named_with_its_field(version):
    with pytest.raises(FieldTypeError, match=r"manifest.json, field human_labels.campaigns\[campaign 3\].method_version: "
                                             r"expected an integer"):
        _method_version_checks({"campaign": 3, "method_version": version}, [], "calibration[campaign 3].", [])
