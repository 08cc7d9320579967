"""Deployment checks of our own settings (run by `manage.py check --deploy`)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=True)
def development_secret_key_check(app_configs, **kwargs) -> list[Error]:
    """The repository's development SECRET_KEY is public: a deployment running on it signs sessions
    and CSRF tokens with a key anyone can read."""
    if settings.SECRET_KEY != settings.DEVELOPMENT_SECRET_KEY:
        return []
    return [Error(
        "SECRET_KEY is the repository's development key.",
        hint="Set SECRET_KEY to a long random value (and leave DEBUG and ATELIER_DEV unset) in production.",
        id="atelier.E001",
    )]
