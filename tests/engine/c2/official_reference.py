"""The official graders' behaviour, restated as the reference oracle of the differential tests. TEST-ONLY.

Nothing here is imported by the project: the graders live in :mod:`engine.c2.grading` and
:mod:`engine.c2.lcb_compare`. These functions restate, step by step, what each official file does, so
the tests can put our grade beside the official one on any input; they are written from reading the
files (fetched with the tool library's ``fetch``/``read_file``), not copied from them, and they import
nothing from ``engine`` so a slip in our code cannot slip into the reference too. CI has no network, so
the files cannot be loaded at test time.

Sources (the commit each restatement follows):

* TriviaQA — mandarjoshi90/triviaqa ``evaluation/triviaqa_evaluation.py`` at ca43b58 (HEAD, "Add license
  note"; Apache-2.0): ``normalize_answer``, ``f1_score``, ``exact_match_score``,
  ``metric_max_over_ground_truths``, ``get_ground_truths``. The repository says "Python 3"; these are its
  Python 3 semantics.
* VQA — GT-Vision-Lab/VQA ``PythonEvaluationTools/vqaEvaluation/vqaEval.py`` at a013f00 (master, "Fixed
  processing answers bug"; BSD-2-Clause): ``VQAEval.evaluate``'s per-question accuracy,
  ``processPunctuation``, ``processDigitArticle`` and the ``contractions``/``manualMap``/``articles``/
  ``punct`` tables. The file is Python 2 (``print`` statements); these are the semantics of running it
  under Python 3 (its two prints made calls), the choice :mod:`engine.c2.grading` documents.
* LiveCodeBench — LiveCodeBench/LiveCodeBench ``lcb_runner/evaluation/testing_util.py`` at 28fef95 (HEAD;
  MIT): the comparison half of ``grade_stdio`` (``get_stripped_lines``, ``convert_line_to_decimals``, the
  per-line loop and its messages, ``truncatefn``) with ``run_test``'s "Error during testing" for what
  escapes it, and ``grade_call_based``'s ``prediction == gt_out`` (a tuple made a list first).

Checked once against the real files (2026-12-05, mirrors of the three repositories; grade_stdio given a
program that writes the printed text; vqaEval.py run under Python 3.11 with its prints made calls, and
under Python 2.7.18): on the tables and the generators of ``test_grading.py`` / ``test_lcb_compare.py``
(the committed seed and a second one) this module and the files gave the same result for 20,057 TriviaQA
questions (exact match, F1 and the normalised text), 26,052 VQA questions and 30,847 stdio pairs. Under
Python 2.7 vqaEval.py differed on 2 of the VQA questions, both non-ASCII (see ``test_grading.py``).
``lcb_call_outcome`` is Python's ``==``; the NaN-identity cases it decides are recorded from upstream's
own run in ``test_lcb_agreement.py``.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from decimal import Decimal
from typing import Any

# ------------------------------------------------------------------------------------ TriviaQA (ca43b58)

#: handle_punc's ``exclude``: string.punctuation plus four quote marks (curly single quotes, acute, grave).
TRIVIAQA_EXCLUDE = frozenset(string.punctuation) | {"\u2018", "\u2019", "\u00b4", "`"}


def triviaqa_normalize_answer(s: str) -> str:
    """normalize_answer: the five steps, innermost first."""
    text = s.replace("_", " ")  # replace_underscore
    text = text.lower()  # lower
    text = "".join(" " if ch in TRIVIAQA_EXCLUDE else ch for ch in text)  # handle_punc
    text = re.sub(r"\b(a|an|the)\b", " ", text)  # remove_articles
    return " ".join(text.split()).strip()  # white_space_fix, then strip


def triviaqa_exact_match_score(prediction: str, ground_truth: str) -> bool:
    return triviaqa_normalize_answer(prediction) == triviaqa_normalize_answer(ground_truth)


def triviaqa_f1_score(prediction: str, ground_truth: str) -> float:
    """f1_score: integer 0 when no token is shared (empty texts included), else 2PR/(P+R)."""
    predicted = triviaqa_normalize_answer(prediction).split()
    truth = triviaqa_normalize_answer(ground_truth).split()
    num_same = sum((Counter(predicted) & Counter(truth)).values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(predicted)
    recall = 1.0 * num_same / len(truth)
    return (2 * precision * recall) / (precision + recall)


def triviaqa_ground_truths(answer: dict[str, Any]) -> list[str]:
    """get_ground_truths: NormalizedAliases as given, HumanAnswers normalised."""
    return answer["NormalizedAliases"] + [triviaqa_normalize_answer(a) for a in answer.get("HumanAnswers", [])]


def triviaqa_metric_max(metric, prediction: str, ground_truths: list[str]):
    """metric_max_over_ground_truths: max of the metric over every ground truth (raises on none)."""
    return max([metric(prediction, truth) for truth in ground_truths])


# ------------------------------------------------------------------------------------ VQA (a013f00)

VQA_CONTRACTIONS = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've", "couldnt": "couldn't",
    "couldn'tve": "couldn't've", "couldnt've": "couldn't've", "didnt": "didn't", "doesnt": "doesn't",
    "dont": "don't", "hadnt": "hadn't", "hadnt've": "hadn't've", "hadn'tve": "hadn't've", "hasnt": "hasn't",
    "havent": "haven't", "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've", "hes": "he's",
    "howd": "how'd", "howll": "how'll", "hows": "how's", "Id've": "I'd've", "I'dve": "I'd've", "Im": "I'm",
    "Ive": "I've", "isnt": "isn't", "itd": "it'd", "itd've": "it'd've", "it'dve": "it'd've", "itll": "it'll",
    "let's": "let's", "maam": "ma'am", "mightnt": "mightn't", "mightnt've": "mightn't've",
    "mightn'tve": "mightn't've", "mightve": "might've", "mustnt": "mustn't", "mustve": "must've",
    "neednt": "needn't", "notve": "not've", "oclock": "o'clock", "oughtnt": "oughtn't", "ow's'at": "'ow's'at",
    "'ows'at": "'ow's'at", "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've",
    "she'dve": "she'd've", "she's": "she's", "shouldve": "should've", "shouldnt": "shouldn't",
    "shouldnt've": "shouldn't've", "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd",
    "somebodyd've": "somebody'd've", "somebody'dve": "somebody'd've", "somebodyll": "somebody'll",
    "somebodys": "somebody's", "someoned": "someone'd", "someoned've": "someone'd've",
    "someone'dve": "someone'd've", "someonell": "someone'll", "someones": "someone's",
    "somethingd": "something'd", "somethingd've": "something'd've", "something'dve": "something'd've",
    "somethingll": "something'll", "thats": "that's", "thered": "there'd", "thered've": "there'd've",
    "there'dve": "there'd've", "therere": "there're", "theres": "there's", "theyd": "they'd",
    "theyd've": "they'd've", "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're",
    "theyve": "they've", "twas": "'twas", "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've",
    "weve": "we've", "werent": "weren't", "whatll": "what'll", "whatre": "what're", "whats": "what's",
    "whatve": "what've", "whens": "when's", "whered": "where'd", "wheres": "where's", "whereve": "where've",
    "whod": "who'd", "whod've": "who'd've", "who'dve": "who'd've", "wholl": "who'll", "whos": "who's",
    "whove": "who've", "whyll": "why'll", "whyre": "why're", "whys": "why's", "wont": "won't",
    "wouldve": "would've", "wouldnt": "wouldn't", "wouldnt've": "wouldn't've", "wouldn'tve": "wouldn't've",
    "yall": "y'all", "yall'll": "y'all'll", "y'allll": "y'all'll", "yall'd've": "y'all'd've",
    "y'alld've": "y'all'd've", "y'all'dve": "y'all'd've", "youd": "you'd", "youd've": "you'd've",
    "you'dve": "you'd've", "youll": "you'll", "youre": "you're", "youve": "you've",
}
VQA_MANUAL_MAP = {"none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
                  "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
VQA_ARTICLES = ["a", "an", "the"]
VQA_PERIOD_STRIP = re.compile(r"(?!<=\d)(\.)(?!\d)")
VQA_COMMA_STRIP = re.compile(r"(\d)(\,)(\d)")
VQA_PUNCT = [";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",",
             "?", "!"]


def vqa_process_punctuation(in_text: str) -> str:
    """processPunctuation: the conditions read ``in_text`` (the original) while ``out_text`` changes; the
    period substitution gets ``re.UNICODE`` in the *count* position."""
    out_text = in_text
    for p in VQA_PUNCT:
        if (p + " " in in_text or " " + p in in_text) or (re.search(VQA_COMMA_STRIP, in_text) is not None):
            out_text = out_text.replace(p, "")
        else:
            out_text = out_text.replace(p, " ")
    return VQA_PERIOD_STRIP.sub("", out_text, re.UNICODE)


def vqa_process_digit_article(in_text: str) -> str:
    """processDigitArticle: lower, split, number words through manualMap (setdefault: unknown words map to
    themselves), articles dropped, then contractions replaced, joined by single spaces."""
    manual_map = dict(VQA_MANUAL_MAP)
    words = []
    for word in in_text.lower().split():
        word = manual_map.setdefault(word, word)
        if word not in VQA_ARTICLES:
            words.append(word)
    for index, word in enumerate(words):
        if word in VQA_CONTRACTIONS:
            words[index] = VQA_CONTRACTIONS[word]
    return " ".join(words)


def vqa_question_accuracy(res_answer: str, gt_answers: list[dict[str, Any]]) -> float:
    """evaluate(), one question: ``gt_answers`` are the annotation's answer dicts (``answer``,
    ``answer_id``, ...); returns ``avgGTAcc`` (before setEvalQA's rounding). Leave-one-out drops every dict
    *equal* to the left-out one (different ``answer_id`` → only that one)."""
    answers = [dict(a) for a in gt_answers]
    for a in answers:
        a["answer"] = a["answer"].replace("\n", " ").replace("\t", " ").strip()
    res = res_answer.replace("\n", " ").replace("\t", " ").strip()
    if len({a["answer"] for a in answers}) > 1:
        for a in answers:
            a["answer"] = vqa_process_digit_article(vqa_process_punctuation(a["answer"]))
        res = vqa_process_digit_article(vqa_process_punctuation(res))
    gt_acc = []
    for datum in answers:
        others = [item for item in answers if item != datum]
        matching = [item for item in others if item["answer"] == res]
        gt_acc.append(min(1, float(len(matching)) / 3))
    return float(sum(gt_acc)) / len(gt_acc)


def vqa_answer_dicts(answers: list[str]) -> list[dict[str, Any]]:
    """Answer strings as an annotation file holds them: ids 1..n, confidence as OK-VQA's."""
    return [{"answer": a, "answer_confidence": "yes", "answer_id": i + 1} for i, a in enumerate(answers)]


# ------------------------------------------------------------------------------------ LiveCodeBench (28fef95)

ERROR_DURING_TESTING = "Error during testing"


def lcb_truncatefn(s: Any, length: int = 300) -> str:
    s = s if isinstance(s, str) else str(s)
    if len(s) <= length:
        return s
    return s[: length // 2] + "...(truncated) ..." + s[-length // 2 :]


def _lcb_stripped_lines(val: str) -> list[str]:
    return [line.strip() for line in val.strip().split("\n")]


def _lcb_line_decimals(line: str) -> tuple[bool, list[Decimal]]:
    try:
        return True, [Decimal(elem) for elem in line.split()]
    except Exception:  # upstream's bare except
        return False, []


def lcb_stdio_outcome(prediction: str, gt_out: str) -> tuple[bool | int, str | None]:
    """One stdio test's result after the capture: ``(True, None)``, ``(-2, error_message)``, or
    ``(-4, "Error during testing: ...")`` when the Decimal comparison raises (a signalling NaN) — it is
    outside grade_stdio's try, so run_test's handler answers for the whole sample."""
    got_lines, want_lines = _lcb_stripped_lines(prediction), _lcb_stripped_lines(gt_out)
    if len(got_lines) != len(want_lines):
        return -2, "Wrong answer: mismatched output length"
    for output_line_idx, (got, want) in enumerate(zip(got_lines, want_lines)):
        message = f"Wrong answer at {output_line_idx=}: {lcb_truncatefn(got)} != {lcb_truncatefn(want)}"
        if got == want:
            continue
        ok, got_decimals = _lcb_line_decimals(got)
        if not ok:
            return -2, message
        ok, want_decimals = _lcb_line_decimals(want)
        if not ok:
            return -2, message
        try:
            equal = got_decimals == want_decimals
        except Exception as exc:
            return -4, f"{ERROR_DURING_TESTING}: {exc}"
        if equal:
            continue
        return -2, message
    return True, None


def lcb_call_outcome(prediction: Any, gt_out_json: str) -> bool | int:
    """One call-based test's result for the value the method returned: ``prediction == json.loads(output)``
    after a tuple becomes a list; an exception there is the test's -4 (inside grade_call_based's try)."""
    gt_out = json.loads(gt_out_json)
    try:
        if isinstance(prediction, tuple):
            prediction = list(prediction)
        result = prediction == gt_out
        return True if result else False
    except Exception:
        return -4
