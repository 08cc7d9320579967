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
