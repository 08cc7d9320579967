from django import forms

from engine.easel.simulated import SKILL_RANGE
from leaderboard.easel.models import EaselRun
from leaderboard.forms import SeedField
from leaderboard.models import Benchmark, TaskSet


class EaselRunForm(forms.Form):
    """Start a run from the EASEL pages: a researcher picks suite, agent, budget setting and seed."""

    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.filter(benchmark__kind=Benchmark.Kind.EASEL))
    agent = forms.ChoiceField()
    budget = forms.ChoiceField(choices=EaselRun.Budget.choices, initial=EaselRun.Budget.ALIGNED)
    seed = SeedField(initial=0)
    skill = forms.FloatField(required=False, min_value=SKILL_RANGE[0], max_value=SKILL_RANGE[1],
                             help_text=f"Simulated agent only: its skill in [{SKILL_RANGE[0]:g}, {SKILL_RANGE[1]:g}].")

    def __init__(self, *args, agents=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = [(a, a) for a in agents]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("skill") is not None and cleaned.get("agent") != "simulated":
            self.add_error("skill", "skill applies to the simulated agent only")
        return cleaned

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {"task_set": data["task_set"], "agent": data["agent"], "budget_setting": data["budget"],
                "seed": data["seed"], "skill": data["skill"]}
