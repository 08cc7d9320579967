"""Reads of the C² sub-app: runs, the Table 1 / Table 2 leaderboards' Combined intervals (the tables
themselves are :func:`engine.c2.exports.leaderboard_tables`), Figure 4's radar values, Figure 5's
creative-instruction ablation and the per-prompt drill-down. Scores come from the results a finished run
stored (:mod:`leaderboard.c2.services.scoring`); nothing here writes."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from engine.c2.exports import METRIC_SHORT, Table
from engine.c2.results import METRICS
from engine.c2.uos import paired_bootstrap_difference
from leaderboard.c2.models import CONVERGENT_TYPES, DIVERGENT_TYPES, C2Rating, C2Run, C2RunPrompt, C2Sample
from leaderboard.comparisons import configuration_differences
from leaderboard.models import Benchmark, SubjectModel, Task, TaskSet
from leaderboard.providers import judge_choices
from leaderboard.runs.selectors import run_status

RADAR_AXES = [(regime, metric) for regime in ("convergent", "divergent") for metric in METRICS]


def c2_task_sets() -> QuerySet[TaskSet]:
    return TaskSet.objects.filter(benchmark__kind=Benchmark.Kind.C2).order_by("name", "version")


def c2_run_list(*, task_set: TaskSet | None = None) -> QuerySet[C2Run]:
    runs = C2Run.objects.select_related("task_set").order_by("-created_at")
    return runs.filter(task_set=task_set) if task_set is not None else runs


def c2_run_get(pk: int) -> C2Run | None:
    return C2Run.objects.select_related("task_set", "rater_model").filter(pk=pk).first()


def leaderboard_run(*, run_id: int | None = None) -> C2Run | None:
    """The run a leaderboard shows: the given finished run, else the latest finished standard-template run."""
    done = C2Run.objects.select_related("task_set").filter(status=C2Run.Status.DONE, results__isnull=False)
    if run_id is not None:
        return done.filter(pk=run_id).first()
    return done.filter(template=C2Run.Template.STANDARD).order_by("-finished_at").first() or done.order_by("-finished_at").first()


def subject_choices() -> list[str]:
    names = list(SubjectModel.objects.filter(role=SubjectModel.Role.SUBJECT).values_list("display_name", flat=True))
    return names


def rater_choices() -> list[str]:
    return judge_choices()


# ---------------------------------------------------------------- tables


def combined_intervals_apply(table: Table, uncertainty: dict | None) -> None:
    """Give each row's Combined cell the interval of the paired bootstrap (:func:`combined_uncertainty`) and
    its rank set."""
    if not uncertainty:
        return
    by_name = {a["name"]: a for a in uncertainty["agents"]}
    for row in table.rows:
        agent = by_name.get(row.model)
        if row.combined is not None and agent is not None and agent["low"] is not None:
            row.combined.low, row.combined.high = agent["low"], agent["high"]
            row.rank_set = agent["rank_set"]


def radar_series(results: dict, table: str) -> list[tuple[str, list[float | None]]]:
    """Figure 4: per model, U, O, S, creativity under convergent and divergent tasks, normalised to [0, 1]
    (scores are in [0, 100]: divided by 100)."""
    series = []
    for model in results["models"]:
        regimes = results["regimes"].get(model, {}).get(table, {})
        values = [regimes[r][m] / 100.0 if r in regimes else None for r, m in RADAR_AXES]
        if any(v is not None for v in values):
            series.append((model, values))
    return series


def radar_axis_labels() -> list[str]:
    return [f"{METRIC_SHORT[m]} ({'Conv.' if r == 'convergent' else 'Div.'})" for r, m in RADAR_AXES]


# ---------------------------------------------------------------- ablation (Figure 5)


def ablation_partner(run: C2Run) -> C2Run | None:
    """The finished run of the other template with the same task set, models, n, rater and seed."""
    other = C2Run.Template.CREATIVE if run.template == C2Run.Template.STANDARD else C2Run.Template.STANDARD
    candidates = C2Run.objects.filter(
        task_set=run.task_set, template=other, n_samples=run.n_samples, rater_name=run.rater_name, seed=run.seed,
        surprise_policy=run.surprise_policy, status=C2Run.Status.DONE, results__isnull=False,
    ).order_by("-finished_at")
    return next((c for c in candidates if sorted(c.subject_names) == sorted(run.subject_names)), None)


@dataclass
class AblationRow:
    model: str
    regime: str
    n_prompts: int
    difference: float
    low: float
    high: float
    creative: float
    standard: float


def ablation_rows(run: C2Run, partner: C2Run) -> list[AblationRow]:
    """Figure 5: per model and regime, creative − standard creativity, paired bootstrap over prompts."""
    creative, standard = (run, partner) if run.template == C2Run.Template.CREATIVE else (partner, run)
    rows = []
    for model in standard.subject_names:
        for regime in ("convergent", "divergent"):
            def per_prompt(source: C2Run) -> dict[str, float]:
                return {p: v["c"] for p, v in source.results["prompts"].get(model, {}).items()
                        if (v["task_type"] in CONVERGENT_TYPES) == (regime == "convergent")}
            try:
                diff = paired_bootstrap_difference(per_prompt(creative), per_prompt(standard), seed=standard.seed)
            except ValueError:
                continue
            rows.append(AblationRow(model, regime, diff.n_prompts, diff.difference.value, diff.difference.low,
                                    diff.difference.high, diff.creative_mean, diff.standard_mean))
    return rows


# ---------------------------------------------------------------- runs and drill-down


def c2_run_progress(*, run: C2Run) -> dict:
    return {
        **run_status(run, error_chars=500), "prompts_done": run.prompts_done, "prompts_total": run.prompts_total,
        "calls_done": run.calls_done, "calls_planned": run.calls_planned,
        "has_results": run.results is not None,
    }


def run_prompts(run: C2Run) -> list[Task]:
    """The run's prompts, by task type in the tables' order, then as imported."""
    order = {t: k for k, t in enumerate(CONVERGENT_TYPES + DIVERGENT_TYPES)}
    tasks = Task.objects.filter(pk__in=C2RunPrompt.objects.filter(run=run).values("task_id"))
    return sorted(tasks, key=lambda t: (order.get(t.family, len(order)), t.position, t.external_id))


@dataclass
class ModelSamples:
    model: str
    samples: list[C2Sample]
    scores: dict | None


def prompt_drilldown(run: C2Run, task: Task) -> list[ModelSamples]:
    """Every sample of every model on one prompt, with its grade, cluster, confidence and ratings."""
    samples = (
        C2Sample.objects.filter(run=run, task=task).select_related("subject_model")
        .prefetch_related(Prefetch("ratings", queryset=C2Rating.objects.order_by("repeat")))
        .order_by("subject_model__display_name", "sample_index")
    )
    by_model: dict[str, list[C2Sample]] = defaultdict(list)
    for s in samples:
        by_model[s.subject_model.display_name].append(s)
    prompt_scores = (run.results or {}).get("prompts", {})
    order = [m for m in run.subject_names if m in by_model]
    return [ModelSamples(m, by_model[m], prompt_scores.get(m, {}).get(task.external_id)) for m in order]


# ---------------------------------------------------------------- uncertainty (Combined intervals, rank probabilities)


def combined_uncertainty(run: C2Run, table: str, *, task_type: str | None = None) -> dict | None:
    """A finished run's Combined creativity of ``table`` (or one task type's creativity) per model with its
    interval, rank probabilities and rank sets, and every pair's difference and P(A > B)
    (:func:`engine.c2.uncertainty.combined_comparison`, seeded by the run's seed). A run's stored results
    change only by a hand edit, so the answer is cached per run, table and slice, per the run's last save
    (:class:`leaderboard.edit_stamps.EditStamped`: an edited ``results`` is computed afresh) and per the engine's
    :data:`~engine.c2.uncertainty.UNCERTAINTY_METHOD_VERSION`: a changed formula is computed afresh
    instead of showing the old numbers until the cache expires."""
    from django.core.cache import cache

    from engine.c2 import uncertainty

    if not run.results:
        return None
    key = f"c2-uncertainty:v{uncertainty.UNCERTAINTY_METHOD_VERSION}:{run.pk}:{run.updated_at.timestamp()}:{table}:{task_type or ''}"
    cached = cache.get(key)
    if cached is None:
        cached = {"value": uncertainty.combined_comparison(run.results, table, task_type=task_type, seed=run.seed)}
        cache.set(key, cached, timeout=24 * 3600)
    return cached["value"]


def run_differences(left: C2Run, right: C2Run) -> list[dict]:
    """What differs between two runs' configurations, each setting with both values."""
    def describe(run: C2Run) -> dict:
        return {
            "Task set": str(run.task_set), "Template": run.get_template_display(), "Models": ", ".join(run.subject_names),
            "Samples per prompt (n)": run.n_samples, "Rater": run.rater_name, "Second rater": run.second_rater_name or "–",
            "Seed": run.seed, "Surprise policy": run.get_surprise_policy_display(), "τ": run.tau,
            "Temperature": run.temperature, "Embedder": run.embedder, "Code version": run.code_version or "unknown",
            "Simulated": "yes" if run.is_simulated else "no", "Demo data": "yes" if run.task_set.is_demo else "no",
        }
    return configuration_differences(describe(left), describe(right))


def compare_choices() -> QuerySet[C2Run]:
    """Finished runs with results, newest first (the compare form's choices)."""
    return C2Run.objects.select_related("task_set").filter(status=C2Run.Status.DONE, results__isnull=False).order_by(
        "-finished_at", "-pk")
