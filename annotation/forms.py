"""Forms of the researcher pages and the admin item import."""

from __future__ import annotations

from django import forms

from annotation.blinding import CALIBRATION_SHOWN_FIELDS, CAMPAIGN_SHOWN_FIELDS, texts_identity_problems
from annotation.models import Adjudication, CalibrationExample, Campaign


class _ShownTextsForm(forms.ModelForm):
    """An admin form whose ``shown_fields`` annotators read: none may name a model (annotation.blinding)."""

    shown_fields: tuple[str, ...] = ()

    def clean(self):
        cleaned = super().clean()
        texts = {f: cleaned.get(f) or "" for f in self.shown_fields if f in cleaned}
        for field, message in texts_identity_problems(texts).items():
            self.add_error(field, message)
        return cleaned


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


class AdjudicationRequestForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput)
    note = forms.CharField(max_length=500, required=False)


class AdjudicationResolveForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput)
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
    seed = forms.IntegerField(initial=42)

    def __init__(self, *args, judges: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(name, name) for name in judges]
