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

Business rules (who gets which item, expiry, counterbalancing, staleness, gold, adjudication) live
in :mod:`annotation.services`; reads in :mod:`annotation.selectors`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from leaderboard.c2.models import C2Sample
from leaderboard.easel.models import EaselStep
from leaderboard.models import Render, Response, Task, TaskSet


class CampaignKind(models.TextChoices):
    TEXT_PAIRWISE = "text_pairwise", "Text pairwise (App. H)"
    TIG_AUDIT = "tig_audit", "TIG checklist audit (App. G.7)"
    FAITHFULNESS = "faithfulness", "Faithfulness gate (App. I.2)"
    IMAGE_PREFERENCE = "image_preference", "Image preference (App. I.3)"
    STRATEGY = "strategy", "Adaptation strategy labels (App. J)"
    UOS_RATING = "uos_rating", "C² U-O-S rating (c2-eval §3.2.2)"
    CANVAS_SIMILARITY = "canvas_similarity", "EASEL canvas similarity (easel Eq. 1)"
    HANDWRITING = "handwriting", "EASEL handwriting reading (easel §3.3)"


class Dimension(models.TextChoices):
    """The dimension an item asks about (Ekphrasis §3.2, App. H.1); image preference is one overall
    judgment (App. I.3)."""

    USEFULNESS = "usefulness", "Usefulness"
    EXPRESSIVENESS = "expressiveness", "Expressiveness"
    NOVELTY = "novelty", "Novelty"
    OVERALL = "overall", "Overall visual preference"


class PairChoice(models.TextChoices):
    A = "A", "A"
    B = "B", "B"
    TIE = "tie", "Tie"


class FlagReason(models.TextChoices):
    """Why a record needs later review (Ekphrasis App. H.3). A flag is not a fourth label."""

    MISSING_OR_TRUNCATED = "missing_or_truncated", "Missing or truncated response"
    FIELD_DIMENSION_MISMATCH = "field_dimension_mismatch", "Field–dimension mismatch"
    AMBIGUOUS_BRIEF = "ambiguous_brief", "Ambiguous brief"
    CHECKLIST_TASK_MISMATCH = "checklist_task_mismatch", "Checklist/task mismatch"
    DUPLICATION_OR_IDENTITY_LEAK = "duplication_or_identity_leak", "Suspected A/B duplication or identity leakage"
    NOT_ONE_STATIC_IMAGE = "not_one_static_image", "Not one static image"
    TIG_AUDIT_FAILURE = "tig_audit_failure", "TIG item fails an audit criterion"
    TRANSLATION_PROBLEM = "translation_problem", "Translation problem"


class AuditCode(models.TextChoices):
    """The four codes every TIG audit criterion uses (Ekphrasis App. G.7, Table 15)."""

    PASS = "pass", "Pass"
    PARTIAL = "partial", "Partial"
    FAIL = "fail", "Fail"
    NOT_ENOUGH_EVIDENCE = "not_enough_evidence", "Not enough evidence"


class AuditAction(models.TextChoices):
    ACCEPT = "accept", "Accept"
    REVISE = "revise", "Revise"
    EXCLUDE = "exclude", "Exclude"


class StrategyRole(models.TextChoices):
    """Whether an adaptation strategy is used, and how (Ekphrasis App. J.3)."""

    ABSENT = "absent", "Absent"
    CENTRAL = "central", "Central"
    INCIDENTAL = "incidental", "Incidental"


def _in(field: str, choices: type[models.TextChoices], *, blank: bool = False) -> Q:
    values = list(choices.values) + ([""] if blank else [])
    return Q(**{f"{field}__in": values})


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
            models.CheckConstraint(condition=_in("kind", CampaignKind), name="campaign_kind_known"),
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
            models.CheckConstraint(condition=_in("dimension", Dimension, blank=True), name="item_dimension_known"),
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
# Labels
# ---------------------------------------------------------------------------------------------------


class Label(models.Model):
    """What every label shares: its assignment, idempotency key, the content hash and task-set
    version it was given under, staleness, time on item, an optional flag with a note, and its
    version (an annotator may change their most recent label: :mod:`annotation.label_revision`)."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="%(class)s")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    # no index of its own: the one-per-annotator-item unique constraint leads with it (migration 0020)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="%(class)ss", db_index=False)
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    idempotency_key = models.UUIDField(unique=True)
    content_hash = models.CharField(max_length=64)
    task_set_version = models.CharField(max_length=40)
    is_stale = models.BooleanField(default=False, help_text="The item's content changed after this label was given.")
    is_simulated = models.BooleanField(default=False, help_text="Written by a simulated annotator (demo data).")
    flag_reason = models.CharField(max_length=40, blank=True, choices=FlagReason.choices)
    flag_note = models.CharField(max_length=500, blank=True)
    time_on_item_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()
    version = models.PositiveIntegerField(
        default=1, help_text="1 as first given; one more at each change by its annotator (the superseded versions "
        "are LabelRevision rows). The fields hold the current version."
    )
    revised_at = models.DateTimeField(null=True, blank=True, help_text="When the current version replaced the one before.")

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=Q(version=1, revised_at__isnull=True) | Q(version__gt=1, revised_at__isnull=False),
                name="%(app_label)s_%(class)s_version_revised_together",
            ),
            models.UniqueConstraint(
                fields=["item", "annotator", "content_hash"], name="%(app_label)s_%(class)s_one_per_annotator_item"
            ),
            models.CheckConstraint(condition=_in("flag_reason", FlagReason, blank=True), name="%(app_label)s_%(class)s_flag_known"),
            models.CheckConstraint(condition=Q(flag_reason="") | ~Q(flag_note=""), name="%(app_label)s_%(class)s_flag_has_note"),
            models.CheckConstraint(
                condition=Q(time_on_item_ms__isnull=True) | Q(time_on_item_ms__lte=24 * 3600 * 1000),
                name="%(app_label)s_%(class)s_time_under_a_day",
            ),
        ]


class PairwiseLabel(Label):
    """A/B/tie preference (App. H text pairwise; App. I.3 image preference).

    ``shown_choice`` is the key the annotator pressed in the order they saw; ``choice`` is the same
    preference in the item's canonical order (``response_a``/``render_a`` = A). The check constraint
    makes the mapping through ``swapped`` impossible to get wrong.
    """

    shown_choice = models.CharField(max_length=3, choices=PairChoice.choices)
    choice = models.CharField(max_length=3, choices=PairChoice.choices)
    swapped = models.BooleanField()

    class Meta(Label.Meta):
        constraints = Label.Meta.constraints + [
            models.CheckConstraint(condition=_in("shown_choice", PairChoice), name="pairwiselabel_shown_choice_known"),
            models.CheckConstraint(
                condition=Q(swapped=False, choice=F("shown_choice"))
                | Q(swapped=True, shown_choice="tie", choice="tie")
                | Q(swapped=True, shown_choice="A", choice="B")
                | Q(swapped=True, shown_choice="B", choice="A"),
                name="pairwiselabel_choice_maps_through_swap",
            ),
        ]


TIG_CRITERIA = ("cluster_validity", "visual_specificity", "faithfulness", "non_leakage", "usefulness_for_judging")


class TigAuditLabel(Label):
    """A TIG Novelty checklist item audited on five criteria with an overall action (App. G.7)."""

    cluster_validity = models.CharField(max_length=24, choices=AuditCode.choices)
    visual_specificity = models.CharField(max_length=24, choices=AuditCode.choices)
    faithfulness = models.CharField(max_length=24, choices=AuditCode.choices)
    non_leakage = models.CharField(max_length=24, choices=AuditCode.choices)
    usefulness_for_judging = models.CharField(max_length=24, choices=AuditCode.choices)
    overall_action = models.CharField(max_length=8, choices=AuditAction.choices)
    revision_note = models.TextField(blank=True)

    class Meta(Label.Meta):
        constraints = Label.Meta.constraints + [
            models.CheckConstraint(condition=_in(name, AuditCode), name=f"tigauditlabel_{name}_known") for name in TIG_CRITERIA
        ] + [
            models.CheckConstraint(condition=_in("overall_action", AuditAction), name="tigauditlabel_action_known"),
            models.CheckConstraint(
                condition=~Q(overall_action="revise") | ~Q(revision_note=""), name="tigauditlabel_revise_has_note"
            ),
        ]


HARD_FAIL_REASONS = (
    "major_semantic_drift",
    "missing_core_object",
    "concept_splitting",
    "object_identity_loss",
    "style_context_mismatch",
)


class FaithfulnessLabel(Label):
    """Faithfulness of a rendering to its plan: score 1–5 and hard-fail reasons (App. I.2).

    Pass(I, y) = 1[Faith(I, y) ≥ 4 ∧ ¬HardFail(I, y)] — stored in ``passed`` and enforced by a
    check constraint.
    """

    score = models.PositiveSmallIntegerField()
    major_semantic_drift = models.BooleanField(default=False)
    missing_core_object = models.BooleanField(default=False)
    concept_splitting = models.BooleanField(default=False)
    object_identity_loss = models.BooleanField(default=False)
    style_context_mismatch = models.BooleanField(default=False)
    passed = models.BooleanField()

    class Meta(Label.Meta):
        constraints = Label.Meta.constraints + [
            models.CheckConstraint(condition=Q(score__gte=1, score__lte=5), name="faithfulnesslabel_score_1_to_5"),
            models.CheckConstraint(
                condition=Q(passed=True, score__gte=4, **{reason: False for reason in HARD_FAIL_REASONS})
                | (
                    Q(passed=False)
                    & (Q(score__lt=4) | Q(major_semantic_drift=True) | Q(missing_core_object=True)
                       | Q(concept_splitting=True) | Q(object_identity_loss=True) | Q(style_context_mismatch=True))
                ),
                name="faithfulnesslabel_pass_rule",
            ),
        ]

    @property
    def hard_fail_reasons(self) -> list[str]:
        return [reason for reason in HARD_FAIL_REASONS if getattr(self, reason)]


STRATEGIES = (
    "constraint_literalization",
    "audience_reframing",
    "medium_adaptation",
    "metaphor_substitution",
    "scenario_embedding",
    "style_transfer",
    "risk_avoidant_generic",
)


class StrategyLabel(Label):
    """Multi-label adaptation strategies of one response, each absent, central or incidental
    (App. J, Table 18; J.3: central if removing it would change the core visual idea)."""

    constraint_literalization = models.CharField(max_length=10, choices=StrategyRole.choices, default=StrategyRole.ABSENT)
    audience_reframing = models.CharField(max_length=10, choices=StrategyRole.choices, default=StrategyRole.ABSENT)
    medium_adaptation = models.CharField(max_length=10, choices=StrategyRole.choices, default=StrategyRole.ABSENT)
    metaphor_substitution = models.CharField(max_length=10, choices=StrategyRole.choices, default=StrategyRole.ABSENT)
    scenario_embedding = models.CharField(max_length=10, choices=StrategyRole.choices, default=StrategyRole.ABSENT)
    style_transfer = models.CharField(max_length=10, choices=StrategyRole.choices, default=StrategyRole.ABSENT)
    risk_avoidant_generic = models.CharField(max_length=10, choices=StrategyRole.choices, default=StrategyRole.ABSENT)

    class Meta(Label.Meta):
        constraints = Label.Meta.constraints + [
            models.CheckConstraint(condition=_in(name, StrategyRole), name=f"strategylabel_{name}_known") for name in STRATEGIES
        ]

    @property
    def strategies(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in STRATEGIES if getattr(self, name) != StrategyRole.ABSENT}


#: The three divergent components a U-O-S item rates (c2-eval §3.2.2), each an integer 0–5.
UOS_COMPONENTS = ("usefulness", "originality", "surprise")
#: Longest handwriting reading accepted (issue 13: free text, at most 20 characters).
HANDWRITING_TEXT_MAX = 20


class UOSLabel(Label):
    """A person's Usefulness, Originality and Surprise of one divergent C² sample, integers 0–5 on the
    rater's rubric (c2-eval §3.2.2); ``rubric_version`` is the rubric text shown beside the scale."""

    usefulness = models.PositiveSmallIntegerField()
    originality = models.PositiveSmallIntegerField()
    surprise = models.PositiveSmallIntegerField()
    rubric_version = models.CharField(max_length=40)

    class Meta(Label.Meta):
        constraints = Label.Meta.constraints + [
            models.CheckConstraint(condition=Q(**{f"{c}__lte": 5}), name=f"uoslabel_{c}_0_to_5") for c in UOS_COMPONENTS
        ] + [models.CheckConstraint(condition=~Q(rubric_version=""), name="uoslabel_rubric_version_set")]


class HandwritingLabel(Label):
    """What a person reads on an EASEL handwriting canvas (easel §3.3 "hello"): the letters, or unreadable."""

    text = models.CharField(max_length=HANDWRITING_TEXT_MAX, blank=True)
    unreadable = models.BooleanField(default=False)

    class Meta(Label.Meta):
        constraints = Label.Meta.constraints + [
            # exactly one of: a reading, or "unreadable"
            models.CheckConstraint(
                condition=(Q(unreadable=True) & Q(text="")) | (Q(unreadable=False) & ~Q(text="")),
                name="handwritinglabel_text_xor_unreadable",
            ),
        ]


class LabelRevision(models.Model):
    """A superseded version of a label: the values its annotator replaced when they changed their
    most recent label (:func:`annotation.label_revision.label_revise`). Never a silent overwrite:
    version ``n`` of a label is this row with ``version = n`` until the label's own ``version`` is
    ``n``; the label row holds the current one.

    The label is named by its assignment (one label per assignment, in the kind's label table: the
    label tables are one per kind, so no single foreign key could point at "a label"). ``values``
    are the label's answer and flag fields as they were (the names ``Kind.validate`` returns);
    ``idempotency_key`` is the key of the request that replaced them (re-sending it changes nothing);
    ``content_hash`` and ``task_set_version`` are what the item showed, the same for every version
    (a revision of an item whose content changed is refused)."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="label_revisions")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    version = models.PositiveIntegerField(help_text="The superseded version (1 = the label as first given).")
    values = models.JSONField(help_text="The superseded answer and flag fields.")
    given_at = models.DateTimeField(help_text="When the superseded version was given.")
    superseded_at = models.DateTimeField(help_text="When the annotator replaced it.")
    idempotency_key = models.UUIDField(unique=True, help_text="Key of the request that replaced it.")
    content_hash = models.CharField(max_length=64)
    task_set_version = models.CharField(max_length=40)
    time_on_revision_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Time the replacing answer was on screen, as measured by the page."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "version"], name="labelrevision_one_per_version"),
            models.CheckConstraint(condition=Q(version__gte=1), name="labelrevision_version_from_1"),
            models.CheckConstraint(condition=Q(superseded_at__gte=F("given_at")), name="labelrevision_superseded_after_given"),
            models.CheckConstraint(
                condition=Q(time_on_revision_ms__isnull=True) | Q(time_on_revision_ms__lte=24 * 3600 * 1000),
                name="labelrevision_time_under_a_day",
            ),
        ]
        ordering = ["assignment", "version"]

    def __str__(self) -> str:
        return f"version {self.version} of the label of assignment {self.assignment_id}"


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


LABEL_MODELS: dict[str, type[Label]] = {
    CampaignKind.TEXT_PAIRWISE: PairwiseLabel,
    CampaignKind.IMAGE_PREFERENCE: PairwiseLabel,
    CampaignKind.TIG_AUDIT: TigAuditLabel,
    CampaignKind.FAITHFULNESS: FaithfulnessLabel,
    CampaignKind.STRATEGY: StrategyLabel,
    CampaignKind.UOS_RATING: UOSLabel,
    CampaignKind.CANVAS_SIMILARITY: PairwiseLabel,
    CampaignKind.HANDWRITING: HandwritingLabel,
}


# Crowd campaigns (issue 25) live in their own module; imported here so Django registers them.
from annotation.panel_models import (  # noqa: E402, F401
    BlockedPanelId,
    ItemActiveTime,
    Panel,
    PanelStudy,
    Participant,
    TrainingAnswer,
    TrainingItem,
)
