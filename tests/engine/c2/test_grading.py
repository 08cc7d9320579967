"""Graders against the behaviour of the official scripts.

Sources read (with the `search` tool) and traced by hand for the expected values below:
* TriviaQA ``evaluation/triviaqa_evaluation.py`` (mandarjoshi90/triviaqa): ``normalize_answer`` =
  white_space_fix(remove_articles(handle_punc(lower(replace_underscore(s))))).strip(); ``handle_punc``
  maps string.punctuation + ‘ ’ ´ ` to a space; ``get_ground_truths`` adds normalised HumanAnswers.
* VQA ``PythonEvaluationTools/vqaEvaluation/vqaEval.py`` (GT-Vision-Lab/VQA master a013f00).

Beyond these cases, a differential run (not part of the suite: it needs the official files, which are
not vendored) compared our functions with the official ones — 0 mismatches on 20,000 random strings
for TriviaQA normalisation/exact match and 5,000 random VQA questions. ``grade_code`` against
LiveCodeBench's own ``evaluate_generations_by_problem`` is part of the suite: ``test_lcb_agreement.py``
(33 honest programs, upstream's recorded result lists); programs that try to fool the grader are in
``test_hostile_programs.py``.
* LiveCodeBench ``lcb_runner/evaluation/testing_util.py``, ``compute_code_generation_metrics.py``,
  ``lcb_runner/utils/extraction_utils.py`` and ``benchmarks/code_generation.py`` (HEAD 28fef95).
"""

from __future__ import annotations

import json
import os
import random

import pytest

from engine.c2 import grading
from engine.c2.grading import (
    CodeTests,
    extract_code_block,
    grade_answer,
    grade_code,
    grade_code_many,
    grade_code_sample,
    triviaqa_exact_match,
    triviaqa_f1,
    triviaqa_normalize,
    vqa_accuracy,
    vqa_correct,
    vqa_process_digit_article,
    vqa_process_punctuation,
)
from engine.c2.sandbox import SandboxUnavailable, sandbox_available
from tests.engine.c2 import official_reference as official

needs_sandbox = pytest.mark.skipif(
    not sandbox_available() and os.environ.get("ATELIER_ALLOW_UNSANDBOXED") != "1",
    reason="needs /usr/bin/bwrap",
)


# ---------------------------------------------------------------- TriviaQA


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("The Beatles", "beatles"),  # lower, article removed
        ("Rock_and_Roll", "rock and roll"),  # underscores → spaces before anything else
        ("U.S.A.", "u s"),  # punctuation → space, then the single letter "a" is an article
        ("Smith’s  `house`", "smith s house"),  # the curly quote and backtick are punctuation too
        ("an apple a day", "apple day"),
        ("  Théâtre  ", "théâtre"),  # non-ASCII letters are kept
        ("theatre", "theatre"),  # \b(a|an|the)\b does not touch a word that starts with "the"
    ],
)
def test_triviaqa_normalize_follows_normalize_answer(raw: str, normalized: str) -> None:
    assert triviaqa_normalize(raw) == normalized


@pytest.mark.parametrize("raw", ["The Beatles!", "a_b the_c", "Ünïcode’s  `x`", "İstanbul", "an a the"])
def test_triviaqa_normalize_is_idempotent_so_raw_human_answers_grade_alike(raw: str) -> None:
    once = triviaqa_normalize(raw)
    assert triviaqa_normalize(once) == once
    assert triviaqa_exact_match(raw, [once]) == triviaqa_exact_match(raw, [raw])


def test_triviaqa_exact_match_takes_the_max_over_ground_truths() -> None:
    assert triviaqa_exact_match("the beatles!", ["rolling stones", "beatles"])
    assert not triviaqa_exact_match("the beatles band", ["beatles"])  # exact, not containment


def test_triviaqa_exact_match_without_ground_truth_raises_like_max_of_nothing() -> None:
    with pytest.raises(ValueError):
        triviaqa_exact_match("x", [])


# ---------------------------------------------------------------- VQA


def test_vqa_punctuation_is_deleted_next_to_a_space_and_spaced_otherwise() -> None:
    # "(" touches a space in "a (b)" → deleted; ")" touches none → a space (kept: no re-join upstream)
    assert vqa_process_punctuation("a (b)") == "a b "
    assert vqa_process_punctuation("x-ray") == "x ray"


def test_vqa_digit_comma_deletes_every_mark() -> None:
    # commaStrip matches "1,000" so each punctuation mark is deleted, not spaced
    assert vqa_process_punctuation("1,000-2") == "10002"


def test_vqa_period_strip_keeps_decimal_points_only() -> None:
    assert vqa_process_punctuation("3.5 m.") == "3.5 m"


def test_vqa_digit_article_maps_number_words_and_contractions() -> None:
    assert vqa_process_digit_article("The Two dogs") == "2 dogs"
    assert vqa_process_digit_article("dont know") == "don't know"


def test_vqa_accuracy_is_the_leave_one_out_mean_of_min_one_matches_over_three() -> None:
    answers = ["red"] * 2 + ["blue"] * 8
    # each left-out "red": 1 other red → 1/3; each left-out "blue": 2 reds → 2/3
    assert vqa_accuracy("red", answers) == pytest.approx((2 * (1 / 3) + 8 * (2 / 3)) / 10)
    assert vqa_accuracy("blue", answers) == 1.0
    assert vqa_accuracy("green", answers) == 0.0


def test_vqa_number_words_match_digits_once_answers_differ() -> None:
    # answers not all identical → answers and prediction are digit-mapped: "two" and "2" agree
    assert vqa_accuracy("two", ["two"] * 9 + ["2"]) == 1.0


def test_vqa_non_ascii_text_is_processed_as_under_python_3() -> None:
    """The choice where vqaEval.py (Python 2) and its Python 3 ports differ; on ASCII they agree. Run
    under Python 2.7.18 the official ``evaluate`` scores both of these 100.0: there ``İ``.lower() is
    ``i`` and ``\\d`` matches ASCII digits only, so the Arabic-Indic "٣.٥" loses its period."""
    assert vqa_accuracy("İstanbul", ["istanbul"] * 5 + ["x"] * 5) == 0.0
    assert vqa_accuracy("٣.٥", ["٣.٥"] * 3 + ["٣٥"] * 7) == pytest.approx(0.9)


def test_vqa_skips_all_processing_when_the_answers_agree() -> None:
    # quirk: ten identical answers are compared raw, so case and punctuation then matter
    assert vqa_accuracy("t-shirt", ["t-shirt"] * 10) == 1.0
    assert vqa_accuracy("T-shirt", ["t-shirt"] * 10) == 0.0
    assert vqa_accuracy("  The\tDog\n", ["dog"] * 10) == 0.0
    # one differing answer switches processing on for everything
    assert vqa_accuracy("T-Shirt", ["t-shirt"] * 9 + ["shirt"]) == pytest.approx(1.0)
    assert vqa_accuracy("  The\tDog\n", ["dog"] * 9 + ["cat"]) == 1.0


# ---------------------------------------------------------------- code extraction


def test_extract_code_block_takes_the_last_fenced_block() -> None:
    reply = "Try:\n```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\n```\n"
    assert extract_code_block(reply) == "print(2)"


def test_extract_code_block_counts_any_line_containing_a_fence() -> None:
    reply = "text ```python\nx = 1\ndone ```"
    assert extract_code_block(reply) == "x = 1"


def test_extract_code_block_without_two_fences_is_none() -> None:
    assert extract_code_block("print(1)") is None
    assert extract_code_block("```python\nprint(1)") is None


# ---------------------------------------------------------------- grade_code (runs the sandbox)

STDIN_SUM = CodeTests(inputs=("1 2\n", "10 20\n"), outputs=("3\n", "30\n"))
CALL_APPEND = CodeTests(inputs=("[1, 2]\n3",), outputs=("[1, 2, 3]",), func_name="append")


@needs_sandbox
def test_stdin_program_passes_every_test() -> None:
    verdict = grade_code("a, b = map(int, input().split())\nprint(a + b)", STDIN_SUM)
    assert verdict.passed and verdict.result == "passed"
    assert verdict.lcb_results == (True, True)


@needs_sandbox
def test_stdin_comparison_accepts_equal_decimals_and_stripped_lines() -> None:
    tests = CodeTests(inputs=("",), outputs=("0.50 2\nok\n",))
    # "0.5 2.0" != "0.50 2" as text, but equal as lists of Decimal tokens; trailing spaces stripped
    assert grade_code("print('0.5 2.0')\nprint('ok   ')", tests).passed


@needs_sandbox
def test_stdin_mismatched_line_count_is_wrong_answer() -> None:
    tests = CodeTests(inputs=("",), outputs=("1\n2\n",))
    verdict = grade_code("print(1)", tests)
    assert verdict.result == "wrong_answer"
    assert verdict.lcb_results == (-2,)
    assert "mismatched output length" in verdict.message


@needs_sandbox
def test_first_failure_stops_the_run() -> None:
    verdict = grade_code("input()\nprint(3)", STDIN_SUM)
    assert verdict.lcb_results == (True, -2)
    assert not verdict.passed


@needs_sandbox
def test_main_guard_is_unwrapped_and_sys_exit_is_swallowed() -> None:
    code = "import sys\ndef main():\n    print(sum(map(int, input().split())))\n    sys.exit(0)\nif __name__ == '__main__':\n    main()"
    assert grade_code(code, STDIN_SUM).passed


@needs_sandbox
def test_call_based_solution_class_and_tuple_result_count_as_list() -> None:
    code = "class Solution:\n    def append(self, xs, y):\n        return tuple(xs + [y])"
    assert grade_code(code, CALL_APPEND).passed


@needs_sandbox
def test_call_based_module_function_without_solution_class() -> None:
    assert grade_code("def append(xs, y):\n    return xs + [y]", CALL_APPEND).passed


@needs_sandbox
def test_call_based_missing_function_is_a_runtime_error() -> None:
    verdict = grade_code("def other():\n    return 1", CALL_APPEND)
    assert verdict.result == "runtime_error"
    assert verdict.lcb_results == (-4,)


@needs_sandbox
def test_iterating_sys_stdin_fails_as_upstream_mock_does() -> None:
    # quirk: upstream patches sys.stdin with an object that cannot be iterated line by line
    code = "import sys\nfor line in sys.stdin:\n    print(sum(map(int, line.split())))"
    assert grade_code(code, STDIN_SUM).lcb_results == (-4,)


@needs_sandbox
def test_sys_exit_in_a_call_based_solution_fails_like_upstreams_runner_error() -> None:
    verdict = grade_code("import sys\nclass Solution:\n    def append(self, xs, y):\n        sys.exit(1)", CALL_APPEND)
    assert verdict.lcb_results == (-2,) and verdict.metadata["error_code"] == -5
    assert verdict.result == "runtime_error" and not verdict.passed


@needs_sandbox
def test_exception_is_a_runtime_error() -> None:
    verdict = grade_code("raise ValueError('boom')", STDIN_SUM)
    assert verdict.result == "runtime_error"
    assert verdict.lcb_results == (-4,)


@needs_sandbox
def test_infinite_loop_is_a_time_limit() -> None:
    verdict = grade_code("while True:\n    pass", STDIN_SUM, timeout_s=1)
    assert verdict.result == "time_limit"
    assert verdict.lcb_results == (-3,)


@needs_sandbox
def test_each_test_has_its_own_limit_in_the_samples_one_runner() -> None:
    """Upstream sets ``signal.alarm(timeout)`` afresh for every test (testing_util.grade_stdio): three
    tests of 0.6 s each pass a 1 s limit, though they run in one process one after the other."""
    tests = CodeTests(inputs=("1 2\n", "10 20\n", "5 5\n"), outputs=("3\n", "30\n", "10\n"))
    verdict = grade_code("import time\ntime.sleep(0.6)\na, b = map(int, input().split())\nprint(a + b)", tests, timeout_s=1)
    assert verdict.passed, verdict.message


@needs_sandbox
def test_sleeping_past_the_limit_in_a_later_test_is_that_tests_time_limit() -> None:
    code = "import time\na, b = map(int, input().split())\nif a == 10:\n    time.sleep(5)\nprint(a + b)"
    verdict = grade_code(code, STDIN_SUM, timeout_s=1)
    assert verdict.result == "time_limit"
    assert [t.verdict for t in verdict.tests] == ["passed", "time_limit"]


@needs_sandbox
def test_an_answer_written_ahead_on_the_channel_is_only_a_claim_for_the_next_test() -> None:
    """One runner answers every test of the sample, and the grader reads the channel's lines in order:
    the claim the code writes there during the first test answers the first, the runner's own answer
    to the first is then read as the second's (whose input is sent only after the first passed) — a
    claim made without that input, wrong here, and never a verdict."""
    forge = ("import json, os\nclaim = (json.dumps({'event': 'output', 'text': '3\\n'}) + '\\n').encode()\n"
             "for fd in range(3, 16):\n    try:\n        os.write(fd, claim)\n    except OSError:\n        pass\n")
    verdict = grade_code("a, b = map(int, input().split())\nprint(a + b)\n" + forge, STDIN_SUM, timeout_s=1)
    assert not verdict.passed
    assert verdict.lcb_results[0] is True and verdict.result == "wrong_answer"


@needs_sandbox
def test_memory_hog_is_a_runtime_error() -> None:
    verdict = grade_code("x = bytearray(8 * 1024 ** 3)", STDIN_SUM)
    assert verdict.result == "runtime_error"
    assert "MemoryError" in verdict.metadata.get("error", "")


@needs_sandbox
def test_reliability_guard_disables_os_system_like_upstream() -> None:
    verdict = grade_code("import os\nos.system('true')\nprint(3)", STDIN_SUM)
    assert verdict.result == "runtime_error"


@needs_sandbox
def test_code_printing_to_fd_1_cannot_forge_a_result() -> None:
    forged = json.dumps({"results": [True, True], "metadata": {}})
    verdict = grade_code(f"import os\nos.write(1, {forged!r}.encode())\nprint(0)", STDIN_SUM)
    assert not verdict.passed


#: Lines the code writes on the runner's channel that json.loads refuses with something other than a
#: JSONDecodeError: nested past the recursion limit (RecursionError), an integer past CPython's
#: 4,300-digit conversion limit (ValueError).
_UNREADABLE_EVENT_LINES = {
    "nested": "'{\"event\": \"compiled\", \"x\": ' + '[' * 100000 + ']' * 100000 + '}'",
    "long_integer": "'{\"event\": \"raised\", \"error_code\": ' + '9' * 5000 + '}'",
}


@needs_sandbox
@pytest.mark.parametrize("line", sorted(_UNREADABLE_EVENT_LINES))
@pytest.mark.parametrize("when", ["compiling", "answering"])
def test_a_channel_line_json_cannot_read_is_a_failed_verdict_not_a_grader_exception(line: str, when: str) -> None:
    forge = (f"import os\ndef forge():\n    line = ({_UNREADABLE_EVENT_LINES[line]} + '\\n').encode()\n"
             "    for fd in range(3, 16):\n        try:\n            os.write(fd, line)\n"
             "        except OSError:\n            pass\n    os._exit(0)\n")
    program = forge + ("forge()\n" if when == "compiling" else "") + "def append(xs, y):\n    forge()"
    verdict = grade_code(program, CALL_APPEND, timeout_s=1)  # returns, rather than raising
    assert not verdict.passed and verdict.lcb_results == (-2,)
    # the grader stopped that sandbox itself: not a time limit the code ran into
    assert verdict.result != "time_limit", verdict.message


@needs_sandbox
def test_a_grader_failure_on_one_sample_fails_that_sample_not_the_batch(monkeypatch, caplog) -> None:
    # a case the grader's reading of an answer did not foresee (as str() of a 5,000-digit integer once was)
    compare = grading.stdio_result

    def unforeseen(prediction: str, given: str, expected: str):
        if prediction.strip() == "7":
            raise RuntimeError("an answer the grader did not foresee")
        return compare(prediction, given, expected)

    monkeypatch.setattr(grading, "stdio_result", unforeseen)
    honest = "a, b = map(int, input().split())\nprint(a + b)"
    for workers in (1, 2):
        verdicts = grade_code_many([("print(7)", STDIN_SUM), (honest, STDIN_SUM)], timeout_s=2, workers=workers)
        assert [verdict.result for verdict in verdicts] == ["runner_error", "passed"]
        assert not verdicts[0].passed and "RuntimeError: an answer the grader did not foresee" in verdicts[0].message
    assert "recorded as a runner error" in caplog.text


def test_a_sandbox_that_cannot_run_still_stops_the_batch(monkeypatch) -> None:
    monkeypatch.setattr(grading, "start_sandboxed", lambda *args, **kwargs: (_ for _ in ()).throw(
        SandboxUnavailable("no bubblewrap here")))
    with pytest.raises(SandboxUnavailable):
        grade_code_many([("print(3)", STDIN_SUM), ("print(3)", STDIN_SUM)], workers=2)


def test_reply_without_code_block_is_no_code() -> None:
    verdict = grade_code_sample("I would add the numbers.", STDIN_SUM)
    assert verdict.result == "no_code" and not verdict.passed


def test_vqa_correct_means_some_annotator_gave_the_answer() -> None:
    assert vqa_correct("cat", ["cat"] + ["dog"] * 9)
    assert not vqa_correct("fox", ["cat"] + ["dog"] * 9)


def test_grade_answer_of_a_qa_reply_is_exact_match_with_its_normalised_text() -> None:
    from engine.c2.grading import grade_answer

    assert grade_answer("qa", "The Eiffel Tower!", ["eiffel tower"]) == {
        "verdict": "correct", "usefulness": 1.0, "correct": True, "detail": {"normalized": "eiffel tower", "f1": 1.0}}
    assert grade_answer("qa", "Big Ben", ["eiffel tower"])["verdict"] == "incorrect"


def test_grade_answer_refuses_a_type_that_is_not_graded_one_answer_at_a_time() -> None:
    from engine.c2.grading import grade_answer

    with pytest.raises(ValueError, match="not graded one by one"):
        grade_answer("code", "print(1)", [])


# ---------------------------------------------------------------- differential: our grade beside the official one
#
# The reference is tests/engine/c2/official_reference.py (the official scripts' behaviour restated, test-only).
# Each table row also carries the result the official file itself gave for it, recorded on 2026-12-05 by
# running the fetched file (TriviaQA ca43b58 under Python 3.11; vqaEval.py a013f00 under Python 3.11 with its
# two print statements made calls) — so the reference is checked on CI too. The seeded fuzz then puts our
# grade beside the reference on random mixtures of the same kinds of pieces.

#: Pieces the fuzz builds answers from: articles anywhere, abbreviations, number words and digits,
#: thousands commas and decimals, contractions with straight and curly apostrophes, hyphens and other
#: punctuation (ASCII and not), accented and special-cased letters, non-ASCII digits, unusual whitespace.
TRICKY_PIECES = (
    "a", "an", "the", "The", "A", "AN", "THE", "Dr.", "dr", "Mr.", "St.", "U.S.A.", "e.g.", "a.m.", "two", "Two", "2",
    "none", "zero", "ten", "10", "eleven", "10,000", "10000", "1,0", "3.50", "3.5", ".5", "5.", "1.0", "1", "-0", "0",
    "½", "dont", "don't", "don’t", "Dont", "Im", "I'm", "Ive", "cant", "yall", "y'all", "oclock", "twas", "let's",
    "she's", "somebody'd", "weve", "whove", "Id've", "I'dve", "ow's'at", "x-ray", "t-shirt", "T-Shirt", "",
    ".", "...", "!", "?", ",", ";", ":", "'", '"', "(", ")", "[", "]", "{", "}", "-", "_", "/", "\\", "@", "#", "$", "%",
    "&", "*", "+", "=", "<", ">", "`", "~", "^", "|", "‘", "’", "´", "“", "”", "—", "–", "…", "é", "café", "CAFÉ",
    "naïve", "İstanbul", "ΟΔΟΣ", "Straße", "ﬁ", "٣", "٣.٥", "１２", "\u00a0", "\u2009", "\u3000", "\x1c", "\x85",
    "\u200b", "\u2028", "dog", "Dog", "red", "yes", "No", "Paris", "paris.", "rock_and_roll", "3:00", "1/2", "50%",
    "1,000-2", "(b)", "1..2",
)
#: What joins two pieces.
TRICKY_JOINS = (" ", " ", " ", "", "  ", "\t", "\n", "\r\n", "-", ".", ",", "_")
FUZZ_SEED = 20261205
FUZZ_CASES = 3000


def tricky_text(rng: random.Random, most: int = 5) -> str:
    """Up to ``most`` tricky pieces, joined by tricky separators."""
    return "".join((rng.choice(TRICKY_JOINS) if index else "") + rng.choice(TRICKY_PIECES)
                   for index in range(rng.randint(0, most)))


def triviaqa_fuzz_cases(seed: int = FUZZ_SEED, count: int = FUZZ_CASES) -> list[tuple[str, list[str], list[str]]]:
    """(prediction, NormalizedAliases, HumanAnswers): the aliases mostly normalised as the dataset's are,
    sometimes holding the prediction itself or duplicates, the human answers raw."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        prediction = tricky_text(rng)
        aliases = [tricky_text(rng, 3) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.4:
            aliases.append(prediction if rng.random() < 0.5 else rng.choice(aliases))
        if rng.random() < 0.7:
            aliases = [official.triviaqa_normalize_answer(alias) for alias in aliases]
        cases.append((prediction, aliases, [tricky_text(rng, 3) for _ in range(rng.randint(0, 2))]))
    return cases


def vqa_fuzz_cases(seed: int = FUZZ_SEED, count: int = FUZZ_CASES) -> list[tuple[str, list[str]]]:
    """(prediction, human answers): ten answers mostly (sometimes 1, 3, 9, 11 or 20), drawn from a few
    variants so some agree, sometimes all identical; the prediction often one of them, padded or dotted."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        size = rng.choice((10, 10, 10, 10, 10, 10, 1, 3, 9, 11, 20))
        variants = [tricky_text(rng, 3) for _ in range(rng.randint(1, 4))]
        answers = [rng.choice(variants) if rng.random() < 0.8 else tricky_text(rng, 3) for _ in range(size)]
        if rng.random() < 0.15:
            answers = [answers[0]] * size
        prediction = rng.choice(answers) if rng.random() < 0.5 else tricky_text(rng, 3)
        if rng.random() < 0.3:
            prediction = rng.choice(("", " ", "\t", "\n ")) + prediction + rng.choice(("", ".", " ", "!", "\n"))
        cases.append((prediction, answers))
    return cases


def official_triviaqa(prediction: str, aliases: list[str], human: list[str]) -> tuple[bool, float]:
    truths = official.triviaqa_ground_truths({"NormalizedAliases": aliases, "HumanAnswers": human})
    return (official.triviaqa_metric_max(official.triviaqa_exact_match_score, prediction, truths),
            official.triviaqa_metric_max(official.triviaqa_f1_score, prediction, truths))


def our_triviaqa(prediction: str, aliases: list[str], human: list[str]) -> tuple[bool, float]:
    """What the site grades with: the task's answers are NormalizedAliases + the raw HumanAnswers."""
    grade = grade_answer("qa", prediction, aliases + human)
    assert grade["usefulness"] == float(grade["correct"])
    return grade["correct"], grade["detail"]["f1"]


TRIVIAQA_TABLE = [
    # (prediction, NormalizedAliases, HumanAnswers, the official exact match, the official F1)
    ("Paris", ["paris"], [], True, 1.0),
    ("Paris.", ["paris"], [], True, 1.0),
    ("“Paris”", ["paris"], [], False, 0.0),  # curly double quotes are not in handle_punc's set
    ("‘Paris’", ["paris"], [], True, 1.0),  # curly single quotes are
    ("´Paris`", ["paris"], [], True, 1.0),
    ("The Beatles", ["beatles"], [], True, 1.0),
    ("Beatles, The", ["beatles"], [], True, 1.0),
    ("the the", ["a"], [], True, 0.0),  # both normalise to nothing
    ("", ["the"], [], True, 0.0),
    ("...", ["!?"], [], True, 0.0),
    ("an apple a day", ["apple day"], [], True, 1.0),
    ("A. Lincoln", ["lincoln"], [], True, 1.0),
    ("theatre", ["atre"], [], False, 0.0),
    ("anathema", ["athema"], [], False, 0.0),
    ("Dr. Who", ["dr who"], [], True, 1.0),
    ("Dr Who", ["doctor who"], [], False, 0.5),
    ("two", ["2"], [], False, 0.0),
    ("10,000", ["10000"], [], False, 0.0),
    ("10,000", ["10 000"], [], True, 1.0),
    ("3.50", ["3.5"], [], False, 0.5),
    ("3.50", ["3 50"], [], True, 1.0),
    ("dont", ["don't"], [], False, 0.0),
    ("don't", ["don t"], [], True, 1.0),
    ("don’t", ["don t"], [], True, 1.0),
    ("x-ray", ["x ray"], [], True, 1.0),
    ("x—ray", ["x ray"], [], False, 0.0),  # an em dash is not string.punctuation
    ("rock_and_roll", ["rock and roll"], [], True, 1.0),
    ("  New\tYork \n City  ", ["new york city"], [], True, 1.0),
    ("New York City", ["new york"], [], False, 0.8),
    ("new new york", ["new york"], [], False, 0.8),
    ("CAFÉ", ["café"], [], True, 1.0),
    ("cafe", ["café"], [], False, 0.0),
    ("naïve", ["naive"], [], False, 0.0),
    ("İstanbul", ["istanbul"], [], False, 0.0),  # Python 3 lower(): i + combining dot
    ("ΟΔΟΣ", ["οδος"], [], True, 1.0),  # final sigma
    ("Straße", ["strasse"], [], False, 0.0),
    ("Paris", ["paris", "paris", "paris"], [], True, 1.0),  # duplicate aliases
    ("Paris", ["lyon"], ["The Paris!"], True, 1.0),  # a human answer normalised by get_ground_truths
    ("Lyon", ["paris"], ["Lyon?"], True, 1.0),
    ("", ["paris"], [""], True, 0.0),
    ("U.S.A.", ["usa"], [], False, 0.0),
    ("U.S.A.", ["u s"], [], True, 1.0),
    ("e.g.", ["e g"], [], True, 1.0),
    ("50%", ["50"], [], True, 1.0),
    ("$5", ["5"], [], True, 1.0),
    ("-0", ["0"], [], True, 1.0),
    ("1/2", ["1 2"], [], True, 1.0),
    ("½", ["1 2"], [], False, 0.0),
    ("Paris\u00a0France", ["paris france"], [], True, 1.0),
    ("Paris\u200bFrance", ["paris france"], [], False, 0.0),
    ("Paris\u3000France", ["paris france"], [], True, 1.0),
    ("an", ["a"], [], True, 0.0),
    ("a an the", [""], [], True, 0.0),
    ("THE WHO", ["who"], [], True, 1.0),
    ("The Who's", ["who s"], [], True, 1.0),
    ("ABBA", ["abba"], [], True, 1.0),
    ("a_b_c", ["b c"], [], True, 1.0),
]


@pytest.mark.parametrize(("prediction", "aliases", "human", "exact_match", "f1"), TRIVIAQA_TABLE)
def test_triviaqa_grade_equals_the_official_script_on_tricky_answers(
    prediction: str, aliases: list[str], human: list[str], exact_match: bool, f1: float
) -> None:
    assert official_triviaqa(prediction, aliases, human) == (exact_match, f1)  # the reference is the file's
    assert triviaqa_normalize(prediction) == official.triviaqa_normalize_answer(prediction)
    assert our_triviaqa(prediction, aliases, human) == (exact_match, f1)


def test_triviaqa_grade_equals_the_official_script_on_seeded_fuzz() -> None:
    differing = [(case, official_triviaqa(*case), our_triviaqa(*case)) for case in triviaqa_fuzz_cases()
                 if official_triviaqa(*case) != our_triviaqa(*case)
                 or triviaqa_normalize(case[0]) != official.triviaqa_normalize_answer(case[0])]
    assert differing == []


def test_triviaqa_exact_match_can_hold_where_f1_is_zero() -> None:
    # f1_score is 0 when no token is shared, also when both sides normalise to nothing
    assert our_triviaqa("The", ["a"], []) == (True, 0.0)
    assert grade_answer("qa", "The", ["a"])["verdict"] == "correct"


def test_triviaqa_f1_without_ground_truth_raises_like_max_of_nothing() -> None:
    with pytest.raises(ValueError):
        triviaqa_f1("x", [])


def official_vqa(prediction: str, answers: list[str]) -> float:
    return official.vqa_question_accuracy(prediction, official.vqa_answer_dicts(answers))


VQA_TABLE = [
    # (prediction, the human answers, the official accuracy)
    ("Two", ["2"] * 10, 0.0),  # ten identical answers: nothing is processed
    ("Two", ["2"] * 9 + ["two"], 1.0),
    ("2", ["two"] * 10, 0.0),
    ("yes.", ["yes"] * 10, 0.0),
    ("yes.", ["yes"] * 9 + ["Yes"], 1.0),
    ("Yes", ["yes"] * 10, 0.0),
    ("10,000", ["10000"] * 9 + ["ten thousand"], 1.0),
    ("10000", ["10,000"] * 5 + ["lots"] * 5, 1.0),
    ("3.50", ["3.5"] * 9 + ["3"], 0.0),
    ("3.5", ["3.50"] * 4 + ["3.5"] * 6, 1.0),
    ("1.", ["1"] * 6 + ["one"] * 4, 1.0),
    (".5", ["0.5"] * 3 + [".5"] * 7, 1.0),
    ("dont", ["don't"] * 5 + ["no"] * 5, 1.0),
    ("don't", ["dont"] * 5 + ["no"] * 5, 1.0),
    ("don’t", ["don't"] * 5 + ["no"] * 5, 0.0),
    ("Dr. Smith", ["dr smith"] * 9 + ["smith"], 1.0),
    ("the dog", ["dog"] * 9 + ["a dog"], 1.0),
    ("dog the", ["dog"] * 9 + ["cat"], 1.0),
    ("red", ["red", "blue", "red"], 0.4444444444444444),  # three answers
    ("red", ["red"] * 2 + ["blue"] * 10, 0.6111111111111112),  # twelve answers
    ("red", ["red"], 0.0),
    ("", ["", "x"] * 5, 1.0),
    ("", [""] * 10, 1.0),
    ("?!", ["", "none"] * 5, 1.0),
    ("none", ["0"] * 5 + ["zero"] * 5, 1.0),
    ("  two\n\tdogs ", ["2 dogs"] * 5 + ["dogs"] * 5, 1.0),
    ("t-shirt", ["t shirt"] * 9 + ["shirt"], 1.0),
    ("x - ray", ["x ray"] * 9 + ["xray"], 1.0),
    ("x-ray", ["xray"] * 9 + ["x ray"], 0.3),
    ("1,000-2", ["10002"] * 9 + ["2"], 1.0),
    ("a (b)", ["b"] * 9 + ["a b"], 1.0),
    ("Café", ["café"] * 9 + ["cafe"], 1.0),
    ("cafe", ["café"] * 9 + ["coffee"], 0.0),
    ("İstanbul", ["istanbul"] * 5 + ["x"] * 5, 0.0),
    ("٣.٥", ["٣.٥"] * 3 + ["٣٥"] * 7, 0.9),
    ("N/A", ["n a"] * 9 + ["na"], 1.0),
    ("." * 40, ["." * 40] * 9 + ["x"], 1.0),  # periodStrip removes 32 periods at most
    ("a.b." * 20, ["ab" * 20] * 9 + ["x"], 0.0),
    ("It's", ["its"] * 9 + ["it's"], 0.3),
    ("I'm", ["im"] * 9 + ["Im"], 0.0),
    ("Im", ["I'm"] * 9 + ["im"], 0.3),
    ("“red”", ["red"] * 9 + ["blue"], 0.0),
    ("'red'", ["red"] * 9 + ["blue"], 0.0),
    ("red;blue", ["red blue"] * 9 + ["red"], 1.0),
    ("red; blue", ["red blue"] * 9 + ["red"], 1.0),
    ("ten", ["10"] * 9 + ["10."], 1.0),
    ("eleven", ["11"] * 9 + ["x"], 0.0),
    ("One", ["1"] * 3 + ["one"] * 3 + ["uno"] * 4, 1.0),
    ("the the the", [""] * 9 + ["a"], 1.0),
    ("yes\n", ["yes\n"] * 10, 1.0),
    ("yes", ["yes\n"] * 10, 1.0),  # answers are stripped even when they agree
    ("yes", [" yes"] * 9 + ["yes "], 1.0),  # ... and set() is taken after stripping
]


@pytest.mark.parametrize(("prediction", "answers", "accuracy"), VQA_TABLE)
def test_vqa_grade_equals_the_official_script_on_tricky_answers(prediction: str, answers: list[str],
                                                                accuracy: float) -> None:
    assert official_vqa(prediction, answers) == accuracy  # the reference is the file's
    assert vqa_accuracy(prediction, answers) == accuracy
    grade = grade_answer("vqa", prediction, answers)
    assert (grade["usefulness"], grade["correct"]) == (accuracy, accuracy > 0)


def test_vqa_grade_equals_the_official_script_on_seeded_fuzz() -> None:
    differing = [(prediction, answers, official_vqa(prediction, answers), vqa_accuracy(prediction, answers))
                 for prediction, answers in vqa_fuzz_cases()
                 if official_vqa(prediction, answers) != vqa_accuracy(prediction, answers)]
    assert differing == []


@pytest.mark.parametrize(("prediction", "answers", "python2_accuracy"), [
    ("İstanbul", ["istanbul"] * 5 + ["x"] * 5, 1.0),  # Python 2's unicode.lower() maps İ to i
    ("٣.٥", ["٣.٥"] * 3 + ["٣٥"] * 7, 1.0),  # Python 2's \d (no re.UNICODE flag) is ASCII only
    ("ΟΔΟΣ", ["οδοσ"] * 9 + ["x"], 1.0),  # Python 2 has no final sigma: Σ lower-cases to σ, never ς
    ("red\u180e", ["red"] * 5 + ["blue"] * 5, 1.0),  # Python 2 strips U+180E (whitespace in Unicode 5.2)
])
def test_vqa_non_ascii_cases_where_the_python_2_script_differs_are_graded_as_under_python_3(
    prediction: str, answers: list[str], python2_accuracy: float
) -> None:
    """vqaEval.py is Python 2 code; we (and the reference) follow its Python 3 ports — see
    engine.c2.grading's docstring. ``python2_accuracy`` is what the file gave under Python 2.7.18
    (2026-12-05); on the fuzz above the two Pythons agree once U+180E is left out."""
    assert vqa_accuracy(prediction, answers) == official_vqa(prediction, answers) != python2_accuracy
