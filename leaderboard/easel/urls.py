from django.urls import path, re_path

from leaderboard.easel import views

app_name = "easel"

urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
    re_path(r"^export\.(?P<fmt>csv|json|tex)$", views.leaderboard_export, name="leaderboard_export"),
    path("compare/", views.compare, name="compare"),
    path("runs/new/", views.run_new, name="run_new"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/status.json", views.run_status, name="run_status"),
    path("runs/<int:pk>/resume", views.run_resume, name="run_resume"),
    path("episodes/<int:pk>/", views.episode_viewer, name="episode"),
    path("episodes/<int:pk>/task.png", views.task_image, name="task_image"),
    path("episodes/<int:pk>/final.png", views.final_canvas, name="final_canvas"),
    path("episodes/<int:pk>/canvas/<int:index>.png", views.step_canvas, name="step_canvas"),
]
