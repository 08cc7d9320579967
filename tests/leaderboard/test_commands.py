"""The CLI: import → export → import into an empty database → export is identical."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.demo import DEMO_DIR
from leaderboard.models import Response, SubjectModel, Task, TaskSet
from tests.factories import TaskSetFactory

pytestmark = pytest.mark.django_db


def export(tmp_path, command, fmt):
    out = tmp_path / f"{command}.{fmt}"
    call_command(command, "--task-set", "demo", "--format", fmt, "--output", str(out))
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_cli_round_trip_of_the_demo_files_is_identical(tmp_path, fmt):
    call_command("import_tasks", str(DEMO_DIR / "ekphrasis_tasks.jsonl"), "--task-set", "demo", "--version", "1")
    call_command(
        "import_responses", str(DEMO_DIR / "ekphrasis_responses.jsonl"), "--task-set", "demo", "--create-models"
    )
    tasks, responses = export(tmp_path, "export_tasks", fmt), export(tmp_path, "export_responses", fmt)

    Response.objects.all().delete(), Task.objects.all().delete(), TaskSet.objects.all().delete()
    SubjectModel.objects.all().delete()
    (tmp_path / f"t.{fmt}").write_text(tasks, encoding="utf-8")
    (tmp_path / f"r.{fmt}").write_text(responses, encoding="utf-8")
    call_command("import_tasks", str(tmp_path / f"t.{fmt}"), "--task-set", "demo", "--version", "1")
    call_command("import_responses", str(tmp_path / f"r.{fmt}"), "--task-set", "demo", "--create-models")

    assert export(tmp_path, "export_tasks", fmt) == tasks
    assert export(tmp_path, "export_responses", fmt) == responses


def test_cli_import_error_names_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "family": "origami", "brief": "b"}) + "\n")
    with pytest.raises(CommandError, match=r"bad.jsonl:1: field 'family': unknown family"):
        call_command("import_tasks", str(bad), "--task-set", "s", "--version", "1")
    assert not TaskSet.objects.exists()


def test_cli_import_responses_names_an_unknown_task_set(tmp_path):
    with pytest.raises(CommandError, match="no task set named 'nope'"):
        call_command("import_responses", str(DEMO_DIR / "ekphrasis_responses.jsonl"), "--task-set", "nope")


def _checklist_item():
    from leaderboard.ekphrasis.models import ChecklistItem
    from tests.factories import TaskFactory

    return ChecklistItem.objects.create(task=TaskFactory(), dimension="N", slot=1, text="Avoids clocks?",
                                        inspects="core_idea", source="tig")


@pytest.mark.parametrize("line,field", [
    ('{"checklist_item_id": %d, "action": "exclude", "action": "accept"}', "action"),
    ('{"checklist_item_id": NaN, "action": "exclude"}', "checklist_item_id"),
    ('{"checklist_item_id": %d, "action": " exclude"}', "action"),
    ('{"checklist_item_id": 99999999999999999999, "action": "exclude"}', "checklist_item_id"),
])
def test_apply_tig_audit_refuses_a_malformed_file_naming_line_and_field_and_changes_nothing(tmp_path, line, field):
    item = _checklist_item()
    path = tmp_path / "audit.jsonl"
    good = json.dumps({"checklist_item_id": item.pk, "action": "exclude"})
    path.write_text(good + "\n" + (line % item.pk if "%d" in line else line) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match=f"audit.jsonl:2: field '{field}'"):
        call_command("apply_tig_audit", str(path))
    item.refresh_from_db()
    assert item.active


def test_apply_tig_audit_applies_a_well_formed_file(tmp_path):
    item = _checklist_item()
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"checklist_item_id": item.pk, "action": "exclude"}).encode() + b"\n")
    call_command("apply_tig_audit", str(path))
    item.refresh_from_db()
    assert not item.active


@pytest.mark.parametrize("command", ["import_tasks", "import_responses"])
def test_cli_import_of_a_folder_is_a_command_error_not_a_traceback(tmp_path, command):
    TaskSetFactory(name="demo", version="1")
    with pytest.raises(CommandError, match=rf"{tmp_path}: not a readable file"):
        call_command(command, str(tmp_path), "--task-set", "demo", "--version", "1")
    assert not Task.objects.exists() and not Response.objects.exists()


def test_export_tig_items_refuses_another_benchmark_and_a_missing_output_folder_instead_of_a_traceback(tmp_path, capsys):
    from leaderboard.models import Benchmark
    from tests.factories import BenchmarkFactory

    TaskSetFactory(name="c2-set", benchmark=BenchmarkFactory(kind=Benchmark.Kind.C2, name="C2"))
    with pytest.raises(CommandError, match="c2-set.*Ekphrasis"):
        call_command("export_tig_items", "--task-set", "c2-set")
    ekphrasis_set = TaskSetFactory(name="ek-set")
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("export_tig_items", "--task-set", "ek-set", "-o", str(tmp_path / "missing" / "items.jsonl"))
    call_command("export_tig_items", "--task-set", "ek-set", "-o", str(tmp_path / "items.jsonl"))
    assert (tmp_path / "items.jsonl").read_text() == ""
    assert f"no TIG Novelty items for {ekphrasis_set}" in capsys.readouterr().err


@pytest.mark.parametrize("command, args", [("import_renders", ["--task-set", "demo"]), ("apply_tig_audit", [])])
def test_import_renders_and_apply_tig_audit_of_a_folder_say_it_is_not_a_readable_file(tmp_path, command, args):
    TaskSetFactory(name="demo", version="1")
    with pytest.raises(CommandError, match=rf"^{tmp_path}: not a readable file \(Is a directory\)$"):
        call_command(command, str(tmp_path), *args)
