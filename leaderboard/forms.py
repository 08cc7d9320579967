from django import forms

from leaderboard.models import Benchmark, TaskSet


class TaskImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL (one record per line) or CSV")
    task_set = forms.CharField(max_length=100)
    version = forms.CharField(max_length=40)
    benchmark = forms.ChoiceField(choices=Benchmark.Kind.choices, initial=Benchmark.Kind.EKPHRASIS)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class ResponseImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL (one record per line) or CSV")
    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.all())
    create_models = forms.BooleanField(required=False, help_text="Create subject models the file names but the site does not know.")


class JudgeRunForm(forms.Form):
    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.all())
    judge = forms.ChoiceField()
    dimensions = forms.CharField(initial="UEN", max_length=3)
    budget_per_task = forms.IntegerField(initial=50, min_value=1, max_value=10000)
    seed = forms.IntegerField(initial=42)
    novelty_anchor = forms.ChoiceField(choices=[("tig", "TIG population clichés"), ("generic", "Generic anchors")])

    def __init__(self, *args, judges=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(j, j) for j in judges]

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "task_set": data["task_set"], "judge_name": data["judge"], "dimensions": data["dimensions"],
            "budget_per_task": data["budget_per_task"], "seed": data["seed"], "novelty_anchor": data["novelty_anchor"],
        }
