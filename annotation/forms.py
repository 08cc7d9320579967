"""Forms of the researcher pages and the admin item import."""

from __future__ import annotations

from django import forms

from annotation.blinding import (
    CALIBRATION_SHOWN_FIELDS,
    CAMPAIGN_SHOWN_FIELDS,
    STUDY_SHOWN_FIELDS,
    TRAINING_SHOWN_FIELDS,
    catalogue_identities,
    texts_identity_problems,
)
from annotation.models import Adjudication, CalibrationExample, Campaign
from annotation.panel_models import PanelStudy, TrainingItem
from leaderboard.forms import SeedField


class _ShownTextsForm(forms.ModelForm):
    """An admin form whose ``shown_fields`` annotators read: none may name a model (annotation.blinding).
    ``blinding_revision``: the catalogue revision they were checked against (read before the check), which
    the admin records on the campaign when it saves (annotation.blinding_recheck.campaign_texts_written; the
    admin's change view is one transaction)."""

    shown_fields: tuple[str, ...] = ()
    blinding_revision: int | None = None

    def clean(self):
        cleaned = super().clean()
        texts = {f: _shown(cleaned.get(f)) for f in self.shown_fields if f in cleaned}
        matcher = catalogue_identities()
        self.blinding_revision = matcher.revision
        for field, message in texts_identity_problems(texts, matcher=matcher).items():
            self.add_error(field, message)
        return cleaned


def _shown(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else value or ""


def shown_texts_revision(form, formsets=()) -> int | None:
    """The oldest revision the texts of an admin form and its inline forms were checked against."""
    forms_ = [form, *(f for formset in formsets for f in getattr(formset, "forms", ()))]
    revisions = [f.blinding_revision for f in forms_ if getattr(f, "blinding_revision", None) is not None]
    return min(revisions, default=None)


class CampaignAdminForm(_ShownTextsForm):
    shown_fields = CAMPAIGN_SHOWN_FIELDS

    class Meta:
        model = Campaign
        fields = "__all__"


class CalibrationExampleAdminForm(_ShownTextsForm):
    shown_fields = CALIBRATION_SHOWN_FIELDS

    class Meta:
        model = CalibrationExample
        fields = "__all__"


class PanelStudyAdminForm(_ShownTextsForm):
    shown_fields = STUDY_SHOWN_FIELDS

    class Meta:
        model = PanelStudy
        fields = "__all__"


class TrainingItemShownForm(_ShownTextsForm):
    shown_fields = TRAINING_SHOWN_FIELDS

    class Meta:
        model = TrainingItem
        fields = ["position", "question", "choices", "answer", "explanation"]


#: An item id a lookup can take: past 64 bits SQLite raised OverflowError (a 500) instead of matching nothing.
ITEM_ID = {"min_value": 1, "max_value": 2**63 - 1}


class AdjudicationRequestForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput, **ITEM_ID)
    note = forms.CharField(max_length=500, required=False)


class AdjudicationResolveForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput, **ITEM_ID)
    outcome = forms.CharField(max_length=Adjudication._meta.get_field("outcome").max_length)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class ItemImportForm(forms.Form):
    file = forms.FileField(allow_empty_file=True, help_text="JSONL, one item per line (see the campaign kind's fields).")
    replace_changed = forms.BooleanField(
        required=False, help_text="Replace the content of items whose key exists; their earlier labels become stale."
    )


class ValidationPairsForm(forms.Form):
    dimensions = forms.MultipleChoiceField(
        choices=[("usefulness", "Usefulness"), ("expressiveness", "Expressiveness"), ("novelty", "Novelty")],
        initial=["usefulness", "expressiveness", "novelty"], widget=forms.CheckboxSelectMultiple,
    )
    pairs_per_task = forms.IntegerField(min_value=1, max_value=20, initial=6)
    max_tasks = forms.IntegerField(min_value=1, required=False, help_text="Empty: every task of the task set.")
    rule = forms.ChoiceField(
        choices=(("classical", "Classical (App. H.5 strata from the judge ranking)"),
                 ("calibration", "Calibration (pairs that shrink the calibrated intervals most)")),
        initial="classical", required=False,  # a form posted without it keeps the classical rule
        help_text="calibration: from the latest snapshot calibrated by this campaign's labels "
        "so far (annotation.calibration_sampling); dimensions it cannot calibrate yet use the classical rule.",
    )


class NoveltyAblationForm(forms.Form):
    """Judge and seed of the two Novelty ablation runs (Ekphrasis §5.4, App. D.1)."""

    judge = forms.ChoiceField(help_text="'simulated' or a judge model; both conditions use the same judge.")
    seed = SeedField(initial=42)

    def __init__(self, *args, judges: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(name, name) for name in judges]
