"""Token and cost accounting."""

from __future__ import annotations

import threading

import pytest

from engine.providers.usage import UsageLedger, cost_usd


def test_cost_is_priced_per_million_tokens():
    assert cost_usd(2_000_000, 1_000_000, 0.5, 2.0) == pytest.approx(1.0 + 2.0)


def test_ledger_sums_answers_per_model_and_in_total():
    ledger = UsageLedger()
    ledger.record_answer("judge", prompt_tokens=100, completion_tokens=20, cost_usd=0.01, attempts=1)
    ledger.record_answer("judge", prompt_tokens=50, completion_tokens=10, cost_usd=0.02, attempts=3)
    ledger.record_answer("aux", prompt_tokens=7, completion_tokens=3, cost_usd=0.5, attempts=1)
    judge = ledger.by_model()["judge"]
    assert (judge.calls, judge.retries, judge.prompt_tokens, judge.completion_tokens) == (2, 2, 150, 30)
    assert ledger.totals().cost_usd == pytest.approx(0.53)
    assert ledger.totals().calls == 3


def test_cache_hits_cost_nothing():
    ledger = UsageLedger()
    ledger.record_cache_hit("judge")
    totals = ledger.totals()
    assert (totals.cached_hits, totals.calls, totals.cost_usd, totals.prompt_tokens) == (1, 0, 0.0, 0)


def test_failures_count_their_retries():
    ledger = UsageLedger()
    ledger.record_failure("judge", attempts=6)
    totals = ledger.totals()
    assert (totals.failures, totals.retries, totals.calls) == (1, 5, 0)


def test_ledger_is_safe_across_threads():
    ledger = UsageLedger()

    def work() -> None:
        for _ in range(2_000):
            ledger.record_answer("judge", prompt_tokens=1, completion_tokens=1, cost_usd=0.0, attempts=1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledger.totals().calls == 8_000
    assert ledger.totals().prompt_tokens == 8_000


def test_snapshot_is_json_ready():
    ledger = UsageLedger()
    ledger.record_answer("judge", prompt_tokens=1, completion_tokens=2, cost_usd=0.25, attempts=1)
    snapshot = ledger.as_dict()
    assert snapshot["total"]["completion_tokens"] == 2
    assert snapshot["by_model"]["judge"]["cost_usd"] == 0.25
