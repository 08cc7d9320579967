from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic.base import RedirectView

from evalsite.health import ReadinessView, healthz
from evalsite.metrics import metrics_view

urlpatterns = [
    # First: an annotator's every request is here, and Django tries the patterns in order (before the root's
    # include below, each annotator request walked the leaderboard's 29 patterns and raised a Resolver404 out
    # of them). No other pattern matches a path under annotate/, so the order changes no answer.
    path("annotate/", include("annotation.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("readyz", ReadinessView.as_view(), name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    # Browsers ask for /favicon.ico whatever the page links: send them to the static file.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.ico"), permanent=True), name="favicon"),
    path("easel/", include("leaderboard.easel.urls")),
    path("c2/", include("leaderboard.c2.urls")),
    path("bundles/", include("leaderboard.bundles.urls")),
    path("", include("leaderboard.urls")),
    path("api/v1/", include("evalsite.api_urls")),
    path("account/api-tokens/", include("leaderboard.api_tokens.urls")),
]

# JSON for API paths, HTML otherwise (evalsite/error_pages.py).
handler400 = "evalsite.error_pages.bad_request"
handler403 = "evalsite.error_pages.permission_denied"
handler404 = "evalsite.error_pages.page_not_found"
handler500 = "evalsite.error_pages.server_error"
