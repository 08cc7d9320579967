from django.urls import path  # noqa: F401

app_name = "c2"

urlpatterns: list = []
