"""Generating C² samples: the subject models' answers and, after each convergent answer, their
confidence in the same conversation (c2-eval.txt §3.2.1, Xiong et al. 2023).

A subject is chosen by name. ``simulated`` or ``simulated-<anything>`` is the engine's labelled
:class:`~engine.c2.simulated.SimulatedSubject` (and only those names are); any other name is a
``SubjectModel`` reached through the one provider client (:func:`leaderboard.providers.provider_client_for`)
with the versioned templates of :mod:`engine.c2.prompts`. Visual tasks send the task's image as a
``data:`` URL; a model is multimodal when its ``SubjectModel.accepts_images`` is set.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from engine.c2 import prompts
from engine.c2.simulated import SimulatedSubject, SubjectProfile
from engine.c2.tasks import C2TaskType
from engine.providers.client import ChatRequest, ProviderError
from leaderboard.c2.models import C2Run, C2Sample, C2TaskImage
from leaderboard.c2.services.grading import engine_item_of
from leaderboard.models import SubjectModel, Task
from leaderboard.providers import provider_client_for
from leaderboard.run_usage import client_usage_take
from leaderboard.runs.errors import ProviderCallsUnanswered, provider_outage_of

SIMULATED_PREFIX = "simulated"
#: The confidence question is asked deterministically: it reads the model's belief, not a new sample.
CONFIDENCE_TEMPERATURE = 0.0


def subject_is_simulated(name: str) -> bool:
    return name == SIMULATED_PREFIX or name.startswith(f"{SIMULATED_PREFIX}-")


def image_data_url(image: C2TaskImage) -> str:
    """The image as an RFC 2397 ``data:`` URL, the form OpenAI-compatible chat APIs take in ``image_url``."""
    return f"data:{image.content_type};base64,{base64.b64encode(bytes(image.data)).decode('ascii')}"


@dataclass(frozen=True)
class Reply:
    """One answer (or confidence reply) of a subject; ``text`` None when the call failed."""

    text: str | None
    error: str = ""


@dataclass
class SampleJob:
    """What a subject needs to answer one planned sample."""

    sample: C2Sample
    task: Task
    image_url: str | None

    @property
    def task_type(self) -> C2TaskType:
        return C2TaskType(self.task.family)


def generation_messages_of(run: C2Run, job: SampleJob) -> list[dict]:
    return prompts.generation_messages(
        job.task_type, run.template, job.task.brief,
        starter_code=job.task.constraints.get("starter_code") or None, image_data_url=job.image_url,
    )


def _sample_key(run: C2Run, job: SampleJob, stage: str) -> str:
    # n samples of one prompt must not collapse into one cached request; two runs with the same
    # seed and template are replicates and share answers
    return f"c2:{stage}:{run.template}:{run.seed}:{job.sample.sample_index}"


class ProviderSubject:
    """A subject model behind an OpenAI-compatible endpoint."""

    is_simulated = False

    def __init__(self, model: SubjectModel, run: C2Run) -> None:
        self.run, self.name = run, model.display_name
        self.client = provider_client_for(model, temperature=run.temperature, cache_name="c2")
        # the model's own temperature, when its row sets one, else the run's (recorded per sample)
        self.temperature = self.client.config.temperature

    def answers(self, jobs: list[SampleJob]) -> list[Reply]:
        requests = [
            ChatRequest(messages=generation_messages_of(self.run, job), temperature=self.temperature,
                        sample_index=_sample_key(self.run, job, "answer"))
            for job in jobs
        ]
        return self._replies(requests)

    def confidences(self, jobs: list[SampleJob]) -> list[Reply]:
        """The confidence question in the same conversation as each job's stored answer."""
        requests = [
            ChatRequest(
                messages=prompts.confidence_messages(generation_messages_of(self.run, job), job.sample.text),
                temperature=CONFIDENCE_TEMPERATURE, sample_index=_sample_key(self.run, job, "confidence"),
            )
            for job in jobs
        ]
        return self._replies(requests)

    def _replies(self, requests: list[ChatRequest]) -> list[Reply]:
        """The batch's replies; an outage (no answer past the client's retries) stops the batch unstored
        rather than recording its samples as failed: resumed, it asks again (answered calls come from the cache)."""
        outcomes = self.client.chat_many(requests)
        outage = provider_outage_of(outcomes)
        if outage is not None:
            raise ProviderCallsUnanswered(outage, who=f"subject model {self.name!r}")
        return [_reply(outcome) for outcome in outcomes]

    def usage(self) -> dict:
        return client_usage_take(self.client)


def _reply(outcome) -> Reply:
    if isinstance(outcome, ProviderError):
        return Reply(None, error=str(outcome)[:2000])
    return Reply(outcome.text)


class SimulatedSubjectAdapter:
    """The engine's labelled simulated subject: deterministic per (model, prompt, sample index, seed),
    with the profile the run's ``config["simulated_subjects"][name]`` gives (the engine's default otherwise)."""

    is_simulated = True

    def __init__(self, name: str, run: C2Run) -> None:
        profile = SubjectProfile(**(run.config.get("simulated_subjects") or {}).get(name, {}))
        self.subject = SimulatedSubject(name, profile, seed=run.seed, template=run.template)
        self.temperature = run.temperature  # recorded only: the simulated subject does not sample

    def _sample(self, job: SampleJob):
        return self.subject.sample(engine_item_of(job.task), job.sample.sample_index)

    def answers(self, jobs: list[SampleJob]) -> list[Reply]:
        return [Reply(self._sample(job).text) for job in jobs]

    def confidences(self, jobs: list[SampleJob]) -> list[Reply]:
        return [Reply(self._sample(job).confidence_text) for job in jobs]

    def usage(self) -> dict:
        return {}


def subject_for(model: SubjectModel, run: C2Run):
    if subject_is_simulated(model.display_name):
        return SimulatedSubjectAdapter(model.display_name, run)
    return ProviderSubject(model, run)
