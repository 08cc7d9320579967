from django.urls import path, re_path

from leaderboard.c2 import views

app_name = "c2"

urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
    path("compare/", views.compare, name="compare"),
    path("runs/new/", views.run_new, name="run_new"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/status.json", views.run_status, name="run_status"),
    path("runs/<int:pk>/resume", views.run_resume, name="run_resume"),
    path("runs/<int:pk>/prompts/<int:task_pk>/", views.prompt_detail, name="prompt_detail"),
    re_path(r"^runs/(?P<pk>\d+)/export\.(?P<fmt>csv|json|tex)$", views.run_export, name="run_export"),
    path("tasks/<int:task_pk>/image", views.task_image, name="task_image"),
]
