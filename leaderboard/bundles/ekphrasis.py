"""An Ekphrasis leaderboard snapshot as a bundle: its tasks, responses (with renders), every comparison
of the run with what the judge saw and said, the judge's configuration and seeds, and the snapshot.

The ``fit`` fields of each judged comparison are the records the site's finaliser fitted
(:func:`leaderboard.ekphrasis.judge_runs.judged_comparisons`, read here rather than rebuilt), so the
bundle's recomputation (:mod:`engine.bundle.ekphrasis`) runs the site's fit on the site's inputs.
"""

from __future__ import annotations

from engine.bundle.ekphrasis import PER_INSTANCE, PROTOCOL, per_instance
from engine.bundle.manifest import BundleWriter
from engine.bundle.secrets import scrubbed
from engine.checklists import TEMPLATE_VERSION as CHECKLIST_TEMPLATE_VERSION
from engine.tig.population import ENGINE_VERSION as TIG_ENGINE_VERSION
from leaderboard.bundles.common import engine_file_sha256, model_description, task_set_description
from leaderboard.ekphrasis import results
from leaderboard.ekphrasis.judge_chunk import INSPECTED_FIELD
from leaderboard.ekphrasis.judge_runs import judged_comparisons
from leaderboard.ekphrasis.models import Comparison, LeaderboardSnapshot
from leaderboard.models import Response, SubjectModel

SANDBOX = ("none needed: no model output is executed — subjects' texts are parsed, rendered (the demo's offline "
           "schematic renderer or a text-to-image provider) and judged by an LLM judge or the labelled simulated judge")


def _tasks(writer: BundleWriter, run) -> tuple[str, dict[int, str]]:
    tasks = list(run.task_set.tasks.order_by("position", "external_id"))
    name = writer.jsonl("records/tasks.jsonl", (
        {"id": t.external_id, "key": t.pk, "family": t.family, "subtype": t.subtype, "brief": t.brief,
         "constraints": t.constraints, "source": scrubbed(t.source), "position": t.position} for t in tasks))
    return writer.files[name]["sha256"], {t.pk: t.external_id for t in tasks}


def _responses(writer: BundleWriter, run, model_ids: list[int], notes: list[str]) -> None:
    rows = []
    responses = (Response.objects.filter(task__task_set=run.task_set, subject_model_id__in=model_ids)
                 .select_related("task", "subject_model").prefetch_related("renders").order_by("task_id", "subject_model_id", "sample"))
    for r in responses:
        renders = []
        for render in r.renders.all():
            digest = None
            try:
                with render.image.open("rb") as handle:
                    digest = writer.media(handle.read(), ext=(render.image.name.rsplit(".", 1)[-1] or "png").lower())
            except (OSError, ValueError):
                notes.append(f"render {render.pk} of response {r.pk}: image file not found in storage; hash "
                              f"{render.image_sha256} recorded without the file")
            renders.append({"image": digest, "image_sha256": render.image_sha256, "renderer": render.renderer,
                            "seed": render.seed, "prompt": render.prompt, "is_placeholder": render.is_placeholder})
        rows.append({"id": r.pk, "task": r.task.external_id, "model": r.subject_model.display_name, "sample": r.sample,
                     "is_primary": r.is_primary, "raw_text": r.raw_text, "core_idea": r.core_idea,
                     "visual_description": r.visual_description, "raw_sha256": r.raw_sha256,
                     "normalisation_method": r.normalisation_method, "normalisation_model": r.normalisation_model,
                     "renders": renders})
    writer.jsonl("records/responses.jsonl", rows)


def _comparisons(run, model_ids: list[int]) -> list[dict]:
    index = {pk: i for i, pk in enumerate(model_ids)}
    names = dict(SubjectModel.objects.filter(pk__in=model_ids).values_list("pk", "display_name"))
    fitted = judged_comparisons(run, index)
    ok_ids = list(Comparison.objects.filter(run=run, status=Comparison.Status.OK)
                  .order_by("task_id", "dimension", "sequence").values_list("pk", flat=True))
    fit_of = {pk: c for pk, c in zip(ok_ids, fitted, strict=True)}
    rows = []
    for c in Comparison.objects.filter(run=run).select_related("task").order_by("task_id", "dimension", "sequence", "pk"):
        judged = fit_of.get(c.pk)
        rows.append({
            "id": c.pk, "task": c.task.external_id, "family": c.task.family, "dimension": c.dimension,
            "model_x": names.get(c.model_x_id), "model_y": names.get(c.model_y_id), "kind": c.kind,
            "repeat": c.repeat, "judge": c.judge_name, "sequence": c.sequence, "shown_a": c.shown_a_id,
            "shown_b": c.shown_b_id, "status": c.status, "winner": c.winner, "confidence": c.confidence,
            "rationale": c.rationale, "per_item_outcomes": c.per_item_outcomes, "checklist": c.checklist,
            "repaired": c.repaired, "attempts": c.attempts, "error": c.error,
            "fit": None if judged is None else {
                "model_a": judged.record.model_a, "model_b": judged.record.model_b, "len_a": judged.record.len_a,
                "len_b": judged.record.len_b, "pair_key": judged.record.pair_key, "automatic": judged.automatic},
        })
    return rows


def bundle_contents(snapshot: LeaderboardSnapshot, writer: BundleWriter) -> dict:
    """Write the snapshot's records and board; return the manifest fields (the board's CSV, LaTeX and
    viewer are written from these files by :func:`engine.bundle.ekphrasis.board_files`)."""
    run = snapshot.run
    payload = snapshot.payload
    model_ids = list(payload["model_ids"])
    models = {m.pk: m for m in SubjectModel.objects.filter(pk__in=model_ids)}
    names = [models[pk].display_name for pk in model_ids]
    notes: list[str] = []
    tasks_sha, _ = _tasks(writer, run)
    _responses(writer, run, model_ids, notes)
    rows = _comparisons(run, model_ids)
    writer.jsonl("records/comparisons.jsonl", rows)
    writer.jsonl(PER_INSTANCE, per_instance(rows, names))
    writer.json("board/board.json", payload)
    writer.json("costs.json", {"judge_run_usage": run.usage, "note": "token counts and USD cost as the run's "
                               "provider ledger recorded them; a simulated judge makes no paid calls"})
    judge_models = [run.judge_model] if run.judge_model is not None else []
    auxiliary = list(run.config.get("auxiliary_judges", []))
    fields = {
        "protocol": PROTOCOL,
        "title": f"Ekphrasis snapshot {snapshot.pk} of run {run.pk} on {run.task_set}",
        "source": {"snapshot": snapshot.pk, "run": run.pk},
        "task_set": task_set_description(run.task_set, tasks_sha),
        "models": [model_description(models[pk]) for pk in model_ids],
        "judge": {"name": run.judge_name, "simulated": run.is_simulated, "auxiliary_judges": auxiliary,
                  "models": [model_description(m) for m in judge_models], "novelty_anchor": run.novelty_anchor,
                  "budget_per_task": run.budget_per_task, "config": scrubbed(run.config)},
        "seeds": {"run": run.seed, "bootstrap": run.seed, "rank_draws": run.seed},
        "engine_components": {"tig": scrubbed(run.config.get("tig")), "tig_engine_version": TIG_ENGINE_VERSION,
                              "checklist_template_version": CHECKLIST_TEMPLATE_VERSION,
                              "renderers": sorted({r["renderer"] for r in _renderers(writer)}),
                              "source_sha256": engine_file_sha256("tig/population.py", "schematic_render.py", "leaderboard.py", "bt.py")},
        "sandbox": SANDBOX,
        "configuration": {"models": names, "dimensions": run.dimensions, "n_boot": int(run.config.get("n_boot", 1000)),
                          "seed": run.seed, "inspected_field": INSPECTED_FIELD},
        "simulated": bool(snapshot.is_simulated), "demo": bool(snapshot.is_demo),
        "components": [{"role": "judge", "name": run.judge_name, "simulated": run.is_simulated}]
        + [{"role": "auxiliary judge", "name": a, "simulated": a.startswith("simulated")} for a in auxiliary]
        + [{"role": "subject", "name": models[pk].display_name, "simulated": models[pk].is_simulated,
            "demo": models[pk].is_demo} for pk in model_ids],
        "human_labels": {"used": False, "note": "an Ekphrasis snapshot is fitted on judge comparisons only; "
                                                "no human label enters its numbers"},
        "provider_exchanges": _exchanges_note(run),
        "board_facts": results.snapshot_facts(snapshot),
        "notes": notes,
    }
    return fields


def _renderers(writer: BundleWriter) -> list[dict]:
    from engine.bundle.manifest import read_jsonl

    return [render for r in read_jsonl(writer.root, "records/responses.jsonl") for render in r["renders"]]


def _exchanges_note(run) -> dict:
    if run.is_simulated:
        return {"recorded": False, "note": "the simulated judge sends no provider requests; its verdicts, rationales "
                                           "and per-item outcomes are in records/comparisons.jsonl"}
    return {"recorded": True, "note": "the judge's replies as parsed (verdict, rationale, per-item outcomes, "
                                      "repairs) are in records/comparisons.jsonl; the requests as sent and the "
                                      "replies as received are in records/requests.jsonl"}
