"""Routes of ``/api/v1/``: one view per operation (see each app's ``api`` module), the OpenAPI 3 schema
and its docs (Swagger UI and Redoc, served from static files: the CSP allows no CDN)."""

from csp.decorators import csp_update
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.renderers import JSONRenderer

import annotation.urls  # noqa: F401 - registers the assignment_token and shown_slot converters these routes use
from annotation import api_v1 as annotation_api
from annotation import panel_api
from leaderboard import api as catalogue_api
from leaderboard.api_contract import api_exception_handler
from leaderboard.bundles import api as bundles_api
from leaderboard.c2 import api as c2_api
from leaderboard.easel import api as easel_api
from leaderboard.ekphrasis import api as ekphrasis_api

app_name = "api"


class _RefusedInTheApiShape:
    """The schema and docs views (which need a valid session or token: SPECTACULAR_SETTINGS'
    SERVE_AUTHENTICATION and SERVE_PERMISSIONS) refuse as every /api/v1/ operation does."""

    def get_exception_handler(self):
        return api_exception_handler

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        # as JSON, whatever these views render on success (YAML, the docs' HTML), like every other refusal
        # (finalize_response copies the request's choice onto the response)
        self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), "application/json"
        return response


class SchemaView(_RefusedInTheApiShape, SpectacularAPIView):
    pass


class SwaggerView(_RefusedInTheApiShape, SpectacularSwaggerSplitView):
    pass


class RedocView(_RefusedInTheApiShape, SpectacularRedocView):
    pass


urlpatterns = [
    path("schema/", SchemaView.as_view(), name="schema"),
    # Swagger UI and Redoc draw their icons as data: SVGs; only these two pages allow data: images.
    path("docs/", csp_update({"img-src": ["data:"]})(SwaggerView.as_view(url_name="api:schema")), name="docs"),
    path("redoc/", csp_update({"img-src": ["data:"]})(RedocView.as_view(url_name="api:schema")), name="redoc"),
    # task sets and subject models
    path("task-sets/", catalogue_api.TaskSetListApi.as_view(), name="task_set_list"),
    path("task-sets/import", catalogue_api.TaskImportApi.as_view(), name="task_import"),
    path("task-sets/<int:pk>/", catalogue_api.TaskSetDetailApi.as_view(), name="task_set_detail"),
    path("task-sets/<int:pk>/versions", catalogue_api.TaskSetVersionCreateApi.as_view(), name="task_set_version_create"),
    path("task-sets/<int:pk>/responses/import", catalogue_api.ResponseImportApi.as_view(), name="response_import"),
    path("task-sets/<int:pk>/export", catalogue_api.TaskSetExportApi.as_view(), name="task_set_export"),
    path("subject-models/", catalogue_api.SubjectModelListApi.as_view(), name="subject_model_list"),
    path("subject-models/create", catalogue_api.SubjectModelCreateApi.as_view(), name="subject_model_create"),
    path("subject-models/<int:pk>/", catalogue_api.SubjectModelUpdateApi.as_view(), name="subject_model_update"),
    # the researcher's view: a model on every protocol, two models side by side (issue 26)
    path("models/<int:pk>/profile", catalogue_api.ModelProfileApi.as_view(), name="model_profile"),
    path("models/<int:pk>/compare", catalogue_api.ModelCompareApi.as_view(), name="model_compare"),
    # judge runs and leaderboard snapshots (Ekphrasis)
    path("judge-runs/", ekphrasis_api.JudgeRunListApi.as_view(), name="judge_run_list"),
    path("judge-runs/create", ekphrasis_api.JudgeRunCreateApi.as_view(), name="judge_run_create"),
    path("judge-runs/<int:pk>/", ekphrasis_api.JudgeRunDetailApi.as_view(), name="judge_run_detail"),
    path("judge-runs/<int:pk>/resume", ekphrasis_api.JudgeRunResumeApi.as_view(), name="judge_run_resume"),
    path("judge-runs/<int:pk>/cancel", ekphrasis_api.JudgeRunCancelApi.as_view(), name="judge_run_cancel"),
    path("judge-runs/<int:pk>/comparisons/", ekphrasis_api.JudgeRunComparisonListApi.as_view(),
         name="judge_run_comparisons"),
    path("leaderboards/", ekphrasis_api.SnapshotListApi.as_view(), name="snapshot_list"),
    path("leaderboards/compare", ekphrasis_api.SnapshotCompareApi.as_view(), name="snapshot_compare"),
    path("leaderboards/<int:pk>/", ekphrasis_api.SnapshotDetailApi.as_view(), name="snapshot_detail"),
    path("leaderboards/<int:pk>/export", ekphrasis_api.SnapshotExportApi.as_view(), name="snapshot_export"),
    path("leaderboards/<int:pk>/slices", ekphrasis_api.SnapshotSlicesApi.as_view(), name="snapshot_slices"),
    # human-calibrated boards and judge cards (issue 24; annotation joins labels to the judge's verdicts)
    path("leaderboards/<int:pk>/calibrated", annotation_api.SnapshotCalibratedApi.as_view(), name="snapshot_calibrated"),
    path("judges/cards", annotation_api.JudgeCardListApi.as_view(), name="judge_cards"),
    # EASEL
    path("easel/runs/", easel_api.EaselRunListApi.as_view(), name="easel_run_list"),
    path("easel/runs/create", easel_api.EaselRunCreateApi.as_view(), name="easel_run_create"),
    path("easel/runs/<int:pk>/", easel_api.EaselRunDetailApi.as_view(), name="easel_run_detail"),
    path("easel/runs/<int:pk>/resume", easel_api.EaselRunResumeApi.as_view(), name="easel_run_resume"),
    path("easel/runs/<int:pk>/cancel", easel_api.EaselRunCancelApi.as_view(), name="easel_run_cancel"),
    path("easel/runs/<int:pk>/episodes/", easel_api.EaselRunEpisodeListApi.as_view(), name="easel_run_episodes"),
    path("easel/episodes/<int:pk>/steps/", easel_api.EaselEpisodeStepListApi.as_view(), name="easel_episode_steps"),
    path("easel/leaderboard", easel_api.EaselLeaderboardApi.as_view(), name="easel_leaderboard"),
    # reproducibility bundles (all three protocols)
    path("bundles/ekphrasis/<int:pk>", bundles_api.EkphrasisBundleDownloadApi.as_view(), name="bundle_ekphrasis"),
    path("bundles/easel/<int:pk>", bundles_api.EaselBundleDownloadApi.as_view(), name="bundle_easel"),
    path("bundles/c2/<int:pk>", bundles_api.C2BundleDownloadApi.as_view(), name="bundle_c2"),
    # C²
    path("c2/task-sets/import", c2_api.C2TaskImportApi.as_view(), name="c2_tasks_import"),
    path("c2/runs/", c2_api.C2RunListApi.as_view(), name="c2_run_list"),
    path("c2/runs/create", c2_api.C2RunCreateApi.as_view(), name="c2_run_create"),
    path("c2/runs/<int:pk>/", c2_api.C2RunDetailApi.as_view(), name="c2_run_detail"),
    path("c2/runs/<int:pk>/resume", c2_api.C2RunResumeApi.as_view(), name="c2_run_resume"),
    path("c2/runs/<int:pk>/cancel", c2_api.C2RunCancelApi.as_view(), name="c2_run_cancel"),
    path("c2/runs/<int:pk>/samples/", c2_api.C2RunSampleListApi.as_view(), name="c2_run_samples"),
    path("c2/runs/<int:pk>/results", c2_api.C2RunResultsApi.as_view(), name="c2_run_results"),
    path("c2/runs/<int:pk>/calibrated", annotation_api.C2RunCalibratedApi.as_view(), name="c2_run_calibrated"),
    # campaigns (researchers, admins)
    path("campaigns/", annotation_api.CampaignListApi.as_view(), name="campaign_list"),
    path("campaigns/create", annotation_api.CampaignCreateApi.as_view(), name="campaign_create"),
    path("campaigns/<int:pk>/", annotation_api.CampaignDetailApi.as_view(), name="campaign_detail"),
    path("campaigns/<int:pk>/items/import", annotation_api.CampaignItemsImportApi.as_view(), name="campaign_items_import"),
    path("campaigns/<int:pk>/dashboard", annotation_api.CampaignDashboardApi.as_view(), name="campaign_dashboard"),
    path("campaigns/<int:pk>/calibrated", annotation_api.CampaignCalibratedApi.as_view(), name="campaign_calibrated"),
    path("campaigns/<int:pk>/labels/export", annotation_api.CampaignLabelsExportApi.as_view(), name="campaign_labels_export"),
    # crowd campaigns (researchers; issue 25)
    path("campaigns/<int:pk>/panel", panel_api.PanelStudyApi.as_view(), name="campaign_panel"),
    path("campaigns/<int:pk>/panel/entry-signing", panel_api.PanelEntrySigningApi.as_view(),
         name="campaign_panel_entry_signing"),
    path("campaigns/<int:pk>/panel/monitoring", panel_api.PanelMonitoringApi.as_view(), name="campaign_panel_monitoring"),
    path("campaigns/<int:pk>/panel/pay-report", panel_api.PanelPayReportApi.as_view(), name="campaign_panel_pay_report"),
    path("campaigns/<int:pk>/panel/return", panel_api.PanelReturnApi.as_view(), name="campaign_panel_participant_return"),
    path("campaigns/<int:pk>/panel/verdict", panel_api.PanelVerdictApi.as_view(), name="campaign_panel_participant_verdict"),
    # the annotator's queue (blinded)
    path("annotate/campaigns/<int:pk>/next", annotation_api.NextItemApi.as_view(), name="annotate_next"),
    path("annotate/campaigns/<int:pk>/progress", annotation_api.ProgressApi.as_view(), name="annotate_progress"),
    path("annotate/assignments/<assignment_token:token>/submit", annotation_api.SubmitApi.as_view(), name="annotate_submit"),
    path("annotate/assignments/<assignment_token:token>/skip", annotation_api.SkipApi.as_view(), name="annotate_skip"),
    path("annotate/campaigns/<int:pk>/previous", annotation_api.PreviousLabelApi.as_view(), name="annotate_previous"),
    path("annotate/assignments/<assignment_token:token>/revise", annotation_api.ReviseApi.as_view(),
         name="annotate_revise"),
    path("annotate/assignments/<assignment_token:token>/media/<shown_slot:slot>", annotation_api.AssignmentMediaApi.as_view(),
         name="annotate_media"),
]
