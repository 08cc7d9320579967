"""Writes of renders: the images of the cross-modal grounding subset (Ekphrasis App. I.1).

Renders come from any text-to-image system, two ways:

* ``renders_import_manifest`` — image files made elsewhere, listed in a JSONL or CSV manifest that
  names each response by the responses import's natural keys (``task_id``, ``model``, ``sample``)
  and gives ``image`` (a path relative to the manifest), ``renderer``, ``seed`` and optionally
  ``prompt``. Like every import it is one transaction: every error is reported with file, line and
  field and nothing is written; re-importing the same manifest changes nothing.
* ``renders_generate`` — a renderer model (a ``SubjectModel`` with role *renderer*) called through
  its OpenAI-compatible images endpoint with the App. I.1 prompt built from the Core Idea and Visual
  Description only (:func:`engine.render_prompt.rendering_prompt`). Idempotent and resumable: a
  render is identified by (response, renderer, seed), and whatever exists is skipped.

Renders are immutable once stored: labels are pinned to the SHA-256 of the bytes an annotator saw,
so a changed image for an existing (response, renderer, seed) is an error, never an update.

Image files are stored in MEDIA storage under their content hash (``renders/YYYY/MM/<sha256>.png``):
a file name never carries a model, task or response (blinding; annotators only ever reach images
through the opaque per-assignment URLs of ``annotation.views.media``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction

from engine.providers.client import ProviderError
from engine.providers.images import (
    GeneratedImage,
    ImageGenerationClient,
    ImageInfo,
    ImageRequest,
    InvalidImage,
    read_image,
)
from engine.providers.usage import UsageLedger
from engine.render_prompt import rendering_prompt
from leaderboard.import_contract import ImportFailed, RecordError
from leaderboard.models import Render, Response, SubjectModel, TaskSet
from leaderboard.providers import provider_config_for
from leaderboard.records import RenderRecord, read_render_records
from leaderboard.services.catalogue import ImportSummary

#: Renders stored per provider batch when generating (and the most lost if a run is killed mid-batch).
GENERATION_BATCH = 8


class RenderConfigurationError(ValueError):
    """A generation job that cannot start: the model is not a usable renderer, or the responses are not the set's."""


# ---------------------------------------------------------------- storage


def _render_file_name(info: ImageInfo) -> str:
    # Blinding: the content hash, never a model, task or response name.
    return f"{info.sha256}.{info.extension}"


def _render_build(
    *, response_id: int, renderer: str, seed: int, prompt: str, data: bytes, info: ImageInfo, is_placeholder: bool
) -> Render:
    """An unsaved Render whose image file is already in MEDIA storage."""
    render = Render(
        response_id=response_id, renderer=renderer, seed=seed, prompt=prompt, image_sha256=info.sha256,
        is_placeholder=is_placeholder,
    )
    render.image.save(_render_file_name(info), ContentFile(data), save=False)
    return render


def _files_delete(renders: Sequence[Render]) -> None:
    for render in renders:
        if render.image.name:
            render.image.storage.delete(render.image.name)


# ---------------------------------------------------------------- import


@dataclass(frozen=True)
class _CheckedRecord:
    record: RenderRecord
    response_id: int
    path: Path
    info: ImageInfo


def _image_checked(name: str, record: RenderRecord, base_dir: Path, errors: list[RecordError]) -> tuple[Path, ImageInfo] | None:
    path = base_dir / record.image
    if not path.is_file():
        errors.append(RecordError(name, record.line, "image", f"no such image file {record.image!r} (looked for {path})"))
        return None
    try:
        info = read_image(path.read_bytes())
    except OSError as exc:
        errors.append(RecordError(name, record.line, "image", f"cannot read {record.image!r}: {exc.strerror or exc}"))
        return None
    except InvalidImage as exc:
        errors.append(RecordError(name, record.line, "image", f"{record.image!r} is {exc}"))
        return None
    return path, info


@transaction.atomic
def renders_import_manifest(
    *, name: str, raw: bytes, task_set: TaskSet, base_dir: Path, fmt: str | None = None
) -> ImportSummary:
    """Import the renders a manifest lists into ``task_set`` (all or nothing; re-runnable).

    ``name`` is the manifest's name in error messages, ``raw`` its bytes, ``base_dir`` the directory
    its ``image`` paths are relative to. Raises :class:`~leaderboard.records.ImportFailed` with every error.
    """
    records = read_render_records(name, raw, fmt=fmt)
    # Two imports of one manifest at once: the second waits here, then finds every render present.
    TaskSet.objects.select_for_update().filter(pk=task_set.pk).first()
    tasks = dict(task_set.tasks.values_list("external_id", "pk"))
    models = dict(SubjectModel.objects.values_list("display_name", "pk"))
    responses = {
        (task_id, model_id, sample): pk
        for task_id, model_id, sample, pk in Response.objects.filter(task__task_set=task_set).values_list(
            "task_id", "subject_model_id", "sample", "pk"
        )
    }
    existing = {
        (render.response_id, render.renderer, render.seed): render
        for render in Render.objects.filter(response__task__task_set=task_set).only(
            "id", "response_id", "renderer", "seed", "image_sha256", "prompt"
        )
    }
    errors: list[RecordError] = []
    summary = ImportSummary()
    to_create: list[_CheckedRecord] = []
    for record in records:
        response_id = _response_of(name, record, task_set, tasks, models, responses, errors)
        checked = _image_checked(name, record, base_dir, errors)
        if response_id is None or checked is None:
            continue
        path, info = checked
        current = existing.get((response_id, record.renderer, record.seed))
        if current is None:
            to_create.append(_CheckedRecord(record, response_id, path, info))
        elif current.image_sha256 != info.sha256:
            errors.append(RecordError(
                name, record.line, "image",
                f"the render of sample {record.sample} of {record.model!r} on {record.task_id!r} by {record.renderer!r} "
                f"with seed {record.seed} already exists with different image bytes; renders are immutable "
                "(labels are pinned to them): use a new seed or renderer name",
            ))
        elif record.prompt is not None and record.prompt != current.prompt:
            errors.append(RecordError(
                name, record.line, "prompt",
                f"the render by {record.renderer!r} with seed {record.seed} already exists with a different prompt",
            ))
        else:
            summary.unchanged += 1
    if errors:
        raise ImportFailed(errors)

    created: list[Render] = []
    try:
        for checked in to_create:
            data = checked.path.read_bytes()
            info = read_image(data)
            if info.sha256 != checked.info.sha256:
                raise ImportFailed([RecordError(name, checked.record.line, "image", f"{checked.record.image!r} changed during the import")])
            created.append(_render_build(
                response_id=checked.response_id, renderer=checked.record.renderer, seed=checked.record.seed,
                prompt=checked.record.prompt or "", data=data, info=info, is_placeholder=False,
            ))
        Render.objects.bulk_create(created)
    except BaseException:
        _files_delete(created)  # the rows roll back with the transaction; the files would not
        raise
    summary.created = len(created)
    return summary


def _response_of(name, record, task_set, tasks, models, responses, errors) -> int | None:
    """The response a record names, or None with the errors appended (unknown task, model or sample)."""
    task_id, model_id = tasks.get(record.task_id), models.get(record.model)
    if task_id is None:
        errors.append(RecordError(name, record.line, "task_id", f"unknown task {record.task_id!r} in {task_set}"))
    if model_id is None:
        errors.append(RecordError(name, record.line, "model", f"unknown model {record.model!r}"))
    if task_id is None or model_id is None:
        return None
    response_id = responses.get((task_id, model_id, record.sample))
    if response_id is None:
        errors.append(RecordError(
            name, record.line, "sample",
            f"no sample {record.sample} of {record.model!r} on {record.task_id!r} (import the responses first)",
        ))
    return response_id


# ---------------------------------------------------------------- generation


@dataclass
class RenderGenerationReport:
    created: int = 0
    existing: int = 0
    unsplit: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    usage: dict = field(default_factory=dict)

    def __str__(self) -> str:
        text = f"{self.created} created, {self.existing} already there"
        if self.unsplit:
            text += f", {len(self.unsplit)} skipped (no Core Idea / Visual Description yet)"
        if self.failures:
            text += f", {len(self.failures)} failed"
        return text


def image_client_for(renderer: SubjectModel) -> ImageGenerationClient:
    """The engine's image-generation client for a renderer model (its API key stays in the environment)."""
    if renderer.role != SubjectModel.Role.RENDERER:
        raise RenderConfigurationError(f"{renderer} has role {renderer.role!r}, not renderer")
    if not renderer.base_url:
        raise RenderConfigurationError(f"{renderer} has no base URL configured")
    return ImageGenerationClient(
        provider_config_for(renderer), concurrency=settings.ATELIER_PROVIDER_CONCURRENCY, usage=UsageLedger()
    )


def _describe(response: Response) -> str:
    return f"{response.task.external_id} / {response.subject_model.display_name} / sample {response.sample}"


def renders_generate(
    *,
    task_set: TaskSet,
    renderer: SubjectModel,
    seed: int,
    responses: Sequence[Response] | None = None,
    size: str | None = None,
    batch_size: int = GENERATION_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> RenderGenerationReport:
    """Render each primary response of ``task_set`` (or ``responses``, all of the set) once with ``renderer``
    and ``seed`` (App. I.1: one fixed system, one seed), storing each image as it arrives.

    Skips every (response, renderer, seed) already rendered, so a re-run resumes; a response without a
    Core Idea and Visual Description is skipped and listed (split it first). Failed calls are listed,
    not raised: re-run to retry them. ``progress(done, total)`` counts responses handled, existing included.
    """
    client = image_client_for(renderer)
    if batch_size < 1:
        raise RenderConfigurationError("batch_size must be >= 1")
    chosen = Response.objects.filter(task__task_set=task_set).select_related("task", "subject_model")
    if responses is None:
        chosen = chosen.filter(is_primary=True)
    else:
        wanted = {response.pk for response in responses}
        chosen = chosen.filter(pk__in=wanted)
        if len(chosen) != len(wanted):
            raise RenderConfigurationError(f"{len(wanted) - len(chosen)} of the chosen responses are not in {task_set}")
    chosen = list(chosen.order_by("task__position", "task__external_id", "subject_model__display_name", "sample"))
    name = renderer.display_name
    done_ids = set(
        Render.objects.filter(response__in=chosen, renderer=name, seed=seed).values_list("response_id", flat=True)
    )
    report = RenderGenerationReport(existing=len(done_ids))
    todo = []
    for response in chosen:
        if response.pk in done_ids:
            continue
        if not (response.core_idea.strip() and response.visual_description.strip()):
            report.unsplit.append(_describe(response))
        else:
            todo.append(response)
    done = report.existing + len(report.unsplit)
    if progress is not None:
        progress(done, len(chosen))
    for start in range(0, len(todo), batch_size):
        batch = todo[start:start + batch_size]
        prompts = [rendering_prompt(r.core_idea, r.visual_description) for r in batch]
        outcomes = client.generate_many([ImageRequest(prompt=p, seed=seed, size=size) for p in prompts])
        for response, prompt, outcome in zip(batch, prompts, outcomes, strict=True):
            if isinstance(outcome, ProviderError):
                report.failures.append(f"{_describe(response)}: {outcome.message}")
            elif _generated_store(response=response, renderer=name, seed=seed, prompt=prompt, outcome=outcome):
                report.created += 1
            else:
                report.existing += 1
            done += 1
            if progress is not None:
                progress(done, len(chosen))
    report.usage = client.usage.as_dict()
    return report


def _generated_store(*, response: Response, renderer: str, seed: int, prompt: str, outcome: GeneratedImage) -> bool:
    """Store one generated image; False if a concurrent run stored this (response, renderer, seed) first."""
    render = _render_build(
        response_id=response.pk, renderer=renderer, seed=seed, prompt=prompt, data=outcome.data, info=outcome.info,
        is_placeholder=False,
    )
    try:
        with transaction.atomic():
            render.save()
    except IntegrityError:
        # The unique (response, renderer, seed) constraint: another worker rendered it meanwhile.
        _files_delete([render])
        return False
    return True
