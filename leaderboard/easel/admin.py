"""Admin: EASEL runs and episodes, read-only (runs are created and stepped by the services)."""

from django.contrib import admin

from leaderboard.admin import RecordAdmin
from leaderboard.easel.models import EaselEpisode, EaselImage, EaselRun, EaselStep


@admin.register(EaselRun)
class EaselRunAdmin(RecordAdmin):
    list_display = ("pk", "agent_name", "agent_kind", "task_set", "budget_setting", "seed", "is_simulated", "status",
                    "episodes_done", "episodes_total", "created_at")
    list_filter = ("agent_kind", "budget_setting", "status", "is_simulated")
    readonly_fields = ("episodes_done", "episodes_total", "steps_done", "steps_planned", "usage", "code_version",
                       "started_at", "finished_at")


@admin.register(EaselEpisode)
class EaselEpisodeAdmin(RecordAdmin):
    list_display = ("pk", "run", "task", "category", "status", "steps_done", "budget", "final_s", "semantic_score")
    list_filter = ("kind", "category", "status")
    exclude = ("final_canvas_png",)
    readonly_fields = ("progress_curve",)


@admin.register(EaselStep)
class EaselStepAdmin(RecordAdmin):
    list_display = ("pk", "episode", "index", "kind", "valid", "collision", "s")
    list_filter = ("kind", "valid", "collision")
    exclude = ("canvas_png",)


@admin.register(EaselImage)
class EaselImageAdmin(admin.ModelAdmin):
    list_display = ("task", "width", "height", "sha256")
    exclude = ("png",)
