"""The serializers every kind of run shares: its live status' common fields and the factories a protocol
names its run, progress and detail outputs with (:mod:`leaderboard.runs.api` serves them)."""

from __future__ import annotations

import copy

from rest_framework import serializers

from leaderboard.runs.models import RunJob


class RunProgressOutput(serializers.Serializer):
    """The fields of a job's live status that every kind shares (a protocol's progress adds its counters)."""

    status = serializers.CharField()
    error = serializers.CharField(allow_blank=True)
    may_resume = serializers.BooleanField(help_text="A failed run whose failure resuming can change: POST …/resume.")
    prompts_changed = serializers.CharField(
        allow_blank=True, help_text="Why a failed run is offered no resume although its failure could change: this "
                                    "code sends other prompt versions than it was made with (empty otherwise).")


def run_output(model: type[RunJob], *, fields: list[str]) -> type[serializers.ModelSerializer]:
    """``<Model>Output``: a run's ``fields``, its task set shown by id."""
    meta = type("Meta", (), {"model": model, "fields": fields})
    return type(f"{model.__name__}Output", (serializers.ModelSerializer,),
                {"task_set": serializers.IntegerField(source="task_set_id"), "Meta": meta})


def run_progress_output(name: str, *, counters: tuple[str, ...], doc: str | None = None,
                        **fields: serializers.Field) -> type[RunProgressOutput]:
    """A kind's live status: the shared fields, its ``counters`` (integers) and its own ``fields``, in this order."""
    counted = {counter: serializers.IntegerField() for counter in counters}
    return type(name, (RunProgressOutput,), {**counted, **_declared_after(fields), "__doc__": doc})


def run_detail_output(name: str, *, run: type[serializers.Serializer], progress: type[RunProgressOutput],
                      **fields: serializers.Field) -> type[serializers.Serializer]:
    """What a run's detail, create, resume and cancel answer: ``run``, ``progress`` and the kind's ``fields``."""
    shared = {"run": run(), "progress": progress()}
    return type(name, (serializers.Serializer,), {**shared, **_declared_after(fields), "__doc__": None})


def _declared_after(fields: dict[str, serializers.Field]) -> dict[str, serializers.Field]:
    """Copies of ``fields`` made now: a serializer orders its fields by when each was made, and the caller
    made these before the factory made the shared ones they follow."""
    return {name: copy.deepcopy(field) for name, field in fields.items()}
