from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from leaderboard.api_tokens.models import ApiToken
from leaderboard.api_tokens.services import token_digest


def api_tokens_of(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at")


def api_token_for_secret(secret: str) -> ApiToken | None:
    """The active token whose digest matches, with its user; None for an unknown or revoked one."""
    return (ApiToken.objects.select_related("user").filter(key_sha256=token_digest(secret), revoked_at__isnull=True)
            .first())
