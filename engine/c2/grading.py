"""Correctness I(y_i) for the convergent tasks, reproducing the official graders (c2-eval.txt §3.2.1, §4.1).

* TriviaQA — ``evaluation/triviaqa_evaluation.py`` of mandarjoshi90/triviaqa: ``normalize_answer``
  (underscores → spaces, lower case, every ``string.punctuation`` character and ‘ ’ ´ ` replaced by a
  space, the words a/an/the replaced by a space, whitespace collapsed, stripped); a prediction is correct
  when ``exact_match_score`` holds for any ground truth (``metric_max_over_ground_truths``). The
  script's other number, ``f1_score`` (token overlap of the normalised texts, 0 when no token is shared —
  also when both are empty, where exact match holds), is reported beside it as the grade's detail; I(y_i)
  is the exact match.
* OK-VQA — the VQA evaluation tool (GT-Vision-Lab/VQA ``PythonEvaluationTools/vqaEvaluation/vqaEval.py``,
  master a013f00 "Fixed processing answers bug"): every string has newlines/tabs turned to spaces and is
  stripped; when the ten human answers are not all identical, answers and prediction go through
  ``processPunctuation`` and ``processDigitArticle``, otherwise nothing is processed; accuracy is the
  mean over the ten leave-one-out subsets of ``min(1, matches / 3)``. Quirks kept: ``periodStrip``'s
  ``(?!<=\\d)`` is a negative *lookahead* (not the lookbehind it looks like), ``re.UNICODE`` is passed as
  ``sub``'s *count* (at most 32 periods removed), a mark is deleted or spaced depending on the *original*
  text, so ``processPunctuation`` can leave a trailing space that ``processDigitArticle`` then removes.
  The tool is Python 2 code; this is its behaviour under Python 3 (as its Python 3 ports), identical on
  ASCII text. On other text Python 2 differs: its ``unicode.lower`` maps ``İ`` to ``i`` and has no final
  sigma, its ``\\d`` (no ``re.UNICODE`` flag) matches ASCII digits only, and its ``strip``/``split`` take
  U+180E for whitespace (Unicode 5.2) — the cases in ``tests/engine/c2/test_grading.py``.
* LiveCodeBench — ``lcb_runner``: the code is the last fenced block (``extract_code``: lines containing
  three backticks, the text between the last two); each sample runs in a *fresh* sandbox under
  :mod:`engine.c2.lcb_harness`, which compiles it once (as upstream's ``run_test``: one compile, one
  ``Solution()``, so state carries from test to test there and here), then receives one test's input at
  a time and answers the raw output (printed text, or the return value as plain JSON) — never an
  expected output, a comparison or a verdict; the next input comes only after a passed test. The
  grader compares (:mod:`engine.c2.lcb_compare`, ``testing_util``'s rules) and keeps the time: a test's
  limit runs from the runner's "compiled" line (the first test) or from sending its input (the next
  ones) to its answer on the grader's clock, so
  an answer after the limit is a time limit whatever the code did to its signals, and a runner still
  silent one second past it is killed. Compiling (upstream's ``compile_code`` under the same alarm,
  where module-level code runs) has the same limit from the runner's "compiling" line: past it, the
  test is upstream's compile timeout, -4 "Error during testing". Tests run in order and stop at the first failure; a sample
  passes only if every test passes (``pass_k_utils``: all results ``> 0``). Result codes: -2 wrong
  answer (``False`` for call-based), -3 time limit, -4 runtime error. A test that leaves no answer
  (killed from outside, ``sys.exit`` in a call-based solution, a crash) is recorded as upstream's
  ``evaluate_generations_by_problem`` records a run that left no result, ``[-2]`` with error code -5,
  and our verdict is ``time_limit`` or ``runtime_error``; so is a test whose sandbox had more than
  :data:`CODE_MAX_FILES` files on one of its tmpfs mounts (``runtime_error``, "too many files", even
  if it answered: it is killed when the count passes, and the count is taken once more at its end).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import string
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path
from typing import Any, Literal

from engine.c2.lcb_compare import ERROR_DURING_TESTING, call_result, load_json, stdio_result, truncate
from engine.c2.sandbox import (
    SandboxLimits,
    SandboxResult,
    SandboxSession,
    SandboxUnavailable,
    start_sandboxed,
)

logger = logging.getLogger(__name__)

__all__ = [
    "CODE_GRADER_VERSION",
    "CodeTests",
    "CodeVerdict",
    "TestOutcome",
    "VERDICTS",
    "LCB_RESULT_CODES",
    "triviaqa_normalize",
    "triviaqa_exact_match",
    "triviaqa_f1",
    "vqa_process_punctuation",
    "vqa_process_digit_article",
    "vqa_accuracy",
    "vqa_correct",
    "grade_answer",
    "extract_code_block",
    "grade_code",
    "grade_code_many",
    "grade_code_sample",
]

# --------------------------------------------------------------------------------------------------
# TriviaQA
# --------------------------------------------------------------------------------------------------

_TRIVIAQA_PUNCTUATION = frozenset(string.punctuation + "‘’´`")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def triviaqa_normalize(text: str) -> str:
    """TriviaQA ``normalize_answer``: replace_underscore → lower → handle_punc → remove_articles →
    white_space_fix → strip (triviaqa_evaluation.py)."""
    text = text.replace("_", " ").lower()
    text = "".join(" " if ch in _TRIVIAQA_PUNCTUATION else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split()).strip()


def triviaqa_exact_match(prediction: str, aliases: Sequence[str]) -> bool:
    """``metric_max_over_ground_truths(exact_match_score, prediction, ground_truths)`` as a bool.

    ``aliases`` are the ground truths (``NormalizedAliases`` + normalised ``HumanAnswers``). Upstream's
    ``max`` over an empty list raises; so does this.
    """
    if not aliases:
        raise ValueError("TriviaQA exact match needs at least one ground truth")
    normalized = triviaqa_normalize(prediction)
    return max(normalized == triviaqa_normalize(truth) for truth in aliases)


def triviaqa_f1(prediction: str, aliases: Sequence[str]) -> float:
    """``metric_max_over_ground_truths(f1_score, prediction, ground_truths)``: the best token F1 of the
    normalised prediction against a normalised ground truth. ``f1_score`` counts the tokens the two share
    (multiset intersection) and is 0 when they share none — also when both normalise to nothing, where
    :func:`triviaqa_exact_match` holds. Upstream's ``max`` over an empty list raises; so does this."""
    if not aliases:
        raise ValueError("TriviaQA F1 needs at least one ground truth")
    predicted = triviaqa_normalize(prediction).split()
    best = 0.0
    for truth in aliases:
        expected = triviaqa_normalize(truth).split()
        shared = sum((Counter(predicted) & Counter(expected)).values())
        if shared:
            precision, recall = shared / len(predicted), shared / len(expected)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


# --------------------------------------------------------------------------------------------------
# VQA
# --------------------------------------------------------------------------------------------------

# vqaEval.py (Python 3 version) word tables
_VQA_CONTRACTIONS = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've", "couldnt": "couldn't",
    "couldn'tve": "couldn't've", "couldnt've": "couldn't've", "didnt": "didn't", "doesnt": "doesn't",
    "dont": "don't", "hadnt": "hadn't", "hadnt've": "hadn't've", "hadn'tve": "hadn't've", "hasnt": "hasn't",
    "havent": "haven't", "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've", "hes": "he's", "howd": "how'd",
    "howll": "how'll", "hows": "how's", "Id've": "I'd've", "I'dve": "I'd've", "Im": "I'm", "Ive": "I've",
    "isnt": "isn't", "itd": "it'd", "itd've": "it'd've", "it'dve": "it'd've", "itll": "it'll", "let's": "let's",
    "maam": "ma'am", "mightnt": "mightn't", "mightnt've": "mightn't've", "mightn'tve": "mightn't've",
    "mightve": "might've", "mustnt": "mustn't", "mustve": "must've", "neednt": "needn't", "notve": "not've",
    "oclock": "o'clock", "oughtnt": "oughtn't", "ow's'at": "'ow's'at", "'ows'at": "'ow's'at",
    "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've", "she'dve": "she'd've", "she's": "she's",
    "shouldve": "should've", "shouldnt": "shouldn't", "shouldnt've": "shouldn't've",
    "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd", "somebodyd've": "somebody'd've",
    "somebody'dve": "somebody'd've", "somebodyll": "somebody'll", "somebodys": "somebody's",
    "someoned": "someone'd", "someoned've": "someone'd've", "someone'dve": "someone'd've",
    "someonell": "someone'll", "someones": "someone's", "somethingd": "something'd",
    "somethingd've": "something'd've", "something'dve": "something'd've", "somethingll": "something'll",
    "thats": "that's", "thered": "there'd", "thered've": "there'd've", "there'dve": "there'd've",
    "therere": "there're", "theres": "there's", "theyd": "they'd", "theyd've": "they'd've",
    "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're", "theyve": "they've", "twas": "'twas",
    "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've", "weve": "we've", "werent": "weren't",
    "whatll": "what'll", "whatre": "what're", "whats": "what's", "whatve": "what've", "whens": "when's",
    "whered": "where'd", "wheres": "where's", "whereve": "where've", "whod": "who'd", "whod've": "who'd've",
    "who'dve": "who'd've", "wholl": "who'll", "whos": "who's", "whove": "who've", "whyll": "why'll",
    "whyre": "why're", "whys": "why's", "wont": "won't", "wouldve": "would've", "wouldnt": "wouldn't",
    "wouldnt've": "wouldn't've", "wouldn'tve": "wouldn't've", "yall": "y'all", "yall'll": "y'all'll",
    "y'allll": "y'all'll", "yall'd've": "y'all'd've", "y'alld've": "y'all'd've", "y'all'dve": "y'all'd've",
    "youd": "you'd", "youd've": "you'd've", "you'dve": "you'd've", "youll": "you'll", "youre": "you're",
    "youve": "you've",
}
_VQA_MANUAL_MAP = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}
_VQA_ARTICLES = ("a", "an", "the")
_VQA_PERIOD_STRIP = re.compile(r"(?!<=\d)(\.)(?!\d)")  # sic: a lookahead for "<=digit", as upstream
_VQA_COMMA_STRIP = re.compile(r"(\d)(\,)(\d)")
_VQA_PUNCT = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!")


def vqa_process_punctuation(text: str) -> str:
    """vqaEval ``processPunctuation``: each mark is deleted when it touches a space in the *original*
    text (or the text has a digit,digit comma anywhere), else replaced by a space; then periods not
    followed by a digit are removed (at most ``re.UNICODE`` = 32 of them, as upstream passes it as count)."""
    out = text
    has_digit_comma = _VQA_COMMA_STRIP.search(text) is not None
    for mark in _VQA_PUNCT:
        if (mark + " " in text or " " + mark in text) or has_digit_comma:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return _VQA_PERIOD_STRIP.sub("", out, re.UNICODE)


def vqa_process_digit_article(text: str) -> str:
    """vqaEval ``processDigitArticle``: lower-case, split on whitespace, number words → digits, drop
    a/an/the, restore contractions, join with single spaces."""
    words = [_VQA_MANUAL_MAP.get(word, word) for word in text.lower().split()]
    words = [word for word in words if word not in _VQA_ARTICLES]
    return " ".join(_VQA_CONTRACTIONS.get(word, word) for word in words)


def vqa_accuracy(prediction: str, answers: Sequence[str]) -> float:
    """VQA accuracy of one prediction against the human answers (vqaEval ``evaluate``), in [0, 1]:
    mean over each answer left out of min(1, #other answers equal to the prediction / 3).

    As upstream: newlines/tabs → spaces and strip on every string; then, only when the answers are
    not all identical, ``processPunctuation`` + ``processDigitArticle`` on the answers *and* the
    prediction (all-identical answers are compared raw).
    """
    if not answers:
        raise ValueError("VQA accuracy needs the human answers")
    predicted = prediction.replace("\n", " ").replace("\t", " ").strip()
    truths = [answer.replace("\n", " ").replace("\t", " ").strip() for answer in answers]
    if len(set(truths)) > 1:  # upstream skips all processing when the answers agree
        truths = [vqa_process_digit_article(vqa_process_punctuation(answer)) for answer in truths]
        predicted = vqa_process_digit_article(vqa_process_punctuation(predicted))
    accuracies = []
    for left_out in range(len(truths)):
        # otherGTAns drops the left-out answer *dict*; dicts differ by answer_id, so only that one
        matches = sum(1 for index, answer in enumerate(truths) if index != left_out and answer == predicted)
        accuracies.append(min(1.0, matches / 3))
    return sum(accuracies) / len(accuracies)


def vqa_correct(prediction: str, answers: Sequence[str]) -> bool:
    """z_i for OK-VQA: VQA accuracy > 0, i.e. at least one annotator gave this answer (after the
    official processing). The paper's I(y_i) is binary and does not say how it binarises VQA accuracy;
    this choice keeps less common but human-attested answers among the correct ones, which is where
    Originality looks for diversity. Usefulness uses the soft accuracy itself."""
    return vqa_accuracy(prediction, answers) > 0.0


def grade_answer(task_type: str, text: str, answers: Sequence[str]) -> dict[str, Any]:
    """The grade of one QA or VQA answer: ``verdict``, ``usefulness`` in [0, 1], ``correct`` (z_i) and
    ``detail`` — what the site stores on a sample and what a bundle's verifier regrades from its text.
    QA: TriviaQA exact match (its F1 in the detail); VQA: the soft VQA accuracy (verdict ``partial`` when
    0 < accuracy < 1)."""
    if task_type == "qa":
        correct = triviaqa_exact_match(text, answers)
        return {"verdict": "correct" if correct else "incorrect", "usefulness": float(correct), "correct": correct,
                "detail": {"normalized": triviaqa_normalize(text), "f1": triviaqa_f1(text, answers)}}
    if task_type == "vqa":
        accuracy = float(vqa_accuracy(text, answers))
        correct = vqa_correct(text, answers)
        verdict = "correct" if accuracy >= 1.0 else ("partial" if correct else "incorrect")
        return {"verdict": verdict, "usefulness": accuracy, "correct": correct, "detail": {"vqa_accuracy": accuracy}}
    raise ValueError(f"{task_type} answers are not graded one by one (code runs in batches; divergent types are rated)")


# --------------------------------------------------------------------------------------------------
# LiveCodeBench
# --------------------------------------------------------------------------------------------------

#: The code grader's version, stored with each code sample's grade (``grader_version`` in its detail; a
#: grade without one is version 1) so a verdict names the rules that gave it. A change that can turn some
#: program's verdict takes the next number. 1: every NaN a call-based solution returned was decoded as
#: json's shared NaN object; 2 (2026-12-05): a NaN the code made equals no expected NaN inside a list or
#: dict, as upstream's identity-first ``==`` (:mod:`engine.c2.lcb_compare`). QA and VQA grades are
#: regraded by a bundle's verifier and have not changed.
CODE_GRADER_VERSION = 2

#: Our verdict names.
VERDICTS = ("passed", "wrong_answer", "time_limit", "runtime_error", "runner_error", "no_code")
#: LiveCodeBench result codes → our verdicts (True → "passed").
LCB_RESULT_CODES = {-1: "time_limit", -2: "wrong_answer", -3: "time_limit", -4: "runtime_error", -5: "runner_error"}
# (-1 is check_correctness's "global timeout" fill value; in upstream's HEAD it never survives — see above)

Verdict = Literal["passed", "wrong_answer", "time_limit", "runtime_error", "runner_error", "no_code"]

_RUNNER_SOURCE = (Path(__file__).with_name("lcb_harness.py")).read_text(encoding="utf-8")
#: Memory for the runner + code (upstream sets no memory limit; ours keeps a runaway from the host).
CODE_MEMORY_MB = 2048
#: Seconds a fresh sandbox has to start Python and read the code before compiling it (its own alarm
#: of ``timeout`` seconds, as upstream) — generous, since a loaded machine starts processes slowly.
STARTUP_ALLOWANCE_S = 10.0
#: How long past a test's limit the grader waits for the runner to report upstream's own alarm
#: (result -3) before it kills the sandbox; an answer in that window is still a time limit.
ALARM_REPORT_GRACE_S = 1.0
#: Output a runner may send back beyond the expected outputs' own size (the code's printed text or return
#: values as JSON, all of a sample's tests together).
RUNNER_OUTPUT_BYTES = 32 * 1024 * 1024
#: The end of stderr a sample's sandbox keeps (where a traceback ends): the grader reads only its last
#: 300 characters, for the message of a test left without an answer. Kept whole (32 MB), a flood of stderr
#: made the grader hold about 100 MB per sample and, cut at its head, lost the traceback.
STDERR_TAIL_BYTES = 64 * 1024
#: Files (directories, links) the code may have on one of its sandbox's tmpfs mounts: past it the sandbox is
#: killed and the test is a runtime error, "too many files" (no solution writes files; each takes host memory).
CODE_MAX_FILES = 4096


@dataclass(frozen=True)
class CodeTests:
    """A problem's tests in LiveCodeBench's ``input_output`` shape: inputs and outputs as strings, and
    ``func_name`` for call-based (LeetCode) problems, ``None`` for stdin/stdout ones."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    func_name: str | None = None

    def __post_init__(self) -> None:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"{len(self.inputs)} inputs but {len(self.outputs)} outputs")
        if not self.inputs:
            raise ValueError("a problem needs at least one test")

    @property
    def call_based(self) -> bool:
        return self.func_name is not None

    def as_json(self) -> dict[str, Any]:
        return {"inputs": list(self.inputs), "outputs": list(self.outputs), "fn_name": self.func_name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CodeTests:
        return cls(inputs=tuple(data["inputs"]), outputs=tuple(data["outputs"]), func_name=data.get("fn_name"))


@dataclass(frozen=True)
class TestOutcome:
    """One executed test: its index, the LiveCodeBench result (True or a negative code) and verdict."""

    index: int
    result: bool | int
    verdict: Verdict


@dataclass(frozen=True)
class CodeVerdict:
    """The grade of one code sample. ``tests`` lists the executed tests in order (execution stops at
    the first failure, as upstream); ``lcb_results`` is upstream's raw list; ``message`` says why."""

    passed: bool
    result: Verdict
    tests: tuple[TestOutcome, ...] = ()
    lcb_results: tuple[bool | int, ...] = ()
    message: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0


def extract_code_block(text: str) -> str | None:
    """LiveCodeBench ``extract_code``: the lines between the last two lines that contain three backticks;
    ``None`` when there are fewer than two such lines (upstream returns "")."""
    lines = text.split("\n")
    fences = [index for index, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return None
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def _verdict_of(results: Sequence[bool | int]) -> Verdict:
    for value in results:
        if value is True:
            continue
        if value is False:
            return "wrong_answer"  # call-based False is recorded then -2 metadata; upstream counts it failed
        return LCB_RESULT_CODES.get(int(value), "runner_error")
    return "passed"


@dataclass(frozen=True)
class _TestRun:
    """What the sample's sandbox said for one phase: ``event`` (the runner's answer, or ``None``),
    ``elapsed_s`` on the grader's clock, ``phase`` (``"compile"`` or ``"test"``) and, once the sandbox
    has ended, its result (``None`` while it still runs to answer the next test)."""

    event: dict[str, Any] | None
    elapsed_s: float
    phase: str
    run: SandboxResult | None


#: Members a runner's message has at most ("event" and two fields); a line with more is none of them.
_EVENT_MEMBERS = 3
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")


def _event(line: str) -> dict[str, Any] | None:
    """The runner's message on ``line``: a flat JSON object of at most :data:`_EVENT_MEMBERS` strings and
    numbers, with a string ``event``; ``None`` for anything else. The code can write this line itself, so
    it is not given to ``json.loads``: a nested value of a few bytes per element (``[], [], …``) would
    become hundreds of MB of objects in the grader, deep nesting a RecursionError and an integer past
    CPython's 4,300 digits a ValueError that would end the grading batch. Only strings (decoded by
    ``json``'s own scanner) and plain numbers, true, false and null are read."""
    try:
        members: dict[str, Any] = {}
        end = _JSON_SPACE.match(line).end()
        if line[end : end + 1] != "{":
            return None
        end = _JSON_SPACE.match(line, end + 1).end()
        while line[end : end + 1] == '"' and len(members) < _EVENT_MEMBERS:
            key, end = scanstring(line, end + 1, True)
            end = _JSON_SPACE.match(line, end).end()
            if line[end : end + 1] != ":":
                return None
            end = _JSON_SPACE.match(line, end + 1).end()
            if line[end : end + 1] == '"':
                members[key], end = scanstring(line, end + 1, True)
            else:
                scalar = _JSON_SCALAR.match(line, end)
                if scalar is None:
                    return None  # an array, an object or no JSON: none of the runner's messages
                members[key], end = json.loads(scalar.group()), scalar.end()
            end = _JSON_SPACE.match(line, end).end()
            if line[end : end + 1] != ",":
                break
            end = _JSON_SPACE.match(line, end + 1).end()
            if line[end : end + 1] != '"':
                return None  # a trailing comma, or a member past the last
        if line[end : end + 1] != "}" or _JSON_SPACE.match(line, end + 1).end() != len(line):
            return None
    except ValueError:  # a malformed string, or an integer past CPython's 4,300 digits
        return None
    return members if isinstance(members.get("event"), str) else None


def _sample_limits(tests: CodeTests, timeout: int) -> SandboxLimits:
    """One sandbox runs all of a sample's tests: a compile phase and each test get the per-test
    budget (upstream's global timeout is likewise (timeout + 1) per test); the output kept covers the
    answers to every test (JSON may write a character of the expected output as six bytes)."""
    phases = len(tests.inputs) + 1
    budget = timeout + ALARM_REPORT_GRACE_S
    expected_chars = sum(len(output) for output in tests.outputs)
    return SandboxLimits(
        cpu_s=phases * timeout + 2, wall_s=STARTUP_ALLOWANCE_S + phases * budget + 1, memory_mb=CODE_MEMORY_MB,
        output_bytes=RUNNER_OUTPUT_BYTES + 6 * expected_chars,
        stderr_tail_bytes=STDERR_TAIL_BYTES,
        new_processes=False,  # CODE_MEMORY_MB is then the whole sandbox's
        max_files=CODE_MAX_FILES,
        inet_sockets=False,  # nothing to reach but the sandbox's loopback, whose TCP buffers no limit counts
    )


def _compile(session: SandboxSession, code: str, func_name: str | None, timeout: int) -> _TestRun | None:
    """Send the code; the runner says "compiling" just before the code first runs, and from there
    compiling has the test's limit on the grader's clock (module-level code that ignores the runner's
    alarm gains nothing). ``None`` once "compiled", else why not (the sandbox then ended)."""
    budget = timeout + ALARM_REPORT_GRACE_S
    session.send(json.dumps({"code": code, "fn_name": func_name, "timeout": timeout}) + "\n")
    if not session.wait_for_lines(1, STARTUP_ALLOWANCE_S):  # the runner never started the code
        return _TestRun(None, 0.0, "compile", session.finish(wait_s=STARTUP_ALLOWANCE_S - (time.monotonic() - session.started)))
    first = _event(session.stdout_lines()[0])
    if first is None or first["event"] != "compiling":
        return _TestRun(first, 0.0, "compile", session.stop())
    compiling = session.line_times()[0]
    if not session.wait_for_lines(2, budget - (time.monotonic() - compiling)):  # silent, or ended without a word
        return _TestRun(None, time.monotonic() - compiling, "compile",
                        session.finish(wait_s=budget - (time.monotonic() - compiling)))
    second = _event(session.stdout_lines()[1])
    compile_s = session.line_times()[1] - compiling
    if second is not None and second["event"] == "compiled" and compile_s > timeout:
        second = {"event": "error", "error_message": f"Error during testing: compiling took {compile_s:.2f} s, "
                                                     f"past the {timeout} s limit"}
    if second is None or second["event"] != "compiled":
        return _TestRun(second, compile_s, "compile", session.stop())
    return None


def _answer(session: SandboxSession, index: int, given: str, timeout: int) -> _TestRun:
    """Test ``index`` in the running sandbox: send its input, start the clock (for the first test, at
    the "compiled" line), wait for the answer until the limit (+ the alarm-report grace). Without an
    answer the sandbox is given the rest of the budget to end, and ``run`` holds how it ended."""
    budget = timeout + ALARM_REPORT_GRACE_S
    clock = session.line_times()[1] if index == 0 else time.monotonic()
    session.send(json.dumps({"input": given}) + "\n")
    line = 2 + index  # "compiling", "compiled", then one answer per test
    if session.wait_for_lines(line + 1, budget - (time.monotonic() - clock)):
        event, elapsed = _event(session.stdout_lines()[line]), session.line_times()[line] - clock
        # a line that is none of the runner's messages: the code wrote it on the channel, and it ends here
        return _TestRun(event, elapsed, "test", None if event is not None else session.stop())
    # no answer: the runner ended (or closed its channel) — give it the rest of the budget to exit
    run = session.finish(wait_s=budget - (time.monotonic() - clock))
    return _TestRun(None, time.monotonic() - clock, "test", run)


def _no_answer(index: int, test_run: _TestRun, outcomes: list[TestOutcome], timeout: int) -> CodeVerdict:
    """A test left no answer. Upstream, a run without result (killed at the global timeout, sys.exit
    in a call-based solution, a crash) makes check_correctness fail on its empty metadata list, and
    evaluate_generations_by_problem keeps its initial [-2] with error_code -5 "TestRunnerError"; the
    sample fails either way and our verdict says why. A run stopped for too many files is a runtime
    error whatever it answered (the count is taken every few milliseconds and once more at its end)."""
    run = test_run.run
    ran_out = (run.timed_out or run.cpu_limited) and not run.files_limited
    verdict: Verdict = "time_limit" if ran_out else "runtime_error"
    if run.files_limited:
        why = (f"test {index + 1}: too many files — the code made {run.files} files, directories or links on "
               f"one of its sandbox's tmpfs mounts (at most {CODE_MAX_FILES}) and was stopped")
    elif ran_out:
        why = f"test {index + 1} gave no answer within its {timeout} s limit and was stopped from outside"
    elif test_run.event is not None and test_run.phase == "compile":
        why = f"the runner answered {test_run.event['event']!r} instead of compiling"
    elif run.stopped:  # a line on the runner's channel that is none of its messages: the code wrote it
        why = f"test {index + 1}: the runner's channel carried a line that is not one of its messages"
    else:
        why = f"the process ended without an answer (exit {run.returncode}): {truncate(run.stderr.strip()[-300:])}"
        if run.truncated:
            why = f"by test {index + 1}, the output exceeded the runner's cap ({RUNNER_OUTPUT_BYTES} bytes beyond the expected)"
    outcomes.append(TestOutcome(index, -3 if ran_out else -4, verdict))
    return CodeVerdict(
        passed=False, result=verdict, tests=tuple(outcomes), lcb_results=(-2,), message=why,
        metadata={"error_code": -5, "error_message": "TestRunnerError", "detail": why}, wall_s=run.wall_s,
    )


def _test_result(
    test_run: _TestRun, given: str, expected: str, expected_value: Any, timeout: int
) -> tuple[bool | int, dict[str, Any]]:
    """The grader's result for one answered test: upstream's value and failure metadata."""
    event = test_run.event or {}
    kind = event.get("event")
    if test_run.elapsed_s > timeout:  # answered after the limit: upstream's alarm would have fired
        return -3, {
            "error": f"answered after {test_run.elapsed_s:.2f} s", "error_code": -3,
            "error_message": "Time Limit Exceeded", "inputs": truncate(given), "expected": truncate(expected),
        }
    if kind == "output" and isinstance(event.get("text"), str):
        return stdio_result(event["text"], given, expected)
    if kind == "returned" and isinstance(event.get("json"), str):
        try:
            arguments = [load_json(line) for line in given.split("\n")]
        except ValueError:  # an input upstream cannot parse either: the runner's own answer is an error
            arguments = None
        if arguments is not None:
            own_nans = event.get("own_nans")  # which returned NaNs the code made (a forged line: a claim only)
            return call_result(event["json"], arguments, expected_value,
                               own_nans=own_nans if isinstance(own_nans, str) else "")
    if kind == "unserialisable":
        return False, {
            "output": f"<a {truncate(event.get('type'), 80)}>", "inputs": truncate(given),
            "expected": truncate(expected), "error_code": -2,
            "error_message": "Wrong Answer: the return value is not plain JSON data (exact dict, list, str, "
                             "int, float, bool or None), so it cannot be compared",
        }
    if kind == "raised" and event.get("error_code") in (-3, -4):
        code = int(event["error_code"])
        return code, {
            "error": truncate(event.get("error", ""), 1000), "error_code": code,
            "error_message": "Time Limit Exceeded" if code == -3 else "Runtime Error",
            "inputs": truncate(given), "expected": truncate(expected),
        }
    return -4, {"error": f"unreadable answer from the runner: {truncate(event, 200)}", "error_code": -4,
                "error_message": "Runtime Error", "inputs": truncate(given), "expected": truncate(expected)}


def grade_code(code: str | None, tests: CodeTests, *, timeout_s: float = 6.0) -> CodeVerdict:
    """Run ``code`` against ``tests`` with LiveCodeBench semantics (``run_test``, ``check_correctness``),
    in a fresh sandbox that compiles it once and sees one test's input at a time; the comparison and the
    clock are the grader's. ``timeout_s`` is upstream's per-test limit (rounded up to whole seconds, as
    ``signal.alarm`` takes). Execution stops at the first failure; passes only if every test passes."""
    if code is None or not code.strip():
        return CodeVerdict(passed=False, result="no_code", message="no fenced code block in the reply")
    timeout = max(1, math.ceil(timeout_s))
    expected_values: list[Any] = list(tests.outputs)
    if tests.call_based:
        try:
            for given in tests.inputs:
                for line in given.split("\n"):
                    load_json(line)
            expected_values = [load_json(output) for output in tests.outputs]
        except ValueError as exc:  # upstream parses every input and output before the first test runs, so
            # one it cannot read fails the sample with [-4] "Error during testing" whatever the code does
            return CodeVerdict(
                passed=False, result="runtime_error", lcb_results=(-4,), message=f"{ERROR_DURING_TESTING}: {exc}",
                metadata={"error_code": -4, "error_message": f"{ERROR_DURING_TESTING}: {exc}"},
            )
    results: list[bool | int] = []
    outcomes: list[TestOutcome] = []
    total_s = 0.0
    metadata: dict[str, Any] = {}
    with start_sandboxed(_RUNNER_SOURCE, limits=_sample_limits(tests, timeout)) as session:
        failed = _compile(session, code, tests.func_name, timeout)
        if failed is not None:
            return _compile_failure(failed, timeout)
        for index, (given, expected) in enumerate(zip(tests.inputs, tests.outputs)):
            test_run = _answer(session, index, given, timeout)
            if test_run.run is not None:  # the sandbox ended without answering
                return _no_answer(index, test_run, outcomes, timeout)
            result, metadata = _test_result(test_run, given, expected, expected_values[index], timeout)
            if str(metadata.get("error_message", "")).startswith(ERROR_DURING_TESTING):
                results = []  # upstream's run_test answers [-4] alone: the passed tests before it are dropped
            results.append(result)
            outcomes.append(TestOutcome(index, result, "passed" if result is True else _verdict_of([result])))
            if result is not True:
                break
            total_s += test_run.elapsed_s
        # every answer is in: stop the sandbox now rather than wait for the interpreter to wind down
        run = session.stop()
    if run.files_limited:  # stopped for it, or over it at its end, whatever it answered
        return _no_answer(outcomes[-1].index, _TestRun(None, 0.0, "test", run), outcomes[:-1], timeout)
    # pass_k_utils: a sample is correct only when all results are > 0 (True) — and every test ran
    passed = len(results) == len(tests.inputs) and all(value is True for value in results)
    return CodeVerdict(
        passed=passed,
        result="passed" if passed else _verdict_of(results),
        tests=tuple(outcomes),
        lcb_results=tuple(results),
        message="" if passed else str(metadata.get("error_message", "")),
        metadata=metadata if not passed else {"execution time": total_s},
        wall_s=run.wall_s,
    )


def _compile_failure(test_run: _TestRun, timeout: int) -> CodeVerdict:
    """The code never reached "compiled": upstream's "Error during testing" (-4) when the runner said
    so, otherwise a run that left no result."""
    assert test_run.run is not None
    event = test_run.event or {}
    if event.get("event") == "error":
        message = truncate(event.get("error_message", "Error during testing"), 1000)
        return CodeVerdict(
            passed=False, result="runtime_error", tests=(TestOutcome(0, -4, "runtime_error"),),
            lcb_results=(-4,), message=message, metadata={"error_code": -4, "error_message": message},
            wall_s=test_run.run.wall_s,
        )
    return _no_answer(0, test_run, [], timeout)


def grade_code_many(
    jobs: Sequence[tuple[str | None, CodeTests]], *, timeout_s: float = 6.0, workers: int | None = None
) -> list[CodeVerdict]:
    """Grade many (code, tests) pairs concurrently (each test of a pair in its own sandbox, one pair per
    worker at a time), in input order. ``workers``
    defaults to the CPU count (upstream's ``num_process_evaluate`` plays the same role); threads
    suffice since each grade waits on its own sandboxed process."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(jobs) <= 1:
        return [_grade_code_or_runner_error(code, tests, timeout_s) for code, tests in jobs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="c2-grade") as pool:
        return list(pool.map(lambda job: _grade_code_or_runner_error(job[0], job[1], timeout_s), jobs))


def _grade_code_or_runner_error(code: str | None, tests: CodeTests, timeout_s: float) -> CodeVerdict:
    """:func:`grade_code`, with an exception of the grader's own on this one sample (a case its reading of
    the sandbox's answers did not foresee: the code chose them) made that sample's failed verdict —
    upstream's "TestRunnerError" (-5), logged with its traceback — rather than the end of the whole batch,
    which a resumed run would meet again. A sandbox that cannot run at all still raises (every sample
    would fail alike: the machine's fault, not the code's)."""
    try:
        return grade_code(code, tests, timeout_s=timeout_s)
    except SandboxUnavailable:
        raise
    except Exception as exc:
        logger.exception("the C² grader failed on one code sample; it is recorded as a runner error")
        why = f"the grader failed on this sample ({type(exc).__name__}: {truncate(exc, 200)})"
        return CodeVerdict(passed=False, result="runner_error", lcb_results=(-2,), message=why,
                           metadata={"error_code": -5, "error_message": "TestRunnerError", "detail": why})


def grade_code_sample(reply: str, tests: CodeTests, *, timeout_s: float = 6.0) -> CodeVerdict:
    """Extract the last fenced block of a model's reply and grade it (``no_code`` without one)."""
    return grade_code(extract_code_block(reply), tests, timeout_s=timeout_s)
