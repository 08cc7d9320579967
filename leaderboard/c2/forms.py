"""The start-a-run form of the C² pages."""

from django import forms

from leaderboard.c2.models import C2Run
from leaderboard.c2.services.runs import DEFAULT_SAMPLES
from leaderboard.forms import SeedField
from leaderboard.models import Benchmark, TaskSet


class C2RunForm(forms.Form):
    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.filter(benchmark__kind=Benchmark.Kind.C2))
    models = forms.CharField(max_length=2000, help_text="Comma-separated subject model names ('simulated-…' names are simulated).")
    samples = forms.IntegerField(initial=DEFAULT_SAMPLES, min_value=1, max_value=50)
    template = forms.ChoiceField(choices=C2Run.Template.choices)
    rater = forms.ChoiceField()
    second_rater = forms.ChoiceField(required=False, help_text="Optional: rates every divergent sample again (inter-rater ICC).")
    seed = SeedField(initial=42)
    surprise_policy = forms.ChoiceField(choices=C2Run.SurprisePolicy.choices)

    def __init__(self, *args, raters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["rater"].choices = [(r, r) for r in raters]
        self.fields["second_rater"].choices = [("", "none")] + [(r, r) for r in raters]

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "task_set": data["task_set"], "model_names": data["models"].split(","), "n_samples": data["samples"],
            "template": data["template"], "rater_name": data["rater"],
            "second_rater_name": data.get("second_rater") or "", "seed": data["seed"],
            "surprise_policy": data["surprise_policy"],
        }
