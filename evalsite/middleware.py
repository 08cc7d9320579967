"""Login is required everywhere except the login page, static files and health."""

from django.conf import settings
from django.contrib.auth.views import redirect_to_login

# /metrics guards itself (loopback or token: evalsite/metrics.py); health and metrics never read the session,
# so they answer while the database is away. Crowd studies' entry links (/annotate/p/): each of their pages
# admits only its own participant.
PUBLIC_PREFIXES = ("/accounts/login/", "/static/", "/healthz", "/readyz", "/metrics", "/favicon.ico", "/annotate/p/")


class LoginRequiredEverywhere:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # The path first: reading request.user loads the session from the database.
        if not request.path.startswith(PUBLIC_PREFIXES) and not request.user.is_authenticated:
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
