"""Admin for C² runs and their rows (read-only: runs are created and resumed through the services)."""

from django.contrib import admin

from leaderboard.admin import RecordAdmin
from leaderboard.c2.models import C2Rating, C2Run, C2Sample, C2TaskImage


@admin.register(C2Run)
class C2RunAdmin(RecordAdmin):
    list_display = ("pk", "task_set", "template", "n_samples", "rater_name", "seed", "surprise_policy", "status",
                    "is_simulated", "created_at")
    list_filter = ("status", "template", "is_simulated")
    readonly_fields = ("results", "usage", "code_version", "calls_done", "prompts_done")


class VerdictFilter(admin.AllValuesFieldListFilter):
    """The verdicts found, the empty one (divergent samples are not graded) named: it was a link with no text."""

    def choices(self, changelist):
        for choice in super().choices(changelist):
            yield choice | {"display": "none (not graded)"} if choice["display"] == "" else choice


@admin.register(C2Sample)
class C2SampleAdmin(RecordAdmin):
    list_display = ("run", "subject_model", "task", "sample_index", "status", "verdict", "confidence_status", "cluster")
    list_filter = ("status", "confidence_status", ("verdict", VerdictFilter))
    raw_id_fields = ("run", "task", "subject_model")


@admin.register(C2Rating)
class C2RatingAdmin(RecordAdmin):
    list_display = ("sample", "rater_name", "repeat", "status", "u", "o", "s", "repaired")
    list_filter = ("status", "repeat", "repaired")
    raw_id_fields = ("sample",)


@admin.register(C2TaskImage)
class C2TaskImageAdmin(admin.ModelAdmin):
    list_display = ("task", "file_name", "content_type", "width", "height")
    exclude = ("data",)
    raw_id_fields = ("task",)
