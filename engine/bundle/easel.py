"""Recompute an EASEL leaderboard from a bundle's steps and canvases (easel.txt §3.3, §5).

For each episode the stored raw actions are replayed through the engine's environment
(:class:`engine.easel.episode.Environment`, the same path a resumed episode takes on the site): the
replayed S_t and its components must equal the recorded ones, and each stored canvas (``media/``) must
be the PNG of the replayed canvas — a changed canvas byte, action or S is named at its step. The
episode's trajectory metrics (Final, @50%, AUC, Best, F-B gap, repeat and invalid rates, the Figure 4
curve) are recomputed from the replayed S_t with the engine's functions (the repeat rate with the method
version its run recorded, ``config.repeat_rate_method_version``, 1 when absent: a bundle of a run made before
repeats were told by the stroke they mean verifies as it was computed); an anchor's canvas is
recomputed from the reference (:mod:`engine.easel.painter`). The board is then recomputed from the
recomputed episodes with :func:`engine.easel.leaderboard.easel_board` and compared with ``board/board.json``.

A semantic episode's score is recomputed when its recogniser is offline (Tesseract installed, or a
geometric task); a model recogniser's reading is taken as recorded (noted in the report).

The board's other files are written from ``board/board.json`` (:func:`board_files`): the CSV and the
LaTeX with :mod:`engine.easel.exports` (the payload carries all they print), the viewer's ``data.js``
with the episodes, runs and task images; the exporter writes them so and the verifier rebuilds them so.
"""

from __future__ import annotations

import io
import re
import shutil
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from engine.bundle.manifest import BOARD_CSV, BOARD_TEX, read_json, read_jsonl
from engine.bundle.numbers import NumberCheck, compare, compare_rows
from engine.bundle.viewer import viewer_files, viewer_header
from engine.easel import painter
from engine.easel.episode import Environment
from engine.easel.exports import export_csv, export_latex
from engine.easel.leaderboard import EPISODE_FIELDS, TRAJECTORY_COLUMNS, BoardRun, easel_board
from engine.easel.metrics import similarity
from engine.easel.semantic import HANDWRITING_HELLO, TesseractRecogniser, semantic_episode_summary
from engine.easel.task import task_from_record
from engine.easel.trajectory import (
    REPEAT_RATE_METHOD_VERSION,
    REPEAT_RATE_METHODS,
    known_repeat_method,
    progress_curve,
    recorded_repeat_method,
    trajectory_diagnostics,
)

__all__ = ["PROTOCOL", "anchor_name_checks", "EPISODES", "PER_INSTANCE", "RUNS", "STEPS", "TASKS", "board_files", "per_instance", "recompute",
           "viewer_data"]

#: What the manifest's ``protocol`` says a bundle of this kind is (checked by engine.bundle.labels).
PROTOCOL = "EASEL: stroke-painting agents, S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU with trajectory metrics (§3.3)"

TASKS = "records/tasks.jsonl"
RUNS = "records/runs.jsonl"
EPISODES = "records/episodes.jsonl"
STEPS = "records/steps.jsonl"
PER_INSTANCE = "records/per_instance.jsonl"
PER_INSTANCE_KEY = ("run", "task")
#: An episode's numbers per instance (run × task) as a reviewer reads them beside the board.
PER_INSTANCE_FIELDS = ("category", "steps_done", "final_s", "at_50", "auc", "best", "fb_gap", "repeat_rate",
                       "invalid_rate", "submit_step", "semantic_score")
STEP_FIELDS = ("s", "ssim", "l1", "edge_iou", "valid", "kind", "collision")
ANCHOR_FUNCTIONS = {"blank_fill": painter.blank_fill, "mean_colour_fill": painter.mean_colour_fill,
                    "dominant_colour_fill": painter.dominant_colour_fill}


#: What a record may cite as media: a SHA-256 in hex (the file is ``media/<digest>.png``). Anything else
#: — ``../../x`` — would name a file outside the bundle.
MEDIA_DIGEST = re.compile(r"[0-9a-f]{64}")


def _media(root: Path, digest: str | None) -> bytes | None:
    if not digest:
        return None
    if not isinstance(digest, str) or not MEDIA_DIGEST.fullmatch(digest):
        raise ValueError(f"a record cites media {digest!r}, which is not a SHA-256 in hex")
    path = Path(root) / "media" / f"{digest}.png"
    return path.read_bytes() if path.is_file() else None


def _levels(canvas: np.ndarray) -> np.ndarray:
    """The 8-bit levels a canvas is stored at (engine.easel.task.png_bytes rounds to the nearest level)."""
    return np.round(np.clip(canvas, 0.0, 1.0) * 255.0).astype(np.uint8)


def _canvas_check(root: Path, where: str, digest: str | None, canvas: np.ndarray) -> NumberCheck:
    """The stored canvas against the replayed one, pixel by pixel at the stored 8-bit levels."""
    expected = "identical to the replay"
    if digest and not (isinstance(digest, str) and MEDIA_DIGEST.fullmatch(digest)):
        return NumberCheck(f"{where}.canvas", f"media {digest!r}, which is not a SHA-256 in hex", expected)
    stored = _media(root, digest)
    if stored is None:
        return NumberCheck(f"{where}.canvas", f"missing file media/{digest}.png", expected)
    try:
        with Image.open(io.BytesIO(stored)) as image:
            pixels = np.asarray(image.convert("RGB"), dtype=np.uint8)
    except Exception as exc:  # a damaged PNG: say so rather than stop the whole check
        return NumberCheck(f"{where}.canvas", f"media/{digest}.png does not decode ({type(exc).__name__}: {exc})", expected)
    replayed = _levels(canvas)
    if pixels.shape != replayed.shape:
        return NumberCheck(f"{where}.canvas", f"{pixels.shape[1]}×{pixels.shape[0]} pixels, not "
                                              f"{replayed.shape[1]}×{replayed.shape[0]}", expected)
    differing = int(np.count_nonzero(np.any(pixels != replayed, axis=2)))
    return NumberCheck(f"{where}.canvas", expected if differing == 0 else f"{differing} pixels differ from the replay",
                       expected)


def _recogniser(name: str):
    if name.split()[0] == "tesseract" and shutil.which("tesseract"):
        return TesseractRecogniser()
    return None


def _episode(root: Path, episode: Mapping, steps: list[Mapping], task, run: Mapping,
             checks: list[NumberCheck], notes: list[str]) -> dict:
    """The recomputed fields of one episode (what the site's ``_episode_finish`` stores), checking each step."""
    where = f"run {episode['run']} ({run['agent_name']}) / {episode['task']}"
    out = dict(episode)
    if run["agent_kind"] == "anchor":
        canvas = ANCHOR_FUNCTIONS[run["config"]["anchor"]](task.reference)
        score = similarity(canvas, task.reference)
        out.update(final_s=score.s, final_ssim=score.ssim, final_l1=score.l1, final_edge_iou=score.edge_iou,
                   best=score.s, at_50=score.s, auc=score.s, fb_gap=0.0)
        checks.append(_canvas_check(root, f"episode {where}.final", episode.get("final_canvas"), canvas))
        return out
    handwriting = task.spec.get("task") == HANDWRITING_HELLO
    recogniser = _recogniser(episode.get("recogniser") or "tesseract") if handwriting else None
    env = Environment(task, budget=int(episode["budget"]), recogniser=recogniser)
    initial_s = float(env.similarity.s) if env.similarity is not None else None
    outcomes = []
    for step in steps:
        outcome = env.step(step["raw"])
        outcomes.append(outcome)
        sim = outcome.similarity
        again = {"s": None if sim is None else float(sim.s), "ssim": None if sim is None else float(sim.ssim),
                 "l1": None if sim is None else float(sim.l1), "edge_iou": None if sim is None else float(sim.edge_iou),
                 "valid": bool(outcome.valid), "kind": outcome.kind, "collision": bool(outcome.collision)}
        label = f"episode {where}.step {step['index']}"
        checks.extend(NumberCheck(f"{label}.{f}", step.get(f), again[f]) for f in STEP_FIELDS)
        if step.get("canvas"):
            checks.append(_canvas_check(root, label, step["canvas"], env.canvas))
    checks.append(_canvas_check(root, f"episode {where}.final", episode.get("final_canvas"), env.canvas))
    kinds = [o.kind for o in outcomes]
    valid = [bool(o.valid) for o in outcomes]
    submit = next((i for i, o in enumerate(outcomes, start=1) if o.kind == "submit"), None)
    out.update(steps_done=len(outcomes), undo_count=kinds.count("undo"),
               collision_count=sum(bool(o.collision) for o in outcomes), submit_step=submit,
               invalid_rate=(sum(not v for v in valid) / len(valid)) if valid else 0.0)
    if task.kind == "reconstruction":
        s_values = [float(o.similarity.s) for o in outcomes]
        recorded = recorded_repeat_method(run.get("config"))  # the run's, as the site computed
        method = known_repeat_method(recorded)
        if method is None:
            checks.append(NumberCheck(f"run {episode['run']}.config.repeat_rate_method_version (not one this verifier "
                                      f"knows: {', '.join(map(str, REPEAT_RATE_METHODS))})", recorded,
                                      REPEAT_RATE_METHOD_VERSION))
            method = REPEAT_RATE_METHOD_VERSION
        diagnostics = trajectory_diagnostics(s_values, [o.action for o in outcomes], valid, repeat_method=method)
        last = outcomes[-1].similarity
        out.update(initial_s=initial_s, final_s=diagnostics.final, final_ssim=float(last.ssim), final_l1=float(last.l1),
                   final_edge_iou=float(last.edge_iou), at_50=diagnostics.at_50, auc=diagnostics.auc,
                   best=diagnostics.best, fb_gap=diagnostics.fb_gap, repeat_rate=diagnostics.repeat_rate,
                   invalid_rate=diagnostics.invalid_rate, progress_curve=progress_curve(s_values, initial_s))
    else:
        out["semantic_summary"] = semantic_episode_summary(task, kinds, valid, submit)
        if handwriting and recogniser is None:
            notes.append(f"episode {where}: the handwriting reading by {episode.get('recogniser') or 'tesseract'} "
                         "is taken as recorded (recogniser not available offline here)")
        else:
            score = env.final_score()
            out.update(semantic_score=float(score.value), semantic_detail=dict(score.detail), recogniser=score.recogniser)
    return out


def per_instance(episodes: list[Mapping], agent_of_run: Mapping[int, str]) -> list[dict]:
    """Per run × task of every finished episode: its agent and trajectory numbers."""
    return [{"run": int(e["run"]), "agent": agent_of_run.get(int(e["run"])), "task": e["task"],
             **{f: e.get(f) for f in PER_INSTANCE_FIELDS}}
            for e in sorted(episodes, key=lambda e: (int(e["run"]), e.get("position", 0), str(e["task"])))
            if e.get("status") == "done"]


#: An episode's fields in the viewer's drill-down, in order.
VIEWER_EPISODE_FIELDS = ("status", "category", "budget", "steps_done", "initial_s", "final_s", "at_50", "auc", "best",
                         "fb_gap", "repeat_rate", "invalid_rate", "undo_count", "submit_step", "semantic_score", "recogniser")


def _image(digest: str | None, alt: str):
    return {"image": f"media/{digest}.png", "alt": alt} if digest else None


def viewer_data(payload: Mapping[str, Any], episodes: list[Mapping], agent_of_run: Mapping[int, str],
                image_of_task: Mapping[str, str]) -> dict:
    """The viewer's board (Table 3's agent and reference rows: categories and trajectory columns) and, per
    episode, its summary with its final canvas and the task's image."""
    categories = payload["categories"]
    rows = []
    for group, items in (("agent", payload["agents"]), ("reference", payload["references"])):
        for r in items:
            rows.append([group, r["agent"], r["simulated"]] + [(r["categories"].get(name) or [None])[0] for name, _ in categories]
                        + [(r[f] or [None])[0] for f, _ in TRAJECTORY_COLUMNS])
    board = {"caption": "Mean over references (" + payload["interval"] + ")",
             "columns": ["row", "agent", "simulated"] + [head for _, head in categories]
             + [head for _, head in TRAJECTORY_COLUMNS], "rows": rows}
    instances = [{
        "id": str(e["id"]),
        "label": f"{agent_of_run.get(e['run'], e['run'])} · {e['task']} ({e['kind']}, {e['steps_done']} steps)",
        "table": {"caption": "Episode summary", "columns": ["field", "value"],
                  "rows": [[f, e.get(f)] for f in VIEWER_EPISODE_FIELDS]
                  + [["final canvas", _image(e["final_canvas"], f"final canvas of {e['task']}")],
                     ["task image", _image(image_of_task.get(e["task"]), f"image of task {e['task']}")]]},
    } for e in episodes]
    return {"board": board, "instances": instances}


def board_files(root: Path, manifest: Mapping[str, Any]) -> dict[str, str]:
    """``board/board.csv``, ``board/board.tex`` and the viewer (name → text), from ``board/board.json`` and
    the episode, run and task records."""
    payload = read_json(root, manifest["board"])
    agents = {int(r["id"]): r["agent_name"] for r in read_jsonl(root, RUNS)}
    images = {r["id"]: r["image"] for r in read_jsonl(root, TASKS)}
    viewer = viewer_data(payload, read_jsonl(root, EPISODES), agents, images)
    return {BOARD_CSV: export_csv(payload), BOARD_TEX: export_latex(payload),
            **viewer_files({**viewer_header(manifest), **viewer})}


#: Episode fields compared with the recomputation (the board reads a subset, EPISODE_FIELDS).
EPISODE_CHECKED = ("steps_done", "initial_s", "final_s", "final_ssim", "final_l1", "final_edge_iou", "at_50", "auc",
                   "best", "fb_gap", "repeat_rate", "invalid_rate", "undo_count", "collision_count", "submit_step",
                   "semantic_score", "semantic_detail", "semantic_summary", "recogniser", "progress_curve")


def anchor_name_checks(runs: list[Mapping]) -> list[NumberCheck]:
    """Each anchor run's name beside the name of the anchor its configuration paints: the replay repaints
    by ``config.anchor``, so two anchors' names swapped in the runs and the board would recompute to the
    same swapped board."""
    return [NumberCheck(f"{RUNS} run {r['id']}.agent_name (the anchor {r['config']['anchor']} paints)", r["agent_name"],
                        painter.ANCHOR_LABELS.get(r["config"]["anchor"], "(no such anchor)"))
            for r in runs if r["agent_kind"] == "anchor"]


def recompute(root: Path, manifest: Mapping[str, Any], notes: list[str] | None = None) -> list[NumberCheck]:
    """Every step, episode and board number beside its recomputation from the bundle's steps."""
    notes = notes if notes is not None else []
    config = manifest["configuration"]
    stored_board = read_json(root, manifest["board"])
    tasks = {}
    for row in read_jsonl(root, TASKS):
        png = _media(root, row["image"])
        if png is None:
            raise ValueError(f"{TASKS}: task {row['id']}'s image media/{row['image']}.png is missing")
        tasks[row["id"]] = task_from_record(row["source"], png)
    runs = {int(r["id"]): r for r in read_jsonl(root, RUNS)}
    checks: list[NumberCheck] = anchor_name_checks(list(runs.values()))
    steps_of: dict[int, list[Mapping]] = defaultdict(list)
    for step in read_jsonl(root, STEPS):
        steps_of[int(step["episode"])].append(step)
    board_episodes: dict[int, list[dict]] = defaultdict(list)
    recomputed: list[dict] = []
    for episode in read_jsonl(root, EPISODES):
        if episode["status"] != "done":
            continue
        run = runs[int(episode["run"])]
        steps = sorted(steps_of.get(int(episode["id"]), []), key=lambda s: int(s["index"]))
        again = _episode(root, episode, steps, tasks[episode["task"]], run, checks, notes)
        recomputed.append(again)
        where = f"episode run {episode['run']} ({run['agent_name']}) / {episode['task']}"
        checks.extend(compare({f: episode.get(f) for f in EPISODE_CHECKED}, {f: again.get(f) for f in EPISODE_CHECKED},
                              prefix=f"{where}."))
        if run.get("on_board"):
            board_episodes[int(run["id"])].append({**{f: again.get(f) for f in EPISODE_FIELDS}, "task_id": episode["task"]})
    board_runs = [BoardRun(id=int(r["id"]), agent_kind=r["agent_kind"], agent_name=r["agent_name"],
                           budget_setting=r["budget_setting"], seed=int(r["seed"]), is_simulated=bool(r["is_simulated"]))
                  for r in sorted((r for r in runs.values() if r.get("on_board")), key=lambda r: r["board_position"])]
    board = easel_board(task_set=config["task_set"], demo=bool(config["demo"]), runs=board_runs, episodes=board_episodes)
    if (Path(root) / PER_INSTANCE).is_file():
        agents = {int(r["id"]): r["agent_name"] for r in runs.values()}
        checks += compare_rows(read_jsonl(root, PER_INSTANCE), per_instance(recomputed, agents), PER_INSTANCE_KEY,
                               prefix="records.per_instance")
    return compare(stored_board, board, prefix="board.") + checks
