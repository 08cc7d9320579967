"""A C² run as a bundle: its prompts (with images and grading references), every sample with the
grader's verdict and the confidence reply, every rating with the rater's raw reply, the run's
configuration and seed, and the stored results (Tables 1–2).

The bundle's recomputation (:mod:`engine.bundle.c2`) scores the recorded grades and ratings with
:func:`engine.c2.results.c2_results`, the function the site scored the run with.
"""

from __future__ import annotations

from engine.bundle.c2 import PER_INSTANCE, PROTOCOL, per_instance
from engine.bundle.manifest import BundleWriter
from engine.bundle.secrets import scrubbed
from engine.c2.sandbox import BWRAP, UNSANDBOXED_ENV
from leaderboard.bundles.common import model_description, task_set_description
from leaderboard.c2 import exports
from leaderboard.c2.models import C2Rating, C2Run, C2Sample
from leaderboard.c2.services.scoring import run_records


def _tasks(writer: BundleWriter, run: C2Run) -> str:
    rows = []
    for t in run.task_set.tasks.select_related("c2_image").order_by("position", "external_id"):
        image = getattr(t, "c2_image", None)  # a text task has none (the reverse accessor raises AttributeError)
        rows.append({"id": t.external_id, "key": t.pk, "task_type": t.family, "subtype": t.subtype, "brief": t.brief,
                     "constraints": t.constraints, "source": scrubbed(t.source), "position": t.position,
                     "image": writer.media(bytes(image.data), ext=image.content_type.split("/")[-1]) if image else None})
    name = writer.jsonl("records/tasks.jsonl", rows)
    return writer.files[name]["sha256"]


def _samples(run: C2Run) -> list[dict]:
    settings, records, _ = run_records(run)
    extra = {s["pk"]: s for s in C2Sample.objects.filter(run=run).values(
        "pk", "sample_index", "text", "temperature", "confidence_raw", "verdict", "grade_detail", "attempts", "error")}
    rows = []
    for record in records:
        more = extra[record.key]
        rows.append({**record.__dict__, "sample_index": more["sample_index"], "text": more["text"],
                     "temperature": more["temperature"], "confidence_raw": more["confidence_raw"],
                     "verdict": more["verdict"], "grade_detail": more["grade_detail"], "attempts": more["attempts"],
                     "error": more["error"]})
    return rows


def _ratings(run: C2Run) -> list[dict]:
    _, _, records = run_records(run)
    extra = {(r["sample_id"], r["rater_name"], r["repeat"]): r for r in C2Rating.objects.filter(sample__run=run).values(
        "sample_id", "rater_name", "repeat", "raw", "repaired", "attempts", "error")}
    return [{**r.__dict__, **{k: extra[(r.sample, r.rater, r.repeat)][k] for k in ("raw", "repaired", "attempts", "error")}}
            for r in records]


def bundle_contents(run: C2Run, writer: BundleWriter) -> dict:
    """Write the run's records and board; return the manifest fields (the board's CSV, LaTeX and viewer
    are written from these files by :func:`engine.bundle.c2.board_files`)."""
    settings, _, _ = run_records(run)
    tasks_sha = _tasks(writer, run)
    samples = _samples(run)
    writer.jsonl("records/samples.jsonl", samples)
    writer.jsonl("records/ratings.jsonl", _ratings(run))
    writer.jsonl(PER_INSTANCE, per_instance(run.results))
    writer.json("board/board.json", run.results)
    writer.json("costs.json", {"run_usage": run.usage})
    subjects = list(run.subjects.all())
    raters = [m for m in (run.rater_model, run.second_rater_model) if m is not None]
    simulated_subjects = set((run.config.get("simulated_subjects") or {}).keys()) if isinstance(
        run.config.get("simulated_subjects"), dict) else set(run.config.get("simulated_subjects") or [])
    fields = {
        "protocol": PROTOCOL,
        "title": f"C² run {run.pk} on {run.task_set} ({run.template} template)",
        "source": {"run": run.pk},
        "task_set": task_set_description(run.task_set, tasks_sha),
        "models": [model_description(m) for m in subjects],
        "rater": {"name": run.rater_name, "second": run.second_rater_name,
                  "models": [model_description(m) for m in raters], "rerate_share": run.rerate_share},
        "seeds": {"run": run.seed, "bootstrap": run.seed},
        "engine_components": {"embedder": run.embedder, "tau": run.tau,
                              "versions": {k: v for k, v in run.config.items() if k.endswith("_version")}},
        "sandbox": {"code_grader": "bubblewrap (engine.c2.sandbox): every namespace unshared, no network, "
                                   "prlimit resource limits", "bwrap": BWRAP, "unsandboxed_override_variable": UNSANDBOXED_ENV},
        "configuration": {"models": list(settings.models), "seed": settings.seed, "surprise_policy": settings.surprise_policy,
                          "rater": settings.rater, "second_rater": settings.second_rater,
                          "simulated": settings.is_simulated, "demo": settings.is_demo, "settings": settings.settings},
        "simulated": bool(run.is_simulated), "demo": bool(run.task_set.is_demo),
        "components": [{"role": "subject", "name": name, "simulated": name in simulated_subjects or name.startswith("simulated")}
                       for name in run.subject_names]
        + [{"role": "rater", "name": run.rater_name, "simulated": run.rater_name == "simulated"}]
        + ([{"role": "second rater", "name": run.second_rater_name, "simulated": run.second_rater_name == "simulated"}]
           if run.second_rater_name else []),
        "human_labels": {"used": False, "note": "C² scores come from the official graders and the rubric rater; "
                                                "no human label is used"},
        "originality_embeddings": "cluster labels taken as recorded at grading (records/samples.jsonl 'cluster')",
        "provider_exchanges": {"recorded": True, "note": "each sample's reply as received is records/samples.jsonl "
                                                         "'text' and 'confidence_raw'; each rating's is records/ratings.jsonl 'raw'"},
        "board_code_version": run.code_version,
        "board_facts": exports.run_facts(run),
    }
    return fields
