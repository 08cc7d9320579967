from django.urls import path

from leaderboard.bundles import views

app_name = "bundles"

urlpatterns = [
    path("signing-key.pem", views.signing_key, name="signing_key"),
    path("<str:kind>/<int:pk>.tar.gz", views.bundle_download, name="download"),
    path("imported/", views.imported_board_list, name="imported_list"),
    path("imported/<int:pk>/", views.imported_board_detail, name="imported_detail"),
]
