"""The benchmark catalogue: benchmarks, task sets, tasks, subject models,
responses and renders.

Models hold data and invariants; the invariants live in the database as
constraints (unique, check) so that no code path can break them. Business
rules (imports, freezing, primaries) live in ``leaderboard.services``.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class Benchmark(models.Model):
    class Kind(models.TextChoices):
        EKPHRASIS = "ekphrasis", "Ekphrasis (visual creative ideation)"
        EASEL = "easel", "EASEL (dexterous visual tool use)"
        C2 = "c2", "C²-Eval (convergent and divergent creativity)"

    kind = models.CharField(max_length=16, choices=Kind.choices, unique=True)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["ekphrasis", "easel", "c2"]), name="benchmark_kind_known"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class TaskSet(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="task_sets")
    name = models.CharField(max_length=100)
    version = models.CharField(max_length=40)
    description = models.TextField(blank=True)
    # A frozen set is what leaderboards are pinned to: editing means a new version.
    frozen = models.BooleanField(default=False)
    is_demo = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="taskset_name_version_unique"),
        ]
        ordering = ["name", "version"]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}" + (" (demo data)" if self.is_demo else "")


class Task(models.Model):
    class Family(models.TextChoices):
        ABSTRACTION = "abstraction"
        COMBINATION = "combination"
        TRANSFORMATION = "transformation"
        ADAPTATION = "adaptation"

    task_set = models.ForeignKey(TaskSet, on_delete=models.CASCADE, related_name="tasks")
    external_id = models.CharField(max_length=100)
    family = models.CharField(max_length=32)
    subtype = models.CharField(max_length=100, blank=True)
    brief = models.TextField()
    constraints = models.JSONField(default=dict, blank=True)
    source = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task_set", "external_id"], name="task_external_id_unique_in_set"),
            models.CheckConstraint(condition=~Q(brief=""), name="task_brief_not_empty"),
        ]
        ordering = ["task_set", "position", "external_id"]

    def __str__(self) -> str:
        return self.external_id


class SubjectModel(models.Model):
    class Role(models.TextChoices):
        SUBJECT = "subject"
        JUDGE = "judge"  # also the LLMs that do auxiliary text work: splitting, TIG atom extraction
        RENDERER = "renderer"  # a text-to-image model (Ekphrasis App. I.1)
        EMBEDDER = "embedder"  # an embeddings model for the Typed Idea Graphs (App. G.3)

    display_name = models.CharField(max_length=100, unique=True)
    provider_id = models.CharField(max_length=200, blank=True, help_text="Model id at the provider.")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.SUBJECT)
    family = models.CharField(max_length=100, blank=True)
    # Provider endpoint; the API key is read from the environment variable named here,
    # never stored in the database.
    base_url = models.URLField(blank=True)
    api_key_env = models.CharField(max_length=100, blank=True)
    temperature = models.FloatField(null=True, blank=True, help_text="Empty: the job's default.")
    max_tokens = models.PositiveIntegerField(default=4096)
    reasoning = models.BooleanField(null=True, blank=True, help_text="Ask the provider for reasoning (if it supports it).")
    price_input_per_mtok = models.FloatField(default=0.0, help_text="USD per million prompt tokens.")
    price_output_per_mtok = models.FloatField(default=0.0, help_text="USD per million completion tokens.")
    is_demo = models.BooleanField(default=False)
    is_simulated = models.BooleanField(default=False)
    accepts_images = models.BooleanField(
        default=False, help_text="A vision-language model: takes images in chat messages (C² visual tasks need it)."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(role__in=["subject", "judge", "renderer", "embedder"]), name="subjectmodel_role_known"
            ),
        ]
        ordering = ["display_name"]

    def __str__(self) -> str:
        return self.display_name


class CatalogueRevision(models.Model):
    """The catalogue's revision: one row (``pk`` 1) whose ``number`` grows whenever the identity strings
    of the subject models change — a model added or renamed, its provider id or family changed, a model
    deleted. ``identities_sha256`` is the digest of those strings at that number. Written only by
    :func:`leaderboard.services.catalogue.catalogue_revision_sync`; read by blinding, which re-checks
    anything checked against an older revision (``annotation.blinding_recheck``). No row reads as 0."""

    number = models.PositiveBigIntegerField(default=0)
    identities_sha256 = models.CharField(max_length=64, blank=True)
    changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(id=1), name="cataloguerevision_one_row")]

    def __str__(self) -> str:
        return f"catalogue revision {self.number}"


class Response(models.Model):
    class Normalisation(models.TextChoices):
        FIELDS = "fields", "Given as two fields"
        PARSER = "parser", "Deterministic parser"
        LLM = "llm", "LLM splitter"
        PENDING = "pending", "Unsplit: waiting for the LLM splitter"

    # No index of its own: response_one_per_sample and response_task_id_unique begin with the task and serve every
    # lookup by task, a task's cascade delete included.
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="responses", db_index=False)
    subject_model = models.ForeignKey(SubjectModel, on_delete=models.PROTECT, related_name="responses")
    sample = models.PositiveSmallIntegerField()
    is_primary = models.BooleanField(default=False)
    raw_text = models.TextField(blank=True)
    core_idea = models.TextField(blank=True)
    visual_description = models.TextField(blank=True)
    raw_sha256 = models.CharField(max_length=64)
    normalisation_method = models.CharField(max_length=16, choices=Normalisation.choices)
    normalisation_attempts = models.PositiveSmallIntegerField(default=0)
    normalised_at = models.DateTimeField(null=True, blank=True)
    normalisation_model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "subject_model", "sample"], name="response_one_per_sample"),
            # The target of a comparison's shown responses on PostgreSQL (migration 0018): the foreign keys
            # (task, shown_a) and (task, shown_b) say at once that the task exists and that each shown response is
            # one of its responses.
            models.UniqueConstraint(fields=["task", "id"], name="response_task_id_unique"),
            models.UniqueConstraint(
                fields=["task", "subject_model"],
                condition=Q(is_primary=True),
                name="response_one_primary_per_model_task",
            ),
            models.CheckConstraint(condition=Q(sample__gte=1), name="response_sample_one_based"),
        ]
        ordering = ["task", "subject_model", "sample"]

    def __str__(self) -> str:
        return f"{self.task.external_id} / {self.subject_model} / {self.sample}"

    @property
    def needs_llm_split(self) -> bool:
        return self.normalisation_method == self.Normalisation.PENDING


class Render(models.Model):
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="renders")
    image = models.ImageField(upload_to="renders/%Y/%m/")
    image_sha256 = models.CharField(max_length=64)
    renderer = models.CharField(max_length=100)
    seed = models.BigIntegerField(default=0)
    prompt = models.TextField(blank=True)
    is_placeholder = models.BooleanField(
        default=False, help_text="Drawn by the offline schematic renderer (demo), not a text-to-image model."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response", "renderer", "seed"], name="render_unique_per_seed"),
        ]

    def __str__(self) -> str:
        return f"render {self.pk} of {self.response_id} by {self.renderer}"
