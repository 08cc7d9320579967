"""The benchmark catalogue: benchmarks, task sets, tasks, subject models,
responses and renders.

Models hold data and invariants; the invariants live in the database as
constraints (unique, check) so that no code path can break them. Business
rules (imports, freezing, primaries) live in ``leaderboard.services``.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from leaderboard.runs.models import RunJob, TaskUnit


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


class Response(models.Model):
    class Normalisation(models.TextChoices):
        FIELDS = "fields", "Given as two fields"
        PARSER = "parser", "Deterministic parser"
        LLM = "llm", "LLM splitter"
        PENDING = "pending", "Unsplit: waiting for the LLM splitter"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="responses")
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


class Dimension(models.TextChoices):
    """The three VCI dimensions (Ekphrasis Def. 3)."""

    USEFULNESS = "U", "Usefulness"
    EXPRESSIVENESS = "E", "Expressiveness"
    NOVELTY = "N", "Novelty"


class ChecklistItem(models.Model):
    """One checklist item for a task and dimension (Ekphrasis App. E).

    Items are versioned: an admin edit or an audit revision creates a new
    version and deactivates the old one, so a comparison can always say which
    wording it was judged with. Novelty items materialised from a
    leave-two-models-out TIG belong to one judged pair's context
    (``context_key``); all other items have an empty context.
    """

    class Source(models.TextChoices):
        TEMPLATE = "template", "Fixed per-slot template (no provider)"
        JUDGE = "judge", "Generated by the judge model"
        TIG = "tig", "Population cliché (TIG)"
        GENERIC = "generic", "Generic Novelty anchor (ablation)"
        EDITED = "edited", "Edited by an admin"

    class Field(models.TextChoices):
        CORE_IDEA = "core_idea", "Core Idea"
        VISUAL_DESCRIPTION = "visual_description", "Visual Description"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="checklist_items")
    dimension = models.CharField(max_length=1, choices=Dimension.choices)
    slot = models.PositiveSmallIntegerField()
    context_key = models.CharField(max_length=100, blank=True, default="")
    text = models.TextField()
    inspects = models.CharField(max_length=20, choices=Field.choices)
    source = models.CharField(max_length=16, choices=Source.choices)
    version = models.PositiveIntegerField(default=1)
    active = models.BooleanField(default=True)
    provenance = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["task", "dimension", "slot", "context_key", "version"], name="checklist_item_version_unique"
            ),
            models.UniqueConstraint(
                fields=["task", "dimension", "slot", "context_key"],
                condition=Q(active=True),
                name="checklist_item_one_active_per_slot",
            ),
            models.CheckConstraint(condition=Q(slot__gte=1) & Q(slot__lte=3), name="checklist_item_slot_1_to_3"),
        ]
        ordering = ["task", "dimension", "context_key", "slot", "-version"]

    def __str__(self) -> str:
        return f"{self.task.external_id} {self.dimension}{self.slot} v{self.version}"


class JudgeRun(RunJob):
    """task set × dimensions × judge × budget per task × seed (issue: automatic judging)."""

    task_set = models.ForeignKey(TaskSet, on_delete=models.PROTECT, related_name="judge_runs")
    judge_name = models.CharField(max_length=100, help_text="'simulated' or the display name of a judge model.")
    judge_model = models.ForeignKey(
        SubjectModel, on_delete=models.PROTECT, null=True, blank=True, related_name="judge_runs"
    )
    is_simulated = models.BooleanField(default=False)
    dimensions = models.CharField(max_length=3, default="UEN")
    budget_per_task = models.PositiveIntegerField(default=50)
    seed = models.BigIntegerField(default=42)
    novelty_anchor = models.CharField(
        max_length=8, default="tig", choices=[("tig", "TIG population clichés"), ("generic", "Generic anchors")]
    )
    tasks_total = models.PositiveIntegerField(default=0)
    tasks_done = models.PositiveIntegerField(default=0)
    calls_planned = models.PositiveIntegerField(default=0)
    calls_done = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(budget_per_task__gte=1), name="judgerun_budget_positive"),
            models.CheckConstraint(condition=Q(tasks_done__lte=models.F("tasks_total")), name="judgerun_progress_bounded"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.judge_name} on {self.task_set} (budget {self.budget_per_task}, seed {self.seed})"


class JudgeRunTask(TaskUnit):
    """One task's chunk of a judge run, with the judge calls it has made."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="chunks")
    calls_done = models.PositiveIntegerField(default=0)


class Comparison(models.Model):
    """One judge call on one pair: identified by run, task, dimension, pair, kind, repeat.

    ``model_x``/``model_y`` is the unordered pair (lower id first);
    ``shown_a``/``shown_b`` is what the judge saw in which position, and
    ``winner`` is in those positions. A row is written *planned* before the
    call, so that a killed worker resumes the same plan instead of drawing a
    new one.
    """

    class Kind(models.TextChoices):
        PRIMARY = "primary"
        SWAP = "swap"
        DUPLICATE = "duplicate"
        AUXILIARY = "auxiliary"
        AUTOMATIC = "automatic", "Automatic (empty response, App. F.2)"

    class Status(models.TextChoices):
        PLANNED = "planned"
        OK = "ok"
        FAILED = "failed"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="comparisons")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="comparisons")
    dimension = models.CharField(max_length=1, choices=Dimension.choices)
    model_x = models.ForeignKey(SubjectModel, on_delete=models.PROTECT, related_name="+")
    model_y = models.ForeignKey(SubjectModel, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    repeat = models.PositiveSmallIntegerField(default=0)
    judge_name = models.CharField(max_length=100)
    sequence = models.PositiveIntegerField(help_text="Order in which the run planned this call for its task.")
    shown_a = models.ForeignKey(Response, on_delete=models.PROTECT, related_name="+")
    shown_b = models.ForeignKey(Response, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PLANNED)
    winner = models.CharField(max_length=3, blank=True, choices=[("A", "A"), ("B", "B"), ("tie", "tie")])
    confidence = models.FloatField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    per_item_outcomes = models.JSONField(default=list, blank=True)
    checklist = models.JSONField(default=list, blank=True, help_text="The items the judge saw, with ids and versions.")
    repaired = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    judged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "task", "dimension", "model_x", "model_y", "kind", "repeat", "judge_name"],
                name="comparison_identity_unique",
            ),
            models.CheckConstraint(condition=Q(model_x__lt=models.F("model_y")), name="comparison_pair_ordered"),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | (Q(confidence__gte=0) & Q(confidence__lte=1)),
                name="comparison_confidence_0_1",
            ),
            models.CheckConstraint(
                condition=~Q(status="ok") | Q(winner__in=["A", "B", "tie"]), name="comparison_ok_has_winner"
            ),
        ]
        indexes = [models.Index(fields=["run", "task", "dimension", "status"])]
        ordering = ["run", "task", "dimension", "sequence"]

    @property
    def winner_response_id(self) -> int | None:
        return {"A": self.shown_a_id, "B": self.shown_b_id}.get(self.winner)


class LeaderboardSnapshot(models.Model):
    """A stored leaderboard, pinned to task-set version, judge, budget, seed and code version."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="snapshots")
    task_set_version = models.CharField(max_length=40)
    judge_name = models.CharField(max_length=100)
    budget_per_task = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    code_version = models.CharField(max_length=64, blank=True)
    is_simulated = models.BooleanField(default=False)
    is_demo = models.BooleanField(default=False)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"snapshot {self.pk} of run {self.run_id}"


class AtomExtraction(models.Model):
    """One response's typed-atom extraction (Ekphrasis App. G.1), stored once and reused by every
    leave-two-models-out context and every run that includes the response."""

    key = models.CharField(max_length=200, unique=True, help_text="extractor | response id | Core Idea hash")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="atom_extractions", null=True)
    extractor = models.CharField(max_length=100)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key


class TIGBuild(RunJob):
    """One build of a task set's Typed Idea Graph populations (Ekphrasis App. G): which extractor and
    embedder, and how far the build has come. The work itself is stored per response
    (:class:`AtomExtraction`) and per atom (the embedding cache), so a build that is started again,
    or whose worker died, resumes where it stopped."""

    task_set = models.ForeignKey(TaskSet, on_delete=models.CASCADE, related_name="tig_builds")
    extractor = models.CharField(
        max_length=100, default="offline",
        help_text="'offline' (the rule-based fallback) or the display name of a judge-role model.",
    )
    embedder = models.CharField(
        max_length=100, default="minilm",
        help_text="'minilm' (offline all-MiniLM-L6-v2) or the display name of an embedder-role model.",
    )
    canonicaliser = models.CharField(
        max_length=16, default="embedding", choices=[("embedding", "Embedding grouping"), ("llm", "The extractor model")],
        help_text="Who groups synonymous atoms within a type (App. G.2): embedding similarity, or the extractor model.",
    )
    stage = models.CharField(max_length=32, blank=True, help_text="What the current task is doing.")
    tasks_total = models.PositiveIntegerField(default=0)
    tasks_done = models.PositiveIntegerField(default=0)
    responses_total = models.PositiveIntegerField(default=0)
    responses_extracted = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(tasks_done__lte=models.F("tasks_total")), name="tigbuild_progress_bounded"),
            # an LLM canonicaliser is the extractor model, so it needs one
            models.CheckConstraint(
                condition=Q(canonicaliser="embedding") | ~Q(extractor="offline"), name="tigbuild_llm_canonicaliser_has_model"
            ),
            models.CheckConstraint(
                condition=Q(responses_extracted__lte=models.F("responses_total")), name="tigbuild_extraction_bounded"
            ),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"TIG build {self.pk} of {self.task_set} ({self.extractor}, {self.embedder})"


class SourcePool(models.Model):
    """An imported source pool P_f for task construction (Ekphrasis Algorithm 1): its validated records,
    stored once. Immutable: construction records cite it by hash, so a changed file is a new pool."""

    name = models.CharField(max_length=100, unique=True)
    sha256 = models.CharField(max_length=64)
    records = models.JSONField(help_text="The validated records, in file order (engine.task_construction.pools).")
    n_records = models.PositiveIntegerField()
    is_demo = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name + (" (demo data)" if self.is_demo else "")


class TaskSetBuild(RunJob):
    """One run of Algorithm 1 and its construction record: pools (with hashes), grid, seed, screen, the
    sampling diagnostics (Figures 6–8) and achieved counts. The result is a new frozen task-set version."""

    name = models.CharField(max_length=100, help_text="Name of the task set to create.")
    version = models.CharField(max_length=40)
    pools = models.ManyToManyField(SourcePool, related_name="builds")
    grid = models.JSONField(help_text="The subtype grid with cell quotas (Table 5 by default).")
    seed = models.BigIntegerField(default=0)
    screen = models.CharField(max_length=100, default="offline",
                              help_text="'offline' (the labelled rules) or the display name of a judge-role model.")
    stage = models.CharField(max_length=100, blank=True)
    tasks_kept = models.PositiveIntegerField(default=0)
    tasks_total = models.PositiveIntegerField(default=0)
    record = models.JSONField(default=dict, blank=True)
    task_set = models.OneToOneField(TaskSet, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="construction")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(tasks_kept__lte=models.F("tasks_total")), name="tasksetbuild_progress_bounded"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"build {self.pk} of {self.name} v{self.version}"


class RejectedCandidate(models.Model):
    """A candidate the keep rule rejected, with its reason; an admin may override it (with a reason),
    which puts it into a new version of the built task set."""

    build = models.ForeignKey(TaskSetBuild, on_delete=models.CASCADE, related_name="rejected")
    position = models.PositiveIntegerField()
    external_id = models.CharField(max_length=100)
    cell_id = models.CharField(max_length=200)
    family = models.CharField(max_length=32)
    subtype = models.CharField(max_length=100, blank=True)
    brief = models.TextField()
    constraints = models.JSONField(default=dict, blank=True)
    source = models.JSONField(default=dict, blank=True)
    rule = models.CharField(max_length=32)
    reason = models.TextField()
    override_reason = models.TextField(blank=True)
    overridden_by = models.ForeignKey("auth.User", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    overridden_at = models.DateTimeField(null=True, blank=True)
    override_task_set = models.ForeignKey(TaskSet, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["build", "position"], name="rejectedcandidate_position_unique"),
            models.CheckConstraint(condition=Q(overridden_at__isnull=True) | ~Q(override_reason=""),
                                   name="rejectedcandidate_override_has_reason"),
        ]
        ordering = ["build", "position"]


class LaunchGateOverride(models.Model):
    """An admin's recorded decision to launch human validation from a run whose App. D.3 gates failed."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="launch_overrides")
    reason = models.TextField()
    failed_gates = models.JSONField(default=list, help_text="The gates that had failed when the override was made.")
    created_by = models.ForeignKey("auth.User", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=~Q(reason=""), name="launchgateoverride_has_reason")]
        ordering = ["-created_at"]
