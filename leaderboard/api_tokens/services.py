"""Writes of API tokens: create (the secret is returned once, never stored) and revoke."""

from __future__ import annotations

import hashlib
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from leaderboard.api_tokens.models import ApiToken
from leaderboard.roles import token_holder_accounts

#: Every secret starts with this, so a leaked one is easy to recognise (and to scan for).
TOKEN_PREFIX = "atl_"


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def api_token_create(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """A new token and its secret (32 random bytes, URL-safe); only the digest is stored. PermissionDenied,
    with nothing stored, for an account that may not hold one (:func:`leaderboard.roles.token_holder_accounts`:
    a crowd participant's internal account, whose study is its only access)."""
    if not token_holder_accounts().filter(pk=user.pk).exists():
        raise PermissionDenied(f"{user.get_username()!r} may not hold an API token: it is a crowd participant's "
                               "account, whose study is its only access.")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name.strip()[:100] or "token", prefix=secret[:12],
                                    key_sha256=token_digest(secret))
    return token, secret


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_touch(*, token: ApiToken) -> None:
    """Record use, at most once a minute per token (a write per request would serialise a busy script)."""
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
