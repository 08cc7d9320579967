"""C² task types and parsers of each dataset's published record format (c2-eval.txt §4.1 "Datasets").

Task types (§3.1.2, §4.1): convergent ``qa`` (TriviaQA), ``code`` (LiveCodeBench), ``vqa`` (OK-VQA);
divergent ``story`` (WritingPrompts), ``idea`` (MacGyver), ``visual_story`` (Creation-MMBench).

Every parser takes the file's text (and for OK-VQA two files and the image folder) and returns plain
:class:`C2Item` records, or raises :class:`RecordError` naming the line and field of the first bad record.
``line`` is the physical line for line-oriented files (JSONL, WritingPrompts) and, for one-document JSON
files (TriviaQA, OK-VQA), the line on which the offending record starts. The caller prefixes the file
name and writes nothing on any error. Every JSON text — a JSONL line, a one-document file, a JSON string
inside a record (LiveCodeBench's test cases and metadata, the pickled tests' text) — is read by the
project's strict reader (:func:`engine.strict_json.json_decode`): a duplicate key, ``NaN``/``Infinity``/
``1e400``, a NUL or a lone surrogate is an error naming its field, never a value silently chosen.

Record formats read (field names as in the official releases):

* TriviaQA (``qa/*.json``): ``{"Data": [{"Question", "QuestionId", "Answer": {"Value", "NormalizedAliases",
  "HumanAnswers"?, "NormalizedValue"?...}}], "Version", ...}``. Ground truths are ``NormalizedAliases`` plus
  ``HumanAnswers`` when present, as ``triviaqa_evaluation.get_ground_truths`` (which normalises the
  human answers first; grading normalises every ground truth anyway); ``Answer.Value`` is the
  display answer.
* LiveCodeBench (``test.jsonl`` of code_generation_lite): ``question_id``, ``question_title``,
  ``question_content``, ``starter_code``, ``public_test_cases`` (JSON string: list of {input, output,
  testtype}), ``private_test_cases`` (JSON string, or base64 → zlib → pickle of a JSON string — decoded by
  :func:`engine.c2.lcb_private_tests.decode_private_tests`, never ``pickle.loads``), ``metadata`` (JSON string with
  ``func_name`` for functional problems), ``platform``, ``difficulty``, ``contest_date``.
* OK-VQA (VQA v2 format): questions ``{"questions": [{"image_id", "question", "question_id"}]}`` and
  annotations ``{"annotations": [{"question_id", "image_id", "answers": [ten {"answer", ...}], ...}]}``;
  images ``COCO_<split>_<image_id:012d>.jpg`` (any of .jpg/.jpeg/.png) in the image folder.
* WritingPrompts (``*.wp_source``): one prompt per line, with its ``[ WP ]``-style tag; an empty line is
  an error.
* MacGyver: JSONL, one problem per line: ``Problem`` (required), ``Solution`` (optional reference),
  ``id`` (optional; else the line number).
* Creation-MMBench: JSONL, one item per line: ``index``, ``question`` (the task instruction), ``image``
  (file name in the image folder), optional ``task_name``, ``role``, ``background``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.c2.grading import CodeTests
from engine.c2.lcb_private_tests import PickledJSONError, UnsafePickleError, decode_private_tests
from engine.strict_json import JSONProblem, json_decode
from engine.text_lines import line_at, physical_lines

__all__ = [
    "C2TaskType",
    "CONVERGENT",
    "DIVERGENT",
    "RecordError",
    "C2Item",
    "parse_triviaqa",
    "parse_livecodebench",
    "parse_okvqa",
    "parse_writingprompts",
    "parse_macgyver",
    "parse_creation_mmbench",
    "parse_records",
]


class C2TaskType(StrEnum):
    """The six task types of Tables 1 and 2."""

    QA = "qa"
    CODE = "code"
    VQA = "vqa"
    STORY = "story"
    IDEA = "idea"
    VISUAL_STORY = "visual_story"

    @property
    def regime(self) -> str:
        """"convergent" or "divergent" (§3.1.2)."""
        return "convergent" if self in CONVERGENT else "divergent"

    @property
    def is_convergent(self) -> bool:
        return self in CONVERGENT

    @property
    def is_visual(self) -> bool:
        """Visual task types send an image and need a vision model (Table 2)."""
        return self in (C2TaskType.VQA, C2TaskType.VISUAL_STORY)

    @property
    def label(self) -> str:
        return _LABELS[self]


CONVERGENT = frozenset({C2TaskType.QA, C2TaskType.CODE, C2TaskType.VQA})
DIVERGENT = frozenset({C2TaskType.STORY, C2TaskType.IDEA, C2TaskType.VISUAL_STORY})
_LABELS = {
    C2TaskType.QA: "Question Answering",
    C2TaskType.CODE: "Code Generation",
    C2TaskType.VQA: "Vision Question Answering",
    C2TaskType.STORY: "Story Telling",
    C2TaskType.IDEA: "Idea Generation",
    C2TaskType.VISUAL_STORY: "Visual Story Telling",
}


class RecordError(ValueError):
    """A bad record: ``line`` (1-based), ``field`` (dotted path as in the release) and what is wrong."""

    def __init__(self, line: int, field: str, message: str) -> None:
        super().__init__(f"line {line}: {field}: {message}")
        self.line = line
        self.field = field
        self.message = message


class RecordErrors(RecordError):
    """Every bad record of a file (each parser checks all records before it gives up): ``errors`` in file
    order; the first one's line, field and message stand for the whole."""

    def __init__(self, errors: Sequence[RecordError]) -> None:
        first = errors[0]
        super().__init__(first.line, first.field, first.message)
        self.errors = list(errors)


class RecordCollector:
    """Collects one :class:`RecordError` per bad record so that a parser reports them all:
    ``with collector.per_record(): ...`` around a record's checks, ``raise_any()`` after the loop."""

    def __init__(self) -> None:
        self.errors: list[RecordError] = []

    @contextmanager
    def per_record(self) -> Iterator[None]:
        try:
            yield
        except RecordError as exc:
            self.errors.extend(getattr(exc, "errors", [exc]))

    def raise_any(self) -> None:
        if self.errors:
            raise RecordErrors(self.errors)


@dataclass(frozen=True)
class C2Item:
    """One prompt of a C² task, as plain data.

    ``answers``: TriviaQA ground truths (aliases + human answers) or OK-VQA's ten answers. ``tests``: for
    code, the :class:`engine.c2.grading.CodeTests` (public and private together; LiveCodeBench grades on
    all). ``image_path``: for visual types, the image file (absolute or relative to the import folder).
    ``reference``: a display answer or reference solution, never shown to the model.
    """

    task_type: C2TaskType
    external_id: str
    prompt: str
    line: int
    answers: tuple[str, ...] = ()
    tests: Any = None
    starter_code: str = ""
    image_path: str = ""
    reference: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------------
# shared checks
# --------------------------------------------------------------------------------------------------


def _required_str(record: Mapping[str, Any], key: str, line: int, *, prefix: str = "") -> str:
    name = f"{prefix}{key}"
    if key not in record:
        raise RecordError(line, name, "missing")
    value = record[key]
    if not isinstance(value, str):
        raise RecordError(line, name, f"expected a string, got {type(value).__name__}")
    if not value.strip():
        raise RecordError(line, name, "empty")
    return value


def _optional_str(record: Mapping[str, Any], key: str, line: int) -> str:
    value = record.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(line, key, f"expected a string, got {type(value).__name__}")
    return value


def _string_list(value: Any, line: int, name: str) -> list[str]:
    if not isinstance(value, list):
        raise RecordError(line, name, f"expected a list of strings, got {type(value).__name__}")
    for index, entry in enumerate(value):
        if not isinstance(entry, str):
            raise RecordError(line, f"{name}[{index}]", f"expected a string, got {type(entry).__name__}")
    return value


def _joined(name: str, path: str) -> str:
    """``name`` followed by a path inside its value (``public_test_cases`` + ``[0].input``)."""
    if not path:
        return name
    if not name:
        return path
    return f"{name}{path}" if path.startswith("[") else f"{name}.{path}"


def _strict(text: str, line: int, name: str) -> Any:
    """The JSON value of ``text`` (a JSON string held in field ``name`` of the record at ``line``), or
    :class:`RecordErrors` naming the field of every problem."""
    value, problems = json_decode(text)
    if problems:
        raise RecordErrors([RecordError(line, _joined(name, p.field), p.message) for p in problems])
    return value


def _jsonl_records(text: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line; a line that is not one strict JSON object is an
    error at its line and field (every such line is reported)."""
    records = []
    errors = RecordCollector()
    # lines end as engine.text_lines says (LF, CRLF, or CR alone in a file without LF), never at U+2028,
    # U+0085 and the like, which JSON allows raw inside a string
    for number, raw in enumerate(physical_lines(text), start=1):
        if not raw.strip():
            continue
        with errors.per_record():
            value, problems = json_decode(raw)
            if problems:
                raise RecordErrors([RecordError(number, p.field or "(record)", p.message) for p in problems])
            if not isinstance(value, dict):
                got = "null" if value is None else type(value).__name__
                raise RecordError(number, "(record)", f"expected a JSON object, got {got}")
            records.append((number, value))
    errors.raise_any()
    if not records:
        raise RecordError(1, "(file)", "no records")
    return records


def _json_document(text: str) -> tuple[Any, list[JSONProblem]]:
    """A one-document JSON file's value and the problems of its fields (the caller names their lines); a
    text that is not JSON at all is a :class:`RecordError` at the line where decoding stopped."""
    value, problems = json_decode(text)
    if value is None and problems:
        first = problems[0]
        raise RecordError(first.line or 1, first.field or "(file)", first.message)
    return value, problems


def _document_errors(problems: Sequence[JSONProblem], list_key: str, lines: Sequence[int], *,
                     prefix: str = "") -> None:
    """Raise the problems of a one-document file, if any: one inside ``document[list_key][i]`` at that
    record's line with the field named from the record (as the record checks name theirs), any other at
    line 1 with its whole path. ``prefix`` marks another file's fields (``annotations.``)."""
    errors = []
    head = re.compile(re.escape(list_key) + r"\[(\d+)\]\.?")
    for problem in problems:
        match = head.match(problem.field)
        index = int(match.group(1)) if match else -1
        if 0 <= index < len(lines):
            inside = problem.field[match.end():] or f"{list_key}[{index}]"
            errors.append(RecordError(lines[index], prefix + inside, problem.message))
        else:
            errors.append(RecordError(1, prefix + problem.field, problem.message))
    if errors:
        raise RecordErrors(errors)


def _record_lines(text: str, key: str, count: int) -> list[int]:
    """Best-effort line of each of ``count`` records in a one-document JSON file: the line of the n-th
    occurrence of the record's first-level key (``"Question"``, ``"question_id"``). Falls back to 1."""
    pattern = re.compile(r'"' + re.escape(key) + r'"\s*:')
    starts = [line_at(text, m.start()) for m in pattern.finditer(text)]
    return starts if len(starts) == count else [1] * count


def _unique(seen: set[str], value: str, line: int, name: str) -> None:
    if value in seen:
        raise RecordError(line, name, f"duplicate id {value!r}")
    seen.add(value)


# --------------------------------------------------------------------------------------------------
# TriviaQA
# --------------------------------------------------------------------------------------------------


def parse_triviaqa(text: str) -> list[C2Item]:
    """TriviaQA's ``{"Data": [...]}`` JSON (``qa/verified-wikipedia-dev.json`` etc.)."""
    errors = RecordCollector()
    document, problems = _json_document(text)
    if not isinstance(document, dict) or "Data" not in document:
        raise RecordError(1, "Data", "missing: expected TriviaQA's {\"Data\": [...]} document")
    data = document["Data"]
    if not isinstance(data, list) or not data:
        raise RecordError(1, "Data", "expected a non-empty list of questions")
    lines = _record_lines(text, "Question", len(data))
    _document_errors(problems, "Data", lines)
    items: list[C2Item] = []
    seen: set[str] = set()
    for index, record in enumerate(data):
        with errors.per_record():
            line = lines[index]
            if not isinstance(record, dict):
                raise RecordError(line, f"Data[{index}]", "expected an object")
            question = _required_str(record, "Question", line)
            question_id = _required_str(record, "QuestionId", line)
            _unique(seen, question_id, line, "QuestionId")
            answer = record.get("Answer")
            if not isinstance(answer, dict):
                raise RecordError(line, "Answer", "missing or not an object")
            aliases = _string_list(answer.get("NormalizedAliases"), line, "Answer.NormalizedAliases")
            if not aliases:
                raise RecordError(line, "Answer.NormalizedAliases", "empty: no ground truth")
            human = _string_list(answer["HumanAnswers"], line, "Answer.HumanAnswers") if "HumanAnswers" in answer else []
            value = answer.get("Value", "")
            items.append(
                C2Item(
                    task_type=C2TaskType.QA,
                    external_id=question_id,
                    prompt=question,
                    line=line,
                    # get_ground_truths: NormalizedAliases + [normalize_answer(a) for a in HumanAnswers]; kept
                    # raw here for display — exact match normalises both sides and normalize_answer is
                    # idempotent, so the grade is the same
                    answers=tuple(aliases + human),
                    reference=value if isinstance(value, str) else "",
                )
            )
    errors.raise_any()
    return items


# --------------------------------------------------------------------------------------------------
# LiveCodeBench
# --------------------------------------------------------------------------------------------------


def _test_cases(raw: Any, line: int, name: str, *, private: bool) -> list[dict[str, Any]]:
    if not isinstance(raw, str):
        raise RecordError(line, name, f"expected a string, got {type(raw).__name__}")
    # private tests are a JSON list or LiveCodeBench's base64 (whose alphabet has no bracket)
    if not private or raw.lstrip().startswith(("[", "{")):
        cases = _strict(raw, line, name)
    else:
        try:
            cases = decode_private_tests(raw)
        except UnsafePickleError as exc:
            raise RecordError(line, name, f"refused: {exc}") from exc
        except PickledJSONError as exc:
            raise RecordErrors([
                RecordError(line, _joined(name, p.field), f"{p.message} (in the pickled JSON)") for p in exc.problems
            ]) from exc
        except ValueError as exc:
            raise RecordError(line, name, f"neither JSON nor base64-zlib-pickle: {exc}") from exc
    if not isinstance(cases, list):
        raise RecordError(line, name, "expected a list of test cases")
    for index, case in enumerate(cases):
        where = f"{name}[{index}]"
        if not isinstance(case, dict):
            raise RecordError(line, where, "expected an object")
        for key in ("input", "output"):
            if not isinstance(case.get(key), str):
                raise RecordError(line, f"{where}.{key}", "missing or not a string")
        if case.get("testtype", "stdin") not in ("stdin", "functional"):
            raise RecordError(line, f"{where}.testtype", f"unknown test type {case.get('testtype')!r}")
    return cases


def parse_livecodebench(text: str) -> list[C2Item]:
    """LiveCodeBench code_generation_lite JSONL, one problem per line."""
    errors = RecordCollector()
    items: list[C2Item] = []
    seen: set[str] = set()
    for line, record in _jsonl_records(text):
        with errors.per_record():
            question_id = _required_str(record, "question_id", line)
            _unique(seen, question_id, line, "question_id")
            content = _required_str(record, "question_content", line)
            starter = _optional_str(record, "starter_code", line)
            public = _test_cases(record.get("public_test_cases"), line, "public_test_cases", private=False)
            private = _test_cases(record.get("private_test_cases", "[]"), line, "private_test_cases", private=True)
            metadata_raw = record.get("metadata", "{}")
            metadata = _strict(metadata_raw, line, "metadata") if isinstance(metadata_raw, str) else metadata_raw
            if not isinstance(metadata, dict):
                raise RecordError(line, "metadata", "expected a JSON object")
            cases = public + private
            if not cases:
                raise RecordError(line, "public_test_cases", "no test cases")
            functional = [case.get("testtype") == "functional" for case in cases]
            if any(functional) and not all(functional):
                raise RecordError(line, "public_test_cases", "mixes functional and stdin tests")
            func_name = metadata.get("func_name")
            if all(functional):
                if not isinstance(func_name, str) or not func_name:
                    raise RecordError(line, "metadata.func_name", "missing for functional tests")
            else:
                func_name = None
            tests = CodeTests(
                inputs=tuple(case["input"] for case in cases),
                outputs=tuple(case["output"] for case in cases),
                func_name=func_name,
            )
            items.append(
                C2Item(
                    task_type=C2TaskType.CODE,
                    external_id=question_id,
                    prompt=content,
                    line=line,
                    tests=tests,
                    starter_code=starter,
                    metadata={
                        key: record[key]
                        for key in ("question_title", "platform", "difficulty", "contest_date", "contest_id")
                        if key in record
                    },
                )
            )
    errors.raise_any()
    return items


# --------------------------------------------------------------------------------------------------
# OK-VQA
# --------------------------------------------------------------------------------------------------

_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def _find_image(image_dir: Path, image_id: int) -> Path | None:
    candidates = sorted(image_dir.glob(f"*{image_id:012d}.*")) + sorted(image_dir.glob(f"{image_id}.*"))
    for path in candidates:
        if path.suffix.lower() in _IMAGE_SUFFIXES and path.is_file():
            return path
    return None


def parse_okvqa(questions_text: str, annotations_text: str, image_dir: str | Path) -> list[C2Item]:
    """OK-VQA's questions file + annotations file (VQA format, ten answers each) + image folder.

    Errors in the questions file name its lines; an annotation error raises a :class:`RecordError`
    whose ``field`` starts with ``annotations.`` so the caller can name the right file.
    """
    errors = RecordCollector()
    image_dir = Path(image_dir)
    questions_doc, question_problems = _json_document(questions_text)
    if not isinstance(questions_doc, dict) or not isinstance(questions_doc.get("questions"), list):
        raise RecordError(1, "questions", "missing: expected {\"questions\": [...]}")
    try:
        annotations_doc, annotation_problems = _json_document(annotations_text)
    except RecordError as exc:
        raise RecordError(exc.line, f"annotations.{exc.field}", exc.message) from exc
    if not isinstance(annotations_doc, dict) or not isinstance(annotations_doc.get("annotations"), list):
        raise RecordError(1, "annotations.annotations", "missing: expected {\"annotations\": [...]}")
    annotations = annotations_doc["annotations"]
    ann_lines = _record_lines(annotations_text, "question_id", len(annotations))
    questions = questions_doc["questions"]
    lines = _record_lines(questions_text, "question_id", len(questions))
    with errors.per_record():
        _document_errors(annotation_problems, "annotations", ann_lines, prefix="annotations.")
    with errors.per_record():
        _document_errors(question_problems, "questions", lines)
    errors.raise_any()
    answers_by_question: dict[int, tuple[str, ...]] = {}
    for index, annotation in enumerate(annotations):
        with errors.per_record():
            line = ann_lines[index]
            if not isinstance(annotation, dict):
                raise RecordError(line, f"annotations.annotations[{index}]", "expected an object")
            qid = annotation.get("question_id")
            if not isinstance(qid, int):
                raise RecordError(line, "annotations.question_id", "missing or not an integer")
            answers = annotation.get("answers")
            if not isinstance(answers, list) or len(answers) != 10:
                raise RecordError(line, "annotations.answers", "expected exactly 10 answers")
            texts = []
            for position, answer in enumerate(answers):
                if not isinstance(answer, dict) or not isinstance(answer.get("answer"), str):
                    raise RecordError(line, f"annotations.answers[{position}].answer", "missing or not a string")
                texts.append(answer["answer"])
            if qid in answers_by_question:
                raise RecordError(line, "annotations.question_id", f"duplicate question_id {qid}")
            answers_by_question[qid] = tuple(texts)
    items: list[C2Item] = []
    seen: set[str] = set()
    for index, record in enumerate(questions):
        with errors.per_record():
            line = lines[index]
            if not isinstance(record, dict):
                raise RecordError(line, f"questions[{index}]", "expected an object")
            question = _required_str(record, "question", line)
            qid = record.get("question_id")
            if not isinstance(qid, int):
                raise RecordError(line, "question_id", "missing or not an integer")
            _unique(seen, str(qid), line, "question_id")
            image_id = record.get("image_id")
            if not isinstance(image_id, int):
                raise RecordError(line, "image_id", "missing or not an integer")
            if qid not in answers_by_question:
                raise RecordError(line, "question_id", f"no annotation with question_id {qid}")
            image = _find_image(image_dir, image_id)
            if image is None:
                raise RecordError(line, "image_id", f"no image for image_id {image_id} in {image_dir}")
            items.append(
                C2Item(
                    task_type=C2TaskType.VQA,
                    external_id=str(qid),
                    prompt=question,
                    line=line,
                    answers=answers_by_question[qid],
                    image_path=str(image),
                    metadata={"image_id": image_id},
                )
            )
    errors.raise_any()
    if not items:
        raise RecordError(1, "questions", "no questions")
    return items


# --------------------------------------------------------------------------------------------------
# Divergent: WritingPrompts, MacGyver, Creation-MMBench
# --------------------------------------------------------------------------------------------------


def parse_writingprompts(text: str) -> list[C2Item]:
    """WritingPrompts ``*.wp_source``: one prompt per line (Fan et al. 2018); ids are line numbers."""
    errors = RecordCollector()
    lines = [line.removesuffix("\r") for line in physical_lines(text)]  # as the JSONL readers cut lines
    while lines and not lines[-1].strip():
        lines.pop()  # a trailing newline is not a record
    if not lines:
        raise RecordError(1, "prompt", "no prompts")
    items = []
    for number, raw in enumerate(lines, start=1):
        with errors.per_record():
            prompt = raw.strip()
            if not prompt:
                raise RecordError(number, "prompt", "empty line")
            # the release writes newlines inside a prompt as the token <newline>
            prompt = prompt.replace(" <newline> ", "\n").replace("<newline>", "\n")
            items.append(C2Item(task_type=C2TaskType.STORY, external_id=f"wp-{number}", prompt=prompt, line=number))
    errors.raise_any()
    return items


def parse_macgyver(text: str) -> list[C2Item]:
    """MacGyver problems as JSONL (``Problem``, optional ``Solution`` and ``id``)."""
    errors = RecordCollector()
    items = []
    seen: set[str] = set()
    for line, record in _jsonl_records(text):
        with errors.per_record():
            problem = _required_str(record, "Problem", line)
            raw_id = record.get("id", f"macgyver-{line}")
            if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
                raise RecordError(line, "id", "expected a string or integer")
            external_id = str(raw_id)
            _unique(seen, external_id, line, "id")
            items.append(
                C2Item(
                    task_type=C2TaskType.IDEA,
                    external_id=external_id,
                    prompt=problem,
                    line=line,
                    reference=_optional_str(record, "Solution", line),
                )
            )
    errors.raise_any()
    return items


def parse_creation_mmbench(text: str, image_dir: str | Path) -> list[C2Item]:
    """Creation-MMBench items as JSONL (``index``, ``question``, ``image``; optional ``task_name``,
    ``role``, ``background``), images in ``image_dir``."""
    errors = RecordCollector()
    image_dir = Path(image_dir)
    items = []
    seen: set[str] = set()
    for line, record in _jsonl_records(text):
        with errors.per_record():
            raw_id = record.get("index")
            if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
                raise RecordError(line, "index", "missing or not a string/integer")
            external_id = str(raw_id)
            _unique(seen, external_id, line, "index")
            question = _required_str(record, "question", line)
            image_name = _required_str(record, "image", line)
            image = image_dir / image_name
            if Path(image_name).is_absolute() or ".." in Path(image_name).parts:
                raise RecordError(line, "image", "must be a file name inside the image folder")
            if not image.is_file() or image.suffix.lower() not in _IMAGE_SUFFIXES:
                raise RecordError(line, "image", f"no image file {image_name!r} in {image_dir}")
            role = _optional_str(record, "role", line)
            background = _optional_str(record, "background", line)
            prompt = "\n\n".join(part for part in (role, background, question) if part.strip())
            items.append(
                C2Item(
                    task_type=C2TaskType.VISUAL_STORY,
                    external_id=external_id,
                    prompt=prompt,
                    line=line,
                    image_path=str(image),
                    metadata={"task_name": _optional_str(record, "task_name", line)},
                )
            )
    errors.raise_any()
    return items


def parse_records(task_type: C2TaskType | str, text: str, **kwargs: Any) -> Sequence[C2Item]:
    """Dispatch to the parser of ``task_type`` (OK-VQA and Creation-MMBench take extra arguments)."""
    task_type = C2TaskType(task_type)
    parser = {
        C2TaskType.QA: parse_triviaqa,
        C2TaskType.CODE: parse_livecodebench,
        C2TaskType.STORY: parse_writingprompts,
        C2TaskType.IDEA: parse_macgyver,
    }.get(task_type)
    if parser is None:
        raise ValueError(f"{task_type.value} needs its own parser (parse_okvqa / parse_creation_mmbench)")
    return parser(text, **kwargs)
