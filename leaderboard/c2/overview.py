"""C² in the researcher's view (:mod:`leaderboard.overview`): the leaderboard run's Combined creativity for the
home page, and a model's rows on every finished run it took part in (per table and template). Scores come
from the results a finished run stored; intervals and rank sets from :func:`engine.c2.uncertainty.combined_comparison`."""

from __future__ import annotations

from django.urls import reverse

from engine.c2.exports import TASK_TYPE_LABELS
from leaderboard.c2 import selectors
from leaderboard.c2.models import C2Run
from leaderboard.models import SubjectModel
from leaderboard.overview import OVERVIEW_TOP, BoardRow, BoardSummary, Breakdown, ModelResult, RunLink

TABLE_NAMES = {"text": "text tasks", "vision": "multimodal tasks"}


def _n_text(run: C2Run, comparison: dict) -> str:
    return f"{comparison['n_items']} prompts × n = {run.n_samples} samples, {len(comparison['agents'])} models"


def latest_board() -> BoardSummary | None:
    """The leaderboard page's run: its first table's Combined creativity with the 95% paired bootstrap interval."""
    run = selectors.leaderboard_run()
    if run is None:
        return None
    comparison, table = None, None
    for table in ("text", "vision"):
        comparison = selectors.combined_uncertainty(run, table)
        if comparison is not None:
            break
    if comparison is None:
        return None
    ids = dict(SubjectModel.objects.filter(display_name__in=run.subject_names).values_list("display_name", "pk"))
    rows = [BoardRow(a["rank"], a["name"], a["value"], a["low"], a["high"], model_id=ids.get(a["name"]))
            for a in comparison["agents"][:OVERVIEW_TOP]]
    return BoardSummary(
        protocol="C²", measure="Combined creativity",
        interval=comparison["method"], url=reverse("c2:leaderboard") + f"?run={run.pk}",
        task_set=str(run.task_set.name) + f" v{run.task_set.version}", date=run.finished_at,
        n=f"{TABLE_NAMES[table]}, {run.get_template_display().lower()}; {_n_text(run, comparison)}", simulated=run.is_simulated, demo=run.task_set.is_demo, rows=rows, digits=1,
        compare_url=reverse("c2:compare"),
    )


def model_results(model) -> list[ModelResult]:
    """The model's Combined creativity on each table of the newest finished run per (task set, template) it
    took part in (one query for the runs)."""
    runs = (C2Run.objects.filter(subjects=model, status=C2Run.Status.DONE, results__isnull=False)
            .select_related("task_set").order_by("-finished_at", "-pk"))
    seen, out = set(), []
    for run in runs:
        if (run.task_set_id, run.template) in seen:
            continue
        seen.add((run.task_set_id, run.template))
        results = run.results
        for table, types in results["tables"].items():
            comparison = selectors.combined_uncertainty(run, table)
            if comparison is None:
                continue
            agent = next((a for a in comparison["agents"] if a["name"] == model.display_name), None)
            if agent is None:
                continue
            scores = results["scores"].get(model.display_name, {})
            out.append(ModelResult(
                protocol="C²", task_set=f"{run.task_set.name} v{run.task_set.version} ({run.template} template)",
                board_url=reverse("c2:leaderboard") + f"?run={run.pk}",
                measure=f"Combined creativity ({TABLE_NAMES.get(table, table)})", value=agent["value"],
                low=agent["low"], high=agent["high"], rank=agent["rank"], of=len(comparison["agents"]),
                rank_set=tuple(agent["rank_set"]) if None not in agent["rank_set"] else None,
                n=_n_text(run, comparison), date=run.finished_at, simulated=run.is_simulated,
                demo=run.task_set.is_demo, interval=comparison["method"], digits=1,
                breakdown=[Breakdown(TASK_TYPE_LABELS.get(t, t), scores[t]["creativity"]["value"],
                                     scores[t]["creativity"]["low"], scores[t]["creativity"]["high"],
                                     scores[t]["n_prompts"]) for t in types if t in scores],
                runs=[RunLink(f"C² run #{run.pk} (rater {run.rater_name}, seed {run.seed})",
                              reverse("c2:run_detail", args=[run.pk]), run.usage or {})],
                key=f"c2:{run.task_set_id}:{run.template}:{table}",
            ))
    return out
