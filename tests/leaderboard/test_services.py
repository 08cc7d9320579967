"""Imports and exports of the catalogue: every error class names file, line and
field, and leaves the database exactly as it was. The catalogue revision moves exactly when the
models' names change."""

from __future__ import annotations

import csv
import io
import json

import pytest

from leaderboard.import_contract import ImportFailed
from leaderboard.models import Response, SubjectModel, Task, TaskSet
from leaderboard.selectors import catalogue_revision
from leaderboard.services import catalogue
from leaderboard.services.catalogue import (
    catalogue_revision_sync,
    responses_export,
    responses_import,
    subject_model_ensure,
    subject_model_save,
    subject_models_delete,
    tasks_export,
    tasks_import,
)
from tests.factories import SubjectModelFactory

pytestmark = pytest.mark.django_db


def jsonl(*rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


TASKS = [
    {"id": "a1", "family": "abstraction", "subtype": "process/temporal", "brief": "Express time passing.", "constraints": {"avoid": ["clocks"]}},
    {"id": "c1", "family": "combination", "subtype": "AC-medium", "brief": "Fuse coffee and ink painting.", "source": {"concept_a": "coffee"}},
    {"id": "d1", "family": "adaption", "subtype": "digital product", "brief": "An onboarding illustration."},
]


def plan(core="A subway map of deadlines.", visual="A pale transit map with fraying red lines."):
    return {"core_idea": core, "visual_description": visual}


def import_tasks_file(rows=TASKS, name="tasks.jsonl"):
    return tasks_import(name=name, raw=jsonl(*rows), task_set_name="vci", version="1")


def snapshot():
    return (
        list(TaskSet.objects.values_list("name", "version", "frozen")),
        list(Task.objects.order_by("pk").values_list("external_id", "family", "brief")),
        list(Response.objects.order_by("pk").values_list("sample", "raw_sha256", "is_primary")),
        list(SubjectModel.objects.values_list("display_name")),
    )


def assert_fails_unchanged(call, *, line, field, fragment):
    before = snapshot()
    with pytest.raises(ImportFailed) as info:
        call()
    assert snapshot() == before
    matching = [e for e in info.value.errors if e.line == line and e.field == field]
    assert matching, f"no error at line {line} field {field!r}: {info.value}"
    assert fragment in matching[0].message
    return info.value


def test_tasks_import_creates_tasks_and_maps_adaption_alias():
    task_set, summary = import_tasks_file()
    assert summary.created == 3
    assert task_set.tasks.get(external_id="d1").family == "adaptation"
    assert task_set.tasks.get(external_id="a1").constraints == {"avoid": ["clocks"]}


def test_tasks_reimport_of_the_same_file_changes_nothing():
    import_tasks_file()
    before = snapshot()
    _, summary = import_tasks_file()
    assert (summary.created, summary.updated, summary.unchanged) == (0, 0, 3)
    assert snapshot() == before


def test_tasks_import_rejects_unknown_family_naming_line_and_field():
    rows = TASKS[:1] + [{"id": "x", "family": "collage", "brief": "b"}]
    error = assert_fails_unchanged(lambda: import_tasks_file(rows), line=2, field="family", fragment="unknown family")
    assert "tasks.jsonl:2" in str(error)


def test_tasks_import_rejects_duplicate_id():
    rows = TASKS + [dict(TASKS[0])]
    assert_fails_unchanged(lambda: import_tasks_file(rows), line=4, field="id", fragment="duplicate id")


def test_tasks_import_rejects_missing_field():
    rows = [{"id": "a1", "family": "abstraction"}]
    assert_fails_unchanged(lambda: import_tasks_file(rows), line=1, field="brief", fragment="missing")


def test_tasks_import_rejects_unknown_key_instead_of_dropping_it():
    rows = [dict(TASKS[0], colour="red")]
    assert_fails_unchanged(lambda: import_tasks_file(rows), line=1, field="colour", fragment="unknown field")


def test_tasks_import_rejects_wrong_type():
    rows = [dict(TASKS[0], constraints=["clocks"])]
    assert_fails_unchanged(lambda: import_tasks_file(rows), line=1, field="constraints", fragment="must be an object")


def test_tasks_import_rejects_bad_utf8_naming_the_line():
    raw = jsonl(TASKS[0]) + b'{"id": "b\xff", "family": "abstraction", "brief": "x"}\n'
    before = snapshot()
    with pytest.raises(ImportFailed) as info:
        tasks_import(name="bad.jsonl", raw=raw, task_set_name="vci", version="1")
    assert snapshot() == before
    assert info.value.errors[0].line == 2 and "UTF-8" in info.value.errors[0].message


def test_tasks_import_rejects_invalid_json_line():
    raw = jsonl(TASKS[0]) + b"{not json\n"
    with pytest.raises(ImportFailed) as info:
        tasks_import(name="t.jsonl", raw=raw, task_set_name="vci", version="1")
    assert info.value.errors[0].line == 2


def test_tasks_import_into_a_frozen_set_refuses_changes():
    task_set, _ = import_tasks_file()
    task_set.frozen = True
    task_set.save()
    rows = [dict(TASKS[0], brief="A different brief.")] + TASKS[1:]
    assert_fails_unchanged(lambda: import_tasks_file(rows), line=1, field="id", fragment="frozen")


def test_tasks_import_reads_csv_with_json_cells():
    raw = (
        b"id,family,subtype,brief,constraints\n"
        b'a1,abstraction,process/temporal,Express time passing.,"{""avoid"": [""clocks""]}"\n'
    )
    task_set, summary = tasks_import(name="t.csv", raw=raw, task_set_name="vci", version="1")
    assert summary.created == 1
    assert task_set.tasks.get().constraints == {"avoid": ["clocks"]}


def test_tasks_import_csv_error_names_the_csv_line():
    raw = b"id,family,brief\na1,abstraction,ok\na2,sculpture,bad\n"
    with pytest.raises(ImportFailed) as info:
        tasks_import(name="t.csv", raw=raw, task_set_name="vci", version="1")
    assert (info.value.errors[0].line, info.value.errors[0].field) == (3, "family")



@pytest.mark.parametrize("name,raw", [
    ("t.jsonl", b'{"id": "t1", "family": "natural", "subtype": "reconstruction", "brief": "Paint it.", '
                b'"constraints": {"budget": 5, "size": 64}}\n'),
    ("t.csv", b"id,family,brief\nt1,natural,Paint it.\n"),
])
def test_tasks_import_refuses_an_easel_task_set_which_needs_an_image_per_task(name, raw):
    # The records were stored as EASEL tasks without a reference image or engine record: the EASEL page's
    # "start run" then answered 500 (KeyError 'budget'), and with a budget given the run failed on the missing
    # image and the episode's first canvas was a 500.
    before = snapshot()
    with pytest.raises(ImportFailed) as info:
        tasks_import(name=name, raw=raw, task_set_name="easel-by-file", version="1", benchmark_kind="easel")
    assert snapshot() == before
    assert info.value.errors[0].file == name and "manage.py easel_suite" in str(info.value)


# ---------------------------------------------------------------- responses


@pytest.fixture
def task_set():
    SubjectModel.objects.create(display_name="m1")
    SubjectModel.objects.create(display_name="m2")
    task_set, _ = import_tasks_file()
    return task_set


def import_responses_file(task_set, rows, **kwargs):
    return responses_import(name="responses.jsonl", raw=jsonl(*rows), task_set=task_set, **kwargs)


def test_responses_import_makes_sample_one_primary_by_default(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": s, **plan(core=f"idea {s}")} for s in (1, 2, 3)]
    summary = import_responses_file(task_set, rows)
    assert summary.created == 3
    assert list(Response.objects.filter(is_primary=True).values_list("sample", flat=True)) == [1]


def test_responses_import_honours_an_explicit_primary(task_set):
    rows = [
        {"task_id": "a1", "model": "m1", "sample": 1, **plan(core="one")},
        {"task_id": "a1", "model": "m1", "sample": 2, "primary": True, **plan(core="two")},
    ]
    import_responses_file(task_set, rows)
    assert Response.objects.get(is_primary=True).sample == 2


def test_responses_import_splits_raw_text_with_the_parser(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": 1, "text": "**Core Idea:** A map.\n\n**Visual Description:** Lines."}]
    import_responses_file(task_set, rows)
    response = Response.objects.get()
    assert (response.core_idea, response.visual_description, response.normalisation_method) == ("A map.", "Lines.", "parser")


def test_responses_import_keeps_unsplittable_text_raw_and_flagged(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": 1, "text": "I would paint a river of clocks melting."}]
    summary = import_responses_file(task_set, rows)
    response = Response.objects.get()
    assert summary.flagged_for_llm_split == 1
    assert response.needs_llm_split and response.raw_text.startswith("I would paint")


def test_responses_reimport_is_idempotent(task_set):
    rows = [{"task_id": "a1", "model": m, "sample": 1, **plan()} for m in ("m1", "m2")]
    import_responses_file(task_set, rows)
    before = snapshot()
    summary = import_responses_file(task_set, rows)
    assert (summary.created, summary.unchanged) == (0, 2)
    assert snapshot() == before


def test_responses_import_rejects_unknown_task(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": 1, **plan()}, {"task_id": "zz", "model": "m1", "sample": 1, **plan()}]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=2, field="task_id", fragment="unknown task")


def test_responses_import_rejects_unknown_model(task_set):
    rows = [{"task_id": "a1", "model": "ghost", "sample": 1, **plan()}]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=1, field="model", fragment="unknown model")


def test_responses_import_can_create_unknown_models_when_asked(task_set):
    rows = [{"task_id": "a1", "model": "ghost", "sample": 1, **plan()}]
    import_responses_file(task_set, rows, create_models=True)
    assert SubjectModel.objects.filter(display_name="ghost").exists()


def test_responses_import_rejects_two_primaries_in_one_file(task_set):
    rows = [
        {"task_id": "a1", "model": "m1", "sample": 1, "primary": True, **plan(core="one")},
        {"task_id": "a1", "model": "m1", "sample": 2, "primary": True, **plan(core="two")},
    ]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=2, field="primary", fragment="second primary")


def test_responses_import_rejects_a_primary_conflicting_with_the_database(task_set):
    import_responses_file(task_set, [{"task_id": "a1", "model": "m1", "sample": 1, **plan(core="one")}])
    rows = [{"task_id": "a1", "model": "m1", "sample": 2, "primary": True, **plan(core="two")}]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=1, field="primary", fragment="second primary")


def test_responses_import_rejects_sample_of_wrong_type(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": "1", **plan()}]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=1, field="sample", fragment="must be an integer")


def test_responses_import_rejects_zero_based_sample(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": 0, **plan()}]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=1, field="sample", fragment="1-based")


def test_responses_import_rejects_changed_text_for_an_existing_sample(task_set):
    import_responses_file(task_set, [{"task_id": "a1", "model": "m1", "sample": 1, **plan()}])
    rows = [{"task_id": "a1", "model": "m1", "sample": 1, **plan(core="Changed.")}]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=1, field="core_idea", fragment="immutable")


def test_responses_import_rejects_text_and_fields_together(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": 1, "text": "x", **plan()}]
    assert_fails_unchanged(lambda: import_responses_file(task_set, rows), line=1, field="text", fragment="either")


def test_responses_import_with_one_bad_line_writes_nothing(task_set):
    good = [{"task_id": "a1", "model": "m1", "sample": s, **plan(core=f"i{s}")} for s in (1, 2)]
    bad = [{"task_id": "a1", "model": "m1", "sample": 3, "core_idea": "only the idea"}]
    assert_fails_unchanged(
        lambda: import_responses_file(task_set, good + bad), line=3, field="visual_description", fragment="missing"
    )


# ---------------------------------------------------------------- round trip


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_import_export_round_trips_identically(task_set, fmt, django_db_blocker):
    rows = [
        {"task_id": "a1", "model": "m1", "sample": 1, **plan(core="Ünïcode idea, with a comma.")},
        {"task_id": "a1", "model": "m1", "sample": 2, "text": "## Core Idea\nA map.\n## Visual Description\nLines."},
        {"task_id": "c1", "model": "m2", "sample": 1, "text": "unsplittable rambling"},
        {"task_id": "c1", "model": "m2", "sample": 2, "primary": True, **plan(core="second")},
    ]
    import_responses_file(task_set, rows)
    tasks_text = tasks_export(task_set=task_set, fmt=fmt)
    responses_text = responses_export(task_set=task_set, fmt=fmt)

    Response.objects.all().delete()
    Task.objects.all().delete()
    TaskSet.objects.all().delete()
    SubjectModel.objects.all().delete()

    name = f"x.{fmt}"
    fresh, _ = tasks_import(name=name, raw=tasks_text.encode(), task_set_name="vci", version="1")
    responses_import(name=name, raw=responses_text.encode(), task_set=fresh, create_models=True)
    assert tasks_export(task_set=fresh, fmt=fmt) == tasks_text
    assert responses_export(task_set=fresh, fmt=fmt) == responses_text


FORMULA_CELLS = ["=HYPERLINK(\"http://evil\")", "+1", "-2", "@SUM(A1)", "\tTab", "\rCR", "'=kept quote"]


def test_csv_exports_neutralise_formula_cells_and_import_them_back_unchanged(task_set):
    rows = [{"task_id": "a1", "model": "m1", "sample": n, "text": value} for n, value in enumerate(FORMULA_CELLS, 1)]
    import_responses_file(task_set, rows)
    csv_text = responses_export(task_set=task_set, fmt="csv")
    jsonl_text = responses_export(task_set=task_set, fmt="jsonl")
    cells = [row["text"] for row in csv.DictReader(io.StringIO(csv_text))]
    assert cells == ["'" + value for value in FORMULA_CELLS]
    assert [json.loads(line)["text"] for line in jsonl_text.splitlines()] == FORMULA_CELLS  # JSONL keeps raw text

    Response.objects.all().delete()
    responses_import(name="x.csv", raw=csv_text.encode(), task_set=task_set)
    assert list(Response.objects.order_by("sample").values_list("raw_text", flat=True)) == FORMULA_CELLS
    assert responses_export(task_set=task_set, fmt="csv") == csv_text


# ---------------------------------------------------------------- the catalogue revision


def test_the_catalogue_revision_moves_when_a_models_names_change_and_only_then(db):
    start = catalogue_revision_sync()
    model = subject_model_save(model=SubjectModel(display_name="Demo Atlas"))
    assert catalogue_revision() == start + 1
    model.price_input_per_mtok, model.base_url = 2.5, "https://example.org/v1"
    subject_model_save(model=model, update_fields=["price_input_per_mtok", "base_url"])
    subject_model_ensure(display_name="Demo Atlas", defaults={"family": "ignored"})
    assert catalogue_revision() == start + 1  # no name changed
    for field, value in (("display_name", "Demo Orion"), ("provider_id", "acme/orion-2"), ("family", "Orion")):
        setattr(model, field, value)
        subject_model_save(model=model, update_fields=[field])
    assert catalogue_revision() == start + 4
    subject_model_ensure(display_name="simulated-x", defaults={"is_simulated": True})
    subject_models_delete(models=SubjectModel.objects.filter(display_name="simulated-x"))
    assert catalogue_revision() == start + 6


def test_a_model_written_around_the_services_moves_the_revision_at_the_next_sync(db):
    start = catalogue_revision_sync()
    SubjectModelFactory(display_name="Made In A Shell")
    assert catalogue_revision() == start
    assert catalogue_revision_sync() == start + 1 == catalogue_revision()
    assert catalogue_revision_sync() == start + 1


def test_responses_import_creating_models_moves_the_revision(task_set):
    start = catalogue_revision_sync()
    rows = [{"task_id": "a1", "model": "brand-new", "sample": 1, **plan()}]
    responses_import(name="r.jsonl", raw=jsonl(*rows), task_set=task_set, create_models=True)
    assert catalogue_revision() == start + 1


def test_the_listeners_hear_the_new_revision_once_it_commits(db, monkeypatch, django_capture_on_commit_callbacks):
    heard = []
    monkeypatch.setattr(catalogue, "_REVISION_LISTENERS", [heard.append])
    with django_capture_on_commit_callbacks(execute=True):
        subject_model_save(model=SubjectModel(display_name="Demo Atlas"))
        assert heard == []  # not before the commit: a worker must see the new model
    assert heard == [catalogue_revision()]
