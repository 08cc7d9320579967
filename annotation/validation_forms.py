"""Admin forms that fill an EASEL/C² validation campaign from stored runs: choose the run(s), the
sampling rule and k, the number of items (rules: :mod:`annotation.validation_items`)."""

from __future__ import annotations

from django import forms

from annotation.choices import CampaignKind
from annotation.models import Campaign
from annotation.validation_items import CANVAS_RULES, UOS_RULES
from leaderboard.c2.models import C2Run
from leaderboard.easel.models import EaselRun
from leaderboard.forms import IdsMultipleChoiceField

RULE_LABELS = {
    "rater_spread": "Spread over the rater's scale (evenly spaced ranks of the rater's mean U-O-S)",
    "random": "Uniformly at random",
    "mixed": "Span |ΔS|: pairs across agents and across steps",
    "across_agents": "Span |ΔS|: pairs of canvases by different agents only",
    "across_steps": "Span |ΔS|: pairs of steps of one episode only",
}


class ValidationItemsForm(forms.Form):
    seed = forms.IntegerField(initial=0, help_text="Seeds the sampling and the canonical A/B order.")

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        if campaign.kind == CampaignKind.UOS_RATING:
            self.fields["run"] = forms.ModelChoiceField(
                queryset=C2Run.objects.filter(task_set=campaign.task_set, status=C2Run.Status.DONE), help_text="A finished C² run on the campaign's task set.")
            self.fields["rule"] = forms.ChoiceField(choices=[(r, RULE_LABELS[r]) for r in UOS_RULES])
            self.fields["k"] = forms.IntegerField(min_value=1, max_value=2000, initial=30, label="k (samples to draw)")
        else:
            self.fields["runs"] = IdsMultipleChoiceField(
                queryset=EaselRun.objects.filter(task_set=campaign.task_set, status=EaselRun.Status.DONE),
                help_text="Finished EASEL runs on the campaign's suite (anchors store no steps and give no canvases).")
            if campaign.kind == CampaignKind.CANVAS_SIMILARITY:
                self.fields["rule"] = forms.ChoiceField(choices=[(r, RULE_LABELS[r]) for r in CANVAS_RULES])
                self.fields["k"] = forms.IntegerField(min_value=1, max_value=50, initial=4, label="k (pairs per reference)")
            else:
                self.fields["k"] = forms.IntegerField(min_value=1, max_value=2000, initial=50, label="k (canvases at most)")
        self.order_fields(["run", "runs", "rule", "k", "seed"])
