"""``Authorization: Bearer atl_…`` (or ``Token atl_…``) for /api/v1/."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from leaderboard.api_tokens import selectors, services

KEYWORDS = (b"bearer", b"token")


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Give the token as 'Authorization: Bearer <token>'.")
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("Invalid token.") from exc
        token = selectors.api_token_for_secret(secret)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        services.api_token_touch(token=token)
        return token.user, token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """How the schema names the token: an HTTP bearer scheme."""

    target_class = ApiTokenAuthentication
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An API token from /account/api-tokens/."}
