"""Parsers of each dataset's published record format: good records in, RecordError(line, field) out."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from pathlib import Path

import pytest

from engine.c2.tasks import (
    C2TaskType,
    RecordError,
    parse_creation_mmbench,
    parse_livecodebench,
    parse_macgyver,
    parse_okvqa,
    parse_triviaqa,
    parse_writingprompts,
)


def test_task_types_split_into_the_two_regimes() -> None:
    assert {t.value for t in C2TaskType if t.regime == "convergent"} == {"qa", "code", "vqa"}
    assert {t.value for t in C2TaskType if t.is_visual} == {"vqa", "visual_story"}


# ---------------------------------------------------------------- TriviaQA

TRIVIA = {
    "Data": [
        {
            "Question": "Which band recorded Abbey Road?",
            "QuestionId": "tc_1",
            "Answer": {"Value": "The Beatles", "NormalizedAliases": ["beatles", "fab four"], "HumanAnswers": ["The Beatles!"]},
        },
        {"Question": "Capital of France?", "QuestionId": "tc_2", "Answer": {"Value": "Paris", "NormalizedAliases": ["paris"]}},
    ],
    "Version": 1.0,
}


def test_triviaqa_ground_truths_are_aliases_plus_human_answers() -> None:
    items = parse_triviaqa(json.dumps(TRIVIA, indent=2))
    assert [item.external_id for item in items] == ["tc_1", "tc_2"]
    assert items[0].answers == ("beatles", "fab four", "The Beatles!")
    assert items[0].reference == "The Beatles"


def test_triviaqa_error_names_the_line_and_field() -> None:
    broken = json.loads(json.dumps(TRIVIA))
    del broken["Data"][1]["Answer"]["NormalizedAliases"]
    text = json.dumps(broken, indent=2)
    with pytest.raises(RecordError) as error:
        parse_triviaqa(text)
    assert error.value.field == "Answer.NormalizedAliases"
    assert text.splitlines()[error.value.line - 1].strip().startswith('"Question": "Capital')


def test_triviaqa_duplicate_question_id_is_an_error() -> None:
    doubled = {"Data": [TRIVIA["Data"][0], TRIVIA["Data"][0]]}
    with pytest.raises(RecordError, match="duplicate"):
        parse_triviaqa(json.dumps(doubled))


# ---------------------------------------------------------------- LiveCodeBench


def _lcb(**overrides: object) -> dict:
    record = {
        "question_title": "Sum", "question_content": "Read a and b, print a+b.", "platform": "atcoder",
        "question_id": "abc001_a", "contest_id": "abc001", "contest_date": "2024-01-01T00:00:00",
        "starter_code": "", "difficulty": "easy",
        "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
        "private_test_cases": json.dumps([{"input": "5 5\n", "output": "10\n", "testtype": "stdin"}]),
        "metadata": "{}",
    }
    record.update(overrides)
    return record


def test_livecodebench_joins_public_and_private_tests() -> None:
    (item,) = parse_livecodebench(json.dumps(_lcb()))
    assert item.tests.inputs == ("1 2\n", "5 5\n") and item.tests.func_name is None
    assert item.metadata["platform"] == "atcoder"


def test_livecodebench_decodes_pickled_private_tests_and_reads_func_name() -> None:
    private = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(
        [{"input": "[1]\n2", "output": "[1, 2]", "testtype": "functional"}]
    )))).decode()
    record = _lcb(
        public_test_cases=json.dumps([{"input": "[]\n1", "output": "[1]", "testtype": "functional"}]),
        private_test_cases=private, metadata=json.dumps({"func_name": "append"}),
        starter_code="class Solution:\n    def append(self, xs, y):\n        ",
    )
    (item,) = parse_livecodebench(json.dumps(record))
    assert item.tests.func_name == "append" and len(item.tests.inputs) == 2


class _Exploit:
    def __reduce__(self):  # noqa: ANN204
        return (os.system, ("echo pwned",))


def test_livecodebench_refuses_a_malicious_pickle_with_its_line() -> None:
    evil = base64.b64encode(zlib.compress(pickle.dumps(_Exploit()))).decode()
    text = json.dumps(_lcb(question_id="ok")) + "\n" + json.dumps(_lcb(question_id="bad", private_test_cases=evil))
    with pytest.raises(RecordError) as error:
        parse_livecodebench(text)
    assert (error.value.line, error.value.field) == (2, "private_test_cases")
    assert "refused" in error.value.message


def test_livecodebench_functional_tests_need_func_name() -> None:
    record = _lcb(public_test_cases=json.dumps([{"input": "1", "output": "1", "testtype": "functional"}]),
                  private_test_cases="[]")
    with pytest.raises(RecordError) as error:
        parse_livecodebench(json.dumps(record))
    assert error.value.field == "metadata.func_name"


def test_livecodebench_bad_json_line_is_named() -> None:
    with pytest.raises(RecordError) as error:
        parse_livecodebench(json.dumps(_lcb()) + "\n{not json")
    assert error.value.line == 2


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_separator_inside_a_json_string_is_text_not_a_line_break(separator: str) -> None:
    # JSON allows these raw inside a string; only "\n" ends a JSONL line, so the next line is still line 2
    record = _lcb()
    record["question_content"] = f"Add{separator}two numbers."
    with pytest.raises(RecordError) as error:
        parse_livecodebench(json.dumps(record, ensure_ascii=False) + "\n{not json")
    assert error.value.line == 2


# ---------------------------------------------------------------- OK-VQA


def _okvqa(tmp_path: Path, answers: list[str] | None = None) -> tuple[str, str]:
    (tmp_path / "COCO_val2014_000000000042.jpg").write_bytes(b"\xff\xd8fake")
    questions = {"questions": [{"image_id": 42, "question": "What animal is this?", "question_id": 420}]}
    annotations = {"annotations": [{
        "question_id": 420, "image_id": 42, "question_type": "other", "answer_type": "other",
        "answers": [{"answer": a, "answer_id": i + 1, "answer_confidence": "yes"} for i, a in enumerate(answers or ["cat"] * 10)],
    }]}
    return json.dumps(questions, indent=1), json.dumps(annotations, indent=1)


def test_okvqa_joins_questions_answers_and_images(tmp_path: Path) -> None:
    questions, annotations = _okvqa(tmp_path)
    (item,) = parse_okvqa(questions, annotations, tmp_path)
    assert item.answers == ("cat",) * 10
    assert item.image_path.endswith("COCO_val2014_000000000042.jpg")


def test_okvqa_needs_ten_answers(tmp_path: Path) -> None:
    questions, annotations = _okvqa(tmp_path, answers=["cat"] * 9)
    with pytest.raises(RecordError) as error:
        parse_okvqa(questions, annotations, tmp_path)
    assert error.value.field == "annotations.answers"


def test_okvqa_missing_image_is_named(tmp_path: Path) -> None:
    questions, annotations = _okvqa(tmp_path)
    (tmp_path / "COCO_val2014_000000000042.jpg").unlink()
    with pytest.raises(RecordError) as error:
        parse_okvqa(questions, annotations, tmp_path)
    assert error.value.field == "image_id"


# ---------------------------------------------------------------- divergent


def test_writingprompts_one_prompt_per_line() -> None:
    items = parse_writingprompts("[ WP ] A dragon opens a bakery . <newline> It fails .\n[ WP ] The moon files a complaint .\n")
    assert [item.external_id for item in items] == ["wp-1", "wp-2"]
    assert "\n" in items[0].prompt


def test_writingprompts_a_line_separator_inside_a_prompt_does_not_split_it() -> None:
    items = parse_writingprompts("[ WP ] A dragon\u2028opens a bakery .\r\n[ WP ] The moon files a complaint .\r\n")
    assert [item.external_id for item in items] == ["wp-1", "wp-2"]


def test_writingprompts_empty_line_is_an_error() -> None:
    with pytest.raises(RecordError) as error:
        parse_writingprompts("[ WP ] One\n\n[ WP ] Two\n")
    assert error.value.line == 2


def test_macgyver_problems_need_problem_text() -> None:
    items = parse_macgyver(json.dumps({"Problem": "Open a jar with a spoon and a towel.", "Solution": "Lever it."}))
    assert items[0].reference == "Lever it."
    with pytest.raises(RecordError) as error:
        parse_macgyver(json.dumps({"Solution": "x"}))
    assert error.value.field == "Problem"


def test_creation_mmbench_images_must_sit_in_the_folder(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"\x89PNGfake")
    line = {"index": 7, "question": "Write a poem about this.", "image": "a.png", "role": "You are a poet."}
    (item,) = parse_creation_mmbench(json.dumps(line), tmp_path)
    assert item.prompt.startswith("You are a poet.")
    with pytest.raises(RecordError) as error:
        parse_creation_mmbench(json.dumps({**line, "image": "../etc/passwd"}), tmp_path)
    assert error.value.field == "image"


def test_every_bad_record_of_a_file_is_reported_not_only_the_first() -> None:
    good = json.dumps({"id": "m1", "Problem": "Open a jar without tools."})
    text = "\n".join([good, json.dumps({"id": "m2"}), good.replace("m1", "m3"), good])  # line 4 repeats m1
    with pytest.raises(RecordError) as error:
        parse_macgyver(text)
    assert [(e.line, e.field) for e in error.value.errors] == [(2, "Problem"), (4, "id")]


# ---------------------------------------------------------------- strict JSON (one reader for every import)


def _pickled(text: str) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(text))).decode()


def _errors(parse, *args) -> list[tuple[int, str, str]]:
    with pytest.raises(RecordError) as error:
        parse(*args)
    return [(e.line, e.field, e.message) for e in getattr(error.value, "errors", [error.value])]


_CASE = '{"input": "1 2\\n", "output": "3\\n", "output": "4\\n", "testtype": "stdin"}'
STRICT_JSONL = [
    # (parser, second line, field, message fragment): Python's json kept the last of two keys and read NaN
    (parse_macgyver, '{"Problem": "Open a jar.", "Problem": "Open a door."}', "Problem", "duplicate key"),
    (parse_macgyver, '{"Problem": "Open a jar.", "score": NaN}', "score", "finite number, got NaN"),
    (parse_macgyver, '{"Problem": "Open a jar.", "id": -Infinity}', "id", "finite number, got -Infinity"),
    (parse_macgyver, '{"Problem": "Open a jar.", "weight": 1e400}', "weight", "finite number"),
    (parse_livecodebench, json.dumps(_lcb(question_id="q2", public_test_cases=f"[{_CASE}]")),
     "public_test_cases[0].output", "duplicate key"),
    (parse_livecodebench, json.dumps(_lcb(question_id="q2", private_test_cases='[{"input": "1", "output": NaN}]')),
     "private_test_cases[0].output", "finite"),
    (parse_livecodebench, json.dumps(_lcb(question_id="q2", metadata='{"func_name": "f", "func_name": "g"}')),
     "metadata.func_name", "duplicate key"),
    (parse_livecodebench, json.dumps(_lcb(question_id="q2", private_test_cases=_pickled(f"[{_CASE}]"))),
     "private_test_cases[0].output", "duplicate key in one object (in the pickled JSON)"),
    (parse_livecodebench, json.dumps(_lcb(question_id="q2", private_test_cases=_pickled('[{"input": Infinity}]'))),
     "private_test_cases[0].input", "finite number, got Infinity (in the pickled JSON)"),
]


@pytest.mark.parametrize(("parse", "second", "field", "fragment"), STRICT_JSONL,
                         ids=[f"{p.__name__}-{f}-{m.split()[0]}" for p, _, f, m in STRICT_JSONL])
def test_duplicate_keys_and_non_finite_numbers_are_refused_at_their_line_and_field(parse, second, field, fragment):
    first = json.dumps(_lcb()) if parse is parse_livecodebench else json.dumps({"Problem": "Boil water."})
    errors = _errors(parse, first + "\n" + second + "\n")
    assert [(line, name) for line, name, _ in errors] == [(2, field)], errors
    assert fragment in errors[0][2]


def test_a_triviaqa_duplicate_key_is_named_at_its_records_line() -> None:
    text = json.dumps(TRIVIA, indent=2).replace('"Value": "Paris"', '"Value": "Paris", "Value": "Lyon"')
    text = text.replace('"Version": 1.0', '"Version": Infinity')
    errors = _errors(parse_triviaqa, text)
    assert [(name, message) for _, name, message in errors] == [
        ("Answer.Value", "duplicate key in one object"), ("Version", "must be a finite number, got Infinity"),
    ]
    assert text.splitlines()[errors[0][0] - 1].strip().startswith('"Question": "Capital')
    assert errors[1][0] == 1


def test_an_okvqa_duplicate_key_names_the_annotation_record(tmp_path: Path) -> None:
    questions, annotations = _okvqa(tmp_path)
    annotations = annotations.replace('"image_id": 42', '"image_id": 42, "image_id": 43')
    questions = questions.replace('"question": "What animal is this?"', '"question": NaN')
    errors = _errors(parse_okvqa, questions, annotations, tmp_path)
    assert [(name, message) for _, name, message in errors] == [
        ("annotations.image_id", "duplicate key in one object"), ("question", "must be a finite number, got NaN"),
    ]
    assert all(line > 1 for line, _, _ in errors)  # each record's own line in its file (indented JSON)


def test_a_one_document_file_that_is_not_json_names_the_line_where_it_breaks() -> None:
    text = json.dumps(TRIVIA, indent=2).replace('"QuestionId": "tc_2",', '"QuestionId": "tc_2"')
    (error,) = _errors(parse_triviaqa, text)
    assert error[1] == "(file)" and "not valid JSON" in error[2]
    assert '"Answer"' in text.splitlines()[error[0] - 1]


def test_a_cr_only_dataset_is_read_line_by_line_with_its_own_line_numbers() -> None:
    # an old Mac editor's file: read by LF it was one line ("Extra data") and every error was at line 1
    records = [{"id": "m1", "Problem": "Open a jar."}, {"id": "m2"}, {"id": "m3", "Problem": "Cross a river."}]
    (error,) = _errors(parse_macgyver, "\r".join(json.dumps(r) for r in records) + "\r")
    assert error[:2] == (2, "Problem")
    assert [i.line for i in parse_writingprompts("[ WP ] one\r[ WP ] two\r")] == [1, 2]
    text = json.dumps(TRIVIA, indent=2).replace('"QuestionId": "tc_2",', '"QuestionId": "tc_2"')
    (error,) = _errors(parse_triviaqa, text.replace("\n", "\r"))
    assert '"Answer"' in text.splitlines()[error[0] - 1]
