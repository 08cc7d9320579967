"""engine/leaderboard.py: small pools, tiers consistent with intervals, pairwise win rates."""

from __future__ import annotations

import numpy as np

from engine.leaderboard import MIN_MODELS_FOR_Z, JudgedComparison, board_uncertainty, build_leaderboard
from engine.reliability import ComparisonRecord


def _comparisons(strength: list[float], n_tasks: int = 12, per_pair: int = 3, seed: int = 0) -> list[JudgedComparison]:
    """Primary calls on every pair of every task in U, E, N; the stronger model wins with P = σ(Δ)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n_tasks):
        for d in "UEN":
            for a in range(len(strength)):
                for b in range(a + 1, len(strength)):
                    for _ in range(per_pair):
                        p_a = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
                        winner = "A" if rng.random() < p_a else "B"
                        out.append(JudgedComparison(
                            record=ComparisonRecord(task=f"t{t}", dimension=d, model_a=a, model_b=b, winner=winner),
                            confidence=0.8, family="f"))
    return out


def test_two_models_have_no_z_and_no_degenerate_overall_interval():
    payload = build_leaderboard(_comparisons([1.5, -1.5]), ["strong", "weak"], n_boot=200)
    assert payload["z_available"] is False
    assert all(z is None for d in payload["dimensions"] for z in payload["per_dimension"][d]["z"])
    low, high = payload["overall_ci90"]
    # the small-pool Overall is the mean expected win rate: a real interval, not [1, 1]
    assert all(h > lo for lo, h in zip(low, high))
    assert payload["order"] == [0, 1]
    assert str(MIN_MODELS_FOR_Z) in payload["overall_measure"]


def test_three_models_report_z_and_overall_vci():
    payload = build_leaderboard(_comparisons([1.0, 0.0, -1.0]), ["a", "b", "c"], n_boot=200)
    assert payload["z_available"] is True
    assert all(z is not None for z in payload["per_dimension"]["U"]["z"])
    low, high = payload["overall_ci90"]
    assert any(h - lo > 1e-6 for lo, h in zip(low, high))


def test_models_with_disjoint_intervals_never_share_a_tier():
    # a model that never loses has a huge Wald SE under the ridge; the tier must follow the bootstrap
    comparisons = [
        JudgedComparison(record=ComparisonRecord(task=f"t{t}", dimension="U", model_a=0, model_b=1, winner="A"),
                         confidence=0.9, family="f")
        for t in range(10) for _ in range(4)
    ]
    payload = build_leaderboard(comparisons, ["winner", "loser"], dimensions=("U",), n_boot=200)
    per = payload["per_dimension"]["U"]
    low, high = per["winrate_ci90"]
    assert low[0] > high[1]
    assert per["tiers"] == [[0], [1]]


def test_tiers_join_only_models_whose_intervals_overlap():
    payload = build_leaderboard(_comparisons([0.3, 0.25, -2.0, -2.1], n_tasks=8), list("abcd"), n_boot=300)
    for d in payload["dimensions"]:
        per = payload["per_dimension"][d]
        low, high = per["winrate_ci90"]
        for tier in per["tiers"]:
            for m, k in zip(tier[:-1], tier[1:]):
                assert low[m] <= high[k] and low[k] <= high[m]


def test_pairwise_winrate_counts_ties_as_half_and_is_complementary():
    comparisons = [
        JudgedComparison(record=ComparisonRecord(task="t0", dimension="U", model_a=0, model_b=1, winner=w),
                         confidence=0.9, family="f")
        for w in ("A", "A", "tie", "B")
    ] + [
        JudgedComparison(record=ComparisonRecord(task="t1", dimension="U", model_a=1, model_b=2, winner="A"),
                         confidence=0.9, family="f")
    ]
    payload = build_leaderboard(comparisons, ["a", "b", "c"], dimensions=("U",), n_boot=50)
    matrix = payload["per_dimension"]["U"]["pairwise_winrate"]
    assert matrix[0][1] == (2 + 0.5) / 4
    assert matrix[1][0] == 1 - matrix[0][1]
    assert matrix[0][2] is None  # never compared
    assert matrix[0][0] is None
    assert payload["per_dimension"]["U"]["pairwise_n"][0][1] == 4


def _with_families(comparisons: list[JudgedComparison]) -> list[JudgedComparison]:
    """The same calls, tasks t0–t5 in family "p" and the rest in "q"."""
    return [JudgedComparison(record=c.record, confidence=c.confidence,
                             family="p" if int(c.record.task[1:]) < 6 else "q") for c in comparisons]


def test_board_uncertainty_is_computed_from_the_same_board():
    comparisons = _comparisons([1.0, 0.0, -1.0], n_tasks=8)
    uncertainty = board_uncertainty(comparisons, ["a", "b", "c"], n_boot=200, seed=3)
    assert uncertainty["payload"] == build_leaderboard(comparisons, ["a", "b", "c"], n_boot=200, seed=3)


def test_overall_tiers_separate_models_whose_overall_intervals_are_apart_and_join_equal_ones():
    payload_models = list("abcd")
    uncertainty = board_uncertainty(_comparisons([2.0, 0.01, 0.0, -2.0], n_tasks=10), payload_models, n_boot=300)
    payload = uncertainty["payload"]
    low, high = payload["overall_ci90"]
    tiers = uncertainty["overall_tiers"]
    assert sorted(m for tier in tiers for m in tier) == [0, 1, 2, 3]
    assert tiers[0] == [0] and tiers[-1] == [3]
    assert [1, 2] in tiers or [2, 1] in tiers
    for tier in tiers:
        for m, k in zip(tier[:-1], tier[1:]):
            assert low[m] <= high[k] and low[k] <= high[m]


def test_a_family_slice_reproduces_the_family_tables_z_and_gives_it_an_interval():
    comparisons = _with_families(_comparisons([1.0, 0.2, -1.0], n_tasks=12))
    full = build_leaderboard(comparisons, ["a", "b", "c"], n_boot=200)
    family = board_uncertainty([c for c in comparisons if c.family == "p"], ["a", "b", "c"], n_boot=200)
    for d in full["dimensions"]:
        assert family["payload"]["per_dimension"][d]["z"] == full["families"]["p"]["z"][d]
        low, high = family["z_ci90"][d]
        assert all(lo <= hi for lo, hi in zip(low, high))
    assert family["payload"]["overall"] == full["families"]["p"]["task_avg"]


def test_a_summary_only_board_uncertainty_keeps_every_number_of_the_full_one_it_keeps():
    comparisons = _with_families(_comparisons([1.0, 0.3, 0.0, -1.0], n_tasks=12))
    full = board_uncertainty(comparisons, list("abcd"), n_boot=200, seed=5)
    summary = board_uncertainty(comparisons, list("abcd"), n_boot=200, seed=5, summary_only=True)
    assert summary["overall_tiers"] == full["overall_tiers"] and summary["z_ci90"] == full["z_ci90"]
    for key in ("overall", "overall_ci90", "overall_rank_probabilities", "order", "z_available", "overall_measure"):
        assert summary["payload"][key] == full["payload"][key]
    for d in full["payload"]["dimensions"]:
        kept = {k: v for k, v in full["payload"]["per_dimension"][d].items() if k != "rank_probabilities"}
        assert {k: v for k, v in summary["payload"]["per_dimension"][d].items() if k != "rank_probabilities"} == kept
    assert "reliability" not in summary["payload"] and "families" not in summary["payload"]


def test_a_dimension_where_every_model_scores_alike_ranks_by_the_mean_win_rate_without_z():
    # a cycle (a beats b, b beats c, c beats a) leaves the three models the same expected win rate: σ = 0,
    # z = (s − μ)/σ undefined (Ekphrasis §4.3); a small simulated run's verdicts can fall this way
    cycle = [JudgedComparison(record=ComparisonRecord(task=f"t{t}", dimension="U", model_a=a, model_b=b, winner="A"),
                              confidence=0.8, family="f")
             for t in range(2) for a, b in ((0, 1), (1, 2), (2, 0))]
    payload = build_leaderboard(cycle, ["a", "b", "c"], dimensions=("U",), n_boot=200)
    assert payload["z_available"] is False
    assert payload["per_dimension"]["U"]["z"] == [None, None, None]
    assert "every model has the same expected win rate on U" in payload["overall_measure"]
    assert sorted(payload["order"]) == [0, 1, 2] and payload["families"] == {}


def _ties(dimension: str, tasks=("t0", "t1")) -> list[JudgedComparison]:
    return [JudgedComparison(record=ComparisonRecord(task=t, dimension=dimension, model_a=a, model_b=b, winner="tie"),
                             confidence=0.8, family="f")
            for t in tasks for a, b in ((0, 1), (1, 2), (0, 2))]


def test_a_board_whose_every_verdict_is_a_tie_scores_every_model_even_instead_of_crashing():
    """App. F.2: ties enter no likelihood; with none decisive the ridge fit is θ = 0 and every expected win rate 0.5,
    so z is undefined (§4.3) and the board says so. It raised ZeroDivisionError (no task to resample)."""
    payload = build_leaderboard(_ties("U"), ["a", "b", "c"], dimensions=("U",), n_boot=50)
    assert payload["per_dimension"]["U"]["winrate"] == [0.5, 0.5, 0.5]
    assert payload["overall_ci90"] == [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]
    assert payload["per_dimension"]["U"]["tiers"] == [[0, 1, 2]]
    assert "every model has the same expected win rate on U" in payload["overall_measure"]


def test_a_dimension_of_only_ties_stays_on_the_board_so_overall_is_not_one_dimensions_z():
    """§4.3: Overall VCI is the mean of the three dimensions' z. A dimension whose verdicts are all ties has every
    model at 0.5 (σ = 0, z undefined); it was dropped, and "Overall VCI (mean z over dimensions)" was E's z alone."""
    decisive = [c for c in _comparisons([1.0, 0.0, -1.0], n_tasks=2) if c.record.dimension == "E"]
    payload = build_leaderboard(_ties("U") + decisive, ["a", "b", "c"], dimensions=("U", "E"), n_boot=50)
    assert payload["dimensions"] == ["U", "E"] and payload["z_available"] is False
    e_rates = payload["per_dimension"]["E"]["winrate"]
    assert np.allclose(payload["overall"], [(0.5 + r) / 2 for r in e_rates], atol=2e-6)  # both rounded to 6 places


def test_models_with_the_same_record_share_their_overall_ranks():
    # models 0 and 1 have the same verdicts against the same opponents on every task and beat each other once per
    # task: their bootstrap Overall differs by rounding only (7e-15), which gave model 0 rank 1 in 87 % of replicates
    comparisons = []
    for t in range(10):
        for d in "UEN":
            def judged(a, b, winner):
                return JudgedComparison(record=ComparisonRecord(task=f"t{t}", dimension=d, model_a=a, model_b=b,
                                                                winner=winner), confidence=0.8, family="f")
            for a in (0, 1):
                comparisons += [judged(a, b, w) for b, w in ((2, "A"), (2, "B"), (2, "A"), (3, "A"), (3, "A"), (3, "B"))]
            comparisons += [judged(0, 1, "A"), judged(0, 1, "B"), judged(2, 3, "AB"[t % 2])]
    payload = build_leaderboard(comparisons, ["a", "b", "c", "d"], n_boot=300)
    rank_p = np.array(payload["overall_rank_probabilities"])
    np.testing.assert_allclose(rank_p[0], rank_p[1])
    np.testing.assert_allclose(rank_p.sum(axis=0), 1.0)
    np.testing.assert_allclose(rank_p.sum(axis=1), 1.0)
