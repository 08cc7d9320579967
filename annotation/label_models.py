"""The label tables: what every label shares (:class:`Label`, abstract), one table per kind of label
(pairwise A/B/tie, TIG audit, faithfulness, adaptation strategies, U-O-S rating, handwriting reading), the
constants their fields and constraints are built from, :class:`LabelRevision` (a label's superseded
versions) and :data:`LABEL_MODELS` (which table holds a campaign kind's labels).

Data and invariants only (see :mod:`annotation.models`): a label belongs to exactly one assignment, is
unique per (item, annotator, content hash), its idempotency key is unique, and its scores, criterion codes,
choices and the pass rule are check constraints. Imported by :mod:`annotation.models` so that Django registers
these models with the app's (import them from here); the campaign, item and assignment a label belongs to
are named by string ("annotation.Assignment").
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.choices import (
    AuditAction,
    AuditCode,
    CampaignKind,
    FlagReason,
    PairChoice,
    StrategyRole,
    choice_in,
)

# ---------------------------------------------------------------------------------------------------
# Labels
# ---------------------------------------------------------------------------------------------------


class Label(models.Model):
    """What every label shares: its assignment, idempotency key, the content hash and task-set
    version it was given under, staleness, time on item, an optional flag with a note, and its
    version (an annotator may change their most recent label: :mod:`annotation.label_revision`)."""

    assignment = models.OneToOneField("annotation.Assignment", on_delete=models.CASCADE, related_name="%(class)s")
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="+")
    # no index of its own: the one-per-annotator-item unique constraint leads with it (migration 0020)
    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="%(class)ss", db_index=False)
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
            models.CheckConstraint(condition=choice_in("flag_reason", FlagReason, blank=True), name="%(app_label)s_%(class)s_flag_known"),
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
            models.CheckConstraint(condition=choice_in("shown_choice", PairChoice), name="pairwiselabel_shown_choice_known"),
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
            models.CheckConstraint(condition=choice_in(name, AuditCode), name=f"tigauditlabel_{name}_known") for name in TIG_CRITERIA
        ] + [
            models.CheckConstraint(condition=choice_in("overall_action", AuditAction), name="tigauditlabel_action_known"),
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
            models.CheckConstraint(condition=choice_in(name, StrategyRole), name=f"strategylabel_{name}_known") for name in STRATEGIES
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

    assignment = models.ForeignKey("annotation.Assignment", on_delete=models.CASCADE, related_name="label_revisions")
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="+")
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
