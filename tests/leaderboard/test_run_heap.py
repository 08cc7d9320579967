"""An inline judge run keeps the objects its process held before it out of its garbage collections
(leaderboard/runs/run_heap.py, issue 30), and hands them back afterwards."""

from __future__ import annotations

import gc
import weakref
from types import SimpleNamespace

import pytest

from leaderboard.ekphrasis import judge_chunk, judge_runs
from leaderboard.runs import run_heap
from leaderboard.runs.run_heap import run_heap_frozen
from tests.leaderboard.judging_factories import population, simulated_run


@pytest.mark.django_db
def test_an_inline_runs_chunks_run_with_the_objects_held_before_it_frozen_and_unfrozen_after(monkeypatch):
    # A test that imported evalsite.wsgi earlier in this process froze its start-up heap there (and a frozen
    # heap makes the block do nothing): start from a process that froze nothing, as the CLI's does.
    gc.unfreeze()
    task_set, models = population(n_models=4, n_tasks=2, name="heap")
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    seen = []
    real = judge_chunk.task_execute

    def task_execute(*args, **kwargs):
        seen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(judge_runs, "task_execute", task_execute)
    assert judge_runs.judge_run_execute_inline(run=run) is not None
    assert len(seen) == 2 and min(seen) > 10_000  # the loaded site and the test's objects, set aside
    assert gc.get_freeze_count() == 0


def test_garbage_unreachable_before_the_block_is_collected_after_it():
    """Nothing is kept for the process's life: the frozen objects go back to the collector."""
    gc.unfreeze()  # as above: from a process that froze nothing

    class Node:
        pass

    cycle = Node()
    cycle.me = cycle
    gone = weakref.ref(cycle)
    del cycle
    with run_heap_frozen():
        gc.collect()
        assert gone() is not None  # frozen: not walked
    gc.collect()
    assert gone() is None


def test_a_freeze_made_before_the_block_is_left_as_it_was(monkeypatch):
    """A site worker froze its start-up heap (evalsite/startup_heap.py): the block must not unfreeze it. (The
    frozen count itself is no witness: a frozen object that is freed leaves it, so the block's calls are.)"""
    calls = []
    monkeypatch.setattr(run_heap, "gc", SimpleNamespace(
        get_freeze_count=gc.get_freeze_count,
        freeze=lambda: calls.append("freeze"),
        unfreeze=lambda: calls.append("unfreeze"),
    ))
    gc.freeze()
    try:
        with run_heap_frozen():
            assert gc.get_freeze_count() > 0
        assert calls == []
    finally:
        gc.unfreeze()
    with run_heap_frozen():  # and with nothing frozen before, the block freezes and unfreezes
        assert calls == ["freeze"]
    assert calls == ["freeze", "unfreeze"]
