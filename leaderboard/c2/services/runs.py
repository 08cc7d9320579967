"""C² runs: planning, executing per prompt, resuming (issue 12 "Runs and pages").

A run is task set × models × n samples × template × rater × seed × Surprise policy. Creating it
**plans every row**: one :class:`C2Sample` per model × prompt × sample index, and for divergent prompts
one :class:`C2Rating` per sample (repeat 0) plus a deterministic re-rate (repeat 1) for a
``rerate_share`` of them chosen by a seed derived from the sample's identity. Executing a prompt fills
planned rows only, each stage finding its rows by their status:

planned → answered (convergent: the answer) → done (confidence asked in the same conversation, or the
divergent answer) → graded and clustered (convergent) / rated (divergent).

A killed worker therefore resumes exactly where it stopped and, with the unique constraints on the
identities, can duplicate no sample and no rating; the provider client's persistent request cache
means a resumed call that had been answered is not sent again.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from engine.c2 import prompts
from engine.c2.rater import RUBRIC_VERSION, is_rerate_sample
from engine.providers.client import temperature_check
from leaderboard.c2.models import (
    CONVERGENT_TYPES,
    DIVERGENT_TYPES,
    VISUAL_TYPES,
    C2Rating,
    C2Run,
    C2RunPrompt,
    C2Sample,
    C2TaskImage,
)
from leaderboard.c2.services.generation import SampleJob, image_data_url, subject_for, subject_is_simulated
from leaderboard.c2.services.grading import samples_cluster, samples_grade
from leaderboard.c2.services.rating import RatingJob, rater_for
from leaderboard.c2.services.scoring import run_results
from leaderboard.models import Benchmark, SubjectModel, Task, TaskSet
from leaderboard.protocols import task_set_kind_check
from leaderboard.providers import (
    OFFLINE_EMBEDDER,
    UnknownJudge,
    code_version,
    embedder_model_for,
    judge_model_for,
    text_embedder_named,
)
from leaderboard.run_usage import run_usage_add
from leaderboard.runs.errors import ProviderCallsUnanswered, ProviderStopped, RunConfigurationError
from leaderboard.runs.lifecycle import (
    JobKind,
    run_claim_finalise,
    run_counting_finished_units,
    run_fail,
    run_finish,
    run_pending_units,
    run_refuse_changed_prompts,
)
from leaderboard.runs.starting import run_start
from leaderboard.services.catalogue import SubjectModelNameRefused, subject_models_ensure

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
GROUP_WAVES = 20  # the prompts of one group ≈ 20 × the concurrency cap samples per model
BATCH_WAVES = 10  # one provider batch ≈ 10 × a model's share of the cap: few batch barriers
DEFAULT_SAMPLES = 5  # n per prompt (issue 12; the paper's n is not printed)


# ---------------------------------------------------------------- creating


def _subjects(names: Sequence[str]) -> list[SubjectModel]:
    """The named subject models; a ``simulated-*`` name makes its labelled simulated model on first use."""
    try:
        simulated = subject_models_ensure(defaults_by_name={  # new ones move the catalogue revision once
            name: {"is_simulated": True, "accepts_images": True, "family": "simulated"}
            for name in names if subject_is_simulated(name)
        })
    except SubjectModelNameRefused as exc:
        raise RunConfigurationError(f"models: {exc}") from exc
    out, unknown = [], []
    for name in names:
        if name in simulated:
            out.append(simulated[name])
            continue
        model = SubjectModel.objects.filter(display_name=name, role=SubjectModel.Role.SUBJECT).first()
        if model is None:
            unknown.append(name)
        else:
            out.append(model)
    if unknown:
        known = SubjectModel.objects.filter(role=SubjectModel.Role.SUBJECT).order_by("display_name").values_list(
            "display_name", flat=True)
        raise RunConfigurationError(f"no subject model named {', '.join(map(repr, unknown))}; known: "
                                    f"{', '.join(known) or 'none'}, or simulated-NAME (add one in Admin → Subject models)")
    return out


def _rater(name: str) -> SubjectModel | None:
    if name == "simulated":
        return None
    if subject_is_simulated(name):
        raise RunConfigurationError(f"the simulated rater is named 'simulated', not {name!r}")
    try:
        return judge_model_for(name)
    except UnknownJudge as exc:
        raise RunConfigurationError(str(exc)) from exc


def _refuse_text_only(models: list[SubjectModel], rater: SubjectModel | None, types: set[str]) -> None:
    """Visual tasks need vision-language models: a text-only one is refused, never sent a task it cannot see."""
    visual = sorted(types & set(VISUAL_TYPES))
    if not visual:
        return
    text_only = [m.display_name for m in models if not m.accepts_images]
    if text_only:
        raise RunConfigurationError(
            f"{', '.join(text_only)} {'is' if len(text_only) == 1 else 'are'} text-only (SubjectModel.accepts_images "
            f"is off) but the task set has visual tasks ({', '.join(visual)}): use vision-language models or a text-only task set"
        )
    if rater is not None and "visual_story" in visual and not rater.accepts_images:
        raise RunConfigurationError(f"rater {rater.display_name} is text-only but visual_story samples are rated with their image")


@transaction.atomic
def c2_run_create(
    *,
    task_set: TaskSet,
    model_names: Sequence[str],
    n_samples: int = DEFAULT_SAMPLES,
    template: str = C2Run.Template.STANDARD,
    rater_name: str = "simulated",
    second_rater_name: str = "",
    seed: int = 42,
    surprise_policy: str = C2Run.SurprisePolicy.ZERO,
    tau: float = 0.9,
    temperature: float = 0.8,
    embedder: str = "minilm",
    rerate_share: float = 0.10,
    config: dict | None = None,
    created_by=None,
) -> C2Run:
    """Create a run and plan all its samples and ratings; nothing is called until it is started."""
    task_set_kind_check(task_set, kind=Benchmark.Kind.C2)
    names = list(dict.fromkeys(n.strip() for n in model_names if n.strip()))
    if not names:
        raise RunConfigurationError("name at least one subject model")
    if not 1 <= n_samples <= 50:
        raise RunConfigurationError("samples must lie in 1..50")
    if template not in C2Run.Template.values:
        raise RunConfigurationError(f"template must be one of {', '.join(C2Run.Template.values)}")
    if surprise_policy not in C2Run.SurprisePolicy.values:
        raise RunConfigurationError(f"surprise policy must be one of {', '.join(C2Run.SurprisePolicy.values)}")
    if not 0 < tau <= 1:
        raise RunConfigurationError("tau must lie in (0, 1]")
    try:
        temperature_check(temperature)
    except ValueError as exc:
        raise RunConfigurationError(str(exc)) from exc
    tasks = list(task_set.tasks.order_by("position", "external_id"))
    if not tasks:
        raise RunConfigurationError(f"{task_set} has no tasks")
    types = {t.family for t in tasks}
    unknown = types - set(CONVERGENT_TYPES + DIVERGENT_TYPES)
    if unknown:
        raise RunConfigurationError(f"{task_set} has tasks of unknown C² types: {', '.join(sorted(unknown))}")
    models = _subjects(names)
    rater = _rater(rater_name)
    second_rater_name = second_rater_name.strip()
    if second_rater_name == rater_name:
        raise RunConfigurationError("the second rater must differ from the first")
    second_rater = _rater(second_rater_name) if second_rater_name else None
    _refuse_text_only(models, rater, types)
    if second_rater is not None:
        _refuse_text_only([], second_rater, types)
    if embedder != OFFLINE_EMBEDDER:
        embedder_model_for(embedder)
    divergent = bool(types & set(DIVERGENT_TYPES))
    is_simulated = divergent and (rater is None or second_rater_name == "simulated") or any(m.is_simulated for m in models)
    run = C2Run.objects.create(
        task_set=task_set, subject_names=names, n_samples=n_samples, template=template, rater_name=rater_name,
        rater_model=rater, second_rater_name=second_rater_name, second_rater_model=second_rater, seed=seed,
        surprise_policy=surprise_policy, tau=tau, temperature=temperature,
        embedder=embedder, rerate_share=rerate_share, is_simulated=is_simulated, code_version=code_version(),
        created_by=created_by,
        config={**(config or {}), **prompt_versions()},  # the versions are this code's, never the caller's
    )
    run.subjects.set(models)
    _plan(run, tasks, models)
    return run


def rerated(run: C2Run, task: Task, model_name: str, sample_index: int) -> bool:
    """Whether a divergent sample is rated twice: the engine's deterministic ``rerate_share`` subset (test–retest)."""
    return is_rerate_sample(f"{run.seed}:{task.external_id}:{model_name}:{sample_index}", fraction=run.rerate_share)


def _plan(run: C2Run, tasks: list[Task], models: list[SubjectModel]) -> None:
    C2RunPrompt.objects.bulk_create([C2RunPrompt(run=run, task=t) for t in tasks], ignore_conflicts=True)
    C2Sample.objects.bulk_create(
        [C2Sample(run=run, subject_model=m, task=t, sample_index=i, temperature=run.temperature)
         for t in tasks for m in models for i in range(1, run.n_samples + 1)],
        ignore_conflicts=True,
    )
    divergent = [t for t in tasks if t.family in DIVERGENT_TYPES]
    by_key = {
        (s.task_id, s.subject_model_id, s.sample_index): s
        for s in C2Sample.objects.filter(run=run, task__in=divergent)
    }
    names = {m.pk: m.display_name for m in models}
    ratings = []
    task_of = {t.pk: t for t in divergent}
    for (task_id, model_id, index), sample in by_key.items():
        ratings.append(C2Rating(sample=sample, rater_name=run.rater_name, repeat=0))
        if rerated(run, task_of[task_id], names[model_id], index):
            ratings.append(C2Rating(sample=sample, rater_name=run.rater_name, repeat=1))
        if run.second_rater_name:
            ratings.append(C2Rating(sample=sample, rater_name=run.second_rater_name, repeat=0))
    C2Rating.objects.bulk_create(ratings, ignore_conflicts=True)
    convergent = sum(1 for t in tasks if t.family in CONVERGENT_TYPES) * len(models) * run.n_samples
    run.prompts_total = len(tasks)
    # convergent: answer + confidence; divergent: answer + each rating
    run.calls_planned = 2 * convergent + len(by_key) + len(ratings)
    run.save(update_fields=["prompts_total", "calls_planned"])


# ---------------------------------------------------------------- starting and dispatching


def c2_run_start(*, run: C2Run, background: bool = False) -> None:
    """Queue the run's prompts once the transaction that created it has committed (the lifecycle's start policy)."""
    run_start(run, background=background)


def c2_run_pending_prompts(*, run_id: int) -> list[int]:
    """Mark the run running (again, if it had failed) and return the task ids of its unfinished prompts."""
    return run_pending_units(C2_RUN_JOB, run_id)


def c2_run_unfinished_prompts(*, run_id: int) -> list[int]:
    return list(C2RunPrompt.objects.filter(run_id=run_id, done=False).order_by("pk").values_list("task_id", flat=True))


def c2_run_unit_execute(*, run_id: int, unit_id: int) -> bool:
    return c2_prompts_execute(run_id=run_id, task_ids=[unit_id])


#: A C² run's units are its prompts (leaderboard.runs.lifecycle).
C2_RUN_JOB = JobKind(
    name="c2_run", model="c2.C2Run", unit_name="task", display_name="C² run",
    pending_units=f"{__name__}.c2_run_unfinished_prompts", execute_unit=f"{__name__}.c2_run_unit_execute",
    finalise=f"{__name__}.c2_run_finalise", prompt_versions=f"{__name__}.prompt_versions",
    # runs made before runs recorded their versions were sent these (the rubric's data framing is v2)
    prompt_versions_before=(("template_version", "c2-templates-v1"), ("confidence_version", "c2-confidence-v1"),
                            ("rubric_version", "c2-rubric-v1")),
)


def c2_run_fail(*, run_id: int, error: str, resumable: bool = True) -> None:
    run_fail(C2Run, run_id, error, resumable=resumable)


# ---------------------------------------------------------------- executing prompts


def _advance(run: C2Run, calls: int, progress: Callable[[int], None] | None) -> None:
    if calls:
        C2Run.objects.filter(pk=run.pk).update(calls_done=F("calls_done") + calls)
        if progress:
            progress(calls)


def _images(tasks: dict[int, Task]) -> dict[int, str]:
    visual = [pk for pk, t in tasks.items() if t.family in VISUAL_TYPES]
    return {image.task_id: image_data_url(image) for image in C2TaskImage.objects.filter(task_id__in=visual)}


def prompt_versions(run: C2Run | None = None) -> dict[str, str]:
    """The versions of the texts this code sends: the subject models' templates and confidence question and
    the rater's rubric. A run records them all when it is made (``run`` None) and resumes only while those it
    sends are unchanged (:func:`leaderboard.runs.lifecycle.run_prompt_change`): the templates while a provider
    subject answers, the confidence question while one answers a convergent prompt, the rubric while a provider
    rater rates a divergent one (a simulated subject or rater reads no prompt, as a simulated judge; a run
    without convergent prompts asks no confidence, one without divergent prompts rates nothing)."""
    versions = {"template_version": prompts.TEMPLATE_VERSION, "confidence_version": prompts.CONFIDENCE_VERSION,
                "rubric_version": RUBRIC_VERSION}
    if run is None:
        return versions
    families = set(run.prompts.values_list("task__family", flat=True))
    if not run.subjects.filter(is_simulated=False).exists():
        del versions["template_version"], versions["confidence_version"]
    elif not families & set(CONVERGENT_TYPES):
        del versions["confidence_version"]
    if (run.rater_model_id is None and run.second_rater_model_id is None) or not families & set(DIVERGENT_TYPES):
        del versions["rubric_version"]
    return versions


def c2_prompts_execute(*, run_id: int, task_ids: Sequence[int], progress: Callable[[int], None] | None = None) -> bool:
    """Bring the given prompts of a run to completion (idempotent, resumable).

    The Celery job passes one prompt; the command line passes several at once so that one provider
    batch keeps the concurrency cap busy. Returns True when this call finished the run's last prompt.
    """
    run = C2Run.objects.select_related("task_set", "rater_model", "second_rater_model").get(pk=run_id)
    run_refuse_changed_prompts(run)
    open_ids = list(C2RunPrompt.objects.filter(run=run, task_id__in=task_ids, done=False).values_list("task_id", flat=True))
    if not open_ids:
        return False
    tasks = Task.objects.in_bulk(open_ids)
    images = _images(tasks)
    missing = [tasks[pk].external_id for pk in tasks if tasks[pk].family in VISUAL_TYPES and pk not in images]
    if missing:
        raise RunConfigurationError(f"visual tasks without an image: {', '.join(missing)}")
    try:
        _generate_all(run, tasks, images, progress)
        _grade_and_cluster(run, tasks)
        _rate(run, tasks, images, progress)
    except ProviderCallsUnanswered as outage:
        run.refresh_from_db(fields=["calls_planned", "calls_done"])
        raise ProviderStopped(who=outage.who, error=outage.error,
                              still_needed=max(1, run.calls_planned - run.calls_done)) from outage
    return _prompts_finish(run, open_ids)


def rows_write(model, rows: Sequence, fields: Sequence[str]) -> None:
    """Write ``fields`` of already-saved ``rows`` with one parameterised UPDATE per row, sent as one
    ``executemany``: a run writes thousands of rows per batch, and ``bulk_update``'s CASE expressions
    cost more than the provider calls they record (bench_c2_run)."""

    if not rows:
        return
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    assignments = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in columns)
    sql = f"UPDATE {connection.ops.quote_name(meta.db_table)} SET {assignments} WHERE {connection.ops.quote_name(meta.pk.column)} = %s"
    params = [[f.get_db_prep_save(getattr(row, f.attname), connection) for f in columns] + [row.pk] for row in rows]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _jobs(samples, tasks, images) -> list[SampleJob]:
    return [SampleJob(sample=s, task=tasks[s.task_id], image_url=images.get(s.task_id)) for s in samples]


def _generate_all(run: C2Run, tasks: dict[int, Task], images: dict[int, str], progress) -> None:
    """Answers, then (convergent) the confidence question, for every model's open samples of these prompts.

    Each model gets one sending thread with its share of the concurrency cap and a FIFO of batches of
    :data:`BATCH_WAVES` × its share: first its answer batches, then, as each batch of answers is stored,
    that batch's confidence questions. This thread stores every finished batch while the next ones are
    in flight, so the cap stays busy; only this thread touches the database.
    """

    models = {m.pk: m for m in run.subjects.all()}
    subjects = {pk: subject_for(model, run) for pk, model in models.items()}
    share = max(1, settings.ATELIER_PROVIDER_CONCURRENCY // max(1, len(subjects)))
    for subject in subjects.values():
        if hasattr(subject, "client"):
            subject.client.concurrency = share  # the site's cap is for all models together
    size = BATCH_WAVES * share
    base = C2Sample.objects.filter(run=run, task_id__in=tasks).order_by("task_id", "sample_index")
    senders = {pk: ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"c2-subject-{pk}") for pk in subjects}
    pending: dict = {}

    def submit(stage: str, model_id: int, samples: list[C2Sample]) -> None:
        call = subjects[model_id].answers if stage == "answer" else subjects[model_id].confidences
        for k in range(0, len(samples), size):
            batch = samples[k:k + size]
            pending[senders[model_id].submit(call, _jobs(batch, tasks, images))] = (stage, model_id, batch)

    try:
        for model_id in subjects:
            submit("answer", model_id, list(base.filter(subject_model_id=model_id).filter(
                Q(status=C2Sample.Status.PLANNED) | Q(status=C2Sample.Status.FAILED, attempts__lt=MAX_ATTEMPTS))))
            submit("confidence", model_id, list(base.filter(subject_model_id=model_id, status=C2Sample.Status.ANSWERED)))
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in finished:
                stage, model_id, samples = pending.pop(future)
                replies = future.result()
                if stage == "answer":
                    retry = _answers_store(run, samples, replies, tasks, progress, temperature=subjects[model_id].temperature)
                    submit("answer", model_id, retry)
                    submit("confidence", model_id, [s for s in samples if s.status == C2Sample.Status.ANSWERED])
                else:
                    _confidences_store(run, samples, replies, progress)
    finally:
        for sender in senders.values():
            sender.shutdown(wait=True, cancel_futures=True)
        for subject in subjects.values():  # also when an outage stopped the batch: its answered calls were paid
            run_usage_add(run, subject.usage())


def _answers_store(run, samples: list[C2Sample], replies, tasks, progress, *, temperature: float) -> list[C2Sample]:
    """Store a batch of answers; returns the failed samples that have attempts left."""
    now = timezone.now()
    retry = []
    for sample, reply in zip(samples, replies, strict=True):
        sample.attempts += 1
        if reply.text is None:
            sample.status, sample.error = C2Sample.Status.FAILED, reply.error
            if sample.attempts < MAX_ATTEMPTS:
                retry.append(sample)
            continue
        sample.text, sample.error, sample.generated_at, sample.temperature = reply.text, "", now, temperature
        if tasks[sample.task_id].family in CONVERGENT_TYPES:
            sample.status = C2Sample.Status.ANSWERED
        else:
            sample.status, sample.confidence_status = C2Sample.Status.DONE, C2Sample.ConfidenceStatus.NOT_ASKED
    # grading needs only the answer: done here, while the confidence questions are in flight
    answered = [s for s in samples if s.status == C2Sample.Status.ANSWERED]
    if answered:

        samples_grade(answered, tasks)
    rows_write(C2Sample, samples, ["status", "text", "error", "generated_at", "temperature", "attempts", "confidence_status",
                                   "verdict", "usefulness", "correct", "grade_detail"])
    _advance(run, sum(1 for s in samples if s.status != C2Sample.Status.FAILED), progress)
    return retry


def _confidences_store(run, samples: list[C2Sample], replies, progress) -> None:
    """After each convergent answer the same conversation asked for P(correct) (§3.2.1); the reply is
    parsed strictly and a missing or unparseable one is recorded as such, never invented."""
    for sample, reply in zip(samples, replies, strict=True):
        sample.status = C2Sample.Status.DONE
        if reply.text is None:
            sample.confidence_status, sample.confidence_raw = C2Sample.ConfidenceStatus.MISSING, ""
            sample.error = f"confidence: {reply.error}"[:2000]
            continue
        sample.confidence_raw = reply.text
        value = prompts.parse_confidence(reply.text)
        if value is None:
            sample.confidence_status = C2Sample.ConfidenceStatus.UNPARSEABLE
        else:
            sample.confidence, sample.confidence_status = value, C2Sample.ConfidenceStatus.OK
    rows_write(C2Sample, samples, ["status", "confidence", "confidence_raw", "confidence_status", "error"])
    _advance(run, len(samples), progress)


def _final(samples: list[C2Sample]) -> bool:
    return all(s.status == C2Sample.Status.DONE or (s.status == C2Sample.Status.FAILED and s.attempts >= MAX_ATTEMPTS)
               for s in samples)


def _grade_and_cluster(run: C2Run, tasks: dict[int, Task]) -> None:
    convergent = [pk for pk, t in tasks.items() if t.family in CONVERGENT_TYPES]
    if not convergent:
        return
    # answers are graded when they are stored; this catches any stored by an older worker without a grade
    ungraded = list(C2Sample.objects.filter(run=run, task_id__in=convergent, status=C2Sample.Status.DONE, verdict=""))
    if ungraded:
        samples_grade(ungraded, tasks)
        rows_write(C2Sample, ungraded, ["verdict", "usefulness", "correct", "grade_detail"])
    groups: dict[tuple[int, int], list[C2Sample]] = defaultdict(list)
    for s in C2Sample.objects.filter(run=run, task_id__in=convergent).order_by("task_id", "subject_model_id", "sample_index"):
        groups[(s.task_id, s.subject_model_id)].append(s)
    ready = [g for g in groups.values() if _final(g)]
    if ready:
        samples_cluster(run, ready, tasks, text_embedder_named(run.embedder))
        rows_write(C2Sample, [s for g in ready for s in g], ["cluster"])


def _rate(run: C2Run, tasks: dict[int, Task], images: dict[int, str], progress) -> None:
    divergent = [pk for pk, t in tasks.items() if t.family in DIVERGENT_TYPES]
    if not divergent:
        return
    for name in filter(None, (run.rater_name, run.second_rater_name)):
        _rate_by(run, name, divergent, tasks, images, progress)


def _rate_by(run: C2Run, name: str, divergent: list[int], tasks: dict[int, Task], images: dict[int, str], progress) -> None:
    rater = None
    for _ in range(MAX_ATTEMPTS):
        todo = list(
            C2Rating.objects.filter(sample__run=run, sample__task_id__in=divergent, sample__status=C2Sample.Status.DONE,
                                    rater_name=name)
            .filter(Q(status=C2Rating.Status.PLANNED) | Q(status=C2Rating.Status.FAILED, attempts__lt=MAX_ATTEMPTS))
            .select_related("sample").order_by("sample_id", "repeat")
        )
        if not todo:
            break
        rater = rater or rater_for(run, name)
        jobs = [RatingJob(rating=r, task=tasks[r.sample.task_id], text=r.sample.text, image_url=images.get(r.sample.task_id))
                for r in todo]
        now = timezone.now()
        for rating, outcome in zip(todo, rater.rate(jobs), strict=True):
            rating.attempts += 1
            rating.repaired, rating.raw = outcome.repaired, outcome.raw
            if outcome.ok:
                rating.status, rating.error, rating.rated_at = C2Rating.Status.OK, "", now
                rating.u, rating.o, rating.s = outcome.u, outcome.o, outcome.s
                rating.rationale_u, rating.rationale_o, rating.rationale_s = outcome.rationale_u, outcome.rationale_o, outcome.rationale_s
            else:
                rating.status, rating.error = C2Rating.Status.FAILED, outcome.error
        rows_write(C2Rating, todo, ["status", "error", "rated_at", "u", "o", "s", "rationale_u", "rationale_o",
                                    "rationale_s", "attempts", "repaired", "raw"])
        _advance(run, sum(1 for r in todo if r.status == C2Rating.Status.OK), progress)
    if rater is not None:
        run_usage_add(run, rater.usage())


def _complete_prompts(run: C2Run, task_ids: list[int]) -> list[int]:
    """The prompts whose samples are all final (answered, asked, graded) and whose ratings are all final:
    two queries for any number of prompts."""
    final = C2Sample.objects.filter(run=run, task_id__in=task_ids).filter(
        Q(status=C2Sample.Status.DONE) & (~Q(verdict="") | Q(confidence_status=C2Sample.ConfidenceStatus.NOT_ASKED))
        | Q(status=C2Sample.Status.FAILED, attempts__gte=MAX_ATTEMPTS)
    )
    unfinished = set(
        C2Sample.objects.filter(run=run, task_id__in=task_ids).exclude(pk__in=final.values("pk")).values_list("task_id", flat=True)
    )
    unfinished |= set(
        C2Rating.objects.filter(sample__run=run, sample__task_id__in=task_ids)
        .filter(Q(status=C2Rating.Status.PLANNED) | Q(status=C2Rating.Status.FAILED, attempts__lt=MAX_ATTEMPTS))
        .values_list("sample__task_id", flat=True)
    )
    return [t for t in task_ids if t not in unfinished]


def _prompts_finish(run: C2Run, task_ids: list[int]) -> bool:
    """Mark finished prompts done; True for exactly one caller: the one that finished the run's last prompt."""
    finished = _complete_prompts(run, task_ids)
    with run_counting_finished_units(C2Run, run.pk):
        C2RunPrompt.objects.filter(run=run, task_id__in=finished, done=False).update(done=True)
        done = C2RunPrompt.objects.filter(run=run, done=True).count()
        C2Run.objects.filter(pk=run.pk).update(prompts_done=done)
        if done < run.prompts_total:
            return False
        return run_claim_finalise(C2Run, run.pk)


# ---------------------------------------------------------------- finalising


def c2_run_finalise(*, run_id: int) -> C2Run:
    """Score the run and store its results (idempotent: a done run is returned as it is)."""
    with transaction.atomic():
        run = C2Run.objects.select_for_update().select_related("task_set").get(pk=run_id)
        if run.status == C2Run.Status.DONE and run.results is not None:
            return run
        run.results = run_results(run)
        run_finish(run, fields=("results",))
    return run


def prompt_groups(run: C2Run, task_ids: list[int]) -> list[list[int]]:
    """Prompts grouped so that one provider batch per model holds about :data:`GROUP_WAVES` times the
    concurrency cap: few batch barriers (each ends with a partly filled wave), and a killed process loses
    at most one group's unstored answers — which the request cache still holds."""
    per_prompt = max(1, run.n_samples)
    size = max(1, (GROUP_WAVES * settings.ATELIER_PROVIDER_CONCURRENCY) // per_prompt)
    return [task_ids[k:k + size] for k in range(0, len(task_ids), size)]


def c2_run_execute_inline(*, run: C2Run, progress: Callable[[int], None] | None = None) -> C2Run:
    """Run every unfinished prompt in this process, then finalise (the CLI and eager mode)."""
    last = False
    for group in prompt_groups(run, c2_run_pending_prompts(run_id=run.pk)):
        last = c2_prompts_execute(run_id=run.pk, task_ids=group, progress=progress) or last
    run.refresh_from_db()
    if last or run.status == C2Run.Status.FINALISING:
        return c2_run_finalise(run_id=run.pk)
    if run.status == C2Run.Status.RUNNING and run.prompts_done < run.prompts_total:
        c2_run_fail(run_id=run.pk, error=_unfinished_reason(run))
        run.refresh_from_db()
    return run


def _unfinished_reason(run: C2Run) -> str:
    failed = C2Sample.objects.filter(run=run, status=C2Sample.Status.FAILED).select_related("subject_model", "task")[:5]
    lines = [f"{s.subject_model} on {s.task.external_id} sample {s.sample_index}: {s.error}" for s in failed]
    return "some prompts could not be finished after retries:\n" + "\n".join(lines)


__all__ = [
    "c2_prompts_execute",
    "c2_run_create",
    "c2_run_execute_inline",
    "c2_run_fail",
    "c2_run_finalise",
    "c2_run_pending_prompts",
    "c2_run_start",
    "prompt_groups",
    "rerated",
]

