"""The training phase of a crowd campaign (issue 25): the study's training items, answered one at a
time with the explanation shown after each; an attempt passes with at least ``training_min_correct``
correct answers; after ``training_max_attempts`` failed attempts (default 2: Prolific's rule for a
comprehension check) the participant is screened out with the study's screen-out code.

A study without training items, or with a pass mark of 0, has no training: the participant goes from
the instructions straight to work.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.errors import ItemsInvalid, NotAllowed
from annotation.panel_models import PanelStudy, Participant, TrainingAnswer, TrainingItem


def training_required(study: PanelStudy) -> bool:
    return study.training_min_correct > 0 and study.training_items.exists()


@dataclass(frozen=True)
class TrainingStep:
    """Where a participant in training stands: the item to answer next (None: the attempt is complete),
    the attempt (1-based), its answers so far, and the pass mark."""

    attempt: int
    item: TrainingItem | None
    position: int
    n_items: int
    answered: list[TrainingAnswer]
    min_correct: int
    max_attempts: int

    @property
    def n_correct(self) -> int:
        return sum(1 for answer in self.answered if answer.correct)


def training_step(*, participant: Participant) -> TrainingStep:
    study = participant.study
    items = list(study.training_items.all())
    attempt = participant.training_attempts + 1
    answered = list(participant.training_answers.filter(attempt=attempt).select_related("item"))
    done = {answer.item_id for answer in answered}
    pending = [item for item in items if item.pk not in done]
    return TrainingStep(attempt, pending[0] if pending else None, len(done) + 1, len(items), answered,
                        study.training_min_correct, study.training_max_attempts)


@dataclass(frozen=True)
class TrainingFeedback:
    answer: TrainingAnswer
    #: "next" (more items in this attempt), "passed", "retry" (failed, attempts left) or "screened_out".
    outcome: str
    n_correct: int
    n_items: int
    #: Attempts still open after this one (on "retry").
    attempts_left: int = 0


def training_answer(*, participant: Participant, item_id: int, answer: str, attempt: int | None = None,
                    now: datetime | None = None) -> TrainingFeedback:
    """Grade one answer of the participant's current attempt; when it completes the attempt, pass the
    participant on to work, give them another attempt, or screen them out. Answering an item twice in
    one attempt keeps the first answer (a re-sent form). ``attempt``: the attempt the page's form was
    for (None: the current one); a form of an attempt that has closed since (the last answer sent twice)
    is that attempt's answer again, never an answer of the next attempt; any other attempt is refused."""
    now = now or timezone.now()
    with transaction.atomic():
        # Race prevented: two answers of one participant grading the same attempt twice.
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        if participant.state != Participant.State.TRAINING or participant.verdict:
            raise NotAllowed("You are not in the training.")
        if participant.instructions_read_at is None:
            raise NotAllowed("Read the instructions first.")
        item = TrainingItem.objects.filter(study=participant.study, pk=item_id).first()
        if item is None:
            raise ItemsInvalid([(0, "item", "no such training item")])
        if not isinstance(answer, str) or answer not in item.choices:
            raise ItemsInvalid([(0, "answer", "choose one of the answers offered")])
        current = participant.training_attempts + 1
        if attempt is not None and attempt != current:
            return _closed_attempt_feedback(participant, item, attempt, current)
        attempt = current
        try:
            with transaction.atomic():
                given = TrainingAnswer.objects.create(participant=participant, item=item, attempt=attempt, answer=answer,
                                                      correct=answer == item.answer, answered_at=now)
        except IntegrityError:
            given = TrainingAnswer.objects.get(participant=participant, item=item, attempt=attempt)
        step = training_step(participant=participant)
        if step.item is not None:
            return TrainingFeedback(given, "next", step.n_correct, step.n_items)
        study = participant.study
        participant.training_attempts = attempt
        if step.n_correct >= study.training_min_correct:
            participant.state, participant.training_passed_at = Participant.State.WORKING, now
            participant.save(update_fields=["training_attempts", "state", "training_passed_at"])
            return TrainingFeedback(given, "passed", step.n_correct, step.n_items)
        if attempt >= study.training_max_attempts:
            # Screened out: the screen-out code is theirs (Prolific pays screened-out participants for their time).
            participant.state, participant.finished_at = Participant.State.SCREENED_OUT, now
            participant.save(update_fields=["training_attempts", "state", "finished_at"])
            return TrainingFeedback(given, "screened_out", step.n_correct, step.n_items)
        participant.save(update_fields=["training_attempts"])
        return TrainingFeedback(given, "retry", step.n_correct, step.n_items, study.training_max_attempts - attempt)


def _closed_attempt_feedback(participant: Participant, item: TrainingItem, attempt: int, current: int) -> TrainingFeedback:
    """An answer sent again for an attempt that has closed: the feedback it had (the participant is still
    in training, so that attempt failed and they were given another)."""
    given = (TrainingAnswer.objects.filter(participant=participant, item=item, attempt=attempt).first()
             if 1 <= attempt < current else None)
    if given is None:
        raise ItemsInvalid([(0, "attempt", f"this answer is for attempt {attempt}, and attempt {current} is open: "
                                           "answer the question shown now")])
    n_correct = participant.training_answers.filter(attempt=attempt, correct=True).count()
    study = participant.study
    return TrainingFeedback(given, "retry", n_correct, study.training_items.count(),
                            study.training_max_attempts - attempt)


__all__ = ["TrainingFeedback", "TrainingStep", "training_answer", "training_required", "training_step"]
