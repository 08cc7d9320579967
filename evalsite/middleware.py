"""Login is required everywhere except the login page, static files and health."""

from django.conf import settings
from django.contrib.auth.views import redirect_to_login

PUBLIC_PREFIXES = ("/accounts/login/", "/static/", "/healthz", "/favicon.ico",
                   # crowd studies' entry links (issue 25): each of their pages admits only its own participant
                   "/annotate/p/")


class LoginRequiredEverywhere:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.user.is_authenticated and not request.path.startswith(PUBLIC_PREFIXES):
            if request.path.startswith("/api/v1/") and "HTTP_AUTHORIZATION" in request.META:
                return self.get_response(request)  # a token: DRF authenticates it (or refuses, 401)
            if request.path.startswith("/api/v1/"):
                from django.http import JsonResponse

                return JsonResponse({"error": "not_authenticated", "message": "Log in or send an API token.",
                                     "details": {}}, status=401, headers={"WWW-Authenticate": 'Bearer realm="api"'})
            if request.path.startswith("/api/"):
                from django.http import JsonResponse

                return JsonResponse({"detail": "Authentication required."}, status=401)
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return self.get_response(request)
