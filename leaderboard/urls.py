from django.urls import path, re_path

from leaderboard import views

urlpatterns = [
    path("", views.home, name="home"),
    path("task-sets/", views.task_set_list, name="task_set_list"),
    path("task-sets/<int:pk>/", views.task_set_detail, name="task_set_detail"),
    re_path(
        r"^task-sets/(?P<pk>\d+)/export/(?P<what>tasks|responses)\.(?P<fmt>jsonl|csv)$",
        views.task_set_export,
        name="task_set_export",
    ),
    path("leaderboards/", views.leaderboard_list, name="leaderboard_list"),
]
