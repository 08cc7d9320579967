"""Writes the API needs that no page did yet: a new version of a task set, subject models created and
edited. Each refusal is an :class:`ApiOperationRefused` (mapped to its status
in the API's one exception handler)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import IntegrityError, transaction

from leaderboard.models import SubjectModel, Task, TaskSet
from leaderboard.services.catalogue import SubjectModelNameRefused, subject_model_save

__all__ = [
    "ApiOperationRefused", "SUBJECT_MODEL_FIELDS", "subject_model_create",
    "subject_model_update", "task_set_version_create",
]

#: The fields of a subject model the API may set. The API key itself is never stored: ``api_key_env``
#: names the environment variable the provider client reads it from.
SUBJECT_MODEL_FIELDS = (
    "display_name", "provider_id", "role", "family", "base_url", "api_key_env", "temperature", "max_tokens",
    "reasoning", "price_input_per_mtok", "price_output_per_mtok", "accepts_images",
)


class ApiOperationRefused(Exception):
    """A write the current state does not allow (``status``: 409 conflict unless said otherwise)."""

    def __init__(self, message: str, *, status: int = 409, code: str = "conflict", field: str = ""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.errors = {field: message} if field else None


@contextmanager
def _refused_when_taken(check: Callable[[], None]) -> Iterator[None]:
    """Writes under a unique name that ``check`` found free: when a request running at the same time took
    the name in between, the unique index refuses the write (IntegrityError, a 500) — ``check`` again,
    which then refuses it as the conflict it is. The writes must be in their own ``transaction.atomic``."""
    try:
        yield
    except IntegrityError:
        check()
        raise


def _version_free(name: str, version: str) -> None:
    if TaskSet.objects.filter(name=name, version=version).exists():
        raise ApiOperationRefused(f"{name} v{version} already exists", field="version")


def task_set_version_create(*, task_set: TaskSet, version: str, description: str | None = None) -> TaskSet:
    """A new, unfrozen version of ``task_set`` with a copy of its tasks (responses are imported anew)."""
    _version_free(task_set.name, version)
    with _refused_when_taken(lambda: _version_free(task_set.name, version)), transaction.atomic():
        new = TaskSet.objects.create(
            benchmark=task_set.benchmark, name=task_set.name, version=version, is_demo=task_set.is_demo,
            description=task_set.description if description is None else description,
        )
        Task.objects.bulk_create([
            Task(task_set=new, external_id=t.external_id, family=t.family, subtype=t.subtype, brief=t.brief,
                 constraints=t.constraints, source=t.source, position=t.position)
            for t in task_set.tasks.order_by("position", "external_id")
        ])
    return new


def _subject_model_saved(model: SubjectModel, *, update_fields: list[str] | None = None) -> SubjectModel:
    """``subject_model_save``, which checks a new or changed name under the catalogue's lock (the one gate:
    a request taking a look-alike name at the same time waits for it), its refusal as the conflict."""
    try:
        return subject_model_save(model=model, update_fields=update_fields)
    except SubjectModelNameRefused as exc:
        raise ApiOperationRefused(str(exc), field="display_name") from exc


@transaction.atomic
def subject_model_create(**values: Any) -> SubjectModel:
    return _subject_model_saved(SubjectModel(**{k: v for k, v in values.items() if k in SUBJECT_MODEL_FIELDS}))


@transaction.atomic
def subject_model_update(*, model: SubjectModel, **values: Any) -> SubjectModel:
    """Demo and simulated models are fixtures of the demo: they are not edited."""
    if model.is_demo or model.is_simulated:
        raise ApiOperationRefused(f"{model} is a demo or simulated model and is not edited")
    changed = [k for k in values if k in SUBJECT_MODEL_FIELDS]
    for key in changed:
        setattr(model, key, values[key])
    if changed:
        _subject_model_saved(model, update_fields=changed)
    return model

