"""Admin: the catalogue, plus an upload page that runs the same import services as the CLI."""

from django.contrib import admin, messages
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from leaderboard.ekphrasis.checklists import checklist_item_revise
from leaderboard.ekphrasis.models import (
    ChecklistItem,
    Comparison,
    JudgeRun,
    LaunchGateOverride,
    RejectedCandidate,
    SourcePool,
    TaskSetBuild,
)
from leaderboard.forms import JSON_FIELDS_STRICT, ResponseImportForm, SubjectModelAdminForm, TaskImportForm
from leaderboard.import_contract import ImportFailed
from leaderboard.models import Benchmark, Render, Response, SubjectModel, Task, TaskSet
from leaderboard.roles import require_admin
from leaderboard.services.catalogue import (
    SubjectModelNameRefused,
    responses_import,
    subject_model_save,
    subject_models_delete,
    tasks_import,
)


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ("name", "kind")


@admin.register(TaskSet)
class TaskSetAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "benchmark", "frozen", "is_demo", "created_at")
    list_filter = ("benchmark", "frozen", "is_demo")
    change_list_template = "admin/leaderboard/taskset/change_list.html"

    def get_readonly_fields(self, request, obj=None):
        # A frozen set is pinned by leaderboards: only a new version may change it.
        if obj is not None and obj.frozen:
            return ("benchmark", "name", "version", "description", "frozen", "is_demo")
        return ()

    def get_urls(self):
        return [path("import/", self.admin_site.admin_view(self.import_view), name="leaderboard_import")] + super().get_urls()

    def import_view(self, request):
        require_admin(request.user)
        task_form = TaskImportForm(prefix="tasks")
        response_form = ResponseImportForm(prefix="responses")
        errors = None
        if request.method == "POST":
            kind = request.POST.get("kind")
            try:
                if kind == "tasks":
                    task_form = TaskImportForm(request.POST, request.FILES, prefix="tasks")
                    if task_form.is_valid():
                        upload = task_form.cleaned_data["file"]
                        task_set, summary = tasks_import(
                            name=upload.name, raw=upload.read(),
                            task_set_name=task_form.cleaned_data["task_set"],
                            version=task_form.cleaned_data["version"],
                            benchmark_kind=task_form.cleaned_data["benchmark"],
                            description=task_form.cleaned_data["description"],
                        )
                        messages.success(request, f"{task_set}: tasks {summary}")
                        return redirect("admin:leaderboard_taskset_change", task_set.pk)
                elif kind == "responses":
                    response_form = ResponseImportForm(request.POST, request.FILES, prefix="responses")
                    if response_form.is_valid():
                        upload = response_form.cleaned_data["file"]
                        summary = responses_import(
                            name=upload.name, raw=upload.read(),
                            task_set=response_form.cleaned_data["task_set"],
                            create_models=response_form.cleaned_data["create_models"],
                            create_models_hint="tick “Create models” on this page",
                        )
                        task_set = response_form.cleaned_data["task_set"]
                        messages.success(request, f"{task_set}: responses {summary}")
                        return redirect("admin:leaderboard_taskset_change", task_set.pk)
            except ImportFailed as exc:
                errors = exc.errors
        context = {
            **self.admin_site.each_context(request),
            "title": "Import tasks or responses",
            "task_form": task_form,
            "response_form": response_form,
            "errors": errors,
        }
        return TemplateResponse(request, "admin/leaderboard/import.html", context)


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    formfield_overrides = JSON_FIELDS_STRICT
    list_display = ("external_id", "task_set", "family", "subtype")
    list_filter = ("task_set", "family")
    search_fields = ("external_id", "brief")


@admin.register(SubjectModel)
class SubjectModelAdmin(admin.ModelAdmin):
    form = SubjectModelAdminForm
    list_display = ("display_name", "role", "provider_id", "family", "base_url", "api_key_env", "accepts_images", "is_demo")
    list_filter = ("role", "accepts_images", "is_demo")

    # Through the catalogue's one write of models: a name added or changed moves the catalogue revision,
    # and everything annotators are shown is checked against the new names (annotation.blinding_recheck).
    def save_model(self, request, obj, form, change):
        subject_model_save(model=obj)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except SubjectModelNameRefused as taken:
            # Another admin saved a look-alike name between this form's check and its save (which checks again
            # under the catalogue's lock): nothing was written; say why on the same page instead of a 500.
            self.message_user(request, f"Not saved: {taken}", level=messages.ERROR)
            return redirect(request.get_full_path())

    def delete_model(self, request, obj):
        subject_models_delete(models=SubjectModel.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        subject_models_delete(models=queryset)


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ("task", "subject_model", "sample", "is_primary", "normalisation_method")
    list_filter = ("task__task_set", "subject_model", "normalisation_method", "is_primary")
    readonly_fields = ("raw_sha256",)


@admin.register(Render)
class RenderAdmin(admin.ModelAdmin):
    """The stored image is shown through the researchers' render view: media files are not served under
    /media/ (the file field's own link would be a 404), and a render is a record, not edited by hand."""

    list_display = ("response", "renderer", "seed", "is_placeholder")
    fields = ("response", "image_link", "image_sha256", "renderer", "seed", "prompt", "is_placeholder", "created_at")
    readonly_fields = ("response", "image_link", "image_sha256", "created_at")

    @admin.display(description="image")
    def image_link(self, obj):
        if obj.pk is None:
            return "–"
        url = reverse("render_image", args=[obj.response.task.task_set_id, obj.pk])
        return format_html('<a href="{}">{}</a>', url, obj.image.name)

    def has_add_permission(self, request):
        return False  # renders are made by the renderer (manage.py generate_renders or import_renders), not typed in


@admin.register(ChecklistItem)
class ChecklistItemAdmin(admin.ModelAdmin):
    """Editing an item stores a new version (the old one stays, inactive, for the comparisons that used it)."""

    list_display = ("task", "dimension", "slot", "context_key", "version", "active", "source", "short_text")
    list_filter = ("dimension", "source", "active", "task__task_set")
    search_fields = ("text", "task__external_id")
    fields = ("task", "dimension", "slot", "context_key", "inspects", "source", "version", "active", "text", "provenance")
    readonly_fields = ("task", "dimension", "slot", "context_key", "inspects", "source", "version", "active", "provenance")

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:90]

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        require_admin(request.user)
        new = checklist_item_revise(item=ChecklistItem.objects.get(pk=obj.pk), text=form.cleaned_data["text"],
                                    note=f"edited by {request.user.username}")
        obj.pk = new.pk
        messages.info(request, f"Saved as version {new.version}; version {new.version - 1} is kept, inactive.")


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ("pk", "task_set", "judge_name", "is_simulated", "dimensions", "budget_per_task", "seed", "status")
    list_filter = ("status", "is_simulated")
    readonly_fields = [f.name for f in JudgeRun._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(Comparison)
class ComparisonAdmin(admin.ModelAdmin):
    list_display = ("run", "task", "dimension", "kind", "repeat", "judge_name", "status", "winner", "repaired")
    list_filter = ("run", "dimension", "kind", "status")
    readonly_fields = [f.name for f in Comparison._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class RecordAdmin(admin.ModelAdmin):
    """Records written by their services only (construction records and launch overrides: imports, builds,
    the override forms; C² and EASEL runs and their rows: the runs): the admin shows them. An edited run
    record would be a number nobody can recompute, and a field of the wrong shape breaks its pages."""

    formfield_overrides = JSON_FIELDS_STRICT

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(SourcePool)
class SourcePoolAdmin(RecordAdmin):
    list_display = ("name", "n_records", "sha256", "is_demo", "created_at")


@admin.register(TaskSetBuild)
class TaskSetBuildAdmin(RecordAdmin):
    list_display = ("pk", "name", "version", "status", "tasks_kept", "tasks_total", "seed", "screen", "created_at")
    list_filter = ("status", "screen")


@admin.register(RejectedCandidate)
class RejectedCandidateAdmin(RecordAdmin):
    list_display = ("external_id", "build", "cell_id", "rule", "reason", "overridden_at")
    list_filter = ("rule",)


@admin.register(LaunchGateOverride)
class LaunchGateOverrideAdmin(RecordAdmin):
    list_display = ("run", "reason", "created_by", "created_at")
