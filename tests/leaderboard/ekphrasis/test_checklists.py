"""Stored checklist items: created from templates, versioned on edit, shown to the judge as stored."""

import threading
import time
from unittest import mock

import pytest
from django.db import connection, transaction

from leaderboard.ekphrasis import tig
from leaderboard.ekphrasis.checklists import (
    checklist_for_judging,
    checklist_item_revise,
    checklist_items_ensure,
    checklist_items_ensure_many,
)
from leaderboard.ekphrasis.models import ChecklistItem
from tests.conftest import require_service
from tests.factories import PASSWORD, TaskFactory

pytestmark = pytest.mark.django_db


def test_several_dimensions_ensured_at_once_get_the_items_each_ensured_alone_would_get_in_one_lock_read_and_insert():
    from django.test.utils import CaptureQueriesContext

    alone, together = (TaskFactory(family="combination", brief="One brief for both.") for _ in range(2))
    checklist_item_revise(item=checklist_items_ensure(task=together, dimension="E")[1], text="Revised E slot 2.")
    checklist_item_revise(item=checklist_items_ensure(task=alone, dimension="E")[1], text="Revised E slot 2.")
    expected = {d: checklist_items_ensure(task=alone, dimension=d) for d in "UEN"}
    with CaptureQueriesContext(connection) as queries:
        made = checklist_items_ensure_many(task=together, dimensions="UEN")

    def fields(rows):
        return [(r.dimension, r.slot, r.version, r.text, r.source, r.inspects, r.active) for r in rows]

    assert {d: fields(rows) for d, rows in made.items()} == {d: fields(rows) for d, rows in expected.items()}
    statements = [q["sql"].split()[0] for q in queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    assert statements == ["SELECT", "SELECT", "INSERT"]  # the locks, the read, U's and N's new items


def test_new_items_go_in_one_json_statement_on_postgresql_and_come_back_as_stored():
    """Every judge-run chunk stores its nine template items: on PostgreSQL as one JSON document, not through
    bulk_create (whose statement and per-column arrays cost more than the chunk's other checklist work).
    Each returned item is the stored row, id and creation time included, whatever the database."""
    from django.test.utils import CaptureQueriesContext

    task = TaskFactory(family="combination", brief="One brief.")
    with CaptureQueriesContext(connection) as queries:
        made = checklist_items_ensure_many(task=task, dimensions="UEN")
    inserts = [q["sql"] for q in queries if q["sql"].startswith("INSERT")]
    assert len(inserts) == 1
    if connection.vendor == "postgresql":
        assert "jsonb_to_recordset" in inserts[0]
    fields = [f.attname for f in ChecklistItem._meta.concrete_fields]
    stored = {row.pk: [getattr(row, f) for f in fields] for row in ChecklistItem.objects.filter(task=task)}
    returned = {row.pk: [getattr(row, f) for f in fields] for rows in made.values() for row in rows}
    assert len(stored) == 9 and returned == stored
    assert all(not row._state.adding for rows in made.values() for row in rows)


def test_template_items_fill_three_slots_labelled_as_templates():
    task = TaskFactory(family="combination")
    rows = checklist_items_ensure(task=task, dimension="E")
    assert [r.slot for r in rows] == [1, 2, 3]
    assert {r.source for r in rows} == {"template"} and {r.inspects for r in rows} == {"visual_description"}
    assert "fused entity" in rows[0].text


def test_usefulness_and_novelty_items_inspect_the_core_idea():
    task = TaskFactory()
    for dimension in "UN":
        assert {r.inspects for r in checklist_items_ensure(task=task, dimension=dimension)} == {"core_idea"}


def test_revising_an_item_keeps_the_old_version_inactive():
    task = TaskFactory()
    first = checklist_items_ensure(task=task, dimension="U")[0]
    revised = checklist_item_revise(item=first, text="Which Core Idea fits the brief best?")
    first.refresh_from_db()
    assert (revised.version, revised.active, first.active) == (2, True, False)
    assert checklist_items_ensure(task=task, dimension="U")[0].pk == revised.pk


def test_the_judge_sees_the_stored_wording():
    task = TaskFactory()
    rows = checklist_items_ensure(task=task, dimension="N")
    checklist_item_revise(item=rows[1], text="Which Core Idea borrows from an unexpected domain?")
    checklist = checklist_for_judging(checklist_items_ensure(task=task, dimension="N"), task=task, dimension="N")
    assert checklist.items[1].text == "Which Core Idea borrows from an unexpected domain?"


def test_admin_edit_creates_a_new_version(client, adam):
    task = TaskFactory()
    item = checklist_items_ensure(task=task, dimension="U")[0]
    client.login(username=adam.username, password=PASSWORD)
    response = client.post(f"/admin/leaderboard/checklistitem/{item.pk}/change/", {"text": "Edited wording?"})
    assert response.status_code == 302
    assert ChecklistItem.objects.filter(task=task, dimension="U", slot=1).count() == 2
    assert ChecklistItem.objects.get(task=task, dimension="U", slot=1, active=True).text == "Edited wording?"


def test_an_admin_form_sent_twice_stores_one_new_version(client, adam):
    """The second POST names the version the first one superseded: it made a second active version of
    the slot (IntegrityError on checklist_item_one_active_per_slot, a 500 on the change page)."""
    task = TaskFactory()
    item = checklist_items_ensure(task=task, dimension="U")[0]
    client.force_login(adam)
    for _ in range(2):
        response = client.post(f"/admin/leaderboard/checklistitem/{item.pk}/change/", {"text": "Edited wording?"})
        assert response.status_code == 302
    assert ChecklistItem.objects.filter(task=task, dimension="U", slot=1).count() == 2


def test_revising_a_superseded_version_supersedes_the_active_one():
    task = TaskFactory()
    first = checklist_items_ensure(task=task, dimension="U")[0]
    second = checklist_item_revise(item=first, text="Second wording?")
    third = checklist_item_revise(item=first, text="Third wording?")
    second.refresh_from_db()
    assert (third.version, third.active, second.active) == (3, True, False)
    assert list(ChecklistItem.objects.filter(task=task, dimension="U", slot=1, active=True)) == [third]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # each thread its own connection and transaction, as two requests
def test_two_audits_revising_different_versions_of_one_slot_at_once_do_not_deadlock():
    """Each audit locked its own version first, then the slot's other versions: A held version 1 and waited
    for version 2, which B held while waiting for version 1 (PostgreSQL: "deadlock detected", one audit lost).
    Both audits now lock the slot first; the second waits, then supersedes the first's new version."""
    require_service("postgres")
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks (its writers are serialised): there is no lock order to test")
    task = TaskFactory()
    first = checklist_items_ensure(task=task, dimension="N")[0]
    second = checklist_item_revise(item=first, text="Second wording?")
    # Both audits hold what they lock before the revision, then revise together (a barrier; the second
    # audit now waits for the slot before it, so the first goes on alone once the barrier times out).
    barrier = threading.Barrier(2)
    revise = tig.checklist_item_revise

    def revise_together(**kwargs):
        try:
            barrier.wait(timeout=2)
        except threading.BrokenBarrierError:
            pass
        return revise(**kwargs)

    errors: list[BaseException] = []

    def audit(item_id: int, wording: str):
        try:
            tig.tig_audit_apply(item_id=item_id, action="revise", revision=wording)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread below
            errors.append(exc)
        finally:
            connection.close()

    with mock.patch.object(tig, "checklist_item_revise", revise_together):
        threads = [threading.Thread(target=audit, args=(item.pk, f"Audit {n} wording?"))
                   for n, item in enumerate((first, second), 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "an audit hung"
    assert not errors, errors
    versions = ChecklistItem.objects.filter(task=task, dimension="N", slot=1)
    assert sorted(versions.values_list("version", flat=True)) == [1, 2, 3, 4]
    assert versions.filter(active=True).count() == 1
    assert versions.get(active=True).version == 4


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # each thread its own connection and transaction, as two requests
def test_ensuring_a_slot_while_it_is_revised_sees_the_new_version():
    """checklist_items_ensure read the slot's versions in the statement that waited for the reviser's lock:
    PostgreSQL hands such a statement the locked rows as committed (the old version, now inactive) but not
    the version the reviser made, so the slot looked empty and ensure made the same version again
    (IntegrityError). It now locks, then reads the versions in a new statement, and returns the new one."""
    require_service("postgres")
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks (its writers are serialised): no statement waits for a reviser")
    task = TaskFactory()
    first = checklist_items_ensure(task=task, dimension="U")[0]
    revised = threading.Event()  # the reviser holds the slot and its new version, not yet committed
    ensuring: dict[str, int] = {}
    errors: list[BaseException] = []
    result: list[list[ChecklistItem]] = []

    def reviser():
        try:
            with transaction.atomic():
                checklist_item_revise(item=first, text="A revised wording?")
                revised.set()
                # Commit only once the other request's statement is waiting for this transaction's locks.
                deadline = time.monotonic() + 30  # not a wait: the bound of a loop that polls the server
                with connection.cursor() as cursor:
                    while time.monotonic() < deadline:
                        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted AND pid = %s",
                                       [ensuring["pid"]])
                        if cursor.fetchone()[0]:
                            break
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread below
            errors.append(exc)
        finally:
            connection.close()

    def ensurer():
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                ensuring["pid"] = cursor.fetchone()[0]
            assert revised.wait(timeout=30)
            result.append(checklist_items_ensure(task=task, dimension="U"))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=ensurer), threading.Thread(target=reviser)]
    threads[0].start()
    while "pid" not in ensuring and threads[0].is_alive():  # the reviser polls this request's backend
        threads[0].join(timeout=0.01)
    threads[1].start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a request hung"
    assert not errors, errors
    slot_one = next(row for row in result[0] if row.slot == 1)
    assert (slot_one.version, slot_one.text) == (2, "A revised wording?")
    versions = ChecklistItem.objects.filter(task=task, dimension="U", slot=1)
    assert sorted(versions.values_list("version", flat=True)) == [1, 2]


def test_checklist_items_are_found_by_task_through_the_version_constraint_not_an_index_of_their_own():
    """Every lookup of items by task (with its dimension) and a task's cascade delete still have an index:
    ``checklist_item_version_unique`` begins with the task and the dimension; no second index on the task
    alone is written for every item stored (migration 0014)."""
    table = ChecklistItem._meta.db_table
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    indexed = {name: c["columns"] for name, c in constraints.items() if c["index"] or c["unique"]}
    assert [name for name, columns in indexed.items() if columns == ["task_id"]] == []
    assert indexed["checklist_item_version_unique"][:2] == ["task_id", "dimension"]
    if connection.vendor == "postgresql":
        # the planner can serve a lookup by task from an index (sequential scans off: an index, not a table, is read)
        task = TaskFactory()
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            for query in (ChecklistItem.objects.filter(task=task, dimension="N", context_key="tig:1|2"),
                          ChecklistItem.objects.filter(task=task)):
                sql, params = query.query.sql_with_params()
                cursor.execute("EXPLAIN " + sql, params)
                plan = "\n".join(row[0] for row in cursor.fetchall())
                assert "Index" in plan and "Seq Scan" not in plan, plan
