"""Forms of the researcher pages and the admin item import."""

from __future__ import annotations

from django import forms


class AdjudicationRequestForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput)
    note = forms.CharField(max_length=500, required=False)


class AdjudicationResolveForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput)
    outcome = forms.CharField(max_length=200)
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


class NoveltyAblationForm(forms.Form):
    """Judge and seed of the two Novelty ablation runs (Ekphrasis §5.4, App. D.1)."""

    judge = forms.ChoiceField(help_text="'simulated' or a judge model; both conditions use the same judge.")
    seed = forms.IntegerField(initial=42)

    def __init__(self, *args, judges: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(name, name) for name in judges]
