"""Ekphrasis reads: judge runs and their live progress, leaderboard snapshots, the task drill-down,
the judge outcomes the annotation dashboards join against, TIG builds and the TIG viewer, the App. D.3
launch gates and task-set builds."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from django.db.models import Case, Count, F, QuerySet, TextField, When
from django.db.models.functions import Cast

from leaderboard.models import Response, TaskSet
from leaderboard.providers import provider_model_names
from leaderboard.runs.selectors import run_status

# ---------------------------------------------------------------- judge runs and leaderboards


def judge_run_list():
    from leaderboard.ekphrasis.models import JudgeRun

    return JudgeRun.objects.select_related("task_set").prefetch_related("snapshots").order_by("-created_at")


def judge_run_primary_done(*, run) -> int:
    """The primary comparisons answered (ok or failed): the unit of the run's planned total, calls_planned,
    which is fixed when the run is created (the diagnostic layers come on top of it)."""
    from leaderboard.ekphrasis.models import Comparison

    return Comparison.objects.filter(run=run, kind=Comparison.Kind.PRIMARY,
                                     status__in=(Comparison.Status.OK, Comparison.Status.FAILED)).count()


def judge_run_progress(*, run) -> dict:
    """The live status a run page polls (no model identities: researchers only, but kept small):
    counts, per-task chunk status, provider usage and duration."""
    from django.utils import timezone

    from leaderboard.ekphrasis.models import Comparison, JudgeRunTask

    counts = dict(
        Comparison.objects.filter(run=run).values_list("status").annotate(n=Count("id")).order_by()
    )
    # The planned total is the primary budget, fixed when the run is created; the diagnostic layers
    # (swaps, duplicates, auxiliary) and automatic verdicts are counted beside it, never against it.
    answered = dict(Comparison.objects.filter(run=run, status__in=("ok", "failed")).values_list("kind")
                    .annotate(n=Count("id")).order_by())
    # Per task, answered primary comparisons (the unit of the task's planned budget) apart from the diagnostic
    # layers on top of it, as the run's own line counts them: one sum would read "166 / 150" on a finished task.
    started: set[int] = set()
    primary: Counter = Counter()
    diagnostic: Counter = Counter()
    for task_id, kind, status, n in (Comparison.objects.filter(run=run).exclude(kind=Comparison.Kind.AUTOMATIC)
                                     .values_list("task_id", "kind", "status").annotate(n=Count("id")).order_by()):
        started.add(task_id)
        if status in (Comparison.Status.OK, Comparison.Status.FAILED):
            (primary if kind == Comparison.Kind.PRIMARY else diagnostic)[task_id] += n
    fixed_pairs = run.config.get("fixed_pairs") or []
    fixed_per_task = Counter(task_id for task_id, _, _ in fixed_pairs)
    chunks = []
    for chunk in JudgeRunTask.objects.filter(run=run).select_related("task").order_by("task__position", "task__external_id"):
        planned = len(run.dimensions) * (fixed_per_task[chunk.task_id] if fixed_pairs else run.budget_per_task)
        state = "done" if chunk.done else ("running" if chunk.task_id in started else "waiting")
        chunks.append({"task_id": chunk.task_id, "task": chunk.task.external_id, "state": state,
                       "calls_done": primary[chunk.task_id], "calls_planned": planned,
                       "diagnostic_done": diagnostic[chunk.task_id]})
    snapshot = run.snapshots.first()
    end = run.finished_at or (timezone.now() if run.started_at and run.status in ("running", "finalising") else None)
    duration = (end - run.started_at).total_seconds() if run.started_at and end else None
    usage = run.usage or {}
    return {
        **run_status(run),
        "tasks_done": run.tasks_done,
        "tasks_total": run.tasks_total,
        "calls_done": run.calls_done,
        "calls_planned": run.calls_planned,
        "comparisons": counts,
        "comparisons_done": counts.get("ok", 0) + counts.get("failed", 0),
        "primary_done": answered.get(Comparison.Kind.PRIMARY, 0),
        "diagnostic_done": sum(answered.get(k, 0) for k in (Comparison.Kind.SWAP, Comparison.Kind.DUPLICATE,
                                                             Comparison.Kind.AUXILIARY)),
        "automatic_done": answered.get(Comparison.Kind.AUTOMATIC, 0),
        "chunks": chunks,
        "snapshot": snapshot.pk if snapshot else None,
        "fixed_pairs": len(fixed_pairs),  # 0: an active-sampling run
        "simulated": run.is_simulated,
        "usage": {k: usage.get(k) for k in ("calls", "prompt_tokens", "completion_tokens", "cost_usd", "cached_hits",
                                            "failures") if k in usage},
        "duration_seconds": None if duration is None else round(duration, 1),
    }


def judge_run_flagged_responses(*, run) -> dict:
    """The responses this run showed its judges whose shown field addresses the judge
    (:func:`engine.judge.prompt.judge_injection_signals`), for the run's page: ``screened`` (responses
    shown), ``flagged`` (one row each: response, task, field, signals) and ``by_signal`` (name → count).
    The field is the one each judged dimension inspects (the Core Idea for U and N, the Visual Description
    for E). Two reads: the shown ids of the run's comparisons, then those responses' texts."""
    from engine.checklists import DIMENSION_FIELD
    from engine.judge.prompt import judge_injection_signals
    from leaderboard.ekphrasis.checklists import ENGINE_DIMENSION
    from leaderboard.ekphrasis.models import Comparison

    fields: dict[int, set[str]] = {}
    shown = (Comparison.objects.filter(run=run).order_by()  # no default ordering: it would undo the distinct
             .values_list("dimension", "shown_a_id", "shown_b_id").distinct())
    for dimension, a, b in shown:
        inspected = DIMENSION_FIELD[ENGINE_DIMENSION[dimension]].value
        fields.setdefault(a, set()).add(inspected)
        fields.setdefault(b, set()).add(inspected)
    flagged, by_signal = [], Counter()
    rows = Response.objects.filter(pk__in=list(fields)).order_by("task__position", "pk").values_list(
        "pk", "task__external_id", "core_idea", "visual_description")
    for pk, task, core_idea, visual_description in rows:
        for inspected, text, label in (("core_idea", core_idea, "Core Idea"),
                                       ("visual_description", visual_description, "Visual Description")):
            signals = judge_injection_signals(text or "") if inspected in fields[pk] else []
            if signals:
                flagged.append({"response": pk, "task": task, "field": label, "signals": signals})
                by_signal.update(signals)
    return {"screened": len(fields), "flagged": flagged, "by_signal": dict(sorted(by_signal.items()))}


def snapshot_list():
    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    return LeaderboardSnapshot.objects.select_related("run", "run__task_set").order_by("-created_at")


def latest_snapshots_per_task_set():
    """The newest leaderboard snapshot of each task set (the first screen's table), newest first."""
    latest = {}
    for snapshot in snapshot_list():
        latest.setdefault(snapshot.run.task_set_id, snapshot)
    return list(latest.values())


def task_drilldown_summary(*, run, task) -> dict:
    """Per dimension of one task in a run: each model's wins, ties and losses in the primary (and
    automatic) comparisons, and the task's own BT fit (expected win rate, App. F) — the same fit the
    leaderboard makes over all tasks, on this task's decisive comparisons only."""
    import numpy as np

    from engine.bt import expected_winrate, fit_win_matrix, win_matrix
    from engine.leaderboard import LEADERBOARD_L2
    from leaderboard.ekphrasis.models import Comparison
    from leaderboard.models import SubjectModel

    rows = (Comparison.objects.filter(run=run, task=task, status=Comparison.Status.OK, kind__in=["primary", "automatic"])
            .values_list("dimension", "shown_a__subject_model_id", "shown_b__subject_model_id", "winner", "confidence"))
    by_dim: dict[str, list] = {}
    for dimension, a, b, winner, confidence in rows:
        by_dim.setdefault(dimension, []).append((a, b, winner, confidence))
    ids_seen = {m for calls in by_dim.values() for r in calls for m in r[:2]}
    names = dict(SubjectModel.objects.filter(pk__in=ids_seen).values_list("pk", "display_name"))
    out = {}
    for dimension in ("U", "E", "N"):
        calls = by_dim.get(dimension)
        if not calls:
            continue
        ids = sorted({m for r in calls for m in r[:2]}, key=lambda m: names.get(m, ""))
        index = {m: k for k, m in enumerate(ids)}
        wins, ties, losses = Counter(), Counter(), Counter()
        winners, losers, weights = [], [], []
        for a, b, winner, confidence in calls:
            if winner == "tie":
                ties[a] += 1
                ties[b] += 1
                continue
            w, loser = (a, b) if winner == "A" else (b, a)
            wins[w] += 1
            losses[loser] += 1
            winners.append(index[w])
            losers.append(index[loser])
            weights.append(max(confidence or 0.0, 1e-3))  # App. F: w_r is judge confidence
        rates = None
        if winners and len(ids) >= 2:
            fit = fit_win_matrix(win_matrix(winners, losers, len(ids), weights), l2=LEADERBOARD_L2)
            rates = expected_winrate(fit.theta)
        models = [
            {"name": names.get(m, str(m)), "wins": wins[m], "ties": ties[m], "losses": losses[m],
             "winrate": None if rates is None else float(np.round(rates[index[m]], 3))}
            for m in ids
        ]
        models.sort(key=lambda r: -(r["winrate"] if r["winrate"] is not None else -1))
        out[dimension] = {"models": models, "n": len(calls)}
    return out


def task_comparisons(*, run, task):
    """Every judgment of one task in a run, for the drill-down page."""
    from leaderboard.ekphrasis.models import Comparison

    return (
        Comparison.objects.filter(run=run, task=task)
        .select_related("shown_a__subject_model", "shown_b__subject_model", "model_x", "model_y")
        .order_by("dimension", "sequence")
    )


def latest_snapshot(*, task_set: TaskSet, dimension: str | None = None):
    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    snapshots = LeaderboardSnapshot.objects.filter(run__task_set=task_set).order_by("-created_at")
    if dimension:
        snapshots = snapshots.filter(run__dimensions__contains=dimension)
    return snapshots.first()


@dataclass(frozen=True)
class JudgePairOutcome:
    """A judge's primary verdict on one pair, in response ids (for the human-vs-judge join)."""

    task_external_id: str
    dimension: str
    response_x_id: int
    response_y_id: int
    winner_response_id: int | None  # None = tie


def judge_pair_outcomes(*, task_set: TaskSet, dimension: str) -> list[JudgePairOutcome]:
    """Primary judge verdicts of the latest finished run on ``task_set`` (first repeat of each pair)."""
    from leaderboard.ekphrasis.models import Comparison

    snapshot = latest_snapshot(task_set=task_set, dimension=dimension)
    if snapshot is None:
        return []
    rows = Comparison.objects.filter(
        run_id=snapshot.run_id, dimension=dimension, kind=Comparison.Kind.PRIMARY, repeat=0,
        status=Comparison.Status.OK,
    ).values_list("task__external_id", "shown_a_id", "shown_b_id", "winner")
    out = []
    for task_id, a, b, winner in rows:
        x, y = sorted((a, b))
        out.append(JudgePairOutcome(task_id, dimension, x, y, {"A": a, "B": b}.get(winner)))
    return out


#: Judge conditions of the Novelty ablation (Ekphrasis §5.4, App. D.1), by the runs' ``novelty_anchor``.
ABLATION_CONDITIONS = ("tig", "generic")


@dataclass(frozen=True)
class ConditionRun:
    """The finished fixed-pair run that stands for one judge condition."""

    condition: str  # the run's novelty_anchor: "tig" or "generic"
    run_id: int
    judge_name: str
    is_simulated: bool
    seed: int
    n_pairs: int


@dataclass(frozen=True)
class JudgeConditionOutcome:
    """A fixed-pair run's verdict on one pair, labelled with the run's condition (for the ablation join)."""

    task_external_id: str
    dimension: str
    response_x_id: int
    response_y_id: int
    winner_response_id: int | None  # None = tie
    condition: str
    run_id: int


def judge_condition_runs(*, task_set: TaskSet, dimension: str) -> list[ConditionRun]:
    """Per condition (TIG anchors, generic anchors), the latest finished fixed-pair run on ``task_set``
    that judged ``dimension``; conditions without one are left out."""
    from leaderboard.ekphrasis.models import JudgeRun

    runs = (
        JudgeRun.objects.filter(task_set=task_set, status=JudgeRun.Status.DONE, dimensions__contains=dimension,
                                novelty_anchor__in=ABLATION_CONDITIONS, config__has_key="fixed_pairs")
        .order_by("-finished_at", "-pk")
    )
    latest: dict[str, ConditionRun] = {}
    for run in runs:
        if run.novelty_anchor not in latest:
            latest[run.novelty_anchor] = ConditionRun(
                run.novelty_anchor, run.pk, run.judge_name, run.is_simulated, run.seed, len(run.config["fixed_pairs"])
            )
    return [latest[c] for c in ABLATION_CONDITIONS if c in latest]


def judge_condition_outcomes(*, task_set: TaskSet, dimension: str) -> list[JudgeConditionOutcome]:
    """Verdicts of :func:`judge_condition_runs` on their fixed pairs, each labelled with ``condition`` =
    the run's novelty anchor: the primary call (first repeat) or the automatic record of an empty
    response (App. F.2); failed calls are left out."""
    from leaderboard.ekphrasis.models import Comparison

    runs = {r.run_id: r.condition for r in judge_condition_runs(task_set=task_set, dimension=dimension)}
    rows = Comparison.objects.filter(
        run_id__in=runs, dimension=dimension, kind__in=[Comparison.Kind.PRIMARY, Comparison.Kind.AUTOMATIC],
        repeat=0, status=Comparison.Status.OK,
    ).values_list("run_id", "task__external_id", "shown_a_id", "shown_b_id", "winner")
    out = []
    for run_id, task_id, a, b, winner in rows:
        x, y = sorted((a, b))
        out.append(JudgeConditionOutcome(task_id, dimension, x, y, {"A": a, "B": b}.get(winner), runs[run_id], run_id))
    return out


def judge_model_scores(*, task_set: TaskSet, dimension: str) -> dict[int, float]:
    """Subject model id → judge BT θ for ``dimension`` from the latest snapshot ({} if none)."""
    snapshot = latest_snapshot(task_set=task_set, dimension=dimension)
    if snapshot is None or dimension not in snapshot.payload.get("per_dimension", {}):
        return {}
    theta = snapshot.payload["per_dimension"][dimension]["theta"]
    return dict(zip(snapshot.payload["model_ids"], theta, strict=True))


def tig_component_choices() -> tuple[list[str], list[str]]:
    """Extractors (offline, then judge-role models with an endpoint) and embedders (MiniLM, then
    embedder-role models with an endpoint) a TIG build may use."""
    from leaderboard.ekphrasis.tig import OFFLINE_EXTRACTOR
    from leaderboard.models import SubjectModel
    from leaderboard.providers import OFFLINE_EMBEDDER

    return (
        [OFFLINE_EXTRACTOR, *provider_model_names(SubjectModel.Role.JUDGE)],
        [OFFLINE_EMBEDDER, *provider_model_names(SubjectModel.Role.EMBEDDER)],
    )


def tig_builds_of(*, task_set: TaskSet, done: bool = False) -> QuerySet:
    """The task set's TIG builds (only finished ones with ``done``), newest first."""
    from leaderboard.ekphrasis.models import TIGBuild

    builds = TIGBuild.objects.filter(task_set=task_set)
    if done:
        builds = builds.filter(status=TIGBuild.Status.DONE)
    return builds.order_by("-created_at", "-pk")


def tig_build_progress(*, build) -> dict:
    """A build's live status for its page (polled as JSON)."""
    if build.status == "done":
        share = 1.0
    else:
        share = build.tasks_done / build.tasks_total if build.tasks_total else 0.0
    return {
        **run_status(build), "id": build.pk, "stage": build.stage, "extractor": build.extractor,
        "embedder": build.embedder, "canonicaliser": build.canonicaliser, "tasks_done": build.tasks_done, "tasks_total": build.tasks_total,
        "responses_extracted": build.responses_extracted, "responses_total": build.responses_total,
        "share": share,
    }


def tig_viewer_build(*, task_set: TaskSet, build_id: int | None = None):
    """The finished build whose extractor and embedder the viewer shows: the one asked for, else the
    latest finished one; None means the offline pair. Only finished builds are offered, so that opening
    the page never sends a response to a provider."""
    builds = tig_builds_of(task_set=task_set, done=True)
    if build_id is not None:
        return builds.filter(pk=build_id).first()
    return builds.order_by("-finished_at", "-pk").first()


def tig_viewer(*, task, pair: tuple[int, int] | None = None, build=None) -> dict:
    """Graph, ranked clusters and items of a task's population (or of one pair's leave-two-out context),
    with model primary keys mapped back to display names for researchers. ``build`` (a finished
    :class:`TIGBuild`) selects the extractor and embedder; None means the offline pair."""
    from leaderboard.ekphrasis.models import ChecklistItem
    from leaderboard.ekphrasis.tig import TIGComponents, task_population_index
    from leaderboard.models import SubjectModel

    components = TIGComponents.of(build) if build is not None else TIGComponents()
    index = task_population_index(task, components=components)
    data = index.viewer_data(None if pair is None else tuple(str(p) for p in pair))
    data["components"] = components
    names = dict(SubjectModel.objects.values_list("pk", "display_name"))
    for cluster in data["clusters"]:
        cluster["model_names"] = [names.get(int(m), m) for m in cluster.get("models", []) if str(m).isdigit()]
        for atom in cluster.get("member_atoms", []):
            atom["why"] = _cluster_link_reason(atom.get("link"))
    data["population_models"] = [names.get(int(m), m) for m in index.models]
    data["stored_contexts"] = list(
        ChecklistItem.objects.filter(task=task, dimension="N", source="tig").order_by("context_key", "-version")
        .values("context_key", "text", "active", "version", "provenance")
    )
    for row in data["stored_contexts"]:
        pair_part = row["context_key"].removeprefix("tig:").split("@")[0]
        row["pair_names"] = " vs ".join(names.get(int(p), p) for p in pair_part.split("|") if p.isdigit())
    return data


def _cluster_link_reason(link: dict | None) -> str:
    """Why Leiden put an atom beside another one, in words: the components of its strongest edge inside
    the cluster (App. G.3: NPMI co-occurrence, similarity at cosine >= 0.78, typed relations)."""
    if not link:
        return "no direct edge to another member"
    parts = []
    if link["cooccurrence"] > 0:
        parts.append(f"co-occurs (NPMI {link['cooccurrence']:.2f})")
    if link["similarity"] > 0:
        parts.append(f"similar (cosine {link['similarity']:.2f})")
    if link["typed"] > 0:
        parts.append(f"typed relation ×{int(round(link['typed']))}")
    return f"with “{link['with']}”: " + ", ".join(parts or [f"edge weight {link['weight']:.2f}"])


def subject_models_of(task_set: TaskSet) -> list:
    """A run's model pool: subject models with a primary response in the set, in a fixed order."""
    from django.db.models import Exists, OuterRef

    from leaderboard.models import Response, SubjectModel

    # EXISTS stops at each model's first primary response in the set; the join with DISTINCT it replaces
    # read every response of the set, once per judge-run chunk.
    primary = Response.objects.filter(subject_model=OuterRef("pk"), is_primary=True, task__task_set=task_set)
    return list(
        SubjectModel.objects.filter(Exists(primary), role=SubjectModel.Role.SUBJECT).order_by("display_name", "pk")
    )


# ---------------------------------------------------------------- launch gates (Ekphrasis App. D.3)

#: The field of a response each dimension inspects (Ekphrasis §3.2: U and N read the Core Idea, E the description).
_GATE_FIELD = {"U": "core_idea", "E": "visual_description", "N": "core_idea"}


def _novelty_profile(checklist: list) -> str | None:
    """The leave-two-models-out cliché item the judge saw on a Novelty call (source 'tig'), if any."""
    for item in checklist or []:
        if isinstance(item, dict) and item.get("source") == "tig":
            return str(item.get("text") or "")
    return None


def judge_run_launch_gates(*, run) -> dict:
    """The seven App. D.3 launch criteria of a run, from its judged comparisons and its task set's
    responses: ``results`` (measured value beside threshold, in order (i)–(vii)), ``ready`` (all pass),
    ``overrides`` (admins' recorded reasons) and ``cleared`` (ready, or overridden)."""
    from engine.launch_gates import launch_ready
    from leaderboard.ekphrasis.models import LaunchGateOverride

    measured = _launch_gate_results_cached(run)
    results = [result.to_dict() for result in measured]
    overrides = list(LaunchGateOverride.objects.filter(run=run).select_related("created_by"))
    ready = launch_ready(measured)
    return {"results": results, "ready": ready, "overrides": overrides,
            "cleared": ready or bool(overrides), "failed": [r.label for r in measured if not r.passed],
            "finished": run.status == "done"}


#: A finished run's measured criteria are kept this long (they change only when its task set's responses do).
_GATES_CACHE_SECONDS = 24 * 3600


def _launch_gate_results_cached(run) -> list:
    """A finished run's criteria are read back from the cache: its comparisons no longer change, and its
    task set's responses change only by new imports, their parsing (the LLM splitter) or an admin's edit,
    which the key names: count, newest id, newest parse and the fields' total length, one aggregate
    (reading every text to hash it cost 83–171 ms a view at the paper's scale, the aggregate 18–25 ms). A run still going is measured anew."""
    from django.core.cache import cache
    from django.db.models import Max, Sum
    from django.db.models.functions import Length

    if run.status != "done" or run.finished_at is None:
        return _launch_gate_results(run)
    state = _gate_responses(run).aggregate(n=Count("pk"), newest=Max("pk"), parsed=Max("normalised_at"),
                                           core=Sum(Length("core_idea")), visual=Sum(Length("visual_description")))
    parsed = state["parsed"].timestamp() if state["parsed"] else 0
    key = (f"ekphrasis-launch-gates:{run.pk}:{run.finished_at.timestamp()}:{state['n']}:{state['newest']}:{parsed}:"
           f"{state['core']}:{state['visual']}")
    found = cache.get(key)
    if found is None:
        found = _launch_gate_results(run)
        cache.set(key, found, timeout=_GATES_CACHE_SECONDS)
    return found


def _gate_responses(run) -> QuerySet:
    from leaderboard.models import SubjectModel

    return Response.objects.filter(task__task_set_id=run.task_set_id, subject_model__role=SubjectModel.Role.SUBJECT)


def _launch_gate_results(run) -> list:
    """The criteria measured from the database: one read of the responses' parse state and one of the
    judged comparisons (plain rows: a paper-scale run has ~70,000 of them)."""
    from engine.launch_gates import GateComparison, ParsedResponse, launch_gates
    from leaderboard.ekphrasis.models import Comparison

    parsed = [
        ParsedResponse(str(pk), method != Response.Normalisation.PENDING and bool(core.strip()) and bool(visual.strip()))
        for pk, method, core, visual in _gate_responses(run).values_list(
            "pk", "normalisation_method", "core_idea", "visual_description")
    ]
    fixed = bool(run.config.get("fixed_pairs"))
    def inspected(side: str) -> Case:
        # only the field the call's dimension inspects is read (a paper-scale run has ~70,000 rows)
        return Case(*(When(dimension=d, then=F(f"{side}__{name}")) for d, name in _GATE_FIELD.items()),
                    output_field=TextField())

    rows = (
        Comparison.objects.filter(run=run, status=Comparison.Status.OK)
        .exclude(kind=Comparison.Kind.AUTOMATIC)  # empty responses decided without a judge call (App. F.2)
        .order_by("task_id", "dimension", "sequence")
        .values_list("task__external_id", "dimension", "shown_a__subject_model_id", "shown_b__subject_model_id",
                     "winner", "kind", "repaired", "judge_name", inspected("shown_a"), inspected("shown_b"),
                     "task_id", "model_x_id", "model_y_id",
                     # as stored text, and only a Novelty call's (a third of the rows): the only ones read
                     Case(When(dimension="N", then=Cast("checklist", TextField())), output_field=TextField()))
    )
    calls = []
    # a checklist's stored text -> its profile: the calls of a pair (and the rounds of a task) show the same
    # checklist, so each distinct text is decoded once, not once a Novelty call
    profiles: dict[str, str | None] = {}

    def profile(checklist: str | None) -> str | None:
        if not checklist:
            return _novelty_profile(None)
        if checklist not in profiles:
            profiles[checklist] = _novelty_profile(json.loads(checklist))
        return profiles[checklist]

    for (task, dimension, model_a, model_b, winner, kind, repaired, judge, text_a, text_b,
         task_id, model_x, model_y, checklist) in rows:
        calls.append(GateComparison(
            task=task, dimension=dimension, model_a=str(model_a), model_b=str(model_b), winner=winner, kind=kind,
            repaired=repaired, judge=judge, text_a=text_a, text_b=text_b, pair_key=f"{task_id}:{model_x}:{model_y}",
            novelty_profile=profile(checklist) if dimension == "N" else None,
            active_selected=kind == Comparison.Kind.PRIMARY and not fixed,
        ))
    return launch_gates(parsed, calls)


def launch_gate_run_for(*, task_set: TaskSet):
    """The run human validation of ``task_set`` launches from: its latest finished leaderboard run (the
    one whose snapshot supplies the judge rankings; fixed-pair runs rank nothing). None if there is none."""
    from leaderboard.ekphrasis.models import JudgeRun

    return (JudgeRun.objects.filter(task_set=task_set, status=JudgeRun.Status.DONE)
            .exclude(config__has_key="fixed_pairs").order_by("-finished_at", "-pk").first())


def task_set_builds() -> QuerySet:
    from leaderboard.ekphrasis.models import TaskSetBuild

    return TaskSetBuild.objects.select_related("task_set", "created_by").order_by("-created_at", "-pk")


def task_set_build_progress(*, build) -> dict:
    """A build's live status for its page (polled as JSON)."""
    share = 1.0 if build.status == "done" else (build.tasks_kept / build.tasks_total if build.tasks_total else 0.0)
    return {**run_status(build), "id": build.pk, "stage": build.stage, "tasks_kept": build.tasks_kept,
            "tasks_total": build.tasks_total, "share": share,
            "task_set": build.task_set_id}
