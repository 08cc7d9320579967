from django.urls import path, re_path, register_converter

from annotation import api, live_views, panel_api, panel_research_views, panel_views, views
from annotation.url_converters import AssignmentTokenConverter, ShownSlotConverter

register_converter(AssignmentTokenConverter, "assignment_token")
register_converter(ShownSlotConverter, "shown_slot")

app_name = "annotation"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("c/<int:pk>/", views.work, name="work"),
    path("media/<assignment_token:token>/<shown_slot:slot>", views.media, name="media"),
    path("api/campaigns/<int:pk>/next", api.NextItemApi.as_view(), name="api_next"),
    path("api/campaigns/<int:pk>/progress", api.ProgressApi.as_view(), name="api_progress"),
    path("api/assignments/<assignment_token:token>/submit", api.SubmitApi.as_view(), name="api_submit"),
    path("api/assignments/<assignment_token:token>/skip", api.SkipApi.as_view(), name="api_skip"),
    path("api/campaigns/<int:pk>/previous", api.PreviousLabelApi.as_view(), name="api_previous"),
    path("api/assignments/<assignment_token:token>/revise", api.ReviseApi.as_view(), name="api_revise"),
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("campaigns/<int:pk>/", views.campaign_dashboard, name="campaign_dashboard"),
    path("campaigns/<int:pk>/status.json", live_views.campaign_live_status, name="campaign_live_status"),
    path("campaigns/<int:pk>/items/<int:item_pk>/", views.campaign_item, name="campaign_item"),
    re_path(r"^campaigns/(?P<pk>\d+)/labels\.(?P<fmt>jsonl|csv)$", views.campaign_export, name="campaign_export"),
    path("campaigns/<int:pk>/novelty-ablation", views.novelty_ablation_start, name="novelty_ablation_start"),
    path("campaigns/<int:pk>/adjudication/request", views.adjudication_request, name="adjudication_request"),
    path("campaigns/<int:pk>/adjudication/resolve", views.adjudication_resolve, name="adjudication_resolve"),
    # Crowd campaigns (issue 25): the participant's path under the study's entry link, and the researcher's page.
    path("p/<str:entry>/", panel_views.entry, name="panel_entry"),
    path("p/<str:entry>/consent", panel_views.consent, name="panel_consent"),
    path("p/<str:entry>/instructions", panel_views.instructions, name="panel_instructions"),
    path("p/<str:entry>/training", panel_views.training, name="panel_training"),
    path("p/<str:entry>/work", panel_views.work, name="panel_work"),
    path("p/<str:entry>/done", panel_views.done, name="panel_done"),
    path("p/<str:entry>/logged-out", panel_views.logged_out, name="panel_logged_out"),
    path("p/<str:entry>/media/<assignment_token:token>/<shown_slot:slot>", panel_views.media, name="panel_media"),
    path("p/<str:entry>/api/next", panel_api.PanelNextApi.as_view(), name="panel_api_next"),
    path("p/<str:entry>/api/assignments/<assignment_token:token>/submit", panel_api.PanelSubmitApi.as_view(),
         name="panel_api_submit"),
    path("p/<str:entry>/api/previous", panel_api.PanelPreviousApi.as_view(), name="panel_api_previous"),
    path("p/<str:entry>/api/assignments/<assignment_token:token>/skip", panel_api.PanelSkipApi.as_view(),
         name="panel_api_skip"),
    path("p/<str:entry>/api/assignments/<assignment_token:token>/revise", panel_api.PanelReviseApi.as_view(),
         name="panel_api_revise"),
    path("campaigns/<int:pk>/panel/", panel_research_views.panel_study, name="panel_study"),
    path("campaigns/<int:pk>/panel/entry-signing", panel_research_views.entry_signing, name="panel_entry_signing"),
    path("campaigns/<int:pk>/panel/participants/<int:participant_pk>/action", panel_research_views.participant_action,
         name="panel_participant_action"),
    # (int path converters, so an id beyond 64 bits is a 404 before the view: evalsite/request_checks.py)
    path("campaigns/<int:pk>/panel/pay.csv", panel_research_views.pay_report_download, {"fmt": "csv"},
         name="panel_pay_report_csv"),
    path("campaigns/<int:pk>/panel/pay.json", panel_research_views.pay_report_download, {"fmt": "json"},
         name="panel_pay_report_json"),
    path("calibration/judges/", views.judge_cards, name="judge_cards"),
    path("calibration/snapshots/<int:pk>/", views.snapshot_calibration, name="snapshot_calibration"),
    re_path(r"^calibration/snapshots/(?P<pk>\d+)/export\.(?P<fmt>csv|json|tex)$", views.snapshot_calibration_export,
            name="snapshot_calibration_export"),
    path("calibration/c2/runs/<int:pk>/", views.c2_run_calibration, name="c2_run_calibration"),
    re_path(r"^calibration/c2/runs/(?P<pk>\d+)/export\.(?P<fmt>csv|json|tex)$", views.c2_run_calibration_export,
            name="c2_run_calibration_export"),
    re_path(r"^campaigns/(?P<pk>\d+)/calibrated\.(?P<fmt>csv|json)$", views.campaign_calibrated_export,
            name="campaign_calibrated_export"),
]
