"""Crowd campaigns (issue 25): a campaign opened to a recruitment panel (Prolific, MTurk, any panel that
appends its own id), the participants who arrive through its entry link, their training attempts and
the active time the page measured per item.

Data and invariants only; the rules are in :mod:`annotation.participants` (entry, path, leaving,
verdicts), :mod:`annotation.training`, :mod:`annotation.pay_report` and :mod:`annotation.panel_monitoring`.
Imported by :mod:`annotation.models` so that Django sees these models as the annotation app's.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower


class Panel(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "Amazon Mechanical Turk"
    GENERIC = "generic", "Generic panel (appends its own id parameter)"


class PanelStudy(models.Model):
    """A campaign opened to one panel: its entry link's token, the participant's path (consent,
    training, quota, time limit), the codes the panel expects back and the researcher's bonus rule."""

    campaign = models.OneToOneField("annotation.Campaign", on_delete=models.CASCADE, related_name="panel_study")
    panel = models.CharField(max_length=16, choices=Panel.choices)
    entry_token = models.CharField(
        max_length=64, unique=True, help_text="The unguessable part of the entry link (names no campaign id)."
    )
    id_param = models.CharField(
        max_length=32, default="pid", help_text="Generic panels: the query parameter that carries the participant's id."
    )
    #: Generic panels: the key of the HMAC the panel appends to each entry link (``sig``), made by the site
    #: (:func:`annotation.participants.panel_study_signing_set`). Empty: entries are not signed. Kept as it is
    #: given (an HMAC is checked with its key, so no digest of it would do); shown to the researcher once.
    entry_signing_secret = models.CharField(max_length=64, blank=True, editable=False)
    consent_text = models.TextField(blank=True, help_text="The consent page, in the instructions' Markdown subset.")
    training_min_correct = models.PositiveSmallIntegerField(
        default=0, help_text="Training items a participant must answer correctly in one attempt (pass mark)."
    )
    training_max_attempts = models.PositiveSmallIntegerField(
        default=2, help_text="Attempts at the training before a participant is screened out (Prolific: two)."
    )
    item_quota = models.PositiveIntegerField(
        null=True, blank=True, help_text="Items per participant (gold included); empty: until the campaign runs out."
    )
    time_limit_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Minutes from entry until a participant times out and their held item is released."
    )
    completion_code = models.CharField(max_length=32)
    screen_out_code = models.CharField(max_length=32)
    too_fast_ms = models.PositiveIntegerField(
        default=2000, help_text="An item answered with less active time than this is flagged as too fast."
    )
    bonus_per_item = models.DecimalField(
        max_digits=8, decimal_places=2, default=0, help_text="Suggested bonus per item labelled (panel currency)."
    )
    bonus_min_gold_accuracy = models.FloatField(
        null=True, blank=True, help_text="The bonus is suggested only at or above this gold accuracy (0–1); empty: always."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "panel studies"  # the admin's list, which the crowd study page and README name
        constraints = [
            models.CheckConstraint(condition=Q(panel__in=["prolific", "mturk", "generic"]), name="panelstudy_panel_known"),
            models.CheckConstraint(condition=Q(training_max_attempts__gte=1), name="panelstudy_at_least_one_attempt"),
            models.CheckConstraint(condition=~Q(completion_code=""), name="panelstudy_completion_code_set"),
            models.CheckConstraint(condition=~Q(screen_out_code=""), name="panelstudy_screen_out_code_set"),
            models.CheckConstraint(condition=~Q(completion_code=F("screen_out_code")), name="panelstudy_codes_differ"),
            models.CheckConstraint(
                condition=Q(item_quota__isnull=True) | Q(item_quota__gte=1), name="panelstudy_quota_positive"
            ),
            models.CheckConstraint(
                condition=Q(time_limit_minutes__isnull=True) | Q(time_limit_minutes__gte=1),
                name="panelstudy_time_limit_positive",
            ),
            models.CheckConstraint(
                condition=Q(bonus_min_gold_accuracy__isnull=True)
                | Q(bonus_min_gold_accuracy__gte=0.0, bonus_min_gold_accuracy__lte=1.0),
                name="panelstudy_bonus_accuracy_0_to_1",
            ),
            models.CheckConstraint(condition=Q(bonus_per_item__gte=0), name="panelstudy_bonus_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign} on {self.get_panel_display()}"


class TrainingItem(models.Model):
    """A training question with a known answer and the explanation shown after it is answered."""

    study = models.ForeignKey(PanelStudy, on_delete=models.CASCADE, related_name="training_items")
    position = models.PositiveSmallIntegerField(default=0)
    question = models.TextField(help_text="The question, in the instructions' Markdown subset.")
    choices = models.JSONField(help_text="The answers offered, a list of two or more short strings.")
    answer = models.CharField(max_length=200, help_text="The correct answer (one of the choices).")
    explanation = models.TextField(blank=True, help_text="Shown after the participant answers.")

    class Meta:
        ordering = ["study", "position", "pk"]

    def __str__(self) -> str:
        return f"training item {self.position} of {self.study}"


class Participant(models.Model):
    """Someone who arrived through a panel's entry link: an account scoped to this one campaign (no
    usable password; the entry link is the only way in), with the ids the panel sent."""

    class State(models.TextChoices):
        TRAINING = "training", "Training (consent, instructions, training items)"
        WORKING = "working", "Working"
        COMPLETED = "completed", "Completed"
        SCREENED_OUT = "screened_out", "Screened out (failed the training)"
        RETURNED = "returned", "Returned (left through the panel)"
        TIMED_OUT = "timed_out", "Timed out"
        #: The campaign closed while they were still in consent, instructions or training (or at work with
        #: nothing done): no code, since a code would be full pay for no work; they are told to return the
        #: submission / HIT, and the pay report lists their time for a bonus.
        CLOSED_BEFORE_WORK = "closed_before_work", "Closed before their work began"

    class Verdict(models.TextChoices):
        NONE = "", "None"
        REJECTED = "rejected", "Rejected"
        BLOCKED = "blocked", "Blocked"

    #: States in which a participant has left and holds nothing.
    LEFT = (State.RETURNED, State.TIMED_OUT)

    study = models.ForeignKey(PanelStudy, on_delete=models.CASCADE, related_name="participants")
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="participants")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="panel_participant")
    panel_id = models.CharField(max_length=64, help_text="PROLIFIC_PID, MTurk workerId or the generic panel's id, "
                                                         "as the panel first sent it (the one to pay).")
    #: What identifies the person (annotation.panels.panel_id_key: trimmed, lower case): the same id in
    #: another case is the same participant, so uniqueness and look-ups go by this, never by ``panel_id``.
    #: A participant made before ids were matched this way, whose id differs only in case from an earlier
    #: participant's of the same campaign, holds ``<key>~<pk>`` (migration 0013): kept and paid as before,
    #: but no entry resolves to it ('~' is never in an id).
    panel_key = models.CharField(max_length=80)
    panel_study_id = models.CharField(max_length=64, blank=True, help_text="Prolific STUDY_ID; MTurk hitId.")
    panel_session_id = models.CharField(max_length=64, blank=True, help_text="Prolific SESSION_ID; MTurk assignmentId.")
    turk_submit_to = models.CharField(max_length=200, blank=True)
    #: SHA-256 (hex) of the key the browser they entered in holds (a cookie on the study's entry link): the id
    #: alone does not resume them elsewhere (:func:`annotation.participants.participant_enter`). Empty: made
    #: before browsers were bound.
    browser_key_hash = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=24, choices=State.choices, default=State.TRAINING)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, default=Verdict.NONE, blank=True)
    verdict_note = models.CharField(max_length=500, blank=True)
    verdict_at = models.DateTimeField(null=True, blank=True)
    #: The state before a verdict or a return, restored when the researcher takes the verdict back.
    state_before = models.CharField(max_length=24, blank=True)
    entered_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    consented_at = models.DateTimeField(null=True, blank=True)
    instructions_read_at = models.DateTimeField(null=True, blank=True)
    training_attempts = models.PositiveSmallIntegerField(default=0, help_text="Training attempts finished.")
    training_passed_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True, help_text="Entry + the study's time limit.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "panel_key"], name="participant_one_per_panel_key"),
            models.CheckConstraint(condition=Q(panel_key=Lower("panel_id")) | Q(panel_key__contains="~"),
                                   name="participant_panel_key_is_lowered_id"),
            models.CheckConstraint(
                condition=Q(state__in=["training", "working", "completed", "screened_out", "returned", "timed_out",
                                       "closed_before_work"]),
                name="participant_state_known",
            ),
            models.CheckConstraint(condition=Q(verdict__in=["", "rejected", "blocked"]), name="participant_verdict_known"),
            models.CheckConstraint(condition=~Q(panel_id=""), name="participant_panel_id_set"),
            models.CheckConstraint(
                condition=Q(verdict="", verdict_at__isnull=True) | (~Q(verdict="") & Q(verdict_at__isnull=False)),
                name="participant_verdict_dated",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "state"], name="participant_campaign_state"),
            # The counted-labels filter reads the excluded participants of one campaign.
            models.Index(fields=["campaign"], condition=~Q(verdict=""), name="participant_excluded"),
        ]
        ordering = ["campaign", "entered_at", "pk"]

    def __str__(self) -> str:
        return f"{self.panel_id} in {self.campaign_id} ({self.state})"

    @property
    def monitoring_state(self) -> str:
        """The state the monitoring page counts: a verdict overrides the path's state."""
        return "rejected" if self.verdict else self.state


class TrainingAnswer(models.Model):
    """One answer of one training attempt, graded when given."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="training_answers")
    item = models.ForeignKey(TrainingItem, on_delete=models.CASCADE, related_name="+")
    attempt = models.PositiveSmallIntegerField(help_text="1 for the first attempt.")
    answer = models.CharField(max_length=200)
    correct = models.BooleanField()
    answered_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "attempt", "item"], name="traininganswer_once_per_attempt"),
            models.CheckConstraint(condition=Q(attempt__gte=1), name="traininganswer_attempt_from_1"),
        ]
        ordering = ["participant", "attempt", "item__position", "item_id"]


class ItemActiveTime(models.Model):
    """The active time a participant's page measured on one item (visible, focused and with input in
    the last moments), as sent with the label and clamped by the server to the wall time the item was
    held (``reported_ms`` keeps what the page said)."""

    assignment = models.OneToOneField("annotation.Assignment", on_delete=models.CASCADE, related_name="active_time")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="item_times")
    active_ms = models.PositiveIntegerField()
    reported_ms = models.PositiveIntegerField()
    wall_ms = models.PositiveIntegerField()
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(active_ms__lte=F("wall_ms")), name="itemactivetime_within_wall_time"),
            models.CheckConstraint(condition=Q(active_ms__lte=F("reported_ms")), name="itemactivetime_at_most_reported"),
        ]


class BlockedPanelId(models.Model):
    """A panel id a researcher blocked (issue 25): unlike a rejection, which ends the participant's work
    in one campaign, a block also bars that panel id from entering any other campaign of the site opened
    to the same panel. One record per blocked participant; taking the block back deletes it."""

    participant = models.OneToOneField(Participant, on_delete=models.CASCADE, related_name="block")
    panel = models.CharField(max_length=16, choices=Panel.choices)
    panel_id = models.CharField(max_length=64)
    #: The blocked id's :func:`annotation.panels.panel_id_key`: entry checks this, so a change of case
    #: does not lift a block.
    panel_key = models.CharField(max_length=80)
    blocked_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["panel", "panel_key"], name="blockedpanelid_key_lookup")]

    def __str__(self) -> str:
        return f"{self.panel} {self.panel_id} blocked"
