from django import forms
from django.core.exceptions import BadRequest, ValidationError
from django.db import models
from django.db.models import QuerySet
from django.forms.fields import InvalidJSONInput, JSONString
from django.shortcuts import get_object_or_404

from engine.strict_json import json_decode
from evalsite.request_checks import out_of_id_range
from leaderboard.api_contract import MAX_SEED
from leaderboard.models import Benchmark, SubjectModel, TaskSet
from leaderboard.protocols import task_set_kind_check
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.services.catalogue import SubjectModelNameRefused, subject_model_name_check


def form_problems(form: forms.Form) -> str:
    """A refused form's errors in one line for a message or an error page, each after its field's label:
    "Seed — A seed is a whole number from 0 to 2,147,483,647. Judge — This field is required."
    (``form.errors.as_text()`` printed "* seed * Ensure …" on the page, the field's raw name among bullets)."""
    parts = []
    for name, errors in form.errors.items():
        text = " ".join(str(e) for e in errors)
        parts.append(text if name == forms.forms.NON_FIELD_ERRORS or name not in form.fields else f"{form[name].label} — {text}")
    return " ".join(parts)


class SeedField(forms.IntegerField):
    """A run's or a build's seed: an integer in 0..:data:`~leaderboard.api_contract.MAX_SEED`, the API's
    bounds, so a page takes exactly the seeds the API and the commands take (past 64 bits was a 500;
    EASEL's form took up to 2^62, which its API refused)."""

    def __init__(self, *, initial: int = 0, **kwargs) -> None:
        message = f"A seed is a whole number from 0 to {MAX_SEED:,}."
        super().__init__(initial=initial, min_value=0, max_value=MAX_SEED,
                         error_messages={"min_value": message, "max_value": message}, **kwargs)


class TaskImportForm(forms.Form):
    # An empty file reaches the importer, which says so in the words every import uses.
    file = forms.FileField(allow_empty_file=True, help_text="JSONL (one record per line) or CSV")
    task_set = forms.CharField(max_length=100)
    version = forms.CharField(max_length=40)
    benchmark = forms.ChoiceField(choices=Benchmark.Kind.choices, initial=Benchmark.Kind.EKPHRASIS)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class ResponseImportForm(forms.Form):
    # An empty file reaches the importer, which says so in the words every import uses.
    file = forms.FileField(allow_empty_file=True, help_text="JSONL (one record per line) or CSV")
    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.all())
    create_models = forms.BooleanField(required=False, help_text="Create subject models the file names but the site does not know.")


class SnapshotCompareForm(forms.Form):
    """The two snapshot ids of the comparison page's query string (?a=…&b=…)."""

    a = forms.IntegerField(min_value=1, max_value=2**63 - 1)
    b = forms.IntegerField(min_value=1, max_value=2**63 - 1)


def compare_query_error(form: SnapshotCompareForm, *, what: str, where: str) -> BadRequest:
    """The 400 of a compare page's malformed ``?a=&b=``, in words: which id is missing or not an id, and where
    to pick two (the form's own errors read "* a * This field is required." on the page)."""
    problems = [f"{name} is missing" if not form.data.get(name) else f"{name} is not a {what} id (a whole number from 1)"
                for name in ("a", "b") if name in form.errors]
    return BadRequest(f"Compare needs two {what} ids in the address, ?a=…&b=…: {'; '.join(problems)}. "
                      f"Pick two {what}s {where}.")


def compare_pair_from_query(query, rows: QuerySet, *, what: str = "run") -> tuple | None:
    """The two rows a compare page's ``?a=&b=`` name, or None when the query names neither (the page then
    offers the choice): a malformed id is a 400 saying so, an id not among ``rows`` a 404."""
    if "a" not in query and "b" not in query:
        return None
    form = SnapshotCompareForm(query)
    if not form.is_valid():
        raise compare_query_error(form, what=what, where="on this page without the query (?a=…&b=…)")
    return get_object_or_404(rows, pk=form.cleaned_data["a"]), get_object_or_404(rows, pk=form.cleaned_data["b"])


class DrilldownFilterForm(forms.Form):
    """The drill-down's query string: which comparisons of the task to list, and which page of them."""

    dimension = forms.ChoiceField(required=False, choices=[("", "all"), ("U", "Usefulness"), ("E", "Expressiveness"),
                                                           ("N", "Novelty")])
    kind = forms.ChoiceField(required=False, choices=[("", "all"), ("primary", "primary"), ("swap", "swap"),
                                                      ("duplicate", "duplicate"), ("auxiliary", "auxiliary"),
                                                      ("automatic", "automatic")])
    pair = forms.RegexField(required=False, regex=r"^\d{1,18}-\d{1,18}$", max_length=40,
                            error_messages={"invalid": "pair is two model ids joined by '-', e.g. 3-5"})
    judge = forms.CharField(required=False, max_length=100)
    page = forms.IntegerField(required=False, min_value=1, max_value=10**6)


class JudgeRunForm(forms.Form):
    #: Any task set is looked up, so that one of another kind is refused with the lifecycle's own message
    #: (naming both kinds) rather than "not one of the available choices"; the page offers Ekphrasis ones only.
    task_set = forms.ModelChoiceField(queryset=TaskSet.objects.select_related("benchmark"))
    judge = forms.ChoiceField()
    dimensions = forms.CharField(initial="UEN", max_length=3)
    budget_per_task = forms.IntegerField(initial=50, min_value=1, max_value=10000)
    seed = SeedField(initial=42)
    novelty_anchor = forms.ChoiceField(choices=[("tig", "TIG population clichés"), ("generic", "Generic anchors")])
    tig_extractor = forms.ChoiceField(required=False, help_text="Empty: the task set's latest finished TIG build.")
    tig_embedder = forms.ChoiceField(required=False)
    tig_canonicaliser = forms.ChoiceField(
        required=False, choices=[("", "as the latest TIG build"), ("embedding", "embedding grouping"), ("llm", "the extractor model")]
    )

    def __init__(self, *args, judges=(), extractors=(), embedders=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(j, j) for j in judges]
        latest = [("", "as the latest TIG build")]
        self.fields["tig_extractor"].choices = latest + [(e, e) for e in extractors]
        self.fields["tig_embedder"].choices = latest + [(e, e) for e in embedders]

    def clean_task_set(self):
        task_set = self.cleaned_data["task_set"]
        try:
            task_set_kind_check(task_set, kind=Benchmark.Kind.EKPHRASIS)
        except RunConfigurationError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return task_set

    def run_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "task_set": data["task_set"], "judge_name": data["judge"], "dimensions": data["dimensions"],
            "budget_per_task": data["budget_per_task"], "seed": data["seed"], "novelty_anchor": data["novelty_anchor"],
            "config": {"tig": {"extractor": data["tig_extractor"], "embedder": data["tig_embedder"],
                               "canonicaliser": data["tig_canonicaliser"]}},
        }


class TIGBuildForm(forms.Form):
    """Which extractor and embedder build a task set's Typed Idea Graphs."""

    extractor = forms.ChoiceField()
    embedder = forms.ChoiceField()
    canonicaliser = forms.ChoiceField(
        required=False, choices=[("embedding", "embedding grouping"), ("llm", "the extractor model")], initial="embedding"
    )

    def __init__(self, *args, extractors=(), embedders=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["extractor"].choices = [(e, e) for e in extractors]
        self.fields["embedder"].choices = [(e, e) for e in embedders]


class SubjectModelAdminForm(forms.ModelForm):
    class Meta:
        model = SubjectModel
        fields = "__all__"
        help_texts = {
            "api_key_env": "The NAME of the environment variable holding the key; the key itself is never stored."
        }

    def clean_display_name(self):
        """The catalogue's one gate, as the API and the imports pass it: an identifier (no invisible character),
        and no name that reads as another model's (case, dashes, width, look-alike letters of another script)."""
        name = self.cleaned_data["display_name"]
        try:
            subject_model_name_check(name, except_pk=self.instance.pk)
        except SubjectModelNameRefused as exc:
            raise ValidationError(str(exc)) from exc
        return name


class SourcePoolImportForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="A new name: pools are immutable once imported.")
    file = forms.FileField(help_text="JSONL or CSV: concept, type (abstract|concrete|condition|situation), optional "
                                     "subtype, category, concreteness, norms, audience, medium, deliverable")


class IdsMultipleChoiceField(forms.ModelMultipleChoiceField):
    """A ModelMultipleChoiceField whose ids past every id column are refused as any unknown choice:
    Django looks the chosen ids up with ``pk__in``, which SQLite answers with OverflowError (a 500)."""

    def _check_values(self, value):
        for pk in value:
            if out_of_id_range(str(pk)):
                raise ValidationError(self.error_messages["invalid_choice"], code="invalid_choice", params={"value": pk})
        return super()._check_values(value)


class TaskSetBuildForm(forms.Form):
    """Build a task set (Algorithm 1): pools, the grid's quotas (Table 5 prefilled), seed, screen."""

    name = forms.CharField(max_length=100)
    version = forms.CharField(max_length=40)
    pools = IdsMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple)
    seed = SeedField(initial=0)
    screen = forms.ChoiceField(help_text="'offline': the labelled offline rules; or a judge-role model")

    def __init__(self, *args, pools=None, screens=(), grid=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pools"].queryset = pools
        self.fields["screen"].choices = [(s, s) for s in screens]
        self.grid = grid
        self.quota_fields = []
        for k, cell in enumerate(grid.cells):
            name = f"quota_{k}"
            self.fields[name] = forms.IntegerField(label=cell.cell_id, initial=cell.quota, min_value=0, max_value=1000)
            self.quota_fields.append((cell, name))

    def quota_rows(self):
        return [(cell, self[name]) for cell, name in self.quota_fields]

    def chosen_grid(self):
        from engine.task_construction.grid import grid_with_quotas

        quotas = {cell.cell_id: self.cleaned_data[name] for cell, name in self.quota_fields}
        changed = any(quotas[c.cell_id] != c.quota for c in self.grid.cells)
        return grid_with_quotas(quotas, base=self.grid, name="custom") if changed else self.grid


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))


class StrictJSONField(forms.JSONField):
    """A JSON box read as an API body or an import file is read (:func:`engine.strict_json.json_decode`):
    a NUL, a lone surrogate, a non-finite number, a duplicate key or nesting past the limit is a form
    error naming where it is. Django's JSONField took them all; PostgreSQL's jsonb then refused the first
    three on save (a 500), and deep nesting raised RecursionError while decoding."""

    def to_python(self, value):
        if self.disabled or not isinstance(value, str) or isinstance(value, JSONString) or value in self.empty_values:
            return super().to_python(value)
        decoded, problems = json_decode(value)
        if problems:
            raise ValidationError(
                "Enter a valid JSON: %(problems)s.", code="invalid",
                params={"problems": "; ".join(f"{p.field}: {p.message}" if p.field else p.message for p in problems[:10])},
            )
        return JSONString(decoded) if isinstance(decoded, str) else decoded

    def bound_data(self, data, initial):
        if self.disabled or not isinstance(data, str):
            return super().bound_data(data, initial)
        decoded, problems = json_decode(data)
        return InvalidJSONInput(data) if problems else decoded  # shown again as typed


#: ``formfield_overrides`` of every admin with a JSON column: its box is a :class:`StrictJSONField`.
JSON_FIELDS_STRICT = {models.JSONField: {"form_class": StrictJSONField}}
