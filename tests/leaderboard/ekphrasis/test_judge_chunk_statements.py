"""The judge chunk's reads kept across chunks (leaderboard/ekphrasis/judge_chunk.py, issue 30): the comparisons',
stored Novelty contexts' and pool's reads compiled once (evalsite.precompiled.read_rows) give exactly what the
ORM's reads gave (the old forms are frozen here as the oracles). The statements that write a ledger are
tests/leaderboard/ekphrasis/test_ledger_statements.py's."""

from __future__ import annotations

import pytest

from leaderboard.ekphrasis import judge_chunk, judge_runs, ledger_statements
from leaderboard.ekphrasis.models import Comparison
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


def _stored_by_the_orm(run, task, dimensions: str) -> dict[str, list]:
    """The read as it was: a queryset built and compiled for every call."""
    out = {d: [] for d in dimensions}
    rows = Comparison.objects.filter(run=run, task=task)
    if len(dimensions) == 1:
        rows = rows.filter(dimension=dimensions)
    for dimension, *row in rows.order_by().values_list("dimension", "pk", *ledger_statements.STORED_COLUMNS[1:]):
        if dimension in out:
            out[dimension].append(ledger_statements.Stored(*row))
    return out


def test_a_chunks_comparisons_read_by_the_kept_statement_are_those_the_orms_read_gives():
    task_set, models = population(n_models=5, n_tasks=2, name="kept-read")
    run = simulated_run(task_set, models, budget=12, dimensions="UEN", malformed_rate=0.3)
    judge_runs.judge_run_execute_inline(run=run)
    other = simulated_run(task_set, models, budget=6, dimensions="U", seed=8)  # another run's rows stay out
    judge_runs.judge_run_execute_inline(run=other)
    for task in task_set.tasks.all():
        for dimensions in ("UEN", "U", "E", "N", "UE", "X"):
            kept, orm = judge_chunk._stored(run, task, dimensions), _stored_by_the_orm(run, task, dimensions)
            assert kept == orm
            assert [[type(v) for v in r] for rows in kept.values() for r in rows] == \
                [[type(v) for v in r] for rows in orm.values() for r in rows]
        assert sum(map(len, judge_chunk._stored(run, task, "UEN").values())) > 10


def test_the_comparisons_read_names_the_parameters_its_statement_binds_in_their_order():
    for dimension in ("U", None):
        params = judge_chunk._stored_queryset(3, 4, dimension).query.sql_with_params()[1]
        assert list(params) == judge_chunk._stored_params(3, 4, dimension)


def _contexts_by_the_orm(task, version: str) -> dict:
    """:func:`leaderboard.ekphrasis.tig.stored_novelty_contexts` as it was: a queryset built and compiled each time."""
    from leaderboard.ekphrasis.models import ChecklistItem
    from leaderboard.ekphrasis.tig import _CONTEXT_ITEM_COLUMNS, ContextItem

    out: dict = {}
    rows = ChecklistItem.objects.filter(task=task, dimension="N", context_key__startswith="tig:",
                                        context_key__endswith=f"@{version}").order_by("context_key", "slot", "-version")
    for row in rows.values_list(*_CONTEXT_ITEM_COLUMNS):
        item = ContextItem(*row)
        out.setdefault(item.context_key, [])
        if item.active:
            out[item.context_key].append(item)
    return out


def test_a_tasks_stored_novelty_contexts_read_by_the_kept_statement_are_those_the_orms_read_gives():
    from django.utils import timezone

    from leaderboard.ekphrasis.models import ChecklistItem
    from leaderboard.ekphrasis.tig import stored_novelty_contexts

    task_set, models = population(n_models=5, n_tasks=2, name="kept-contexts")
    run = simulated_run(task_set, models, budget=10, dimensions="N")
    judge_runs.judge_run_execute_inline(run=run)
    task, other = task_set.tasks.order_by("pk")
    versions = set(ChecklistItem.objects.filter(task=task, context_key__startswith="tig:")
                   .values_list("context_key", flat=True))
    versions = {key.rsplit("@", 1)[1] for key in versions}
    assert versions  # the run stored TIG contexts
    # versions with LIKE's special characters, and keys a wrong escape would also match
    odd = ["a%b_c\\d", "aXbYc\\d", "a%b_c\\\\d", "plain"]
    for k, version in enumerate(odd):
        for slot, active in ((1, True), (2, False), (3, True)):
            ChecklistItem.objects.create(task=task, dimension="N", slot=slot, context_key=f"tig:p{k}@{version}",
                                         text=f"item {k} {slot} \u00e9\u4e2d", inspects="core_idea", source="tig",
                                         version=1, active=active, provenance={"k": k, "x": [1.5, None, "s"]})
    ChecklistItem.objects.create(task=other, dimension="N", slot=1, context_key="tig:q@plain", text="other task",
                                 inspects="core_idea", source="tig", provenance={})
    ChecklistItem.objects.create(task=task, dimension="U", slot=1, context_key="tig:q@plain", text="other dimension",
                                 inspects="core_idea", source="tig", provenance={}, created_at=timezone.now())
    for version in [*sorted(versions), *odd, "%", "_", "missing"]:
        kept, orm = stored_novelty_contexts(task=task, version=version), _contexts_by_the_orm(task, version)
        assert kept == orm
        assert [[type(getattr(i, f)) for f in i.__slots__] for items in kept.values() for i in items] == \
            [[type(getattr(i, f)) for f in i.__slots__] for items in orm.values() for i in items]
    assert len(stored_novelty_contexts(task=task, version="a%b_c\\d")) == 1


def _instance(response) -> tuple:
    fields = {k: v for k, v in response.__dict__.items() if k != "_state"}
    return (type(response), fields, [type(v) for v in fields.values()], sorted(response.get_deferred_fields()),
            response._state.db, response._state.adding)


def test_a_chunks_pool_read_by_the_kept_statement_gives_the_responses_the_orms_read_made():
    from leaderboard.models import Response, SubjectModel, Task
    from tests.factories import ResponseFactory, SubjectModelFactory

    task_set, models = population(n_models=4, n_tasks=2, name="kept-pool")
    task = Task.objects.filter(task_set=task_set).order_by("pk").first()
    judge = SubjectModelFactory(display_name="kept-pool-judge", role=SubjectModel.Role.JUDGE)
    ResponseFactory(task=task, subject_model=judge, sample=1, is_primary=True, core_idea="a judge's own")
    ResponseFactory(task=task, subject_model=models[1], sample=2, is_primary=False, core_idea="\u00e9 second",
                    visual_description="")
    for t in Task.objects.filter(task_set=task_set):
        kept = judge_chunk._subject_responses(t.pk)
        orm = list(judge_chunk._subject_responses_queryset(t.pk))
        assert [_instance(r) for r in kept] == [_instance(r) for r in orm]
        assert len(kept) == Response.objects.filter(task=t, subject_model__role=SubjectModel.Role.SUBJECT).count()
    assert len(judge_chunk._subject_responses(task.pk)) == 5  # the judge's response is not one
