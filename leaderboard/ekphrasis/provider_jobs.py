"""Jobs that call subject or helper models through their OpenAI-compatible
endpoints: generating responses (Ekphrasis App. A, C.2) and splitting the
answers the deterministic parser could not split (App. C.3).

Both are resumable by construction: every request goes through the
persistent request cache, so a re-run re-sends nothing already answered, and
what comes back lands through the same idempotent, validating import as a
file would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from leaderboard.ekphrasis.checklists import task_brief_of
from leaderboard.models import Response, SubjectModel, TaskSet
from leaderboard.providers import provider_client_for
from leaderboard.services.catalogue import ImportSummary, responses_import, subject_model_ensure


@dataclass
class GenerationReport:
    imported: ImportSummary
    failures: list[str] = field(default_factory=list)
    usage: dict = field(default_factory=dict)


def samples_check(samples: int) -> None:
    """Answers per task: at least one (sample 1 is the primary)."""
    if samples < 1:
        raise ValueError(f"samples must be at least 1; got {samples}")


def responses_generate(*, task_set: TaskSet, model: SubjectModel, samples: int = 3,
                       temperature: float = 0.7) -> GenerationReport:
    """Generate ``samples`` answers per task (sample 1 pre-registered as primary) and import them.

    ``samples`` below 1 or a temperature outside the protocol's range is a ValueError before any call."""
    from engine.generation import generate_samples
    from engine.providers.client import temperature_check

    samples_check(samples)
    temperature_check(temperature)

    client = provider_client_for(model, temperature=temperature, cache_name="generation")
    tasks = [task_brief_of(t) for t in task_set.tasks.order_by("position", "external_id")]
    generated = generate_samples(client, tasks, samples=samples, temperature=temperature)
    lines, failures = [], []
    for sample in generated:
        if sample.text is None:
            failures.append(f"{sample.task_id} sample {sample.sample}: {sample.error}")
            continue
        record = {"task_id": sample.task_id, "model": model.display_name, "sample": sample.sample, "text": sample.text}
        if sample.is_primary:
            record["primary"] = True
        lines.append(json.dumps(record, ensure_ascii=False))
    raw = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    summary = (
        responses_import(name=f"generation:{model.display_name}", raw=raw, task_set=task_set) if lines else ImportSummary()
    )
    return GenerationReport(summary, failures, client.usage.as_dict())


def responses_simulate(*, task_set: TaskSet, model_name: str, samples: int = 3) -> GenerationReport:
    """Answers of the labelled simulated subject ``model_name`` (``simulated-…``;
    :mod:`engine.simulated_subject`) for every task, sample 1 primary, imported through the same
    validating import as a provider's. The subject-model row is created on first use, flagged simulated."""
    from engine.simulated_subject import is_simulated_subject, simulated_answer

    samples_check(samples)
    if not is_simulated_subject(model_name):
        raise ValueError(f"{model_name!r} is not a simulated subject name (simulated-…)")
    subject_model_ensure(
        display_name=model_name, defaults={"role": SubjectModel.Role.SUBJECT, "is_simulated": True, "family": ""}
    )
    lines = []
    for task in task_set.tasks.order_by("position", "external_id"):
        for sample in range(1, samples + 1):
            core, visual = simulated_answer(task.brief, model=model_name, task_id=task.external_id, sample=sample)
            record = {"task_id": task.external_id, "model": model_name, "sample": sample,
                      "core_idea": core, "visual_description": visual}
            if sample == 1:
                record["primary"] = True
            lines.append(json.dumps(record, ensure_ascii=False))
    raw = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    summary = responses_import(name=f"simulated:{model_name}", raw=raw, task_set=task_set) if lines else ImportSummary()
    return GenerationReport(summary)


def responses_split_with_llm(*, task_set: TaskSet, splitter: SubjectModel) -> tuple[int, int]:
    """Split the responses waiting for the LLM splitter; returns (split, still pending)."""
    from engine.llm_splitter import split_many

    pending = list(Response.objects.filter(task__task_set=task_set, normalisation_method=Response.Normalisation.PENDING))
    if not pending:
        return 0, 0
    client = provider_client_for(splitter, cache_name="splitter")
    records = split_many(client, [r.raw_text for r in pending])
    split = 0
    now = timezone.now()
    with transaction.atomic():
        for response, record in zip(pending, records, strict=True):
            response.normalisation_attempts += record.attempts
            response.normalisation_model = record.extraction_model
            if record.ok:
                response.core_idea = record.idea or ""
                response.visual_description = record.visual_description or ""
                response.normalisation_method = Response.Normalisation.LLM
                response.normalised_at = record.extracted_at or now
                split += 1
        Response.objects.bulk_update(
            pending,
            ["core_idea", "visual_description", "normalisation_method", "normalised_at", "normalisation_attempts",
             "normalisation_model"],
        )
    return split, len(pending) - split
