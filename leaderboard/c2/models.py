"""C²-Eval runs on the shared catalogue (c2-eval.txt §3.2, §4).

A task of a C² task set is a catalogue :class:`~leaderboard.models.Task` whose ``family`` is its task type
(``qa``, ``code``, ``vqa`` convergent; ``story``, ``idea``, ``visual_story`` divergent), whose ``brief`` is
the prompt shown to the model and whose ``constraints`` hold the grading reference (aliases, the ten VQA
answers, code tests). Images of visual tasks are stored in the database (:class:`C2TaskImage`), so an
import writes them in the same transaction as the tasks and a sample can send them as data URLs.

A run plans every row before it calls anything: one :class:`C2Sample` per model × prompt × sample index
and one :class:`C2Rating` per divergent sample × rater × repeat. Unique constraints on those identities
make a duplicate impossible, so a killed worker resumes the plan instead of drawing a new one.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from leaderboard.edit_stamps import EditStamped
from leaderboard.models import SubjectModel, Task, TaskSet
from leaderboard.runs.models import RunJob, TaskUnit

CONVERGENT_TYPES = ("qa", "code", "vqa")
DIVERGENT_TYPES = ("story", "idea", "visual_story")
VISUAL_TYPES = ("vqa", "visual_story")
TASK_TYPES = CONVERGENT_TYPES + DIVERGENT_TYPES


class C2TaskImage(models.Model):
    """The image of a visual task (OK-VQA, Creation-MMBench), stored as bytes so that imports stay one
    transaction and generation can send it as a ``data:`` URL."""

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="c2_image")
    file_name = models.CharField(max_length=255)
    content_type = models.CharField(max_length=40)
    data = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(content_type__in=["image/png", "image/jpeg", "image/webp", "image/gif"]),
                name="c2taskimage_content_type_known",
            ),
        ]

    def __str__(self) -> str:
        return f"image of {self.task_id}: {self.file_name}"


class C2Run(RunJob, EditStamped):
    """task set × models × n samples × template × rater × seed × Surprise policy (issue 12); an optional
    second rater rates every divergent sample once more for the inter-rater ICC (its scores never enter
    the leaderboard)."""

    class Template(models.TextChoices):
        STANDARD = "standard", "Standard instruction"
        CREATIVE = "creative", "Creative instruction (§4.2.3)"

    class SurprisePolicy(models.TextChoices):
        ZERO = "zero", "S = 0 when no sample is correct (default)"
        FORMULA = "formula", "S = 1 − C as printed (S = 1 when no sample is correct)"

    task_set = models.ForeignKey(TaskSet, on_delete=models.PROTECT, related_name="c2_runs")
    subjects = models.ManyToManyField(SubjectModel, related_name="c2_runs")
    subject_names = models.JSONField(default=list, help_text="Display names in run order (pinned at creation).")
    n_samples = models.PositiveSmallIntegerField(default=5)
    template = models.CharField(max_length=10, choices=Template.choices, default=Template.STANDARD)
    rater_name = models.CharField(max_length=100, default="simulated", help_text="'simulated' or a judge-role model.")
    rater_model = models.ForeignKey(
        SubjectModel, on_delete=models.PROTECT, null=True, blank=True, related_name="c2_rated_runs"
    )
    second_rater_name = models.CharField(
        max_length=100, blank=True, help_text="Optional second rater of every divergent sample (inter-rater ICC)."
    )
    second_rater_model = models.ForeignKey(
        SubjectModel, on_delete=models.PROTECT, null=True, blank=True, related_name="c2_second_rated_runs"
    )
    seed = models.BigIntegerField(default=42)
    surprise_policy = models.CharField(max_length=8, choices=SurprisePolicy.choices, default=SurprisePolicy.ZERO)
    tau = models.FloatField(default=0.9, help_text="Originality: two correct samples cluster when cosine ≥ τ.")
    temperature = models.FloatField(default=0.8, help_text="Sampling temperature of the subjects (recorded per sample).")
    embedder = models.CharField(max_length=100, default="minilm", help_text="'minilm' or an embedder-role model.")
    rerate_share = models.FloatField(default=0.10, help_text="Share of divergent samples rated twice (test–retest).")
    is_simulated = models.BooleanField(default=False, help_text="A simulated subject or rater took part.")
    prompts_total = models.PositiveIntegerField(default=0)
    prompts_done = models.PositiveIntegerField(default=0)
    calls_planned = models.PositiveIntegerField(default=0)
    calls_done = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True, help_text="Scores stored when the run finishes.")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(n_samples__gte=1), name="c2run_samples_positive"),
            models.CheckConstraint(condition=Q(template__in=["standard", "creative"]), name="c2run_template_known"),
            models.CheckConstraint(condition=Q(surprise_policy__in=["zero", "formula"]), name="c2run_surprise_policy_known"),
            models.CheckConstraint(condition=Q(tau__gt=0) & Q(tau__lte=1), name="c2run_tau_in_0_1"),
            models.CheckConstraint(condition=Q(rerate_share__gte=0) & Q(rerate_share__lte=1), name="c2run_rerate_share_0_1"),
            models.CheckConstraint(condition=Q(prompts_done__lte=models.F("prompts_total")), name="c2run_progress_bounded"),
            models.CheckConstraint(condition=~Q(second_rater_name=models.F("rater_name")), name="c2run_second_rater_differs"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"C² run {self.pk} on {self.task_set} ({self.template}, n={self.n_samples}, seed {self.seed})"


class C2RunPrompt(TaskUnit):
    """One prompt's chunk of a C² run."""

    run = models.ForeignKey(C2Run, on_delete=models.CASCADE, related_name="prompts")

    class Meta(TaskUnit.Meta):
        ordering = ["run", "task__position", "task__external_id"]


class C2Sample(models.Model):
    """One sample of one model on one prompt: planned at run creation, then answered, asked for its
    confidence (convergent), graded and clustered."""

    class Status(models.TextChoices):
        PLANNED = "planned"
        ANSWERED = "answered", "Answered (confidence pending)"
        DONE = "done"
        FAILED = "failed"

    class ConfidenceStatus(models.TextChoices):
        PENDING = "pending"
        OK = "ok"
        MISSING = "missing", "No reply to the confidence question"
        UNPARSEABLE = "unparseable", "Reply did not parse as a probability"
        NOT_ASKED = "not_asked", "Not asked (divergent task)"

    run = models.ForeignKey(C2Run, on_delete=models.CASCADE, related_name="samples")
    subject_model = models.ForeignKey(SubjectModel, on_delete=models.PROTECT, related_name="c2_samples")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="c2_samples")
    sample_index = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PLANNED)
    text = models.TextField(blank=True)
    temperature = models.FloatField(null=True, blank=True)
    confidence = models.FloatField(null=True, blank=True)
    confidence_raw = models.TextField(blank=True)
    confidence_status = models.CharField(max_length=12, choices=ConfidenceStatus.choices, default=ConfidenceStatus.PENDING)
    verdict = models.CharField(max_length=20, blank=True, help_text="Grader's verdict (correct, wrong_answer, time_limit …).")
    usefulness = models.FloatField(null=True, blank=True, help_text="Convergent grade in [0, 1] (VQA accuracy is fractional).")
    correct = models.BooleanField(null=True, blank=True)
    grade_detail = models.JSONField(default=dict, blank=True)
    cluster = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Originality cluster of a correct sample.")
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    generated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "subject_model", "task", "sample_index"], name="c2sample_identity_unique"),
            models.CheckConstraint(condition=Q(sample_index__gte=1), name="c2sample_index_one_based"),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | (Q(confidence__gte=0) & Q(confidence__lte=1)),
                name="c2sample_confidence_0_1",
            ),
            models.CheckConstraint(
                condition=Q(usefulness__isnull=True) | (Q(usefulness__gte=0) & Q(usefulness__lte=1)),
                name="c2sample_usefulness_0_1",
            ),
            # a confidence is recorded only with the reply it was parsed from
            models.CheckConstraint(condition=Q(confidence__isnull=True) | Q(confidence_status="ok"), name="c2sample_confidence_parsed"),
        ]
        indexes = [models.Index(fields=["run", "task", "status"])]
        ordering = ["run", "task", "subject_model", "sample_index"]

    def __str__(self) -> str:
        return f"sample {self.sample_index} of {self.subject_model_id} on {self.task_id} (run {self.run_id})"


class C2Rating(models.Model):
    """The rater's U/O/S (integers 0–5, §3.2.2) of one divergent sample; repeat 1 is the deterministic
    re-rate that measures test–retest reliability."""

    class Status(models.TextChoices):
        PLANNED = "planned"
        OK = "ok"
        FAILED = "failed"

    sample = models.ForeignKey(C2Sample, on_delete=models.CASCADE, related_name="ratings")
    rater_name = models.CharField(max_length=100)
    repeat = models.PositiveSmallIntegerField(default=0, help_text="0: primary rating, 1: re-rate.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PLANNED)
    u = models.PositiveSmallIntegerField(null=True, blank=True)
    o = models.PositiveSmallIntegerField(null=True, blank=True)
    s = models.PositiveSmallIntegerField(null=True, blank=True)
    rationale_u = models.TextField(blank=True)
    rationale_o = models.TextField(blank=True)
    rationale_s = models.TextField(blank=True)
    raw = models.TextField(blank=True)
    repaired = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    rated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sample", "rater_name", "repeat"], name="c2rating_identity_unique"),
            models.CheckConstraint(condition=Q(repeat__lte=1), name="c2rating_repeat_0_or_1"),
            models.CheckConstraint(
                condition=(Q(u__isnull=True) | Q(u__lte=5)) & (Q(o__isnull=True) | Q(o__lte=5)) & (Q(s__isnull=True) | Q(s__lte=5)),
                name="c2rating_scores_0_5",
            ),
            models.CheckConstraint(
                condition=~Q(status="ok") | (Q(u__isnull=False) & Q(o__isnull=False) & Q(s__isnull=False)),
                name="c2rating_ok_has_scores",
            ),
        ]
        ordering = ["sample", "rater_name", "repeat"]

    def __str__(self) -> str:
        return f"rating {self.repeat} of sample {self.sample_id} by {self.rater_name}"
