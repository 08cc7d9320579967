"""Human annotation: campaigns, items, assignments and the labels of the five campaign kinds.

Ekphrasis App. H (text pairwise validation), App. G.7 (TIG checklist audit), App. I.2 (faithfulness
gate), App. I.3 (image-level preference) and App. J (adaptation strategy labels).

Models hold data and invariants only. Every invariant that can be stated row by row is a database
constraint, so no code path (admin, shell, a racing request) can break it:

* an item has exactly ``k`` :class:`ItemSlot` rows and a slot holds at most one *live* (active or
  submitted) assignment — so an item can never be over-assigned or collect more than ``k`` current
  labels, whatever the concurrency;
* an annotator holds at most one active assignment per campaign and sees an item at most once;
* a label belongs to exactly one assignment, is unique per (item, annotator, content hash), and its
  idempotency key is unique — re-sending a submission can never store a second label;
* scores, criterion codes, choices and the pass rule are check constraints.

The tables live in three modules: this one (campaigns, items and slots, assignments, adjudication,
calibration records), :mod:`annotation.label_models` (the label tables, one per kind, and their
revisions) and :mod:`annotation.panel_models` (crowd campaigns); the choices they share are in
:mod:`annotation.choices`. This module imports the label and panel modules, so that Django registers
their models with the app's; import each name from the module it lives in.

Business rules (who gets which item, expiry, counterbalancing, staleness, gold, adjudication) live
in :mod:`annotation.services`; reads in :mod:`annotation.selectors`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.choices import (
    CampaignKind,
    Dimension,
    choice_in,
)
from leaderboard.c2.models import C2Sample
from leaderboard.easel.models import EaselStep
from leaderboard.models import Render, Response, Task, TaskSet

# ---------------------------------------------------------------------------------------------------
# Campaigns
# ---------------------------------------------------------------------------------------------------


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft (not handed out)"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=150, unique=True)
    kind = models.CharField(max_length=32, choices=CampaignKind.choices)
    task_set = models.ForeignKey(TaskSet, on_delete=models.PROTECT, related_name="campaigns")
    instructions = models.TextField(
        blank=True, help_text="Shown to annotators. A Markdown subset: paragraphs, '- ' lists, **bold**, *italic*, '# ' headings."
    )
    k = models.PositiveSmallIntegerField(
        default=3, help_text="Annotators per item. Fixed once the campaign has items (each item gets k slots)."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="CampaignAnnotator", related_name="annotation_campaigns", blank=True
    )
    open_to_all_annotators = models.BooleanField(
        default=False, help_text="Open to every user with the annotator role, not only those listed."
    )
    gold_rate = models.FloatField(
        default=0.1, help_text="Share of an annotator's items that are gold items (when unseen gold items remain)."
    )
    show_brief = models.BooleanField(
        default=False, help_text="Image preference only: show the task brief beside the two images (App. I.3)."
    )
    assignment_ttl_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty: ATELIER_ASSIGNMENT_TTL_SECONDS."
    )
    is_demo = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Blinding of the texts annotators and participants read (name, instructions, calibration examples,
    # the crowd study's consent text and training questions), checked when written and again after the
    # catalogue changes (annotation.blinding_recheck.campaign_texts_current): the catalogue revision they
    # were last checked against, and the pause when the catalogue's names reach them.
    texts_blinding_revision = models.PositiveBigIntegerField(
        default=0, editable=False,
        help_text="The catalogue revision the campaign's shown texts were last checked against.",
    )
    texts_paused_at = models.DateTimeField(
        null=True, blank=True, editable=False,
        help_text="Paused for review: a shown text names a model added to the catalogue (or renamed) after it "
                  "was written. Annotators get no item and see no text of the campaign until it is resumed.",
    )
    texts_paused_reason = models.TextField(blank=True, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=choice_in("kind", CampaignKind), name="campaign_kind_known"),
            models.CheckConstraint(condition=Q(status__in=["draft", "open", "closed"]), name="campaign_status_known"),
            models.CheckConstraint(condition=Q(k__gte=1, k__lte=9), name="campaign_k_between_1_and_9"),
            models.CheckConstraint(condition=Q(gold_rate__gte=0.0, gold_rate__lte=0.5), name="campaign_gold_rate_in_range"),
            models.CheckConstraint(
                condition=Q(assignment_ttl_seconds__isnull=True) | Q(assignment_ttl_seconds__gte=30),
                name="campaign_ttl_at_least_30s",
            ),
        ]
        ordering = ["-created_at", "name"]

    def __str__(self) -> str:
        return self.name


class CampaignAnnotator(models.Model):
    """An annotator a campaign is open to. The row is also the lock that serialises one annotator's
    requests in one campaign (double clicks, retried requests)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="campaignannotator_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in {self.campaign}"


class CalibrationExample(models.Model):
    """A worked borderline case shown one key away from the labelling page (App. H.4)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="calibration_examples")
    position = models.PositiveSmallIntegerField(default=0)
    title = models.CharField(max_length=200)
    body = models.TextField(help_text="The case, in the instructions' Markdown subset.")
    expected = models.CharField(max_length=200, help_text="The expected label, e.g. 'B' or 'revise'.")
    explanation = models.TextField(blank=True)

    class Meta:
        ordering = ["campaign", "position", "pk"]

    def __str__(self) -> str:
        return self.title


# ---------------------------------------------------------------------------------------------------
# Items and slots
# ---------------------------------------------------------------------------------------------------


class Item(models.Model):
    """One thing to label. What it shows depends on the campaign kind (see ``annotation.kinds``).

    ``response_a``/``response_b`` and ``render_a``/``render_b`` are the *canonical* order; what an
    annotator sees as A and B is decided per assignment (``Assignment.swapped``). ``content_hash``
    pins exactly what is shown; labels carry the hash they were given under.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=200, help_text="Stable identifier within the campaign (JSONL imports).")
    position = models.PositiveIntegerField(default=0)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="+")
    dimension = models.CharField(max_length=16, blank=True, choices=Dimension.choices)
    response_a = models.ForeignKey(Response, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    response_b = models.ForeignKey(Response, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    render_a = models.ForeignKey(Render, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    render_b = models.ForeignKey(Render, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    c2_sample = models.ForeignKey(
        C2Sample, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="U-O-S rating: the divergent C² sample shown.",
    )
    easel_step_a = models.ForeignKey(
        EaselStep, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Canvas similarity: canonical canvas A; handwriting: the canvas shown.",
    )
    easel_step_b = models.ForeignKey(
        EaselStep, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Canvas similarity: canonical canvas B.",
    )
    payload = models.JSONField(
        default=dict, blank=True, help_text="Kind-specific shown content: checklist items, TIG item text and cluster summary."
    )
    sampling_stratum = models.CharField(
        max_length=40, blank=True, help_text="How the pair was sampled (App. H.5), e.g. top_bottom. Never shown to annotators."
    )
    content_hash = models.CharField(max_length=64)
    task_set_version = models.CharField(max_length=40)
    orientation = models.BooleanField(
        default=False, help_text="Random bit: whether slot 0 shows the canonical order swapped."
    )
    is_gold = models.BooleanField(default=False)
    gold_answer = models.JSONField(null=True, blank=True)
    blinding_revision = models.PositiveBigIntegerField(
        default=0, help_text="The catalogue revision whose model names the item's shown text was last checked against."
    )
    withheld_at = models.DateTimeField(
        null=True, blank=True,
        help_text="Set when the item was found to show a model's name after a catalogue change: never handed out "
        "again, out of the progress figures; its labels are kept.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "key"], name="item_key_unique_in_campaign"),
            models.CheckConstraint(condition=choice_in("dimension", Dimension, blank=True), name="item_dimension_known"),
            models.CheckConstraint(condition=Q(is_gold=False) | Q(gold_answer__isnull=False), name="item_gold_has_answer"),
            models.CheckConstraint(
                condition=Q(response_a__isnull=True) | Q(response_b__isnull=True) | ~Q(response_a=F("response_b")),
                name="item_responses_differ",
            ),
            models.CheckConstraint(
                condition=Q(render_a__isnull=True) | Q(render_b__isnull=True) | ~Q(render_a=F("render_b")),
                name="item_renders_differ",
            ),
            models.CheckConstraint(
                condition=Q(easel_step_a__isnull=True) | Q(easel_step_b__isnull=True) | ~Q(easel_step_a=F("easel_step_b")),
                name="item_easel_steps_differ",
            ),
            models.CheckConstraint(condition=~Q(content_hash=""), name="item_content_hash_set"),
            # What an assignment's one foreign key to its item references on PostgreSQL (migration 0026): the
            # assignment's campaign is its item's. Unique because ``id`` is.
            models.UniqueConstraint(fields=["id", "campaign"], name="item_identity"),
        ]
        indexes = [
            models.Index(fields=["campaign", "is_gold", "position"], name="item_campaign_gold_pos"),
            # The blinding sweep's items checked against an older catalogue: a range at the index's start.
            models.Index(fields=["blinding_revision"], name="item_blinding_revision"),
        ]
        ordering = ["campaign", "position", "pk"]

    def __str__(self) -> str:
        return f"{self.campaign} / {self.key}"


class ItemSlot(models.Model):
    """One of an item's ``k`` places for a label. A slot holds at most one live assignment (a partial
    unique index on Assignment), so an item can never be given to more than ``k`` annotators at once
    or keep more than ``k`` current labels. Slot parity fixes the A/B orientation (counterbalancing).

    The queue: ``is_free`` says that no live assignment holds the slot (and its item is not withheld for
    blinding: :mod:`annotation.blinding_recheck`). It is written by the services
    in the transaction that takes or frees the slot (never derived on read), and ``campaign`` and
    ``position`` copy the item's, so that the next free slot of a campaign is the first row of a small
    partial index (``itemslot_free_queue``) whatever the size of the campaign or of the others."""

    # no index of its own: itemslot_unique_index leads with the item (why: migration 0020)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="slots", db_index=False)
    index = models.PositiveSmallIntegerField()
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField(default=0, help_text="The item's position (queue order).")
    is_free = models.BooleanField(default=True, help_text="No live (active or submitted) assignment holds the slot.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "index"], name="itemslot_unique_index"),
            models.CheckConstraint(condition=Q(index__lte=8), name="itemslot_index_below_9"),
        ]
        indexes = [
            # Only free slots are indexed: the index shrinks as a campaign fills.
            models.Index(fields=["campaign", "position", "item", "index"], condition=Q(is_free=True),
                         name="itemslot_free_queue"),
        ]
        ordering = ["item", "index"]


class CampaignProgress(models.Model):
    """A campaign's progress counters, updated in the transactions that change them (a submission, a
    label going stale, items created or made gold), so that reading progress costs one row, not an
    aggregate over the campaign. ``labels`` counts the live submitted assignments of regular items,
    ``slots`` the regular items' slots (items × k). ``label_version`` grows on every change of the
    campaign's labels, items, skips or adjudications: the dashboards' cache key (see
    :mod:`annotation.dashboard_cache`)."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, primary_key=True, related_name="progress")
    slots = models.PositiveIntegerField(default=0)
    labels = models.PositiveIntegerField(default=0)
    label_version = models.PositiveBigIntegerField(default=0)
    item_version = models.PositiveBigIntegerField(
        default=0, help_text="Grows when items are created, changed, made gold or deleted (the dashboards' item cache)."
    )

    def __str__(self) -> str:
        return f"progress of {self.campaign_id}: {self.labels}/{self.slots}"


class AnnotatorProgress(models.Model):
    """One annotator's submitted (live) assignments in one campaign, gold included: the progress bar's
    *done*, kept as a counter in the submission's transaction."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    done = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="annotatorprogress_unique"),
        ]


# ---------------------------------------------------------------------------------------------------
# Assignments
# ---------------------------------------------------------------------------------------------------


class Assignment(models.Model):
    """An item handed to one annotator. ``token`` is the opaque id the annotator's page uses for
    everything (submission, media): it carries no item, response, render or model id."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"
        EXPIRED = "expired", "Expired (returned to the pool)"
        STALE = "stale", "Stale (the item's content changed)"

    LIVE = (Status.ACTIVE, Status.SUBMITTED)
    #: Statuses of an assignment the annotator has been shown (not expired, not stale).
    SEEN = (Status.ACTIVE, Status.SUBMITTED, Status.SKIPPED)

    # campaign, annotator: no index of their own; the two indexes below lead with them (migration 0020)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments", db_index=False)
    # no index of its own: ``assignment_identity`` leads with it (migration 0025)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments", db_index=False)
    slot = models.ForeignKey(ItemSlot, null=True, blank=True, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_assignments",
                                  db_index=False)
    #: Unique by assignment_token_unique, not ``unique=True`` (a second, LIKE-pattern index on PostgreSQL).
    token = models.CharField(max_length=48)
    swapped = models.BooleanField(help_text="True: the annotator saw the canonical B on the left, as 'A'.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    content_hash = models.CharField(max_length=64)
    task_set_version = models.CharField(max_length=40)
    media_sha256 = models.JSONField(default=dict, blank=True, help_text="Shown image slot ('a'/'b') -> SHA-256 of the bytes.")
    skip_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["active", "submitted", "skipped", "expired", "stale"]), name="assignment_status_known"
            ),
            # The over-assignment invariant: one live assignment per slot, k slots per item.
            models.UniqueConstraint(
                fields=["slot"], condition=Q(status__in=["active", "submitted"]), name="assignment_one_live_per_slot"
            ),
            # An annotator sees an item once (an expired or stale assignment may be handed out again).
            models.UniqueConstraint(
                fields=["item", "annotator"],
                condition=Q(status__in=["active", "submitted", "skipped"]),
                name="assignment_item_once_per_annotator",
            ),
            # One item at a time: double clicks and retried requests cannot open a second one. It holds
            # exactly the active rows, so it also serves the expiry sweep (migration 0021).
            models.UniqueConstraint(
                fields=["campaign", "annotator"], condition=Q(status="active"), name="assignment_one_active_per_annotator"
            ),
            models.CheckConstraint(condition=Q(expires_at__gt=F("created_at")), name="assignment_expires_after_creation"),
            # The token alone names the assignment (submission, media): never two alike.
            models.UniqueConstraint(fields=["token"], name="assignment_token_unique"),
            # What a label's one foreign key to its assignment references on PostgreSQL (migration 0025): the
            # label's item, campaign and annotator are its assignment's. Unique because ``id`` is; it leads
            # with the item, so it is also the index of the item's foreign key.
            models.UniqueConstraint(fields=["item", "id", "campaign", "annotator"], name="assignment_identity"),
        ]
        indexes = [
            models.Index(fields=["campaign", "status", "expires_at"], name="assignment_campaign_status_exp"),
            models.Index(fields=["annotator", "campaign", "status"], name="assignment_annotator_status"),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.status})"


# ---------------------------------------------------------------------------------------------------
# Adjudication
# ---------------------------------------------------------------------------------------------------


class Adjudication(models.Model):
    """A researcher's resolution of an item whose annotators reached no majority."""

    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="adjudication")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField()
    request_note = models.CharField(max_length=500, blank=True)
    # The longest outcome is a strategy item's: all seven codes joined by "+" (140 characters).
    outcome = models.CharField(max_length=200, blank=True, help_text="The resolved category; empty while open.")
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution_note = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(outcome="", resolved_by__isnull=True, resolved_at__isnull=True)
                | (~Q(outcome="") & Q(resolved_by__isnull=False, resolved_at__isnull=False)),
                name="adjudication_resolved_fields_together",
            ),
        ]

    def __str__(self) -> str:
        return f"adjudication of {self.item}"

    @property
    def is_resolved(self) -> bool:
        return bool(self.outcome)


class BlindingRefusal(models.Model):
    """An item refused because something it would show names a model (the admin's report of refused
    items; see :mod:`annotation.blinding`): at creation (``item`` empty: the item was never created), or
    withheld later, when a model added to the catalogue or renamed made its text name one (``item`` is the
    withheld item; :mod:`annotation.blinding_recheck`)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="blinding_refusals")
    item = models.ForeignKey(
        Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The item withheld after a catalogue change; empty when the item was refused at creation.",
    )
    item_key = models.CharField(max_length=200)
    line = models.PositiveIntegerField(default=0, help_text="Line of the import file; 0 when not from a file.")
    field = models.CharField(max_length=40, help_text="Where the name was found: response_a/b, render_a/b, task, payload.")
    identity = models.CharField(max_length=200, help_text="The identity string found.")
    response = models.ForeignKey("leaderboard.Response", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    message = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "pk"]
        verbose_name = "item refused for blinding"
        verbose_name_plural = "items refused for blinding"

    def __str__(self) -> str:
        return f"{self.campaign}: {self.item_key}"


class CalibrationRecord(models.Model):
    """The human-calibrated views of one leaderboard snapshot (issue 24) as computed from one campaign's
    labels at one ``label_version``: which labels were used, so the calibrated board stays
    reproducible after more labels arrive. Written once per (snapshot, campaign, label version, method
    version) by :func:`annotation.calibration.calibration_record_ensure`; the payload is the views' JSON.
    ``method_version`` is the engine's :data:`~engine.calibration_views.CALIBRATION_METHOD_VERSION` it was
    computed with: a board from older formulas is not read back, it is computed again."""

    snapshot = models.ForeignKey("leaderboard.LeaderboardSnapshot", on_delete=models.CASCADE, related_name="calibrations")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="calibrations")
    label_version = models.PositiveBigIntegerField(help_text="The campaign's label_version when computed.")
    n_labels = models.PositiveIntegerField(help_text="Current labels of the campaign the views used.")
    code_version = models.CharField(max_length=64, blank=True)
    method_version = models.PositiveIntegerField(
        default=0, help_text="The engine's CALIBRATION_METHOD_VERSION when computed (0: stored before it was recorded).")
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "campaign", "label_version", "method_version"],
                                    name="calibration_one_per_label_and_method_version"),
        ]

    def __str__(self) -> str:
        return f"snapshot {self.snapshot_id} calibrated by {self.campaign} (labels v{self.label_version})"


# The label tables and the crowd campaigns' live in their own modules; imported here so that Django registers
# them with the app's models. Import them from where they live.
import annotation.label_models  # noqa: E402, F401
import annotation.panel_models  # noqa: E402, F401
