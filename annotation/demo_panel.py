"""DEMO crowd study (issue 25): one text pairwise campaign opened to Prolific, with SIMULATED
participants in every state — in training, working (holding an item), completed, screened out,
returned, timed out and rejected — so the monitoring page, the pay report and the researcher's actions
show something. Everything is labelled: the campaign is ``is_demo`` and named "DEMO", the panel ids
start with ``DEMOSIM``, their labels carry ``is_simulated``. Idempotent unless ``reset``.

The simulated participants go through the same services as real ones (entry, consent, training,
next item, submission with an active time, leaving, verdicts); only their clock is simulated.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotation import item_creation, participants, services
from annotation.choices import CampaignKind, Dimension
from annotation.demo import _demo_launch_override
from annotation.models import Campaign
from annotation.panel_models import Participant
from annotation.panels import PanelEntry
from annotation.training import training_answer
from leaderboard.models import Response, TaskSet

# Annotators read a campaign's name, so it may not name a model: "simulated" is the C² demo models' family.
DEMO_PANEL_CAMPAIGN = "DEMO · Prolific study"
CONSENT = ("You are invited to judge pairs of short creative texts. It takes about ten minutes. Your answers are "
           "stored with your Prolific id only and used for research on how people judge originality.\n\n"
           "You may stop at any time by returning the study on Prolific.")
INSTRUCTIONS = ("Two responses answer the same brief. Press **A** or **B** for the one that is more *novel* "
                "(avoids the obvious idea), **T** when they are equally novel.")
TRAINING = (
    ("A: *a lighthouse made of folded receipts*. B: *a lighthouse*. Which is more novel?", ["A", "B", "tie"], "A",
     "B is the obvious image; A transforms it."),
    ("A: *a red apple*. B: *a red apple on a table*. Which is more novel?", ["A", "B", "tie"], "tie",
     "Neither avoids the obvious idea: equally (un)novel."),
)
#: Each simulated participant: how far they get. (panel id suffix, training answers per attempt, items, ending)
PLAN = (
    ("01", [["A", "tie"]], 3, "completed"),
    ("02", [["A", "tie"]], 3, "completed"),
    ("03", [["B", "A"], ["A", "B"]], 0, "screened_out"),
    ("04", [["A", "tie"]], 1, "returned"),
    ("05", [["A", "tie"]], 1, "timed_out"),
    ("06", [["A", "tie"]], 3, "rejected"),
    ("07", [["A", "tie"]], 1, "working"),
    ("08", [], 0, "training"),
)


@dataclass
class PanelDemoSummary:
    campaign: Campaign | None = None
    skipped: bool = False
    states: dict[str, int] = field(default_factory=dict)
    entry_path: str = ""


def _specs(task_set: TaskSet) -> list[item_creation.ItemSpec]:
    primaries = list(Response.objects.filter(task__task_set=task_set, is_primary=True)
                     .exclude(normalisation_method=Response.Normalisation.PENDING)
                     .select_related("task").order_by("task__position", "subject_model__display_name"))
    by_task: dict[int, list[Response]] = {}
    for response in primaries:
        by_task.setdefault(response.task_id, []).append(response)
    specs = []
    for group in by_task.values():
        for a, b in zip(group[::2], group[1::2]):
            specs.append(item_creation.ItemSpec(task=a.task, dimension=Dimension.NOVELTY, response_a=a, response_b=b,
                                           key=f"demo-panel-{a.pk}-{b.pk}"))
    return specs[:12]


def _simulate(study, rng: random.Random, researcher) -> None:
    clock = timezone.now() - timedelta(minutes=75)  # the last labels fall in the last hour: a projected completion
    for suffix, attempts, items, ending in PLAN:
        clock += timedelta(minutes=rng.randint(3, 9))
        person = participants.participant_enter(study=study, entry=PanelEntry(f"DEMOSIM{suffix}", "DEMOSTUDY",
                                                                              f"DEMOSESSION{suffix}"), now=clock).participant
        if ending == "training" and not attempts:
            participants.participant_consent(participant=person, now=clock)
            continue
        participants.participant_consent(participant=person, now=clock)
        participants.participant_instructions_read(participant=person, now=clock)
        for answers in attempts:
            for item, answer in zip(study.training_items.all(), answers):
                training_answer(participant=person, item_id=item.pk, answer=answer, now=clock)
        person.refresh_from_db()
        for n in range(items):
            handed = participants.participant_next(participant=person, now=clock)
            if handed is None:
                break
            seconds = rng.uniform(6, 25) if suffix != "06" else rng.uniform(0.6, 1.5)  # 06 clicks through
            clock += timedelta(seconds=seconds + rng.uniform(1, 5))
            participants.participant_label_submit(
                participant=person, token=handed.assignment.token, idempotency_key=uuid.uuid4(),
                answer={"choice": rng.choice(["A", "B", "tie"])}, active_ms=int(seconds * 1000), now=clock,
                is_simulated=True)
        person.refresh_from_db()
        if ending in ("returned", "timed_out"):
            participants.participant_next(participant=person, now=clock)  # holds an item when leaving
            participants.participant_leave(participant=person, state=ending, now=clock)
        elif ending == "working":
            participants.participant_next(participant=person, now=clock)
        elif ending == "rejected":
            participants.participant_verdict_set(participant=person, verdict="rejected", researcher=researcher,
                                                 note="DEMO: median active time under 2 s per item", now=clock)


@transaction.atomic
def panel_demo_load(*, task_set: TaskSet, seed: int = 7, reset: bool = False) -> PanelDemoSummary:
    """The DEMO crowd study on ``task_set`` (idempotent unless ``reset``)."""
    summary = PanelDemoSummary()
    existing = Campaign.objects.filter(name=DEMO_PANEL_CAMPAIGN, is_demo=True).first()
    if existing is not None and not reset:
        summary.campaign, summary.skipped = existing, True
        return summary
    if existing is not None:
        participants.participant_accounts_delete(campaigns=[existing])
        existing.delete()
    specs = _specs(task_set)
    if not specs:
        return summary
    campaign = services.campaign_create(name=DEMO_PANEL_CAMPAIGN, kind=CampaignKind.TEXT_PAIRWISE, task_set=task_set,
                                        instructions=INSTRUCTIONS, k=2, gold_rate=0.0, is_demo=True)
    item_creation.items_create(campaign=campaign, specs=specs, rng=random.Random(seed))
    _demo_launch_override(task_set)
    services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
    study = participants.panel_study_open(
        campaign=campaign, panel="prolific", consent_text=CONSENT, training_min_correct=2, item_quota=3,
        time_limit_minutes=60 * 24 * 365, completion_code="DEMODONE", screen_out_code="DEMOSCRN", bonus_per_item="0.10",
        bonus_min_gold_accuracy=None)
    for position, (question, choices, answer, why) in enumerate(TRAINING):
        participants.training_item_add(study=study, question=question, choices=choices, answer=answer, explanation=why,
                                       position=position)
    researcher = get_user_model().objects.filter(is_superuser=True).first() or _demo_researcher()
    _simulate(study, random.Random(seed), researcher)
    summary.campaign = campaign
    summary.entry_path = f"/annotate/p/{study.entry_token}/"
    for person in Participant.objects.filter(study=study):
        summary.states[person.monitoring_state] = summary.states.get(person.monitoring_state, 0) + 1
    return summary


def _demo_researcher():
    """A researcher account to record the demo's verdicts: an existing one, or the demo account
    ``researcher`` without a usable password (``make demo`` loads with ``--no-accounts``; serve_demo then
    gives every demo account a new password in the summary it prints last)."""
    from django.contrib.auth.models import Group

    from leaderboard.roles import RESEARCHER
    from leaderboard.services.catalogue import role_groups_ensure

    user = get_user_model().objects.filter(groups__name=RESEARCHER).first()
    if user is None:
        role_groups_ensure()
        user, created = get_user_model().objects.get_or_create(username="researcher")
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        user.groups.add(Group.objects.get(name=RESEARCHER))
    return user


__all__ = ["DEMO_PANEL_CAMPAIGN", "PanelDemoSummary", "panel_demo_load"]
