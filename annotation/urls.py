from django.urls import path

from annotation import views

app_name = "annotation"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("campaigns/", views.campaign_list, name="campaign_list"),
]
