from django.urls import path, re_path

from leaderboard import views
from leaderboard.ekphrasis import construction_views
from leaderboard.ekphrasis import views as ekphrasis_views

urlpatterns = [
    path("", views.home, name="home"),
    path("search/", views.search, name="search"),
    path("models/<int:pk>/", views.model_profile, name="model_profile"),
    path("models/<int:pk>/compare/", views.model_compare_pick, name="model_compare_pick"),
    path("models/<int:pk>/compare/<int:other>/", views.model_compare, name="model_compare"),
    path("task-sets/", views.task_set_list, name="task_set_list"),
    path("task-sets/<int:pk>/", views.task_set_detail, name="task_set_detail"),
    path("task-sets/build/", construction_views.task_set_build_new, name="task_set_build_new"),
    path("task-sets/pools/import/", construction_views.source_pool_import, name="source_pool_import"),
    path("task-sets/builds/<int:pk>/", construction_views.task_set_build_detail, name="task_set_build_detail"),
    path("task-sets/builds/<int:pk>/status.json", construction_views.task_set_build_status, name="task_set_build_status"),
    path("task-sets/builds/<int:pk>/rejected/<int:candidate_pk>/override", construction_views.rejected_candidate_override,
         name="rejected_candidate_override"),
    re_path(
        r"^task-sets/(?P<pk>\d+)/export/(?P<what>tasks|responses)\.(?P<fmt>jsonl|csv)$",
        views.task_set_export,
        name="task_set_export",
    ),
    path("task-sets/<int:pk>/tig/<int:task_pk>/", ekphrasis_views.tig_viewer, name="tig_viewer"),
    path("task-sets/<int:pk>/renders/", views.task_set_renders, name="task_set_renders"),
    path("task-sets/<int:pk>/renders/<int:render_pk>/image", views.render_image, name="render_image"),
    path("task-sets/<int:pk>/tig-builds/new/", ekphrasis_views.tig_build_new, name="tig_build_new"),
    path("task-sets/<int:pk>/tig-builds/<int:build_pk>/", ekphrasis_views.tig_build_detail, name="tig_build_detail"),
    path("task-sets/<int:pk>/tig-builds/<int:build_pk>/status.json", ekphrasis_views.tig_build_status, name="tig_build_status"),
    path("task-sets/<int:pk>/tig-builds/<int:build_pk>/resume", ekphrasis_views.tig_build_resume, name="tig_build_resume"),
    path("leaderboards/", ekphrasis_views.leaderboard_list, name="leaderboard_list"),
    path("leaderboards/compare/", ekphrasis_views.snapshot_compare, name="snapshot_compare"),
    path("leaderboards/<int:pk>/", ekphrasis_views.snapshot_detail, name="snapshot_detail"),
    re_path(r"^leaderboards/(?P<pk>\d+)/export\.(?P<fmt>csv|json|tex)$", ekphrasis_views.snapshot_export, name="snapshot_export"),
    path("leaderboards/<int:pk>/tasks/<int:task_pk>/", ekphrasis_views.task_drilldown, name="task_drilldown"),
    path("runs/new/", ekphrasis_views.judge_run_new, name="judge_run_new"),
    path("runs/<int:pk>/", ekphrasis_views.judge_run_detail, name="judge_run_detail"),
    path("runs/<int:pk>/status.json", ekphrasis_views.judge_run_status, name="judge_run_status"),
    path("runs/<int:pk>/launch-override", construction_views.launch_gates_override, name="launch_gates_override"),
]
