"""Correctness I(y_i) for the convergent tasks, reproducing the official graders (c2-eval.txt §3.2.1, §4.1).

* TriviaQA — ``evaluation/triviaqa_evaluation.py`` of mandarjoshi90/triviaqa: ``normalize_answer``
  (underscores → spaces, lower case, every ``string.punctuation`` character and ‘ ’ ´ ` replaced by a
  space, the words a/an/the replaced by a space, whitespace collapsed, stripped); a prediction is correct
  when ``exact_match_score`` holds for any ground truth (``metric_max_over_ground_truths``).
* OK-VQA — the VQA evaluation tool (GT-Vision-Lab/VQA ``PythonEvaluationTools/vqaEvaluation/vqaEval.py``,
  master a013f00 "Fixed processing answers bug"): every string has newlines/tabs turned to spaces and is
  stripped; when the ten human answers are not all identical, answers and prediction go through
  ``processPunctuation`` and ``processDigitArticle``, otherwise nothing is processed; accuracy is the
  mean over the ten leave-one-out subsets of ``min(1, matches / 3)``. Quirks kept: ``periodStrip``'s
  ``(?!<=\\d)`` is a negative *lookahead* (not the lookbehind it looks like), ``re.UNICODE`` is passed as
  ``sub``'s *count* (at most 32 periods removed), a mark is deleted or spaced depending on the *original*
  text, so ``processPunctuation`` can leave a trailing space that ``processDigitArticle`` then removes.
* LiveCodeBench — ``lcb_runner``: the code is the last fenced block (``extract_code``: lines containing
  three backticks, the text between the last two); tests run by :mod:`engine.c2.lcb_harness` inside the
  sandbox with ``testing_util.run_test``'s semantics; a sample passes only if every test passes
  (``pass_k_utils``: all results ``> 0``). Result codes: -2 wrong answer, -3 time limit, -4 runtime error.
  A run that leaves no result (upstream's global timeout ``(timeout + 1)·tests + 5`` s, ``sys.exit`` in a
  call-based solution, a crash) is recorded as upstream's ``evaluate_generations_by_problem`` ends up
  recording it, ``[-2]`` with error code -5, and our verdict is ``time_limit`` or ``runtime_error``.
* ``decode_private_tests`` — LiveCodeBench's base64 → zlib → pickle (of a JSON string), with a restricted
  unpickler instead of ``pickle.loads``.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import os
import pickle
import re
import string
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engine.c2.sandbox import SandboxLimits, run_sandboxed

__all__ = [
    "CodeTests",
    "CodeVerdict",
    "TestOutcome",
    "UnsafePickleError",
    "VERDICTS",
    "LCB_RESULT_CODES",
    "triviaqa_normalize",
    "triviaqa_exact_match",
    "vqa_process_punctuation",
    "vqa_process_digit_article",
    "vqa_accuracy",
    "vqa_correct",
    "extract_code_block",
    "grade_code",
    "grade_code_many",
    "grade_code_sample",
    "decode_private_tests",
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


# --------------------------------------------------------------------------------------------------
# LiveCodeBench
# --------------------------------------------------------------------------------------------------

#: Our verdict names.
VERDICTS = ("passed", "wrong_answer", "time_limit", "runtime_error", "runner_error", "no_code")
#: LiveCodeBench result codes → our verdicts (True → "passed").
LCB_RESULT_CODES = {-1: "time_limit", -2: "wrong_answer", -3: "time_limit", -4: "runtime_error", -5: "runner_error"}
# (-1 is check_correctness's "global timeout" fill value; in upstream's HEAD it never survives — see above)

Verdict = Literal["passed", "wrong_answer", "time_limit", "runtime_error", "runner_error", "no_code"]

_HARNESS_SOURCE = (Path(__file__).with_name("lcb_harness.py")).read_text(encoding="utf-8")
#: Memory for the harness + code (upstream sets no memory limit; ours keeps a runaway from the host).
CODE_MEMORY_MB = 2048


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


def grade_code(code: str | None, tests: CodeTests, *, timeout_s: float = 6.0) -> CodeVerdict:
    """Run ``code`` against ``tests`` in the sandbox with LiveCodeBench semantics (``run_test``,
    ``check_correctness``). ``timeout_s`` is upstream's per-test alarm (rounded up to whole seconds, as
    ``signal.alarm`` takes); the whole run gets upstream's global ``(timeout + 1)·tests + 5`` seconds.
    Passes only if every test passes."""
    if code is None or not code.strip():
        return CodeVerdict(passed=False, result="no_code", message="no fenced code block in the reply")
    timeout = max(1, math.ceil(timeout_s))
    n_tests = len(tests.inputs)
    payload = json.dumps({"code": code, "timeout": timeout, **tests.as_json()})
    wall = (timeout + 1) * n_tests + 5  # compute_code_generation_metrics.check_correctness global timeout
    limits = SandboxLimits(cpu_s=int(wall) + 1, wall_s=float(wall), memory_mb=CODE_MEMORY_MB)
    run = run_sandboxed(_HARNESS_SOURCE, stdin=payload, limits=limits)
    try:
        reply = json.loads(run.stdout) if run.stdout.strip() else None
    except json.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict) or not isinstance(reply.get("results"), list):
        # Upstream, a child that leaves no result (killed at the global timeout, sys.exit in a
        # call-based solution, a crash) makes check_correctness fail on its empty metadata list, and
        # evaluate_generations_by_problem keeps its initial [-2] with error_code -5 "TestRunnerError".
        # The sample fails either way; our verdict says why.
        ran_out = run.timed_out or run.cpu_limited
        verdict: Verdict = "time_limit" if ran_out else "runtime_error"
        why = (
            "the run exceeded its time budget"
            if ran_out
            else f"the process ended without a result (exit {run.returncode}): {run.stderr.strip()[-300:]}"
        )
        return CodeVerdict(
            passed=False,
            result=verdict,
            tests=(TestOutcome(0, -2, verdict),),
            lcb_results=(-2,),
            message=why,
            metadata={"error_code": -5, "error_message": "TestRunnerError"},
            wall_s=run.wall_s,
        )
    results = [value if isinstance(value, bool) else int(value) for value in reply["results"]]
    metadata = reply.get("metadata") or {}
    outcomes = tuple(
        TestOutcome(i, value, "passed" if value is True else _verdict_of([value])) for i, value in enumerate(results)
    )
    # pass_k_utils: a sample is correct only when all results are > 0 (True) — and every test ran
    passed = len(results) == n_tests and all(value is True for value in results)
    verdict = "passed" if passed else _verdict_of(results)
    if verdict == "passed" and not passed:
        verdict = "runner_error"
    return CodeVerdict(
        passed=passed,
        result=verdict,
        tests=outcomes,
        lcb_results=tuple(results),
        message=str(metadata.get("error_message", "")) if not passed else "",
        metadata=dict(metadata),
        wall_s=run.wall_s,
    )


def grade_code_many(
    jobs: Sequence[tuple[str | None, CodeTests]], *, timeout_s: float = 6.0, workers: int | None = None
) -> list[CodeVerdict]:
    """Grade many (code, tests) pairs concurrently, one sandbox each, in input order. ``workers``
    defaults to the CPU count (upstream's ``num_process_evaluate`` plays the same role); threads
    suffice since each grade waits on its own sandboxed process."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(jobs) <= 1:
        return [grade_code(code, tests, timeout_s=timeout_s) for code, tests in jobs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="c2-grade") as pool:
        return list(pool.map(lambda job: grade_code(job[0], job[1], timeout_s=timeout_s), jobs))


def grade_code_sample(reply: str, tests: CodeTests, *, timeout_s: float = 6.0) -> CodeVerdict:
    """Extract the last fenced block of a model's reply and grade it (``no_code`` without one)."""
    return grade_code(extract_code_block(reply), tests, timeout_s=timeout_s)


# --------------------------------------------------------------------------------------------------
# LiveCodeBench private tests
# --------------------------------------------------------------------------------------------------


class UnsafePickleError(ValueError):
    """The pickle asks for a global (a class or function) — refused; only plain data is admitted."""


class _PlainDataUnpickler(pickle.Unpickler):
    """An unpickler that resolves no global at all: a pickle of str/bytes/numbers/bool/None and
    list/tuple/dict/set/frozenset needs none, anything else (os.system, builtins.eval, a class) does."""

    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(f"pickle refers to the global {module}.{name}; only plain data is allowed")

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("pickle uses a persistent id; only plain data is allowed")


_PLAIN = (str, bytes, int, float, bool, type(None))


def _check_plain(value: Any, depth: int = 0) -> None:
    if depth > 100:
        raise UnsafePickleError("pickle nests deeper than 100 levels")
    if isinstance(value, _PLAIN):
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _check_plain(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, depth + 1)
            _check_plain(item, depth + 1)
        return
    raise UnsafePickleError(f"pickle holds a {type(value).__name__}; only plain data is allowed")


def decode_private_tests(text: str) -> list[Any]:
    """LiveCodeBench ``private_test_cases``: base64 → zlib → pickle → (a JSON string) → list.

    The pickle is read by an unpickler whose ``find_class`` refuses every global, so nothing but plain
    containers, strings and numbers can come out (never ``pickle.loads``). Raises
    :class:`UnsafePickleError` for any global, ``ValueError`` for anything that is not this encoding.
    """
    try:
        raw = zlib.decompress(base64.b64decode(text.encode("utf-8"), validate=False))
    except (binascii.Error, zlib.error, ValueError) as exc:
        raise ValueError(f"not base64 of zlib data: {exc}") from exc
    try:
        value = _PlainDataUnpickler(io.BytesIO(raw)).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # a malformed pickle raises many types (UnpicklingError, EOFError, ...)
        raise ValueError(f"not a readable pickle: {exc}") from exc
    _check_plain(value)
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)  # upstream: json.loads(pickle.loads(...))
        except json.JSONDecodeError as exc:
            raise ValueError(f"the pickled text is not JSON: {exc.msg}") from exc
    if not isinstance(value, list):
        raise ValueError(f"expected a list of test cases, got {type(value).__name__}")
    return value
