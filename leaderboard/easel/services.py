"""Writes of the EASEL sub-app: suites, runs, episodes stepped and resumed (easel.txt §3, §5).

Suite. :func:`easel_suite_create` stores the engine's generated suite (``references.generate_suite``
plus ``semantic.semantic_tasks``) as one *frozen* task set of benchmark kind ``easel``: each engine task
becomes a ``Task`` row (its record in ``source``) and an :class:`EaselImage` (its PNG). The engine's
generators are seeded, so the same seed gives byte-identical references; creating a suite that exists
checks exactly that instead of writing anything.

Runs. A run plans one :class:`EaselEpisode` per task it applies to (the painter and the anchors are
reconstruction-only: their score has no meaning on a semantic task) and is worked one episode per
Celery job.

Resume rule: **the stored steps are the episode's state.** A job rebuilds the environment by replaying
the stored raw actions (``Environment.replay``), asks the policy for the next step from the replayed
environment's observation, and stores steps as it goes; a killed worker therefore resumes at the first
unstored step, and for a deterministic policy (the engine's policies draw their randomness from the
seed and the step, not from call order) produces the same episode as an uninterrupted run. The unique
(episode, index) constraint makes a second worker on the same episode fail to write rather than
write twice. Model calls additionally go through the request cache, so a resumed model episode asks
the same questions and gets the same answers back.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import F, Sum
from django.utils import timezone

from engine.easel.trajectory import (
    REPEAT_RATE_METHOD_VERSION,
    REPEAT_RATE_METHODS,
    known_repeat_method,
    progress_curve,
    recorded_repeat_method,
    trajectory_diagnostics,
)
from engine.providers.client import ProviderError
from leaderboard.easel import agents
from leaderboard.easel.models import (
    NATIVE_BUDGET,
    EaselEpisode,
    EaselImage,
    EaselRun,
    EaselStep,
    canvas_stored_at,
)
from leaderboard.models import Benchmark, Task, TaskSet
from leaderboard.protocols import task_set_kind_check
from leaderboard.run_usage import client_usage_take, run_usage_add
from leaderboard.runs.errors import ProviderStopped, RunConfigurationError, UnitTakenOver, provider_outage_of
from leaderboard.runs.lifecycle import (
    JobKind,
    run_claim_finalise,
    run_display_name,
    run_fail,
    run_finish,
    run_pending_units,
    run_prompt_versions,
    run_refuse_changed_prompts,
)
from leaderboard.runs.starting import run_start
from leaderboard.services.catalogue import benchmark_get_or_create

logger = logging.getLogger(__name__)

DEFAULT_SUITE_NAME = "easel"
#: Steps a cheap offline policy takes between writes (a kill loses at most these, and they are redone
#: identically); a model's steps are written one by one, since each is a paid call.
OFFLINE_FLUSH_STEPS = 32
#: The reconstruction categories in Table 1's order (version strings and messages list them so).
PAPER_SUITE_ORDER = ("programmatic", "spatial_geometry", "abstract_cartoon", "natural")


class SuiteConflict(ValueError):
    """A suite that cannot be stored: a task set of that name and version exists with other references, or
    the counts give no reference at all."""


# ---------------------------------------------------------------- images


def canvas_png(canvas: np.ndarray) -> bytes:
    """A canvas as the engine stores images: 8-bit RGB PNG, rounded to the nearest level."""
    from engine.easel.task import png_bytes

    return png_bytes(canvas)


# ---------------------------------------------------------------- suites


def suite_version(seed: int, per_category: dict[str, int] | None) -> str:
    """``seed0`` for the paper-sized suite, ``seed0-p2s2a2n2`` for a smaller one (counts in Table 1's order:
    programmatic, spatial geometry, abstract/cartoon, natural)."""
    if not per_category:
        return f"seed{seed}"
    return f"seed{seed}-" + "".join(f"{name[0]}{int(per_category.get(name, 0))}" for name in PAPER_SUITE_ORDER)


class ImageImportError(ValueError):
    """A user image that cannot become a reference (the message names the file)."""


def _decoded_pixels(name: str, image) -> np.ndarray:
    """The pixels of an opened image, the way up it is shown, as ``reconstruction_task_from_image`` reads them:
    RGB or RGBA, 8- or 16-bit.

    Pillow applies neither the EXIF orientation (a portrait photo came in on its side) nor a scale when it
    converts: ``convert("RGB")`` clips a 16-bit grey PNG (mode I;16) at 255, so mid-grey came in white, and
    drops transparency, so a transparent background came in as the colour it hid. 16-bit grey is kept as
    uint16, transparency as alpha (composited over white by the engine). 32-bit samples (modes I and F) have
    no colour scale to read and are refused."""
    from PIL import ImageOps

    image = ImageOps.exif_transpose(image)
    mode = image.mode
    if mode.startswith("I;16"):
        grey = np.asarray(image).astype(np.uint16)
        return np.repeat(grey[..., None], 3, axis=2)
    if mode in ("I", "F") or mode.startswith(("I;", "F;")):
        raise ImageImportError(f"{name}: a {mode} image (32-bit {'float' if mode.startswith('F') else 'integer'} "
                               "samples) has no colour scale to read; save it as an 8- or 16-bit PNG")
    transparent = mode in ("RGBA", "RGBa", "LA", "La", "PA") or "transparency" in image.info
    return np.asarray(image.convert("RGBA" if transparent else "RGB"))


def imported_tasks(images: list[tuple[str, bytes]]) -> list:
    """User images as Natural Images references (centre square crop resized to 128×128, engine.easel.references),
    in name order; task ids ``imported-<file stem>``. The image is read the way up it is shown (EXIF
    orientation), 16-bit images on their own scale and transparency over white (:func:`_decoded_pixels`)."""
    import io
    import re
    from pathlib import PurePath

    from PIL import Image, UnidentifiedImageError

    from engine.easel.references import reconstruction_task_from_image
    from engine.image_limits import ImageTooLarge, image_size_checked

    tasks, seen = [], set()
    for name, data in sorted(images):
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", PurePath(name).stem).strip("-")[:80] or "image"
        task_id = f"imported-{stem}"
        if task_id in seen:
            raise ImageImportError(f"{name}: another file already gives the task id {task_id}")
        seen.add(task_id)
        try:
            image_size_checked(data)  # the pixel budget, from the header: nothing decoded yet
            with Image.open(io.BytesIO(data)) as image:
                pixels = _decoded_pixels(name, image)
        except ImageImportError:
            raise
        except ImageTooLarge as exc:
            raise ImageImportError(f"{name} is {exc}") from exc
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            # ValueError: a mode Pillow cannot convert to RGB, or EXIF it cannot apply
            raise ImageImportError(f"{name}: not a readable image ({exc})") from exc
        except Exception as exc:  # noqa: BLE001 - Pillow's decoders on hostile bytes raise SyntaxError, EOFError, ...
            raise ImageImportError(f"{name}: not a readable image ({type(exc).__name__}: {exc})") from exc
        try:
            tasks.append(reconstruction_task_from_image(pixels, task_id=task_id,
                                                        source=f"imported:{PurePath(name).name}"))
        except ValueError as exc:
            raise ImageImportError(f"{name}: {exc}") from exc
    return tasks


def suite_tasks(*, seed: int, per_category: dict[str, int] | None = None,
                images: list[tuple[str, bytes]] = ()) -> list:
    """The engine tasks of a suite: the generated references, the imported ones, then the five semantic tasks."""
    from engine.easel.references import generate_suite
    from engine.easel.semantic import semantic_tasks

    return [*generate_suite(seed, per_category=per_category), *imported_tasks(list(images)), *semantic_tasks(seed)]


def _brief(task) -> str:
    instruction = (task.spec or {}).get("instruction")
    if task.kind != "reconstruction" and instruction:
        return str(instruction)
    return f"Reconstruct the reference image ({task.category}, {task.size}×{task.size}) in {task.budget} strokes."


@transaction.atomic
def easel_suite_create(*, seed: int, per_category: dict[str, int] | None = None, name: str = DEFAULT_SUITE_NAME,
                       version: str | None = None, is_demo: bool = False, description: str = "",
                       images: list[tuple[str, bytes]] = ()) -> tuple[TaskSet, bool]:
    """Store the suite of ``seed`` (plus the user ``images`` as Natural Images references) as a frozen task
    set; ``(task_set, created)``.

    An existing set of the same name and version is returned unchanged when its images are byte-identical
    to the generated ones, and refused with :class:`SuiteConflict` otherwise. An unreadable image is an
    :class:`ImageImportError` naming the file, and nothing is written."""
    from engine.easel.task import task_to_record

    version = version or suite_version(seed, per_category)
    if images and version == suite_version(seed, per_category):
        digest = hashlib.sha256(b"".join(hashlib.sha256(data).digest() for _, data in sorted(images))).hexdigest()
        version = f"{version}-import{digest[:8]}"
    tasks = suite_tasks(seed=seed, per_category=per_category, images=images)
    if not any(task.kind == "reconstruction" for task in tasks):
        # Refused before any row: a suite of the five semantic tasks alone was stored silently before.
        raise SuiteConflict("a suite needs at least one reference: per-category counts adding up to 1 or more "
                            f"(categories: {', '.join(PAPER_SUITE_ORDER)}), or imported images")
    records = []
    for task in tasks:
        record, png = task_to_record(task)
        records.append((task, record, png))
    existing = TaskSet.objects.filter(name=name, version=version).first()
    if existing is not None:
        stored = dict(EaselImage.objects.filter(task__task_set=existing).values_list("task__external_id", "sha256"))
        wanted = {task.id: hashlib.sha256(png).hexdigest() for task, _, png in records}
        if stored != wanted:
            raise SuiteConflict(f"task set {name} v{version} exists with other references; choose another --name")
        return existing, False
    task_set = TaskSet.objects.create(
        benchmark=benchmark_get_or_create(kind=Benchmark.Kind.EASEL), name=name, version=version, frozen=True,
        is_demo=is_demo,
        description=description or f"EASEL suite, seed {seed}" + ("" if not per_category else f", {per_category} per category"),
    )
    for position, (task, record, png) in enumerate(records):
        row = Task.objects.create(
            task_set=task_set, external_id=task.id, family=task.category, subtype=task.kind, brief=_brief(task),
            constraints={"budget": task.budget, "size": task.size}, source=record, position=position,
        )
        height, width = np.asarray(task.reference).shape[:2]
        EaselImage.objects.create(task=row, png=png, sha256=hashlib.sha256(png).hexdigest(), width=width, height=height)
    return task_set, True


def engine_task_of(task: Task):
    """The engine task a catalogue row stores, rebuilt exactly from its record and PNG."""
    from engine.easel.task import task_from_record

    return task_from_record(task.source, bytes(task.easel_image.png))


# ---------------------------------------------------------------- runs


def _episode_budget(task: Task, budget_setting: str) -> int:
    aligned = int(task.constraints["budget"])
    if budget_setting == EaselRun.Budget.NATIVE and task.subtype == "reconstruction":
        return NATIVE_BUDGET
    return aligned


def _runnable_check(task: Task, task_set: TaskSet) -> None:
    """A RunConfigurationError unless the engine can rebuild ``task`` (its image and record, as
    :func:`easel_suite_create` stores them): a task set holding one made otherwise gave a 500 on the run form
    (KeyError 'budget') or a run failing on that episode."""
    from engine.easel.task import task_from_record

    problem = None
    if not hasattr(task, "easel_image"):
        problem = "no reference image"
    else:
        try:
            task_from_record(task.source, bytes(task.easel_image.png))
            int(task.constraints["budget"])
        except (KeyError, TypeError, ValueError, OSError) as exc:
            problem = f"a record the engine cannot read ({exc})"
    if problem:
        raise RunConfigurationError(f"task {task.external_id} of {task_set} has {problem}: EASEL tasks are made by "
                                    "manage.py easel_suite")


@transaction.atomic
def easel_run_create(*, task_set: TaskSet, agent: str, budget_setting: str = EaselRun.Budget.ALIGNED, seed: int = 0,
                     skill: float | None = None, label: str = "", config: dict | None = None,
                     created_by=None) -> EaselRun:
    """Create a run and plan its episodes; nothing is stepped until it is started.

    ``agent``: ``simulated`` (``skill`` and ``label`` apply), ``painter``, an anchor name or a subject
    model's display name (:func:`leaderboard.easel.agents.agent_resolve`)."""
    from leaderboard.providers import code_version

    task_set_kind_check(task_set, kind=Benchmark.Kind.EASEL)
    if budget_setting not in EaselRun.Budget.values:
        raise RunConfigurationError(f"budget must be one of {', '.join(EaselRun.Budget.values)}; got {budget_setting!r}")
    try:
        choice = agents.agent_resolve(agent, skill=skill, label=label)
    except agents.UnknownAgent as exc:
        raise RunConfigurationError(str(exc)) from exc
    run_config = dict(config or {})
    if choice.kind == EaselRun.AgentKind.SIMULATED:
        run_config["skill"] = agents.DEFAULT_SIMULATED_SKILL if skill is None else float(skill)
    if choice.kind == EaselRun.AgentKind.ANCHOR:
        run_config["anchor"] = agent
    tasks = list(task_set.tasks.select_related("easel_image").order_by("position", "external_id"))
    if choice.kind in (EaselRun.AgentKind.PAINTER, EaselRun.AgentKind.ANCHOR):
        tasks = [t for t in tasks if t.subtype == "reconstruction"]
    if not tasks:
        raise RunConfigurationError(f"{task_set} has no task this agent can run")
    for task in tasks:
        _runnable_check(task, task_set)
    run = EaselRun(
        task_set=task_set, agent_kind=choice.kind, agent_name=choice.name, subject_model=choice.subject_model,
        budget_setting=budget_setting, seed=seed, is_simulated=choice.is_simulated, config=run_config,
        code_version=code_version(), created_by=created_by,
    )
    run.config.update(run_prompt_versions(EASEL_RUN_JOB, run))  # this code's versions, never the caller's
    run.config["repeat_rate_method_version"] = REPEAT_RATE_METHOD_VERSION  # what its episodes' repeat rates mean
    run.save()
    episodes = [
        EaselEpisode(run=run, task=t, position=k, kind=t.subtype, category=t.family,
                     budget=_episode_budget(t, budget_setting))
        for k, t in enumerate(tasks)
    ]
    EaselEpisode.objects.bulk_create(episodes)
    run.episodes_total = len(episodes)
    run.steps_planned = 0 if choice.kind == EaselRun.AgentKind.ANCHOR else sum(e.budget for e in episodes)
    run.save(update_fields=["episodes_total", "steps_planned"])
    return run


def easel_run_start(*, run: EaselRun, background: bool = False) -> None:
    """Queue the run's episodes once the transaction that created it has committed (the lifecycle's start policy)."""
    run_start(run, background=background)


def easel_run_pending_episodes(*, run_id: int) -> list[int]:
    """Mark the run running (again, clearing its error, if it had failed) and return its unfinished episodes' ids."""
    return run_pending_units(EASEL_RUN_JOB, run_id)


def easel_run_unfinished_episodes(*, run_id: int) -> list[int]:
    """The run's unfinished episodes' ids, in plan order."""
    return list(
        EaselEpisode.objects.filter(run_id=run_id).exclude(status=EaselEpisode.Status.DONE)
        .order_by("position", "pk").values_list("pk", flat=True)
    )


def easel_run_fail(*, run_id: int, error: str) -> None:
    run_fail(EaselRun, run_id, error)


def easel_run_finish_if_complete(*, run_id: int) -> bool:
    """Count the run's finished episodes; True for exactly one caller once all are: the one that wins
    the claim to finalise (:func:`leaderboard.runs.lifecycle.run_claim_finalise`)."""
    with transaction.atomic():
        done = EaselEpisode.objects.filter(run_id=run_id, status=EaselEpisode.Status.DONE).count()
        EaselRun.objects.filter(pk=run_id).update(episodes_done=done)
        run = EaselRun.objects.get(pk=run_id)
        if done < run.episodes_total:
            return False
        return run_claim_finalise(EaselRun, run_id)


def easel_run_finalise(*, run_id: int) -> EaselRun:
    """Mark a run whose episodes are all done as done (idempotent; the episodes hold the results)."""
    with transaction.atomic():
        run = EaselRun.objects.select_for_update().get(pk=run_id)
        if run.status == EaselRun.Status.DONE:
            return run
        run.episodes_done = EaselEpisode.objects.filter(run_id=run_id, status=EaselEpisode.Status.DONE).count()
        if run.episodes_done < run.episodes_total:
            return run
        run_finish(run, fields=("episodes_done",))
    return run


def easel_run_prompt_versions(run: EaselRun) -> dict[str, str]:
    """The prompt versions a run sends: the agent's when a model paints, the recogniser's when a model reads
    the handwriting (Tesseract, the painter, the anchors and the simulated agent read no prompt)."""
    from engine.easel.agent import AGENT_PROMPT_VERSION
    from engine.easel.semantic import MultimodalRecogniser

    versions = {}
    if run.agent_kind == EaselRun.AgentKind.MODEL:
        versions["agent_prompt_version"] = AGENT_PROMPT_VERSION
    if ((run.config or {}).get("recogniser") or "tesseract") != "tesseract":  # as agents.recogniser_for reads it
        versions["recogniser_prompt_version"] = MultimodalRecogniser.PROMPT_VERSION
    return versions


def easel_run_repeat_method(run: EaselRun) -> int:
    """The repeat-rate method ``run`` recorded (:func:`engine.easel.trajectory.recorded_repeat_method`), or a
    :class:`RunConfigurationError` naming it when this code does not know it: resuming cannot teach it the
    method, and a guess would give its remaining episodes repeat rates unlike its finished ones'."""
    recorded = recorded_repeat_method(run.config)
    method = known_repeat_method(recorded)
    if method is None:
        raise RunConfigurationError(
            f"{run_display_name(run)} records repeat_rate_method_version {recorded!r}, which this code does not know "
            f"(it knows {', '.join(map(str, REPEAT_RATE_METHODS))}): start a new run")
    return method


#: An EASEL run's units are its episodes (leaderboard.runs.lifecycle). Runs made before runs recorded their
#: prompt versions were sent the first wordings.
EASEL_RUN_JOB = JobKind(
    name="easel_run", model="easel.EaselRun", unit_name="episode", unit_arg="episode_id", display_name="EASEL run",
    pending_units=f"{__name__}.easel_run_unfinished_episodes", execute_unit=f"{__name__}.easel_episode_execute",
    finalise=f"{__name__}.easel_run_finalise", prompt_versions=f"{__name__}.easel_run_prompt_versions",
    prompt_versions_before=(("agent_prompt_version", "easel-agent-v1"),
                            ("recogniser_prompt_version", "easel-recogniser-v1")),
)


def easel_run_execute_inline(*, run: EaselRun, progress: Callable[[int], None] | None = None) -> EaselRun:
    """Work every unfinished episode in this process (the CLI and eager mode), then mark the run done."""
    for episode_id in easel_run_pending_episodes(run_id=run.pk):
        easel_episode_execute(run_id=run.pk, episode_id=episode_id, progress=progress)
    if easel_run_finish_if_complete(run_id=run.pk) or EaselRun.objects.filter(
            pk=run.pk, status=EaselRun.Status.FINALISING).exists():
        easel_run_finalise(run_id=run.pk)
    run.refresh_from_db()
    return run


# ---------------------------------------------------------------- one episode


def easel_episode_execute(*, run_id: int, episode_id: int, progress: Callable[[int], None] | None = None) -> bool:
    """Step one episode to its end from wherever its stored steps stop; True when this finished the run.

    ``progress(k)`` is called after each write with the number of steps just stored."""
    run = EaselRun.objects.select_related("task_set", "subject_model").get(pk=run_id)
    episode = EaselEpisode.objects.select_related("task__easel_image").get(pk=episode_id, run_id=run_id)
    if episode.status == EaselEpisode.Status.DONE:
        return False
    run_refuse_changed_prompts(run)
    EaselEpisode.objects.filter(pk=episode.pk, status=EaselEpisode.Status.PLANNED).update(status=EaselEpisode.Status.RUNNING)
    task = engine_task_of(episode.task)
    if run.agent_kind == EaselRun.AgentKind.ANCHOR:
        _anchor_episode(run, episode, task)
    else:
        try:
            _stepped_episode(run, episode, task, progress)
        except ProviderError as exc:
            if not provider_outage_of([exc]):
                raise
            # The agent's (or recogniser's) provider stopped answering past the client's retries: every step
            # answered is stored, so resuming replays them and asks the next one (issue 28).
            raise ProviderStopped(who=f"agent {run.agent_name!r}", error=str(exc),
                                  still_needed=easel_run_calls_still_needed(run_id=run.pk)) from exc
    return easel_run_finish_if_complete(run_id=run.pk)


def easel_run_calls_still_needed(*, run_id: int) -> int:
    """At most this many agent calls finish the run: one per unstored step of its unfinished episodes (an
    episode that submits early needs fewer)."""
    open_episodes = EaselEpisode.objects.filter(run_id=run_id).exclude(status=EaselEpisode.Status.DONE)
    return int(open_episodes.aggregate(n=Sum(F("budget") - F("steps_done")))["n"] or 0)


def _anchor_episode(run: EaselRun, episode: EaselEpisode, task) -> None:
    """An anchor is a canvas, not a trajectory: its Final is S of that canvas (Table 2)."""
    from engine.easel.metrics import similarity

    canvas = agents.anchor_canvas(run.config["anchor"], task.reference)
    score = similarity(canvas, task.reference)
    with transaction.atomic():
        EaselEpisode.objects.filter(pk=episode.pk).update(
            status=EaselEpisode.Status.DONE, final_s=score.s, final_ssim=score.ssim, final_l1=score.l1,
            final_edge_iou=score.edge_iou, best=score.s, at_50=score.s, auc=score.s, fb_gap=0.0,
            final_canvas_png=canvas_png(canvas), finished_at=timezone.now(),
        )


def _environment(run: EaselRun, task, budget: int):
    """The episode's environment: the run's budget (a native episode: 250 steps), and for the
    handwriting task the run's recogniser."""
    from engine.easel.episode import Environment
    from engine.easel.semantic import HANDWRITING_HELLO

    recogniser = agents.recogniser_for(run) if task.spec.get("task") == HANDWRITING_HELLO else None
    return Environment(task, budget=budget, recogniser=recogniser)


def _stepped_episode(run: EaselRun, episode: EaselEpisode, task, progress) -> None:
    # read before any step is asked for, so that a method this code does not know costs no agent call
    repeat_method = easel_run_repeat_method(run) if task.kind == "reconstruction" else None
    env = _environment(run, task, episode.budget)
    initial_s = float(env.similarity.s) if env.similarity is not None else None
    stored = list(episode.steps.order_by("index").values_list("raw", flat=True))
    if stored:
        env.replay(stored)
    policy, client = agents.policy_for(run)
    flush_every = 1 if run.agent_kind == EaselRun.AgentKind.MODEL else OFFLINE_FLUSH_STEPS
    pending: list[EaselStep] = []
    try:
        while not env.done:
            raw = policy.act(env.observation())
            outcome = env.step(raw)
            pending.append(_step_row(episode, env, outcome))
            if len(pending) >= flush_every:
                _write_steps(run, episode, pending, progress)
                pending = []
        _write_steps(run, episode, pending, progress)
    finally:
        run_usage_add(run, client_usage_take(client))
    _episode_finish(episode, env, task, initial_s, repeat_method)


def _step_row(episode: EaselEpisode, env, outcome) -> EaselStep:
    """The step as stored. The action column holds the accepted action only ("empty for an invalid one"): a
    refused one may hold what no JSON column stores (NaN, Infinity, 1e400 — json reads them — which failed
    the row's JSON check and so the run, on every resume). Its raw text is kept as it came back."""
    similarity = outcome.similarity
    index = int(env.step_index)
    action = None if outcome.kind == EaselStep.Kind.INVALID else outcome.action
    return EaselStep(
        episode=episode, index=index, action=action, raw=outcome.raw or "", valid=bool(outcome.valid),
        kind=outcome.kind, collision=bool(outcome.collision), error=outcome.error or "",
        s=None if similarity is None else float(similarity.s),
        ssim=None if similarity is None else float(similarity.ssim),
        l1=None if similarity is None else float(similarity.l1),
        edge_iou=None if similarity is None else float(similarity.edge_iou),
        canvas_png=canvas_png(env.canvas) if canvas_stored_at(index, episode.budget) else None,
    )


class EpisodeTakenOver(UnitTakenOver):
    """Another worker stored these steps first (a redelivered job running twice)."""


def _write_steps(run: EaselRun, episode: EaselEpisode, rows: list[EaselStep], progress) -> None:
    if not rows:
        return
    try:
        with transaction.atomic():
            EaselStep.objects.bulk_create(rows)
            EaselEpisode.objects.filter(pk=episode.pk).update(steps_done=rows[-1].index)
            EaselRun.objects.filter(pk=run.pk).update(steps_done=F("steps_done") + len(rows))
    except IntegrityError as exc:
        raise EpisodeTakenOver(f"episode {episode.pk}: steps {rows[0].index}..{rows[-1].index} already stored") from exc
    if progress:
        progress(len(rows))


def _episode_finish(episode: EaselEpisode, env, task, initial_s: float | None, repeat_method: int | None) -> None:
    steps = list(episode.steps.order_by("index").values("index", "action", "valid", "kind", "collision", "s",
                                                         "ssim", "l1", "edge_iou"))
    kinds = [row["kind"] for row in steps]
    submit = next((row["index"] for row in steps if row["kind"] == EaselStep.Kind.SUBMIT), None)
    fields = {
        "status": EaselEpisode.Status.DONE, "finished_at": timezone.now(), "steps_done": len(steps),
        "undo_count": kinds.count(EaselStep.Kind.UNDO), "collision_count": sum(row["collision"] for row in steps),
        "submit_step": submit, "final_canvas_png": canvas_png(env.canvas), "error": "",
        "invalid_rate": (sum(not row["valid"] for row in steps) / len(steps)) if steps else 0.0,
    }
    if task.kind == "reconstruction":
        s_values = [row["s"] for row in steps]
        diagnostics = trajectory_diagnostics(s_values, [row["action"] for row in steps], [row["valid"] for row in steps],
                                             repeat_method=repeat_method)
        last = steps[-1]
        fields.update(
            initial_s=initial_s, final_s=diagnostics.final, final_ssim=last["ssim"], final_l1=last["l1"],
            final_edge_iou=last["edge_iou"], at_50=diagnostics.at_50, auc=diagnostics.auc, best=diagnostics.best,
            fb_gap=diagnostics.fb_gap, repeat_rate=diagnostics.repeat_rate, invalid_rate=diagnostics.invalid_rate,
            progress_curve=progress_curve(s_values, initial_s),
        )
    else:
        from engine.easel.semantic import semantic_episode_summary

        score = env.final_score()
        fields.update(
            semantic_score=float(score.value), semantic_detail=dict(score.detail), recogniser=score.recogniser,
            semantic_summary=semantic_episode_summary(env.task, kinds, [row["valid"] for row in steps], submit),
        )
    EaselEpisode.objects.filter(pk=episode.pk).update(**fields)

