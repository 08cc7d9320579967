"""C² imports: each dataset's published format through the catalogue contract (file:line:field, all or
nothing, idempotent), images stored with their tasks, and pickled private tests decoded safely."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from leaderboard.c2.models import C2TaskImage
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.import_contract import ImportFailed
from leaderboard.models import Task, TaskSet

pytestmark = pytest.mark.django_db


def triviaqa(*questions: dict) -> bytes:
    return json.dumps({"Version": 1.0, "Data": list(questions)}, indent=1).encode()


def tqa(qid: str, question: str, aliases: list[str], **answer) -> dict:
    return {"Question": question, "QuestionId": qid, "Answer": {"Value": aliases[0], "NormalizedAliases": aliases, **answer}}


def lcb(qid: str, *, private: str = "[]", public: list | None = None, metadata: str = "{}") -> dict:
    return {
        "question_id": qid, "question_title": "Sum", "question_content": "Read two integers and print their sum.",
        "starter_code": "", "platform": "atcoder", "difficulty": "easy", "contest_date": "2024-01-01",
        "public_test_cases": json.dumps(public if public is not None else [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
        "private_test_cases": private, "metadata": metadata,
    }


def jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def png(path, colour=(200, 30, 30)) -> None:
    Image.new("RGB", (8, 6), colour).save(path, format="PNG")


def run_import(fmt: str, raw: bytes, **kwargs):
    return c2_tasks_import(fmt=fmt, name=f"data.{fmt}", raw=raw, task_set_name="c2-test", version="1", **kwargs)


def pickled_private(value) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(value))).decode()


def test_triviaqa_import_stores_aliases_and_human_answers_as_ground_truths():
    task_set, summary = run_import("triviaqa", triviaqa(tqa("tc_1", "Which planet is red?", ["mars", "planet mars"], HumanAnswers=["the red planet"])))
    task = task_set.tasks.get()
    assert (task.family, task.subtype, task.brief) == ("qa", "triviaqa", "Which planet is red?")
    assert task.constraints["answers"] == ["mars", "planet mars", "the red planet"]
    assert summary.created == 1 and task_set.benchmark.kind == "c2"


def test_reimporting_the_same_file_changes_nothing():
    raw = triviaqa(tqa("tc_1", "Which planet is red?", ["mars"]))
    run_import("triviaqa", raw)
    _, summary = run_import("triviaqa", raw)
    assert (summary.created, summary.updated, summary.unchanged) == (0, 0, 1)
    assert Task.objects.count() == 1


def test_a_bad_triviaqa_record_names_file_line_and_field_and_writes_nothing():
    raw = triviaqa(tqa("tc_1", "Fine?", ["yes"]), {"Question": "Broken", "QuestionId": "tc_2", "Answer": {"NormalizedAliases": []}})
    with pytest.raises(ImportFailed) as caught:
        run_import("triviaqa", raw)
    error = caught.value.errors[0]
    assert error.file == "data.triviaqa" and error.field == "Answer.NormalizedAliases" and error.line > 1
    assert not TaskSet.objects.exists() and not Task.objects.exists()


def test_every_bad_record_is_named_with_its_own_line_and_nothing_is_written():
    raw = triviaqa(tqa("tc_1", "Fine?", ["yes"]), {"Question": "No answer", "QuestionId": "tc_2"},
                   tqa("tc_3", "Fine too?", ["yes"]), {"Question": "No id", "Answer": {"NormalizedAliases": ["x"]}})
    with pytest.raises(ImportFailed) as caught:
        run_import("triviaqa", raw)
    found = [(e.field, e.file) for e in caught.value.errors]
    assert found == [("Answer", "data.triviaqa"), ("QuestionId", "data.triviaqa")]
    assert len({e.line for e in caught.value.errors}) == 2
    assert not TaskSet.objects.exists() and not Task.objects.exists()


def test_livecodebench_import_keeps_public_and_private_tests_and_func_name():
    private = pickled_private(json.dumps([{"input": "5 6\n", "output": "11\n", "testtype": "stdin"}]))
    task_set, _ = run_import("livecodebench", jsonl(lcb("abc001_a", private=private)))
    tests = task_set.tasks.get().constraints["tests"]
    assert tests["inputs"] == ["1 2\n", "5 6\n"] and tests["outputs"] == ["3\n", "11\n"] and tests["fn_name"] is None


def test_a_pickle_that_names_a_global_is_refused_with_file_and_line():
    class Evil:
        def __reduce__(self):
            import os

            return (os.system, ("echo pwned",))

    raw = jsonl(lcb("ok_1"), lcb("evil_2", private=pickled_private(Evil())))
    with pytest.raises(ImportFailed) as caught:
        run_import("livecodebench", raw)
    error = caught.value.errors[0]
    assert (error.file, error.line, error.field) == ("data.livecodebench", 2, "private_test_cases")
    assert "posix.system" in error.message or "os.system" in error.message
    assert not Task.objects.exists()


def test_okvqa_import_joins_annotations_and_stores_the_image(tmp_path):
    png(tmp_path / "COCO_val2014_000000000042.png")
    questions = json.dumps({"questions": [{"image_id": 42, "question": "What colour is it?", "question_id": 420}]}).encode()
    annotations = json.dumps({"annotations": [{"question_id": 420, "image_id": 42, "answers": [{"answer": "red"}] * 10}]}).encode()
    task_set, _ = run_import("okvqa", questions, annotations_name="ann.json", annotations_raw=annotations, images_dir=tmp_path)
    task = task_set.tasks.get()
    assert task.family == "vqa" and task.constraints["answers"] == ["red"] * 10
    image = C2TaskImage.objects.get(task=task)
    assert image.content_type == "image/png" and (image.width, image.height) == (8, 6)


def test_an_okvqa_annotation_error_names_the_annotations_file(tmp_path):
    png(tmp_path / "COCO_val2014_000000000042.png")
    questions = json.dumps({"questions": [{"image_id": 42, "question": "What colour?", "question_id": 420}]}).encode()
    annotations = json.dumps({"annotations": [{"question_id": 420, "image_id": 42, "answers": [{"answer": "red"}] * 9}]}).encode()
    with pytest.raises(ImportFailed) as caught:
        run_import("okvqa", questions, annotations_name="ann.json", annotations_raw=annotations, images_dir=tmp_path)
    assert caught.value.errors[0].file == "ann.json" and caught.value.errors[0].field == "answers"
    assert not Task.objects.exists() and not C2TaskImage.objects.exists()


def test_writingprompts_import_reads_one_prompt_per_line_and_rejects_an_empty_line():
    task_set, _ = run_import("writingprompts", b"[ WP ] A lighthouse keeper finds a door.\n[ WP ] The moon files a complaint.\n")
    assert list(task_set.tasks.values_list("family", flat=True)) == ["story", "story"]
    with pytest.raises(ImportFailed) as caught:
        c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] fine\n\n[ WP ] after a gap\n",
                        task_set_name="other", version="1")
    assert (caught.value.errors[0].line, caught.value.errors[0].field) == (2, "prompt")


def test_macgyver_import_keeps_the_reference_solution_out_of_the_prompt():
    task_set, _ = run_import("macgyver", jsonl({"id": "m1", "Problem": "Open a jar with a belt.", "Solution": "Loop the belt."}))
    task = task_set.tasks.get()
    assert task.family == "idea" and task.brief == "Open a jar with a belt." and task.constraints["reference"] == "Loop the belt."


def test_creation_mmbench_import_needs_each_image_file(tmp_path):
    png(tmp_path / "harbour.png")
    record = {"index": 7, "question": "Write the story of this harbour.", "image": "harbour.png", "task_name": "story"}
    task_set, _ = run_import("creation_mmbench", jsonl(record), images_dir=tmp_path)
    assert task_set.tasks.get().c2_image.file_name == "harbour.png"
    with pytest.raises(ImportFailed) as caught:
        c2_tasks_import(fmt="creation_mmbench", name="cm.jsonl", raw=jsonl({**record, "image": "missing.png"}),
                        task_set_name="other", version="1", images_dir=tmp_path)
    assert (caught.value.errors[0].file, caught.value.errors[0].line, caught.value.errors[0].field) == ("cm.jsonl", 1, "image")


def test_an_id_of_another_task_type_is_an_error_not_a_replacement():
    run_import("macgyver", jsonl({"id": "shared", "Problem": "Open a jar."}))
    with pytest.raises(ImportFailed) as caught:
        run_import("livecodebench", jsonl(lcb("shared")))
    assert "already exists" in caught.value.errors[0].message
    assert Task.objects.get().family == "idea"


def test_import_command_reports_errors_and_imports_good_files(tmp_path):
    good = tmp_path / "wp.txt"
    good.write_bytes(b"[ WP ] A city forgets its name.\n")
    out = io.StringIO()
    call_command("import_c2", str(good), "--task-set", "cli", "--version", "1", "--format", "writingprompts", stdout=out)
    assert "1 created" in out.getvalue()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"Problem": ""}\n')
    with pytest.raises(CommandError, match=r"bad.jsonl:1: field 'Problem'"):
        call_command("import_c2", str(bad), "--task-set", "cli", "--version", "1", "--format", "macgyver")


def test_a_changed_image_of_a_frozen_set_is_an_error_and_the_stored_image_stays(tmp_path):
    from leaderboard.services.catalogue import taskset_freeze

    png(tmp_path / "harbour.png")
    record = jsonl({"index": 7, "question": "Write the story of this harbour.", "image": "harbour.png"})
    task_set, _ = run_import("creation_mmbench", record, images_dir=tmp_path)
    stored = C2TaskImage.objects.get().sha256
    taskset_freeze(task_set=task_set)
    png(tmp_path / "harbour.png", colour=(0, 0, 255))
    with pytest.raises(ImportFailed) as caught:
        run_import("creation_mmbench", record, images_dir=tmp_path)
    assert (caught.value.errors[0].line, caught.value.errors[0].field) == (1, "image") and "frozen" in caught.value.errors[0].message
    assert C2TaskImage.objects.get().sha256 == stored


def test_a_task_image_over_the_pixel_budget_is_refused_naming_file_line_and_field(tmp_path):
    from tests.hostile_images import huge_png

    (tmp_path / "harbour.png").write_bytes(huge_png())
    record = {"index": 7, "question": "Write the story of this harbour.", "image": "harbour.png", "task_name": "story"}
    with pytest.raises(ImportFailed) as caught:
        run_import("creation_mmbench", jsonl(record), images_dir=tmp_path)
    error = caught.value.errors[0]
    assert (error.line, error.field) == (1, "image") and "over the budget of 16,777,216 pixels" in error.message
    assert not Task.objects.exists() and not C2TaskImage.objects.exists()


def c2_errors(fmt: str, raw: bytes) -> list[tuple[str, int, str, str]]:
    with pytest.raises(ImportFailed) as caught:
        run_import(fmt, raw)
    return [(e.file, e.line, e.field, e.message) for e in caught.value.errors]


NESTED = "[" * 100_000 + "]" * 100_000
DIGITS = "1" * 5_000  # past CPython's 4,300-digit int() limit: json.loads raises a plain ValueError


@pytest.mark.parametrize(("fmt", "raw", "line", "field", "fragment"), [
    # json.loads raised RecursionError / ValueError for these, past the parsers' JSONDecodeError handlers;
    # the strict reader names the field the nesting is under
    ("triviaqa", b'{"Data":[' + NESTED.encode() + b"]}", 1, "Data", "nested deeper than 20 levels"),
    ("macgyver", jsonl({"Problem": "p"}) + b'{"Problem":"p","x":' + NESTED.encode() + b"}\n", 2, "x", "deeper than"),
    ("macgyver", jsonl({"Problem": "p"}) + b'{"Problem":"p","id":' + DIGITS.encode() + b"}\n", 2, "(record)", "digits"),
    ("livecodebench", jsonl({**lcb("q1"), "public_test_cases": NESTED}), 1, "public_test_cases", "deeper than"),
    ("livecodebench", jsonl({**lcb("q1"), "public_test_cases": f"[{DIGITS}]"}), 1, "public_test_cases", "not valid JSON"),
    ("livecodebench", jsonl(lcb("q1", private=NESTED)), 1, "private_test_cases", "deeper than"),
    ("livecodebench", jsonl(lcb("q1", metadata=NESTED)), 1, "metadata", "deeper than"),
    ("livecodebench", jsonl(lcb("q1", metadata=DIGITS)), 1, "metadata", "not valid JSON"),
    # a lone surrogate made the catalogue's re-encoding of the items raise UnicodeEncodeError; the dataset's
    # own reader now names the dataset's field
    ("macgyver", jsonl({"Problem": "p"}) + b'{"Problem":"q\\udc00"}\n', 2, "Problem", "lone surrogate"),
    ("triviaqa", b'{"Data":[{"Question":"q\\ud800?","QuestionId":"q1","Answer":{"NormalizedAliases":["a"]}}]}',
     1, "Question", "lone surrogate"),
], ids=["triviaqa-deep", "macgyver-deep", "macgyver-digits", "lcb-public-deep", "lcb-public-digits", "lcb-private-deep",
        "lcb-metadata-deep", "lcb-metadata-digits", "macgyver-surrogate", "triviaqa-surrogate"])
def test_undecodable_json_is_an_error_at_its_line_and_field_never_an_exception(fmt, raw, line, field, fragment):
    errors = c2_errors(fmt, raw)
    assert [(e[1], e[2]) for e in errors] == [(line, field)], errors
    assert fragment in errors[0][3]
    assert not TaskSet.objects.exists() and not Task.objects.exists()


@pytest.mark.parametrize("fmt", ["triviaqa", "macgyver"])
def test_a_utf8_byte_order_mark_is_dropped(fmt):
    raw = triviaqa(tqa("tc_1", "Which planet is red?", ["mars"])) if fmt == "triviaqa" else jsonl({"Problem": "p"})
    task_set, summary = run_import(fmt, b"\xef\xbb\xbf" + raw)
    assert summary.created == 1 and task_set.tasks.count() == 1


@pytest.mark.parametrize(("fmt", "raw", "line", "field", "fragment"), [
    # Python's json kept the later of two keys (the task silently got "Open a door.") and read NaN/Infinity
    ("macgyver", jsonl({"Problem": "p"}) + b'{"Problem": "Open a jar.", "Problem": "Open a door."}\n',
     2, "Problem", "duplicate key"),
    ("macgyver", jsonl({"Problem": "p"}) + b'{"Problem": "Open a jar.", "Solution": "x", "rank": NaN}\n',
     2, "rank", "finite number, got NaN"),
    ("livecodebench", jsonl(lcb("q1", metadata='{"func_name": "f", "difficulty": Infinity}')),
     1, "metadata.difficulty", "finite number, got Infinity"),
    ("livecodebench", jsonl(lcb("q1", private=pickled_private('[{"input": "1", "output": "2", "output": "3"}]'))),
     1, "private_test_cases[0].output", "duplicate key in one object (in the pickled JSON)"),
    ("triviaqa", triviaqa(tqa("tc_1", "Fine?", ["yes"])).replace(b'"Version": 1.0', b'"Version": NaN'),
     1, "Version", "finite number, got NaN"),
], ids=["macgyver-duplicate", "macgyver-nan", "lcb-metadata-infinity", "lcb-pickled-duplicate", "triviaqa-nan"])
def test_duplicate_keys_and_nan_are_refused_naming_file_line_and_field(fmt, raw, line, field, fragment):
    with pytest.raises(ImportFailed) as caught:
        run_import(fmt, raw)
    errors = [(e.file, e.line, e.field, e.message) for e in caught.value.errors]
    assert [e[:3] for e in errors] == [(f"data.{fmt}", line, field)], errors
    assert fragment in errors[0][3]
    assert f"data.{fmt}:{line}: field '{field}'" in str(caught.value)
    assert not TaskSet.objects.exists() and not Task.objects.exists()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_dataset_file_is_named_as_not_utf8(encoding):
    raw = jsonl({"Problem": "Open a jar without tools."}).decode().encode(encoding)
    with pytest.raises(ImportFailed) as caught:
        run_import("macgyver", raw)
    (error,) = caught.value.errors
    assert (error.file, error.line) == ("data.macgyver", 0) and "not UTF-8: it is UTF-16" in error.message
    assert not TaskSet.objects.exists()


def test_a_prompt_a_c2_run_used_cannot_change_in_place():
    from leaderboard.c2.services import runs as c2_runs

    task_set, _ = c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sea.\n[ WP ] The moon resigns.\n",
                                  task_set_name="c2-used", version="1")
    c2_runs.c2_run_create(task_set=task_set, model_names=["simulated-one"], n_samples=1, template="standard",
                          rater_name="simulated")
    with pytest.raises(ImportFailed) as refused:
        c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sky.\n[ WP ] The moon resigns.\n",
                        task_set_name="c2-used", version="1")
    assert "C² run" in str(refused.value) and "new version" in str(refused.value)
    assert sorted(Task.objects.filter(task_set=task_set).values_list("brief", flat=True))[0] == "[ WP ] A door in the sea."


def _line_endings(raw: bytes, ending: bytes) -> bytes:
    return raw.replace(b"\n", ending)


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"], ids=["cr-only", "crlf"])
def test_a_jsonl_dataset_saved_with_cr_only_or_crlf_line_endings_is_read_line_by_line(ending):
    # an old Mac editor ends lines with CR alone: read by LF the file was one line, refused as "Extra data"
    good = [{"id": f"m{i}", "Problem": f"Problem {i}."} for i in range(3)]
    task_set, _ = run_import("macgyver", _line_endings(jsonl(*good), ending))
    assert sorted(task_set.tasks.values_list("external_id", flat=True)) == ["m0", "m1", "m2"]
    with pytest.raises(ImportFailed) as caught:
        c2_tasks_import(fmt="macgyver", name="mg.jsonl", raw=_line_endings(jsonl(good[0], {"id": "m9"}, good[1]), ending),
                        task_set_name="other", version="1")
    assert [(e.file, e.line, e.field) for e in caught.value.errors] == [("mg.jsonl", 2, "Problem")]


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"], ids=["cr-only", "crlf"])
def test_a_livecodebench_file_with_cr_only_line_endings_names_the_line_of_a_bad_record(ending):
    raw = _line_endings(jsonl(lcb("q1"), lcb("q2", public=[{"input": "1"}]), lcb("q3")), ending)
    with pytest.raises(ImportFailed) as caught:
        run_import("livecodebench", raw)
    assert {(e.line, e.field.split("[")[0]) for e in caught.value.errors} == {(2, "public_test_cases")}


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"], ids=["cr-only", "crlf"])
def test_a_one_document_dataset_with_cr_only_line_endings_names_each_records_own_line(ending):
    # TriviaQA: a bad record's line is where it starts; a file that is not JSON names where decoding stopped
    raw = _line_endings(triviaqa(tqa("tc_1", "Fine?", ["yes"]), {"Question": "No answer", "QuestionId": "tc_2"}), ending)
    with pytest.raises(ImportFailed) as caught:
        run_import("triviaqa", raw)
    lines = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    lf_line = next(n for n, line in enumerate(lines, start=1) if b'"No answer"' in line)
    assert [(e.line, e.field) for e in caught.value.errors] == [(lf_line, "Answer")]
    broken = _line_endings(b'{"Version": 1.0,\n "Data": [\n  {"Question": "x",,}\n ]}\n', ending)
    with pytest.raises(ImportFailed) as caught:
        run_import("triviaqa", broken)
    assert caught.value.errors[0].line == 3


def test_writingprompts_with_cr_only_line_endings_are_one_prompt_per_line():
    task_set, _ = run_import("writingprompts", b"[ WP ] A lighthouse keeper finds a door.\r[ WP ] The moon files a complaint.\r")
    assert task_set.tasks.count() == 2
    with pytest.raises(ImportFailed) as caught:
        c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] fine\r\r[ WP ] after a gap\r",
                        task_set_name="other", version="1")
    assert (caught.value.errors[0].line, caught.value.errors[0].field) == (2, "prompt")


def test_a_byte_that_is_not_utf8_is_named_at_its_line_in_a_cr_only_file():
    with pytest.raises(ImportFailed) as caught:
        run_import("writingprompts", b"[ WP ] one\r[ WP ] two\r[ WP ] thr\xffee\r")
    assert caught.value.errors[0].line == 3
