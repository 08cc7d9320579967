"""Admin: admins create campaigns, give them instructions and calibration examples, choose the
annotators, and fill them with items (JSONL import or App. H.5 pair sampling from the catalogue).
Every write goes through ``annotation.services``."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.widgets import AutocompleteSelect
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.forms.models import BaseInlineFormSet
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path

from annotation import blinding_recheck, item_creation, services
from annotation.choices import CampaignKind
from annotation.errors import AnnotationError, ItemsInvalid
from annotation.forms import (
    CalibrationExampleAdminForm,
    CampaignAdminForm,
    ItemImportForm,
    ValidationPairsForm,
    shown_texts_revision,
)
from annotation.kinds import kind_for
from annotation.label_models import LabelRevision
from annotation.models import (
    Adjudication,
    BlindingRefusal,
    CalibrationExample,
    Campaign,
    CampaignAnnotator,
    Item,
)
from annotation.participant_accounts import (
    annotator_choices,
    foreign_participant_memberships,
    participant_accounts_filter,
)
from evalsite.request_checks import id_of
from leaderboard.forms import JSON_FIELDS_STRICT
from leaderboard.roles import require_admin


class CalibrationExampleInline(admin.StackedInline):
    model = CalibrationExample
    form = CalibrationExampleAdminForm
    extra = 0


class _IdAutocompleteSelect(AutocompleteSelect):
    """Django's autocomplete shows the posted choice again by looking its id up; a hand-made POST whose
    choice is no id ("abc", "²", 2**64) raised ValueError or OverflowError there (a 500). Such a value
    shows as no choice; the form's field already refuses it."""

    def optgroups(self, name, value, attr=None):
        return super().optgroups(name, [v for v in value if id_of(str(v)) is not None], attr)


class CampaignAnnotatorFormSet(BaseInlineFormSet):
    """The annotator box takes the accounts :func:`annotation.participant_accounts.annotator_choices` names
    for this campaign: never another study's participant, and a crowd campaign's own participants stay valid.

    A row that already lists another study's participant
    (:func:`annotation.participant_accounts.foreign_participant_memberships`) is shown read-only: its box
    would refuse its own account, and every save of the campaign failed on it. Its Delete box removes it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: Read once: the change page's warning names the same rows (CampaignAdmin.render_change_form).
        self.foreign_memberships = (list(foreign_participant_memberships(campaign=self.instance))
                                    if self.instance.pk else [])
        self.foreign_rows = {row.pk for row in self.foreign_memberships}

    def add_fields(self, form, index):
        super().add_fields(form, index)
        field = form.fields["annotator"]
        if form.instance.pk is not None and form.instance.pk in self.foreign_rows:
            # Its own account only, never changed by the post: the row stays as it is until it is deleted.
            field.queryset = get_user_model().objects.filter(pk=form.instance.annotator_id)
            field.disabled = True
        else:
            field.queryset = annotator_choices(campaign=self.instance)


class CampaignAnnotatorInline(admin.TabularInline):
    model = CampaignAnnotator
    formset = CampaignAnnotatorFormSet
    extra = 1
    autocomplete_fields = ["annotator"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name in self.autocomplete_fields:
            kwargs["widget"] = _IdAutocompleteSelect(db_field, self.admin_site, using=kwargs.get("using"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
    # The admin heads an inline with the plural, upper-cased: name both in full.
    verbose_name = "annotator"
    verbose_name_plural = "Annotators this campaign is open to"


class AccountAdmin(auth_admin.UserAdmin):
    """Django's user admin, whose search also answers the admin's autocomplete of accounts (the campaign's
    annotator box): there it never offers a crowd participant's internal account. Such an account enters
    its own study only, whose entry lists it on its campaign; the user list itself still shows them all."""

    def get_search_results(self, request, queryset, search_term):
        queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        answering = request.resolver_match.view_name if request.resolver_match is not None else ""
        if answering == f"{self.admin_site.name}:autocomplete":
            queryset = queryset.filter(~participant_accounts_filter())
        return queryset, may_have_duplicates


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), AccountAdmin)


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    form = CampaignAdminForm
    list_display = ("name", "kind", "task_set", "status", "k", "open_to_all_annotators", "is_demo", "created_at")
    list_filter = ("kind", "status", "is_demo")
    inlines = [CampaignAnnotatorInline, CalibrationExampleInline]
    actions = ["open_campaigns", "close_campaigns", "refresh_content", "resume_texts"]
    change_form_template = "admin/annotation/campaign/change_form.html"
    #: Why annotators see only "paused for review" (annotation.blinding_recheck); set by the re-check only.
    PAUSE_FIELDS = ("texts_paused_at", "texts_paused_reason", "texts_blinding_revision")
    #: Never edited in the form: the creator is whoever adds the campaign (save_model), and the pause fields.
    SET_ELSEWHERE_FIELDS = ("created_by", *PAUSE_FIELDS)

    def get_readonly_fields(self, request, obj=None):
        # Each item has k slots: k is fixed once items exist; the kind and task set too.
        if obj is not None and obj.items.exists():
            return ("kind", "task_set", "k", *self.SET_ELSEWHERE_FIELDS)
        return self.SET_ELSEWHERE_FIELDS

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
            super().save_model(request, obj, form, change)
            return
        # Not the pause fields read when the request began: a pause (or a check) committed since is kept.
        obj.save(update_fields=[f.name for f in obj._meta.concrete_fields
                                if not f.primary_key and f.name not in self.PAUSE_FIELDS])

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            # The annotator rows' formset has just read the rows the warning names: not a second query.
            read = [inline.formset.foreign_memberships for inline in context.get("inline_admin_formsets", ())
                    if isinstance(inline.formset, CampaignAnnotatorFormSet)]
            self._foreign_rows_warn(request, obj, rows=read[0] if read else None)
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def response_change(self, request, obj):
        if "_continue" not in request.POST:
            self._foreign_rows_warn(request, obj)  # the change page, which says it too, is not shown next
        return super().response_change(request, obj)

    def _foreign_rows_warn(self, request, campaign: Campaign, rows: list[CampaignAnnotator] | None = None) -> None:
        """Name each annotator row that lists another study's participant (``rows`` if already read), and say
        how to remove it."""
        if rows is None:
            rows = list(foreign_participant_memberships(campaign=campaign))
        if not rows:
            return
        named = "; ".join(f"{row.annotator.username} (a participant of the crowd study of campaign "
                          f"'{row.annotator.panel_participant.campaign.name}')" for row in rows)
        self.message_user(request, (
            f"{campaign}: the annotator list holds {len(rows)} account{'s' if len(rows) > 1 else ''} of another "
            f"study's participant, listed by an earlier version of this page: {named}. Such a row gives that "
            "participant no access to this campaign and is shown read-only; the campaign's other fields save as "
            "usual. To remove it, tick 'Delete?' on its row under 'Annotators this campaign is open to' and save."
        ), messages.WARNING)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # The texts just saved were checked against the names of this revision (annotation.blinding_recheck).
        if (revision := shown_texts_revision(form, formsets)) is not None:
            blinding_recheck.campaign_texts_written(campaign_id=form.instance.pk, revision=revision)

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:pk>/import-items/", wrap(self.import_items_view), name="annotation_campaign_import_items"),
            path("<int:pk>/sample-pairs/", wrap(self.sample_pairs_view), name="annotation_campaign_sample_pairs"),
            path("<int:pk>/items-from-runs/", wrap(self.items_from_runs_view), name="annotation_campaign_items_from_runs"),
        ] + super().get_urls()

    def items_from_runs_view(self, request, pk: int):
        """EASEL/C² validation kinds: items drawn from stored runs (annotation.validation_items)."""
        from annotation.validation_admin import items_from_runs_view

        return items_from_runs_view(self, request, pk)

    def import_items_view(self, request, pk: int):
        require_admin(request.user)
        campaign = get_object_or_404(Campaign, pk=pk)
        form = ItemImportForm()
        errors = None
        if request.method == "POST":
            form = ItemImportForm(request.POST, request.FILES)
            if form.is_valid():
                upload = form.cleaned_data["file"]
                try:
                    created, updated = item_creation.items_import_jsonl(
                        campaign=campaign, name=upload.name, raw=upload.read(),
                        replace_changed=form.cleaned_data["replace_changed"],
                    )
                    messages.success(request, f"{len(created)} items created, {len(updated)} replaced (earlier labels marked stale).")
                    return redirect("admin:annotation_campaign_change", campaign.pk)
                except AnnotationError as exc:
                    errors = exc.message
        return TemplateResponse(request, "admin/annotation/campaign/items_form.html", {
            **self.admin_site.each_context(request), "campaign": campaign, "form": form, "errors": errors,
            "title": f"Import items into {campaign}", "opts": self.model._meta,
        })

    def sample_pairs_view(self, request, pk: int):
        require_admin(request.user)
        campaign = get_object_or_404(Campaign, pk=pk)
        if campaign.kind != CampaignKind.TEXT_PAIRWISE:
            messages.error(request, "Pair sampling (App. H.5) is for text pairwise campaigns.")
            return redirect("admin:annotation_campaign_change", campaign.pk)
        form = ValidationPairsForm()
        errors = None
        if request.method == "POST":
            form = ValidationPairsForm(request.POST)
            if form.is_valid():
                from annotation.selectors import judge_rankings

                tasks = list(campaign.task_set.tasks.order_by("position", "external_id"))
                if form.cleaned_data["max_tasks"]:
                    tasks = tasks[: form.cleaned_data["max_tasks"]]
                rankings, source = judge_rankings(campaign=campaign, dimensions=form.cleaned_data["dimensions"])
                plans = None
                if form.cleaned_data["rule"] == "calibration":
                    from annotation.calibration_sampling import campaign_calibration_plan

                    plans, source = campaign_calibration_plan(
                        campaign=campaign, dimensions=form.cleaned_data["dimensions"], tasks=tasks,
                        pairs_per_task=form.cleaned_data["pairs_per_task"])
                try:
                    created = item_creation.items_create_validation_pairs(
                        campaign=campaign, dimensions=form.cleaned_data["dimensions"], rankings=rankings,
                        pairs_per_task=form.cleaned_data["pairs_per_task"], tasks=tasks, plans=plans,
                    )
                    messages.success(request, f"{len(created)} pairs sampled ({source}).")
                    return redirect("admin:annotation_campaign_change", campaign.pk)
                except AnnotationError as exc:
                    errors = exc.message
        return TemplateResponse(request, "admin/annotation/campaign/items_form.html", {
            **self.admin_site.each_context(request), "campaign": campaign, "form": form, "errors": errors,
            "title": f"Sample validation pairs for {campaign} (App. H.5)", "opts": self.model._meta,
        })

    @admin.action(description="Open for annotation")
    def open_campaigns(self, request, queryset):
        for campaign in queryset:
            try:
                services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
            except AnnotationError as exc:
                self.message_user(request, f"{campaign}: {exc.message}", messages.ERROR)

    @admin.action(description="Close")
    def close_campaigns(self, request, queryset):
        for campaign in queryset:
            services.campaign_status_set(campaign=campaign, status=Campaign.Status.CLOSED)

    @admin.action(description="Resume after review (check the shown texts again with the catalogue's names)")
    def resume_texts(self, request, queryset):
        for campaign in queryset.order_by("name"):
            if campaign.texts_paused_at is None:
                self.message_user(request, f"{campaign}: not paused for review; nothing to resume.", messages.WARNING)
                continue
            try:
                blinding_recheck.campaign_texts_resume(campaign=campaign)
            except ItemsInvalid as exc:
                named = "; ".join(f"{where} {message}" for _, where, message in exc.errors)
                self.message_user(request, f"{campaign}: still paused: {named}. Edit that text so it names no "
                                           "model, save, then choose this action again.", messages.ERROR)
            else:
                self.message_user(request, f"{campaign}: resumed; its texts name no model.", messages.SUCCESS)

    @admin.action(description="Re-check shown content (mark labels of changed items stale)")
    def refresh_content(self, request, queryset):
        for campaign in queryset:
            changed = item_creation.campaign_content_refresh(campaign=campaign)
            self.message_user(request, f"{campaign}: {len(changed)} items changed; their earlier labels are stale.")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    formfield_overrides = JSON_FIELDS_STRICT
    list_display = ("key", "campaign", "task", "dimension", "sampling_stratum", "is_gold")
    list_filter = ("campaign", "is_gold", "dimension")
    search_fields = ("key",)
    fields = ("campaign", "key", "task", "dimension", "response_a", "response_b", "render_a", "render_b", "payload",
              "sampling_stratum", "content_hash", "task_set_version", "is_gold", "gold_answer")

    def get_readonly_fields(self, request, obj=None):
        return [f for f in self.fields if f not in ("is_gold", "gold_answer")]

    def has_add_permission(self, request):
        return False  # items come from imports and sampling, which validate them

    def save_model(self, request, obj, form, change):
        try:
            item_creation.item_gold_set(item=obj, answer=form.cleaned_data["gold_answer"] if obj.is_gold else None)
        except AnnotationError as exc:
            self.message_user(request, exc.message, messages.ERROR)


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ("item", "requested_by", "requested_at", "outcome", "resolved_by")
    readonly_fields = ("item", "requested_by", "requested_at", "request_note", "outcome", "resolved_by", "resolved_at",
                       "resolution_note")

    def has_add_permission(self, request):
        return False


@admin.register(BlindingRefusal)
class BlindingRefusalAdmin(admin.ModelAdmin):
    """The report of items refused because what they would show names a model (annotation.blinding): at
    creation, or withheld after a model was added or renamed (``item`` set; annotation.blinding_recheck)."""

    list_display = ("created_at", "campaign", "item_key", "item", "line", "field", "identity", "response", "message")
    list_filter = ("campaign",)
    search_fields = ("item_key", "identity", "message")
    readonly_fields = ("campaign", "item", "item_key", "line", "field", "identity", "response", "message", "created_at")

    def has_add_permission(self, request):
        return False  # written by item creation and by withholding only

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(LabelRevision)
class LabelRevisionAdmin(admin.ModelAdmin):
    """The audit of changed labels: each row a superseded version, read-only (written only by
    :func:`annotation.label_revision.label_revise`)."""

    list_display = ("superseded_at", "campaign", "item_key", "annotator", "version", "given_at")
    list_filter = ("campaign",)
    search_fields = ("assignment__item__key", "annotator__username")
    readonly_fields = ("campaign", "assignment", "item_key", "annotator", "version", "superseded_answer", "values",
                       "given_at", "superseded_at", "idempotency_key", "content_hash", "task_set_version",
                       "time_on_revision_ms")
    fields = readonly_fields
    list_select_related = ("campaign", "annotator", "assignment__item")

    @admin.display(description="item")
    def item_key(self, obj: LabelRevision) -> str:
        return obj.assignment.item.key

    @admin.display(description="superseded answer")
    def superseded_answer(self, obj: LabelRevision) -> str:
        """The superseded version read by its kind, as the labels export shows an answer."""
        kind = kind_for(obj.campaign.kind)
        was = kind.label_model(**obj.values)
        flag = f"; flag {was.flag_reason}: {was.flag_note}" if was.flag_reason else ""
        return "; ".join(f"{k}: {v}" for k, v in kind.summary(was).items()) + flag

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


from annotation import panel_admin  # noqa: E402, F401 - registers the crowd campaigns' admin
