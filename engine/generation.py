"""Subject-model generation with the Ekphrasis family templates (App. A, App. C.2).

Every task is one of four families — Abstraction, Combination, Transformation,
Adaptation — and every answer has the unified output format of App. A: exactly
two labelled blocks, a one-sentence **Core Idea** (carrier, metaphor or
mechanism, and key state or action; not colour, lighting or atmosphere) and a
100–140-word **Visual Description** (only what is literally visible in one
static frame, with colour, light, texture and mood bound to named elements).
A valid answer describes one static image and names no tools, renderer
parameters, multi-image sequences or prompt syntax (Definition 2, §3.2).

Defaults follow App. C.2: temperature 0.7, three samples per model–task,
sample 1 pre-registered as the primary (official) output. Samples are numbered
1..n and the number is the cache ``sample_index``, so a resumed run re-sends
only the samples never answered.

API::

    task = TaskBrief(task_id="abs-017", family=Family.ABSTRACTION,
                     brief=family_brief(Family.ABSTRACTION, concept="time passing"))
    messages = generation_messages(task)
    samples = generate_samples(client, [task])      # -> list[GeneratedSample], 3 per task
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine.providers.client import ChatRequest, ChatResult, OpenAICompatibleClient, ProviderError

__all__ = [
    "GENERATION_TEMPERATURE",
    "PRIMARY_SAMPLE",
    "SAMPLES_PER_TASK",
    "Family",
    "GeneratedSample",
    "TaskBrief",
    "family_brief",
    "generate_samples",
    "generation_messages",
    "generation_prompt",
    "generation_requests",
]

GENERATION_TEMPERATURE = 0.7
SAMPLES_PER_TASK = 3
PRIMARY_SAMPLE = 1


class Family(StrEnum):
    """The four task families of App. A; values match the task records."""

    ABSTRACTION = "abstraction"
    COMBINATION = "combination"
    TRANSFORMATION = "transformation"
    ADAPTATION = "adaptation"


@dataclass(frozen=True)
class TaskBrief:
    """A task as the prompts need it: b = (x, τ, C) of §3.1 — family, brief text, constraints.

    ``constraints`` is the task record's constraint mapping (audience, medium,
    domain, ...) or a sequence of constraint sentences.
    """

    task_id: str
    family: Family
    brief: str
    constraints: Mapping[str, Any] | Sequence[str] = field(default_factory=dict)
    subtype: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "family", Family(self.family))
        if not self.brief.strip():
            raise ValueError(f"task {self.task_id} has an empty brief")

    def constraint_lines(self) -> list[str]:
        """The constraints as display lines, in a stable order."""
        if isinstance(self.constraints, Mapping):
            lines = []
            for name, value in self.constraints.items():
                if value in (None, "", [], {}):
                    continue
                if isinstance(value, (list, tuple)):
                    value = "; ".join(str(v) for v in value)
                lines.append(f"{str(name).replace('_', ' ').capitalize()}: {value}")
            return lines
        return [str(line) for line in self.constraints if str(line).strip()]


# App. A: the family-specific line of each template (besides the brief itself).
FAMILY_REQUIREMENT = {
    Family.ABSTRACTION: (
        "Express the abstract concept through a visible object, scene, relation, or action, "
        "not through text in the image."
    ),
    Family.COMBINATION: "Constraint: Both source concepts must jointly participate in structure, function, or form.",
    Family.TRANSFORMATION: (
        "Constraint: The condition should reshape the object itself rather than merely decorate it "
        "or provide a background."
    ),
    Family.ADAPTATION: (
        "Constraints: Satisfy all explicit audience, medium, domain, and communication constraints."
    ),
}

OUTPUT_FORMAT = (
    "Output: Give exactly two labeled blocks: Core Idea and Visual Description.\n"
    "Core Idea: one sentence stating the visual metaphor, carrier, state, or action. "
    "Do not spend it on color, lighting, or atmosphere.\n"
    "Visual Description: 100–140 words stating only what is literally visible in a single static frame, "
    "binding color, light, texture, and mood to named elements.\n"
    "Describe exactly one static image. Do not name tools or renderers, give renderer parameters, "
    "describe several images or a sequence, or write prompt-engineering syntax.\n\n"
    "Answer in this form:\n"
    "Core Idea: ...\n"
    "Visual Description: ..."
)


def family_brief(family: Family | str, **source: str) -> str:
    """The App. A brief sentence of ``family`` from its source structure S_t.

    Abstraction: ``concept``; Combination: ``first``, ``second``;
    Transformation: ``object``, ``condition``; Adaptation: ``situation``.
    """
    family = Family(family)
    try:
        if family is Family.ABSTRACTION:
            return f"Design a visual concept that expresses the abstract concept “{source['concept']}”."
        if family is Family.COMBINATION:
            return f"Fuse {source['first']} and {source['second']} into one coherent visual entity."
        if family is Family.TRANSFORMATION:
            return f"Re-present {source['object']} under the transformation condition: {source['condition']}."
        return f"Produce a visual deliverable for the applied situation: {source['situation']}."
    except KeyError as missing:
        raise ValueError(f"{family.value} brief needs source field {missing}") from None


def generation_prompt(task: TaskBrief) -> str:
    """The user prompt of App. A for ``task``: task type, brief, constraints, family line, output format."""
    lines = [f"Task Type: {task.family.value.capitalize()}", f"Brief: {task.brief.strip()}"]
    constraints = task.constraint_lines()
    if constraints:
        lines.append("Task constraints:")
        lines.extend(f"- {line}" for line in constraints)
    lines.append(FAMILY_REQUIREMENT[task.family])
    lines.append("")
    lines.append(OUTPUT_FORMAT)
    return "\n".join(lines)


def generation_messages(task: TaskBrief) -> list[dict[str, str]]:
    """Chat messages for one generation call (a single user turn; no system prompt, identical for every model)."""
    return [{"role": "user", "content": generation_prompt(task)}]


def generation_requests(
    task: TaskBrief,
    *,
    samples: int = SAMPLES_PER_TASK,
    temperature: float = GENERATION_TEMPERATURE,
    max_tokens: int | None = None,
) -> list[ChatRequest]:
    """One request per sample, numbered 1..``samples`` through ``sample_index``."""
    messages = generation_messages(task)
    return [
        ChatRequest(messages=messages, temperature=temperature, max_tokens=max_tokens, sample_index=sample)
        for sample in range(1, samples + 1)
    ]


@dataclass(frozen=True)
class GeneratedSample:
    """One sample of one task by the client's model; ``text`` is None when the call failed."""

    task_id: str
    sample: int
    is_primary: bool
    text: str | None
    result: ChatResult | None
    error: str | None = None

    @property
    def truncated(self) -> bool:
        """The provider stopped at the token limit."""
        return self.result is not None and self.result.finish_reason == "length"


def generate_samples(
    client: OpenAICompatibleClient,
    tasks: Sequence[TaskBrief],
    *,
    samples: int = SAMPLES_PER_TASK,
    temperature: float = GENERATION_TEMPERATURE,
    max_tokens: int | None = None,
) -> list[GeneratedSample]:
    """Run the client's model on ``tasks``, ``samples`` each, concurrently; failures are returned, not raised."""
    requests: list[ChatRequest] = []
    owners: list[tuple[str, int]] = []
    for task in tasks:
        for request in generation_requests(
            task, samples=samples, temperature=temperature, max_tokens=max_tokens
        ):
            requests.append(request)
            owners.append((task.task_id, request.sample_index))
    outcomes = client.chat_many(requests)
    generated = []
    for (task_id, sample), outcome in zip(owners, outcomes):
        if isinstance(outcome, ProviderError):
            generated.append(
                GeneratedSample(task_id, sample, sample == PRIMARY_SAMPLE, None, None, outcome.message)
            )
        else:
            generated.append(
                GeneratedSample(task_id, sample, sample == PRIMARY_SAMPLE, outcome.text, outcome)
            )
    return generated
