"""Recompute a C² run's results from a bundle's graded samples and ratings (c2-eval.txt §3.2).

``records/samples.jsonl`` holds every sample with its text, the grader's verdict and grade, the
confidence reply, and the Originality cluster recorded when the prompt was graded (embeddings are not
recomputed: the cluster labels are taken as recorded); ``records/ratings.jsonl`` every rating with its
raw reply. Each graded QA and VQA answer is first regraded from its text against the task's answers in
``records/tasks.jsonl`` (:func:`engine.c2.grading.grade_answer`, the grader the site ran), so a verdict
edited together with its grade is named at its sample; a code sample's verdict is taken as recorded
(regrading runs the program in the sandbox; said in the report, with the code grader versions that gave
the verdicts: ``grader_version`` in a sample's grade detail, 1 when absent). The results are then recomputed with
:func:`engine.c2.results.c2_results` — the site's own function — and compared number by number with
``board/board.json``.

The board's other files are written from ``board/board.json`` (:func:`board_files`): the CSV and the
LaTeX with :mod:`engine.c2.exports` and the run's facts recorded in the manifest (``board_facts``, each
checked against the configuration the results were scored with, but the run's id and code version),
the viewer's ``data.js`` with the samples; the exporter writes them so and the verifier rebuilds them so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.bundle.manifest import BOARD_CSV, BOARD_TEX, read_json, read_jsonl
from engine.bundle.numbers import NumberCheck, compare, compare_rows
from engine.bundle.viewer import viewer_files, viewer_header
from engine.c2.exports import export_csv, export_latex
from engine.c2.grading import CODE_GRADER_VERSION, grade_answer
from engine.c2.prompts import parse_confidence
from engine.c2.results import RatingRecord, RunSettings, SampleRecord, c2_results

__all__ = ["PROTOCOL", "PER_INSTANCE", "RATINGS", "SAMPLES", "TASKS", "board_files", "confidence_checks", "per_instance",
           "recompute", "regrade_checks", "viewer_data"]

#: What the manifest's ``protocol`` says a bundle of this kind is (checked by engine.bundle.labels).
PROTOCOL = "C²-Eval: Usefulness, Originality, Surprise of convergent and divergent tasks (§3.2)"

TASKS = "records/tasks.jsonl"
PER_INSTANCE = "records/per_instance.jsonl"
PER_INSTANCE_KEY = ("model", "task")
SAMPLES = "records/samples.jsonl"
RATINGS = "records/ratings.jsonl"
SAMPLE_FIELDS = ("key", "model", "task", "task_type", "status", "correct", "usefulness", "confidence",
                 "confidence_status", "cluster")
RATING_FIELDS = ("sample", "rater", "repeat", "status", "u", "o", "s", "rationale_u", "rationale_o", "rationale_s")
SAMPLE_SHOWN = 300  # characters of a sample in the viewer's drill-down (the records keep all of it)
#: The run's facts the CSV and LaTeX print, and the setting of the scored configuration each must equal.
FACT_SETTINGS = ("template", "n_samples", "rater", "seed", "surprise_policy", "tau")


def per_instance(results: Mapping[str, Any]) -> list[dict]:
    """Per model × prompt: U, O, S, C, the Originality clusters and missing confidences (the results' ``prompts``)."""
    return [{"model": model, "task": task, **scores}
            for model, by_task in sorted(results.get("prompts", {}).items())
            for task, scores in sorted(by_task.items())]


#: Task types whose answers are regraded one by one from the bundle (engine.c2.grading.grade_answer).
REGRADED = ("qa", "vqa")
GRADE_FIELDS = ("verdict", "usefulness", "correct")


def regrade_checks(tasks: list[Mapping], samples: list[Mapping], notes: list[str]) -> list[NumberCheck]:
    """Every graded QA/VQA sample's verdict, usefulness and correctness beside its regrade from the text."""
    answers = {t["id"]: list((t.get("constraints") or {}).get("answers") or []) for t in tasks}
    checks, code = [], 0
    versions: Counter = Counter()
    for row in samples:
        if not row.get("verdict"):
            continue
        if row["task_type"] not in REGRADED:
            if row["task_type"] == "code":
                code += 1
                versions[(row.get("grade_detail") or {}).get("grader_version", 1)] += 1
            continue
        again = grade_answer(row["task_type"], row.get("text") or "", answers.get(row["task"], []))
        where = f"records.sample {row['key']} ({row['model']}, {row['task']} #{row.get('sample_index')})"
        checks.extend(NumberCheck(f"{where}.{f}", row.get(f), again[f]) for f in GRADE_FIELDS)
    if code:
        graded_by = ", ".join(f"version {v}: {n}" for v, n in sorted(versions.items(), key=lambda item: str(item[0])))
        notes.append(f"{code} code sample verdict(s) taken as recorded (regrading runs each program in the sandbox); "
                     f"code grader {graded_by} (this code: version {CODE_GRADER_VERSION})")
    return checks


#: The confidence statuses read from a reply (engine.c2.prompts.parse_confidence of ``confidence_raw``).
PARSED_CONFIDENCE = ("ok", "unparseable")


def confidence_checks(samples: list[Mapping]) -> list[NumberCheck]:
    """Every answered confidence question's stored probability and status beside its reply parsed again: the
    Surprise scores are computed from the stored probability, so a forged one moves them consistently."""
    checks = []
    for row in samples:
        if row.get("confidence_status") not in PARSED_CONFIDENCE:
            continue
        value = parse_confidence(row.get("confidence_raw"))
        where = f"records.sample {row['key']} ({row['model']}, {row['task']} #{row.get('sample_index')})"
        checks.append(NumberCheck(f"{where}.confidence", row.get("confidence"), value))
        checks.append(NumberCheck(f"{where}.confidence_status", row.get("confidence_status"),
                                  "unparseable" if value is None else "ok"))
    return checks


def viewer_data(results: Mapping[str, Any], samples: list[Mapping]) -> dict:
    """The viewer's board (creativity per task type, Combined) and, per prompt, every sample with its
    verdict, confidence, cluster and the start of its text."""
    types = results["task_types"]
    board = {"caption": "Creativity per task type (mean over prompts, 95% bootstrap over prompts)",
             "columns": ["model"] + [f"{t} C" for t in types] + ["combined text", "combined vision"],
             "rows": [[m] + [(results["scores"][m].get(t) or {}).get("creativity", {}).get("value") for t in types]
                      + [results["combined"][m].get("text"), results["combined"][m].get("vision")]
                      for m in results["models"]]}
    by_task: dict[str, list[Mapping]] = {}
    for s in samples:
        by_task.setdefault(s["task"], []).append(s)
    instances = [{
        "id": task, "label": f"prompt {task} ({items[0]['task_type']}, {len(items)} samples)",
        "table": {"caption": f"Every sample of prompt {task}",
                  "columns": ["model", "sample", "status", "verdict", "correct", "confidence", "cluster", "text"],
                  "rows": [[s["model"], s["sample_index"], s["status"], s["verdict"], s["correct"], s["confidence"],
                            s["cluster"], s["text"][:SAMPLE_SHOWN]] for s in items]},
    } for task, items in by_task.items()]
    return {"board": board, "instances": instances}


def board_files(root: Path, manifest: Mapping[str, Any]) -> dict[str, str]:
    """``board/board.csv``, ``board/board.tex`` and the viewer (name → text), from ``board/board.json``, the
    run's facts in the manifest and the sample records."""
    results = read_json(root, manifest["board"])
    facts = manifest["board_facts"]
    viewer = viewer_data(results, read_jsonl(root, SAMPLES))
    return {BOARD_CSV: export_csv(results, facts), BOARD_TEX: export_latex(results, facts),
            **viewer_files({**viewer_header(manifest), **viewer})}


def fact_checks(facts: Mapping[str, Any], settings: Mapping[str, Any]) -> list[NumberCheck]:
    """Each fact the CSV and LaTeX print beside the configuration the results were scored with."""
    return [NumberCheck(f"board_facts.{name} (printed by board/board.csv or board.tex)", facts.get(name),
                        settings.get(name)) for name in FACT_SETTINGS]


def recompute(root: Path, manifest: Mapping[str, Any], notes: list[str] | None = None) -> list[NumberCheck]:
    notes = notes if notes is not None else []
    config = manifest["configuration"]
    stored = read_json(root, manifest["board"])
    rows = read_jsonl(root, SAMPLES)
    samples = [SampleRecord(**{f: row.get(f) for f in SAMPLE_FIELDS}) for row in rows]
    ratings = [RatingRecord(**{f: row.get(f) for f in RATING_FIELDS}) for row in read_jsonl(root, RATINGS)]
    settings = RunSettings(models=config["models"], seed=int(config["seed"]), surprise_policy=config["surprise_policy"],
                           rater=config["rater"], second_rater=config.get("second_rater", ""),
                           is_simulated=bool(config["simulated"]), is_demo=bool(config["demo"]),
                           settings=config["settings"])
    checks = regrade_checks(read_jsonl(root, TASKS), rows, notes) + confidence_checks(rows)
    results = c2_results(settings, samples, ratings)
    if (Path(root) / PER_INSTANCE).is_file():
        checks += compare_rows(read_jsonl(root, PER_INSTANCE), per_instance(results), PER_INSTANCE_KEY,
                               prefix="records.per_instance")
    checks += fact_checks(manifest.get("board_facts", {}), config["settings"])
    return compare(stored, results) + checks
