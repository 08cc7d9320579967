"""An EASEL suite's leaderboard as a bundle: the suite's tasks and images, and for each run on the board
its configuration, every episode and every step with its raw action and stored canvas (``media/``,
named by hash), and the board itself (Tables 2–4, Figure 4).

The bundle's recomputation (:mod:`engine.bundle.easel`) replays each episode's raw actions through the
engine's environment and recomputes S, the trajectory metrics and the board.
"""

from __future__ import annotations

from engine.bundle.easel import PER_INSTANCE, PROTOCOL, per_instance
from engine.bundle.manifest import BundleWriter
from engine.bundle.secrets import scrubbed
from engine.easel.leaderboard import EPISODE_FIELDS
from leaderboard.bundles.common import engine_file_sha256, model_description, task_set_description
from leaderboard.easel import selectors
from leaderboard.easel.models import EaselEpisode, EaselStep
from leaderboard.models import TaskSet

SANDBOX = ("none needed: an agent's reply is parsed into the action grammar (§3.1) and only parsed actions reach "
           "the in-process renderer; no agent code is executed")
EPISODE_EXTRA = ("initial_s", "final_ssim", "final_l1", "collision_count", "semantic_detail")


def _tasks(writer: BundleWriter, task_set: TaskSet) -> str:
    rows = []
    for t in task_set.tasks.select_related("easel_image").order_by("position", "external_id"):
        rows.append({"id": t.external_id, "key": t.pk, "family": t.family, "subtype": t.subtype, "brief": t.brief,
                     "constraints": t.constraints, "source": t.source, "position": t.position,
                     "image": writer.media(bytes(t.easel_image.png))})
    name = writer.jsonl("records/tasks.jsonl", rows)
    return writer.files[name]["sha256"]


def _run_row(run, position: int) -> dict:
    return {"id": run.pk, "agent_kind": run.agent_kind, "agent_name": run.agent_name,
            "budget_setting": run.budget_setting, "seed": run.seed, "is_simulated": run.is_simulated,
            "config": scrubbed(run.config), "code_version": run.code_version, "usage": run.usage,
            "subject_model": run.subject_model.display_name if run.subject_model_id else None,
            "started_at": run.started_at.isoformat() if run.started_at else None,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "on_board": True, "board_position": position}


def _episodes_and_steps(writer: BundleWriter, runs) -> tuple[list[dict], list[dict]]:
    episodes, steps = [], []
    fields = [f for f in EPISODE_FIELDS if f != "task_id"]
    for e in EaselEpisode.objects.filter(run__in=runs).select_related("task").order_by("run_id", "position", "pk"):
        row = {"id": e.pk, "run": e.run_id, "task": e.task.external_id, "position": e.position, "status": e.status,
               **{f: getattr(e, f) for f in fields}, **{f: getattr(e, f) for f in EPISODE_EXTRA},
               "final_canvas": writer.media(bytes(e.final_canvas_png)) if e.final_canvas_png is not None else None,
               "error": e.error}
        episodes.append(row)
    step_rows = EaselStep.objects.filter(episode__run__in=runs).order_by("episode_id", "index").values(
        "episode_id", "index", "raw", "action", "valid", "kind", "collision", "error", "s", "ssim", "l1", "edge_iou",
        "canvas_png")
    for s in step_rows.iterator(chunk_size=500):
        canvas = s.pop("canvas_png")
        s["episode"] = s.pop("episode_id")
        s["canvas"] = writer.media(bytes(canvas)) if canvas is not None else None
        steps.append(s)
    return episodes, steps


def bundle_contents(task_set: TaskSet, writer: BundleWriter) -> dict:
    """Write the suite's records and board; return the manifest fields (the board's CSV, LaTeX and viewer
    are written from these files by :func:`engine.bundle.easel.board_files`)."""
    runs = selectors.latest_done_runs(task_set)
    payload = selectors.easel_leaderboard(task_set=task_set)
    tasks_sha = _tasks(writer, task_set)
    writer.jsonl("records/runs.jsonl", [_run_row(run, k) for k, run in enumerate(runs)])
    episodes, steps = _episodes_and_steps(writer, runs)
    writer.jsonl("records/episodes.jsonl", episodes)
    writer.jsonl("records/steps.jsonl", steps)
    writer.jsonl(PER_INSTANCE, per_instance(episodes, {run.pk: run.agent_name for run in runs}))
    writer.json("board/board.json", payload)
    writer.json("costs.json", {"runs": {str(run.pk): run.usage for run in runs}})
    models = [run.subject_model for run in runs if run.subject_model_id]
    fields = {
        "protocol": PROTOCOL,
        "title": f"EASEL leaderboard of {task_set}",
        "source": {"task_set": task_set.pk, "runs": [run.pk for run in runs]},
        "task_set": task_set_description(task_set, tasks_sha),
        "models": [model_description(m) for m in models],
        "agents": [{"run": run.pk, "kind": run.agent_kind, "name": run.agent_name, "budget": run.budget_setting,
                    "simulated": run.is_simulated, "config": scrubbed(run.config)} for run in runs],
        "seeds": {"runs": {str(run.pk): run.seed for run in runs},
                  "bootstrap": "derived_seed('easel-leaderboard', run id) per row (engine.easel.leaderboard)"},
        "engine_components": {"renderer": "engine.easel.render (Learning-to-Paint style quadratic Bézier strokes)",
                              "similarity": "engine.easel.metrics (scikit-image SSIM and Canny)",
                              "source_sha256": engine_file_sha256("easel/render.py", "easel/metrics.py",
                                                                  "easel/episode.py", "easel/trajectory.py"),
                              "recognisers": sorted({e["recogniser"] for e in episodes if e["recogniser"]})},
        "sandbox": SANDBOX,
        "configuration": {"task_set": payload["task_set"], "demo": payload["demo"]},
        "simulated": bool(payload["simulated"]), "demo": bool(payload["demo"]),
        "components": [{"role": "agent", "name": run.agent_name, "kind": run.agent_kind, "simulated": run.is_simulated}
                       for run in runs],
        "human_labels": {"used": False, "note": "EASEL scores are computed from canvases; no human label is used"},
        "provider_exchanges": {"recorded": any(run.agent_kind == "model" for run in runs),
                               "note": "each step's raw reply as received is records/steps.jsonl 'raw'"},
        "board_code_versions": sorted({run.code_version for run in runs}),
        "board_facts": {},  # the payload carries all its CSV and LaTeX print
    }
    return fields
