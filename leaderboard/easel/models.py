"""EASEL on the shared catalogue (easel.txt §3–§5).

A suite is a frozen :class:`~leaderboard.models.TaskSet` of benchmark kind ``easel``; each
:class:`~leaderboard.models.Task` row holds one engine task record (``source``) and its image lives in
:class:`EaselImage`. A run is task set × agent × budget setting × seed; it plans one
:class:`EaselEpisode` per task it applies to, and an episode stores every step it took as an
:class:`EaselStep` row (action, raw text, validity, S and its components, collision, canvas).

Storage choice: canvases (and task images) are PNG bytes **in the database** (``BinaryField``), not
files under MEDIA_ROOT. A step and its canvas are then written in one transaction, so a killed worker
can never leave a step without its canvas (or a canvas without its step), exports and backups need no
second store, and nothing lands in the media directory. A 128×128 canvas PNG is a few kilobytes.

Canvas stride: a step of an episode whose budget is at most :data:`FULL_CANVAS_BUDGET` (128, the largest
budget of Table 1) stores its canvas at every step; a longer episode (the painter's 250-step native
budget) stores every :data:`LONG_EPISODE_CANVAS_STRIDE`-th canvas plus the final one
(:attr:`EaselEpisode.final_canvas_png`). S and its components are stored at every step.
"""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from leaderboard.edit_stamps import EditStamped
from leaderboard.models import SubjectModel, Task, TaskSet
from leaderboard.runs.models import RunJob

#: Episodes with at most this many steps store the canvas of every step (Table 1's largest budget).
FULL_CANVAS_BUDGET = 128
#: Longer episodes store the canvas of every k-th step (k = 5: 50 canvases for the 250-step native budget).
LONG_EPISODE_CANVAS_STRIDE = 5
#: The painter's long "data-native" budget (easel.txt §4: a 250-step trajectory per reference).
NATIVE_BUDGET = 250
#: The lowest S can be: SSIM ≥ −1, 1 − L1 ≥ 0, Edge IoU ≥ 0 in S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU (Eq. 1).
S_LOWEST = -0.5


def canvas_stored_at(step_index: int, budget: int) -> bool:
    """Whether step ``step_index`` (1-based) of an episode with ``budget`` steps keeps its canvas."""
    return budget <= FULL_CANVAS_BUDGET or step_index % LONG_EPISODE_CANVAS_STRIDE == 0


class EaselImage(models.Model):
    """A task's image: the reference (reconstruction) or the image shown / initial canvas (semantic)."""

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="easel_image")
    png = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    width = models.PositiveSmallIntegerField()
    height = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(width__gte=1) & Q(height__gte=1), name="easelimage_size_positive"),
        ]

    def __str__(self) -> str:
        return f"image of {self.task.external_id} ({self.width}×{self.height})"


class EaselRun(RunJob):
    """task set × agent × budget setting × seed (easel.txt §5; anchors and the painter of Table 2)."""

    class AgentKind(models.TextChoices):
        SIMULATED = "simulated", "Simulated agent (noisy painter; not a model)"
        PAINTER = "painter", "Search painter (stand-in for Learning-to-Paint)"
        ANCHOR = "anchor", "Score anchor (uniform fill)"
        MODEL = "model", "Multimodal model (OpenAI-compatible endpoint)"

    class Budget(models.TextChoices):
        ALIGNED = "aligned", "Budget-aligned (Table 1 budget)"
        NATIVE = "native", f"Native ({NATIVE_BUDGET} steps)"

    task_set = models.ForeignKey(TaskSet, on_delete=models.PROTECT, related_name="easel_runs")
    agent_kind = models.CharField(max_length=16, choices=AgentKind.choices)
    agent_name = models.CharField(
        max_length=100, help_text="The row label: the model's display name, the anchor's name, or the simulated agent's label."
    )
    subject_model = models.ForeignKey(
        SubjectModel, on_delete=models.PROTECT, null=True, blank=True, related_name="easel_runs"
    )
    budget_setting = models.CharField(max_length=8, choices=Budget.choices, default=Budget.ALIGNED)
    seed = models.BigIntegerField(default=0)
    is_simulated = models.BooleanField(default=False)
    config = models.JSONField(default=dict, blank=True, help_text="Agent parameters (skill, painter candidates, ...).")
    episodes_total = models.PositiveIntegerField(default=0)
    episodes_done = models.PositiveIntegerField(default=0)
    steps_planned = models.PositiveIntegerField(default=0)
    steps_done = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(agent_kind__in=["simulated", "painter", "anchor", "model"]), name="easelrun_agent_kind_known"
            ),
            models.CheckConstraint(condition=Q(budget_setting__in=["aligned", "native"]), name="easelrun_budget_known"),
            # a model run names its model; no other kind of run has one
            models.CheckConstraint(
                condition=(Q(agent_kind="model") & Q(subject_model__isnull=False))
                | (~Q(agent_kind="model") & Q(subject_model__isnull=True)),
                name="easelrun_model_iff_model_agent",
            ),
            # a simulated agent is always labelled simulated
            models.CheckConstraint(
                condition=~Q(agent_kind="simulated") | Q(is_simulated=True), name="easelrun_simulated_labelled"
            ),
            models.CheckConstraint(condition=Q(episodes_done__lte=F("episodes_total")), name="easelrun_episodes_bounded"),
            models.CheckConstraint(condition=~Q(agent_name=""), name="easelrun_agent_name_not_empty"),
        ]
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"EASEL run {self.pk}: {self.agent_name} on {self.task_set} ({self.budget_setting}, seed {self.seed})"


class EaselEpisode(EditStamped):
    """One run × task: planned when the run is created, filled step by step, summarised when done.

    The summary fields repeat what the stored steps give (the trajectory diagnostics of easel.txt §3.3,
    the semantic score of a semantic task), so that leaderboards read one row per episode.
    """

    class Status(models.TextChoices):
        PLANNED = "planned"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    run = models.ForeignKey(EaselRun, on_delete=models.CASCADE, related_name="episodes")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="easel_episodes")
    position = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=16, choices=[("reconstruction", "reconstruction"), ("semantic", "semantic")])
    category = models.CharField(max_length=32)
    budget = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PLANNED)
    steps_done = models.PositiveIntegerField(default=0)
    # S of the initial canvas (blank, or the task image for annotation and maze tasks); not part of the AUC
    initial_s = models.FloatField(null=True, blank=True)
    final_s = models.FloatField(null=True, blank=True)
    final_ssim = models.FloatField(null=True, blank=True)
    final_l1 = models.FloatField(null=True, blank=True)
    final_edge_iou = models.FloatField(null=True, blank=True)
    at_50 = models.FloatField(null=True, blank=True)
    auc = models.FloatField(null=True, blank=True)
    best = models.FloatField(null=True, blank=True)
    fb_gap = models.FloatField(null=True, blank=True)
    repeat_rate = models.FloatField(null=True, blank=True)
    invalid_rate = models.FloatField(null=True, blank=True)
    undo_count = models.PositiveIntegerField(default=0)
    collision_count = models.PositiveIntegerField(default=0)
    submit_step = models.PositiveIntegerField(null=True, blank=True, help_text="Step of the submit action; empty: budget exhausted.")
    semantic_score = models.FloatField(null=True, blank=True)
    semantic_detail = models.JSONField(default=dict, blank=True)
    semantic_summary = models.JSONField(
        default=dict, blank=True, help_text="Table 4's per-episode diagnostics (invalid rate, undos, submit percentile)."
    )
    recogniser = models.CharField(max_length=100, blank=True, help_text="Who scored a semantic task (e.g. tesseract).")
    progress_curve = models.JSONField(
        default=list, blank=True, help_text="S on a fixed grid of step fractions 0..1 (Figure 4), from the stored S_t."
    )
    final_canvas_png = models.BinaryField(null=True, blank=True)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "task"], name="easelepisode_one_per_run_task"),
            models.CheckConstraint(condition=Q(budget__gte=1), name="easelepisode_budget_positive"),
            models.CheckConstraint(condition=Q(steps_done__lte=F("budget")), name="easelepisode_steps_bounded"),
            models.CheckConstraint(condition=Q(kind__in=["reconstruction", "semantic"]), name="easelepisode_kind_known"),
            models.CheckConstraint(
                condition=Q(final_s__isnull=True) | (Q(final_s__gte=S_LOWEST) & Q(final_s__lte=1)),
                name="easelepisode_final_s_in_range",
            ),
            models.CheckConstraint(
                condition=Q(semantic_score__isnull=True) | (Q(semantic_score__gte=0) & Q(semantic_score__lte=1)),
                name="easelepisode_semantic_score_0_1",
            ),
            models.CheckConstraint(
                condition=Q(submit_step__isnull=True) | Q(submit_step__lte=F("budget")), name="easelepisode_submit_in_budget"
            ),
        ]
        indexes = [models.Index(fields=["run", "status"])]
        ordering = ["run", "position", "pk"]

    def __str__(self) -> str:
        return f"episode {self.pk}: run {self.run_id} × {self.task.external_id}"

    @property
    def status_shown(self) -> str:
        """The episode's state as its run page names it: one its run left running when it failed is
        "stopped" (no worker works it any more, and a Resume continues it), any other its status."""
        if self.status == self.Status.RUNNING and self.run.status == EaselRun.Status.FAILED:
            return "stopped"
        return self.status


class EaselStep(models.Model):
    """One step t (1-based) of an episode: what the agent said, what the environment made of it."""

    class Kind(models.TextChoices):
        STROKE = "stroke"
        UNDO = "undo"
        SUBMIT = "submit"
        INVALID = "invalid"

    episode = models.ForeignKey(EaselEpisode, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    action = models.JSONField(null=True, blank=True, help_text="The parsed action; empty for an invalid one.")
    raw = models.TextField(blank=True, help_text="The agent's text exactly as it came back.")
    valid = models.BooleanField()
    kind = models.CharField(max_length=8, choices=Kind.choices)
    collision = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    s = models.FloatField(null=True, blank=True)
    ssim = models.FloatField(null=True, blank=True)
    l1 = models.FloatField(null=True, blank=True)
    edge_iou = models.FloatField(null=True, blank=True)
    canvas_png = models.BinaryField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["episode", "index"], name="easelstep_index_unique_in_episode"),
            models.CheckConstraint(condition=Q(index__gte=1), name="easelstep_index_one_based"),
            models.CheckConstraint(condition=Q(kind__in=["stroke", "undo", "submit", "invalid"]), name="easelstep_kind_known"),
            # an action the environment could not parse or accept is never counted valid
            models.CheckConstraint(condition=~Q(kind="invalid") | Q(valid=False), name="easelstep_invalid_not_valid"),
            models.CheckConstraint(
                condition=Q(s__isnull=True) | (Q(s__gte=S_LOWEST) & Q(s__lte=1)), name="easelstep_s_in_range"
            ),
        ]
        ordering = ["episode", "index"]

    def __str__(self) -> str:
        return f"step {self.index} of episode {self.episode_id}"
