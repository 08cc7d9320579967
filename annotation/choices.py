"""The choices of the annotation app: campaign kinds, item dimensions and the answers, flags, audit
codes and strategy roles a label can hold, with ``choice_in``, the check-constraint condition that keeps a
column to its choices.

Shared by the campaign tables (:mod:`annotation.models`) and the label tables
(:mod:`annotation.label_models`), so that neither imports the other for them.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


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


def choice_in(field: str, choices: type[models.TextChoices], *, blank: bool = False) -> Q:
    """The condition that ``field`` holds one of ``choices``' values (or is blank when ``blank``): a check
    constraint's, so that no code path can store a value outside the choices."""
    values = list(choices.values) + ([""] if blank else [])
    return Q(**{f"{field}__in": values})
