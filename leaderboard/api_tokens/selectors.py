from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from leaderboard.api_tokens.models import ApiToken
from leaderboard.api_tokens.services import token_digest
from leaderboard.roles import token_holder_accounts


def api_tokens_of(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at")


def api_token_for_secret(secret: str) -> ApiToken | None:
    """The token that may sign in with this secret, with its user (one query): the gatekeeper of token sign-in.
    None for an unknown or revoked one, an inactive account's, and one whose account may not hold a token now
    (:func:`leaderboard.roles.token_holder_accounts`: a crowd participant's account, whose study is its only
    access). Asked at every request, not only when the token was made: an account that became a participant's
    since (or holds a token made before the service refused participants) signs in with none of its tokens."""
    return (ApiToken.objects.select_related("user")
            .filter(key_sha256=token_digest(secret), revoked_at__isnull=True, user__is_active=True,
                    user__in=token_holder_accounts())
            .first())
