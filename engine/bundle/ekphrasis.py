"""Recompute an Ekphrasis leaderboard snapshot from a bundle's judged comparisons (Ekphrasis §4.3, App. F).

``records/comparisons.jsonl`` holds every comparison of the run — planned, failed and judged — with
what the judge saw and said; a judged one carries ``fit``, the fields the leaderboard fit reads (the
models' positions in the pool, the inspected fields' word counts, the pair key), exactly as the site
built them when it stored the snapshot. The snapshot is then recomputed with
:func:`engine.leaderboard.build_leaderboard` — the site's own function — on the recorded models,
dimensions, bootstrap size and seed, and compared number by number with ``board/board.json``.

The word counts are checked too, against the responses in ``records/responses.jsonl`` (the judge's
inspected field of each dimension is recorded in the manifest), so an edited response text shows up
even though no board number reads the text itself. When the bundle carries human labels, the
snapshot's calibrated views are recomputed too (:mod:`engine.bundle.calibration`).

The board's other files are written from ``board/board.json`` (:func:`board_files`): the CSV and the
LaTeX with :mod:`engine.leaderboard_exports` and the snapshot's facts recorded in the manifest
(``board_facts``), the viewer's ``data.js`` with the comparisons and responses; the exporter writes them
so and the verifier rebuilds them so.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.bundle import calibration
from engine.bundle.manifest import BOARD_CSV, BOARD_TEX, read_json, read_jsonl
from engine.bundle.numbers import NumberCheck, compare, compare_rows
from engine.bundle.viewer import viewer_files, viewer_header
from engine.leaderboard import JudgedComparison, build_leaderboard
from engine.leaderboard_exports import export_csv, export_latex, model_rows, overall_measure
from engine.reliability import ComparisonRecord
from engine.visual_plan import compose_two_field_text, split_visual_plan

__all__ = ["PROTOCOL", "COMPARISONS", "PER_INSTANCE", "RESPONSES", "board_files", "budget_check", "judged_comparison", "model_checks",
           "per_instance", "recompute", "response_text_checks", "viewer_data"]

#: What the manifest's ``protocol`` says a bundle of this kind is (checked by engine.bundle.labels).
PROTOCOL = "Ekphrasis: pairwise judged visual creative ideation, Bradley–Terry with task-level bootstrap (§4.3, App. F)"

COMPARISONS = "records/comparisons.jsonl"
RESPONSES = "records/responses.jsonl"
PER_INSTANCE = "records/per_instance.jsonl"
PER_INSTANCE_KEY = ("task", "dimension", "model")
#: Payload lists indexed by model (named by the model in a report).
MODEL_KEYS = {"theta", "se", "winrate", "z", "diagnostic_winrate", "wins", "losses", "ties", "rank_probabilities",
              "pairwise_winrate", "pairwise_n", "overall", "overall_rank_probabilities", "models", "model_ids",
              "task_avg", "usefulness_pct", "novelty_pct"}
#: Payload pairs [5th percentiles, 95th percentiles] of model lists.
INTERVAL_KEYS = {"theta_ci90", "winrate_ci90", "overall_ci90"}
RATIONALE_SHOWN = 300  # characters of a rationale in the viewer's drill-down (the records keep all of it)
#: Most bootstrap resamples a bundle's fit is run with: the draws are held in memory (resamples × tasks),
#: so ``configuration.n_boot`` of 10⁹ asked for tens of GiB and ended in a MemoryError after minutes; the
#: site fits 1,000 (``leaderboard.ekphrasis.judge_runs``), and a paper's most is 10,000.
MAX_N_BOOT = 100_000


def judged_comparison(row: Mapping[str, Any]) -> JudgedComparison:
    """A judged comparison record of the bundle as the engine's leaderboard input."""
    fit = row["fit"]
    automatic = bool(fit["automatic"])
    record = ComparisonRecord(
        task=row["task"], dimension=row["dimension"], model_a=int(fit["model_a"]), model_b=int(fit["model_b"]),
        winner=row["winner"], kind="primary" if automatic else row["kind"], repaired=bool(row["repaired"]),
        len_a=int(fit["len_a"]), len_b=int(fit["len_b"]), pair_key=fit["pair_key"], repeat=int(row["repeat"]),
        judge=row["judge"],
    )
    return JudgedComparison(record=record, confidence=row["confidence"] or 0.0, family=row["family"], automatic=automatic)


def per_instance(rows: Sequence[Mapping[str, Any]], models: Sequence[str]) -> list[dict]:
    """Per task × dimension × model: wins, losses, ties of the comparisons the fit used (the primary
    and automatic judged ones), from the comparison records."""
    tally: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    for row in rows:
        fit = row.get("fit")
        if not fit or row.get("status") != "ok" or not (row["kind"] == "primary" or fit["automatic"]):
            continue
        a, b = models[fit["model_a"]], models[fit["model_b"]]
        if row["winner"] == "tie":
            tally[(row["task"], row["dimension"], a)]["ties"] += 1
            tally[(row["task"], row["dimension"], b)]["ties"] += 1
        else:
            winner, loser = (a, b) if row["winner"] == "A" else (b, a)
            tally[(row["task"], row["dimension"], winner)]["wins"] += 1
            tally[(row["task"], row["dimension"], loser)]["losses"] += 1
    return [{"task": t, "dimension": d, "model": m, "wins": c["wins"], "losses": c["losses"], "ties": c["ties"]}
            for (t, d, m), c in sorted(tally.items())]


def model_labeller(models: Sequence[str]):
    def label(path: tuple[str, ...], i: int) -> str:
        last = path[-1] if path else ""
        if last in INTERVAL_KEYS:
            return ("5th pct", "95th pct")[i] if i < 2 else str(i)
        parent = path[-2] if len(path) > 1 else ""
        by_model = last in MODEL_KEYS or parent == "z" or (last.startswith("[") and parent in MODEL_KEYS | INTERVAL_KEYS)
        if last == "order":
            return f"rank {i + 1}"
        return models[i] if by_model and i < len(models) else str(i)

    return label


def _word_checks(comparisons: Sequence[Mapping], responses: Mapping[int, Mapping], inspected: Mapping[str, str]) -> list[NumberCheck]:
    out = []
    for row in comparisons:
        fit = row.get("fit")
        if not fit:
            continue
        field = inspected.get(row["dimension"])
        for side, shown in (("len_a", row["shown_a"]), ("len_b", row["shown_b"])):
            response = responses.get(shown)
            words = None if response is None or field is None else len(str(response.get(field, "")).split())
            out.append(NumberCheck(f"records.comparison {row['id']}.{side} (words of response {shown}'s {field})",
                                   fit[side], words))
    return out


def response_text_checks(responses: Mapping[int, Mapping]) -> list[NumberCheck]:
    """Each response's texts against each other: ``raw_sha256`` is the SHA-256 of ``raw_text`` (as the site
    stored it), and the two fields the judge read are what the normalisation makes of the raw text — the
    parser's split (:func:`engine.visual_plan.split_visual_plan`) or, for an answer given as two fields, the
    raw text they compose. The word-count checks see only counts: a field rewritten with as many words
    would verify. (An LLM split, and one still pending, are taken as recorded.)"""
    out = []
    for pk, r in responses.items():
        raw = str(r.get("raw_text") or "")
        where = f"records.response {pk} ({r.get('model')}, {r.get('task')})"
        out.append(NumberCheck(f"{where}.raw_sha256 (of its raw_text)", r.get("raw_sha256"),
                               hashlib.sha256(raw.encode("utf-8")).hexdigest()))
        method = r.get("normalisation_method")
        if method == "parser":
            plan = split_visual_plan(raw)
            out += [NumberCheck(f"{where}.core_idea (parsed from raw_text)", r.get("core_idea"), plan.core_idea),
                    NumberCheck(f"{where}.visual_description (parsed from raw_text)", r.get("visual_description"),
                                plan.visual_description)]
        elif method == "fields":
            out.append(NumberCheck(f"{where}.raw_text (composed of core_idea and visual_description)", raw,
                                   compose_two_field_text(str(r.get("core_idea")), str(r.get("visual_description")))))
    return out


def model_checks(comparisons: Sequence[Mapping], responses: Mapping[int, Mapping], models: Sequence[str]) -> list[NumberCheck]:
    """Each judged comparison's fitted positions against the models of the responses it showed.

    The fit reads models by position (``fit.model_a`` indexes ``configuration.models``), so names
    swapped in the configuration and the board alone would recompute to the same swapped board;
    ``records/responses.jsonl`` says which model wrote each response, and that must be the name at
    the position."""
    out = []
    for row in comparisons:
        fit = row.get("fit")
        if not fit:
            continue
        for side, shown in (("model_a", row["shown_a"]), ("model_b", row["shown_b"])):
            position = fit[side]
            named = models[position] if isinstance(position, int) and 0 <= position < len(models) else None
            response = responses.get(shown)
            out.append(NumberCheck(f"records.comparison {row['id']}.{side} (model of response {shown})",
                                   named, None if response is None else response.get("model")))
    return out


def viewer_data(payload: Mapping[str, Any], comparisons: Sequence[Mapping], model_of_response: Mapping[int, str]) -> dict:
    """The viewer's board (rank, model, Overall with its interval, win rate per dimension) and, per task,
    every comparison with the models of the two responses shown."""
    dims = payload["dimensions"]
    board = {"caption": overall_measure(payload) + "; " + payload["interval"],
             "columns": ["rank", "model", "overall", "90% low", "90% high"] + [f"{d} win rate" for d in dims],
             "rows": [[r.rank, r.name, r.overall, r.overall_low, r.overall_high] + [r.winrate[d] for d in dims]
                      for r in model_rows(payload)]}
    by_task: dict[str, list[Mapping]] = defaultdict(list)
    for row in comparisons:
        by_task[row["task"]].append(row)
    instances = [{
        "id": task, "label": f"task {task} ({len(items)} comparisons)",
        "table": {"caption": f"Every comparison of task {task}", "columns": [
            "dimension", "kind", "A", "B", "status", "winner", "confidence", "rationale"],
            "rows": [[c["dimension"], c["kind"], model_of_response.get(c["shown_a"]), model_of_response.get(c["shown_b"]),
                      c["status"], c["winner"], c["confidence"], c["rationale"][:RATIONALE_SHOWN]] for c in items]},
    } for task, items in by_task.items()]
    return {"board": board, "instances": instances}


def board_files(root: Path, manifest: Mapping[str, Any]) -> dict[str, str]:
    """``board/board.csv``, ``board/board.tex`` and the viewer (name → text), from ``board/board.json``, the
    snapshot's facts in the manifest and the comparison and response records."""
    payload = read_json(root, manifest["board"])
    facts = manifest["board_facts"]
    model_of_response = {int(r["id"]): r["model"] for r in read_jsonl(root, RESPONSES)}
    viewer = viewer_data(payload, read_jsonl(root, COMPARISONS), model_of_response)
    return {BOARD_CSV: export_csv(payload, facts), BOARD_TEX: export_latex(payload, facts),
            **viewer_files({**viewer_header(manifest), **viewer})}


def budget_check(comparisons: Sequence[Mapping[str, Any]], budget: Any) -> NumberCheck:
    """The judge's budget per task and dimension (``judge.budget_per_task``, restated in ``board_facts``) against
    the primary calls the records hold. A snapshot is stored once every task is judged, and the sampler plans
    primary calls (answered or failed) until the budget is spent, stopping short only where fewer than two
    responses can be judged, which gets none (Ekphrasis App. F.1; ``engine.active_sampling.select_pairs``).
    So every task × dimension with a primary call has exactly the budget; the recomputed value is that count,
    or the counts found when they are not one number (a budget stated once is then not the records')."""
    calls: Counter = Counter((row["task"], row["dimension"]) for row in comparisons if row["kind"] == "primary")
    counts = sorted(set(calls.values()))
    recomputed: Any = counts[0] if len(counts) == 1 else counts if counts else "(no primary call in the records)"
    return NumberCheck("manifest.judge.budget_per_task (the primary judge calls of each task and dimension: a run "
                       "spends its whole budget on every task and dimension with two responses to judge)",
                       budget, recomputed)


def recompute(root: Path, manifest: Mapping[str, Any], notes: list[str] | None = None) -> list[NumberCheck]:
    """Every number of the stored snapshot beside its recomputation from the bundle's comparisons;
    ``notes`` is told the calibration method version the calibrated views were recomputed with."""
    config = manifest["configuration"]
    stored = read_json(root, manifest["board"])
    comparisons = read_jsonl(root, COMPARISONS)
    models = list(config["models"])
    if not 1 <= int(config["n_boot"]) <= MAX_N_BOOT:
        raise ValueError(f"manifest.json, field configuration.n_boot: {config['n_boot']} bootstrap resamples; this "
                         f"verifier fits between 1 and {MAX_N_BOOT} (the site fits 1000)")
    judged = [judged_comparison(row) for row in comparisons if row["status"] == "ok"]
    payload = build_leaderboard(judged, models, dimensions=tuple(config["dimensions"]), n_boot=int(config["n_boot"]),
                                seed=int(config["seed"]))
    # Recorded with the snapshot, not computed by the fit: the pool's ids and the run's usage are
    # copied; the failed calls are counted from the comparisons.
    payload["model_ids"] = stored.get("model_ids")
    payload["usage"] = stored.get("usage")
    payload["failed_calls"] = sum(1 for row in comparisons if row["status"] == "failed")
    checks = compare(stored, payload, label=model_labeller(models))
    # the seed board.tex prints is the seed the board was fitted with
    checks.append(NumberCheck("board_facts.seed (printed in board/board.tex)", manifest.get("board_facts", {}).get("seed"),
                              config["seed"]))
    responses = {int(r["id"]): r for r in read_jsonl(root, RESPONSES)}
    checks += _word_checks(comparisons, responses, config.get("inspected_field", {}))
    checks += model_checks(comparisons, responses, models)
    checks += response_text_checks(responses)
    judge = manifest.get("judge")
    checks.append(budget_check(comparisons, judge.get("budget_per_task") if isinstance(judge, Mapping) else None))
    if (Path(root) / PER_INSTANCE).is_file():
        checks += compare_rows(read_jsonl(root, PER_INSTANCE), per_instance(comparisons, models), PER_INSTANCE_KEY,
                               prefix="records.per_instance")
    # the human-calibrated views, when the snapshot's bundle carries the labels they used
    return checks + calibration.recompute(root, manifest, notes)
