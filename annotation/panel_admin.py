"""Admin of crowd campaigns (issue 25): a campaign's panel study with its training items, and the
participants (read-only: their path is theirs; the researcher's actions go through the services)."""

from __future__ import annotations

from django.contrib import admin, messages

from annotation import blinding_recheck, participants
from annotation.errors import AnnotationError
from annotation.forms import PanelStudyAdminForm, TrainingItemShownForm, shown_texts_revision
from annotation.panel_models import Panel, PanelStudy, Participant, TrainingItem
from annotation.panels import entry_signing_required
from leaderboard.forms import JSON_FIELDS_STRICT


class TrainingItemForm(TrainingItemShownForm):
    def clean(self):
        data = super().clean()
        choices = data.get("choices")
        if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) and c for c in choices):
            self.add_error("choices", 'a JSON list of two or more answers, e.g. ["A", "B", "tie"]')
        elif data.get("answer") not in choices:
            self.add_error("answer", "the answer must be one of the choices")
        return data


class TrainingItemInline(admin.StackedInline):
    formfield_overrides = JSON_FIELDS_STRICT
    model = TrainingItem
    form = TrainingItemForm
    extra = 0


@admin.register(PanelStudy)
class PanelStudyAdmin(admin.ModelAdmin):
    list_display = ("campaign", "panel", "training_min_correct", "training_max_attempts", "item_quota", "time_limit_minutes")
    form = PanelStudyAdminForm
    readonly_fields = ("entry_token", "entry_signing")
    inlines = [TrainingItemInline]

    @admin.display(description="Entry signing")
    def entry_signing(self, obj):
        # The status only, never the secret (shown once, on the Crowd study page, when made).
        if obj is None or obj.panel != Panel.GENERIC:
            return "Not available (only a generic panel signs its links)"
        if entry_signing_required(obj):
            return "Required: each entry link carries sig (rotate or turn off on the campaign's Crowd study page)"
        return "Not required (turn it on on the campaign's Crowd study page)"

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # Its consent text and training questions are the campaign's shown texts (annotation.blinding_recheck).
        if (revision := shown_texts_revision(form, formsets)) is not None:
            blinding_recheck.campaign_texts_written(campaign_id=form.instance.campaign_id, revision=revision)


def _action(verdict: str | None, label: str):
    def run(modeladmin, request, queryset):
        done = 0
        for participant in queryset:
            try:
                if verdict is None:
                    participants.participant_leave(participant=participant)
                else:
                    participants.participant_verdict_set(participant=participant, verdict=verdict, researcher=request.user)
                done += 1
            except AnnotationError as exc:
                modeladmin.message_user(request, f"{participant.panel_id}: {exc.message}", messages.ERROR)
        modeladmin.message_user(request, f"{label}: {done} participant(s).")

    run.__name__ = f"participants_{label.lower().replace(' ', '_')}"
    run.short_description = label
    return run


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ("panel_id", "campaign", "state", "verdict", "training_attempts", "entered_at", "finished_at")
    list_filter = ("state", "verdict", "campaign")
    search_fields = ("panel_id",)
    actions = [_action(None, "Mark returned"), _action("rejected", "Reject"), _action("blocked", "Block"),
               _action("", "Take back the verdict")]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
