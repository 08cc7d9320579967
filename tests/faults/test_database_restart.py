"""tests/faults/database_restart.py: PostgreSQL restarted under 20 annotators loses and repeats nothing."""

from __future__ import annotations


def test_a_postgres_restart_under_twenty_annotators_loses_duplicates_and_over_assigns_nothing(run_scenario):
    figures = run_scenario("tests.faults.database_restart", "--annotators", "20", "--items-each", "6",
                           "--outage-s", "2", "--mode", "immediate")
    print(figures)
    assert figures["all_done"] and figures["problems"] == []
    assert (figures["lost"], figures["duplicated"], figures["over_assigned"], figures["unexpected"]) == (0, 0, 0, 0)
    # Refused clearly while the database is away (a request queued behind a busy worker may be answered
    # 200 after it is back), and never a 500.
    assert "503" in figures["answers_during_outage"]["next"]
    assert all(status in {"200", "201", "503", "0"} for answers in figures["answers_overall"].values() for status in answers)
    assert figures["recovery_s"] is not None


def test_readyz_turns_503_within_a_second_of_the_database_going_away_and_200_after(run_scenario):
    figures = run_scenario("tests.faults.database_restart", "--annotators", "2", "--items-each", "6",
                           "--outage-s", "2")
    assert figures["readyz_to_503_s"] is not None and figures["readyz_to_503_s"] < 1.0
    assert figures["readyz_back_to_200_s"] is not None
    assert "503" in figures["readyz_during_outage"] and "500" not in figures["readyz_during_outage"]
