import hashlib

from engine.bundle.ekphrasis import model_checks, response_text_checks


def _records():
    responses = {1: {"id": 1, "model": "alpha"}, 2: {"id": 2, "model": "beta"}}
    comparisons = [{"id": 7, "shown_a": 1, "shown_b": 2, "fit": {"model_a": 0, "model_b": 1}},
                   {"id": 8, "shown_a": 2, "shown_b": 1, "fit": None}]
    return comparisons, responses


def test_each_fitted_position_names_the_model_of_the_response_shown():
    comparisons, responses = _records()
    checks = model_checks(comparisons, responses, ["alpha", "beta"])
    assert len(checks) == 2 and all(c.identical for c in checks)


def test_two_model_names_swapped_in_the_configuration_are_named_at_each_comparison():
    # the fit reads models by position: swapped names alone move every number to the other model,
    # and the board recomputed under the swapped names is the swapped board, so only the responses tell
    comparisons, responses = _records()
    differing = [c.describe() for c in model_checks(comparisons, responses, ["beta", "alpha"]) if not c.identical]
    assert differing == ['records.comparison 7.model_a (model of response 1): stored "beta", recomputed "alpha"',
                         'records.comparison 7.model_b (model of response 2): stored "alpha", recomputed "beta"']


def _response(raw, core, visual, method):
    return {"model": "m", "task": "t1", "raw_text": raw, "core_idea": core, "visual_description": visual,
            "raw_sha256": hashlib.sha256(raw.encode("utf-8")).hexdigest(), "normalisation_method": method}


def test_a_field_rewritten_with_as_many_words_is_named_against_its_raw_text():
    # the word-count checks see only counts: "red" for "blue" keeps them, and the judge read the edited field
    fields = _response("Core Idea: a blue door\nVisual Description: a door in the sea", "a blue door",
                       "a door in the sea", "fields")
    parsed = _response("Core Idea: a blue door\nVisual Description: a door in the sea", "a blue door",
                       "a door in the sea", "parser")
    assert all(c.identical for c in response_text_checks({1: fields, 2: parsed}))
    forged = {1: {**fields, "core_idea": "a red door"}, 2: {**parsed, "visual_description": "a door on the sea"}}
    assert [c.path for c in response_text_checks(forged) if not c.identical] == [
        "records.response 1 (m, t1).raw_text (composed of core_idea and visual_description)",
        "records.response 2 (m, t1).visual_description (parsed from raw_text)"]


def test_a_raw_text_edited_without_its_digest_is_named():
    response = _response("Core Idea: x\nVisual Description: y", "x", "y", "llm")
    checks = response_text_checks({3: {**response, "raw_text": "Core Idea: z\nVisual Description: y"}})
    assert [c.path for c in checks if not c.identical] == ["records.response 3 (m, t1).raw_sha256 (of its raw_text)"]


def test_a_bootstrap_size_past_the_limit_is_refused_naming_the_field_before_fitting(tmp_path):
    # n_boot of 10⁹ asked the fit for tens of GiB and ended, minutes later, in a MemoryError
    import pytest

    from engine.bundle.ekphrasis import recompute

    (tmp_path / "board").mkdir()
    (tmp_path / "board/board.json").write_text("{}")
    (tmp_path / "records").mkdir()
    (tmp_path / "records/comparisons.jsonl").write_text("")
    manifest = {"board": "board/board.json", "configuration": {"models": ["a"], "dimensions": "U", "n_boot": 10**9, "seed": 1}}
    with pytest.raises(ValueError, match=r"manifest.json, field configuration.n_boot: 1000000000 bootstrap resamples"):
        recompute(tmp_path, manifest)


def _calls(*per_task: int) -> list[dict]:
    return [{"task": f"t{k}", "dimension": "U", "kind": kind}
            for k, n in enumerate(per_task) for kind in ["primary"] * n + ["repeat", "automatic"]]


def test_the_budget_is_recomputed_as_the_primary_calls_of_each_task_and_dimension():
    from engine.bundle.ekphrasis import budget_check

    assert budget_check(_calls(50, 50, 0), 50).identical  # a task with fewer than two judgeable responses has none


def test_a_budget_the_records_spent_unevenly_is_named_with_the_counts_found():
    from engine.bundle.ekphrasis import budget_check

    check = budget_check(_calls(50, 49), 50)
    assert (check.identical, check.recomputed) == (False, [49, 50])
