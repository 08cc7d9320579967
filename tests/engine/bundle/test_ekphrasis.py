from engine.bundle.ekphrasis import model_checks


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
