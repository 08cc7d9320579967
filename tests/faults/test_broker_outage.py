"""tests/faults/broker_outage.py: Redis stopped during a running judge run loses and repeats no unit, and
a run started while it is away waits and starts by itself when it returns."""

from __future__ import annotations

import shutil

import pytest


def test_a_broker_outage_during_a_judge_run_loses_and_repeats_nothing(run_scenario):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    # 150 s for all the waiting on the worker; the rest of the 420 s is for the throwaway servers, migrating
    # and the inline reference run, so that on a slow machine the scenario reports its figures itself
    figures = run_scenario("tests.faults.broker_outage", "--tasks", "10", "--budget", "20", "--outage-s", "5",
                           "--timeout-s", "150", timeout=420)
    print(figures)
    assert figures["status"] == "done" and figures["error"] == ""
    assert (figures["chunks_lost"], figures["repeated"], figures["planned_left"]) == (0, 0, 0)
    assert figures["identical_to_reference"]
    waiting = figures["started_during_outage"]
    assert waiting["refused"] is None and waiting["note"].startswith("Queued: the task queue could not be reached")
    assert waiting["done_after_back_s"] is not None
