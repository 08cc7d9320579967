"""The username django-axes records for a login attempt (``AXES_USERNAME_CALLABLE``).

Axes stores the submitted username in a 255-character column and does not shorten it (it does
shorten the user agent and path): a longer username made PostgreSQL refuse the insert, and the
login page answer 500. No account has a longer name (``User.username`` holds 150), so the recorded
name is cut to the column; counting per account is unchanged for every real account.
"""

from __future__ import annotations

from axes.models import AccessAttempt
from django.conf import settings
from django.http import HttpRequest

#: AccessAttempt.username's length (the same for AccessLog and AccessFailureLog).
USERNAME_COLUMN_LENGTH = AccessAttempt._meta.get_field("username").max_length


def attempt_username(request: HttpRequest, credentials: dict | None = None) -> str | None:
    """Axes' own choice (the credentials, else the posted form field), cut to the column's length."""
    field = settings.AXES_USERNAME_FORM_FIELD
    username = credentials.get(field) if credentials else getattr(request, "data", request.POST).get(field)
    return username[:USERNAME_COLUMN_LENGTH] if isinstance(username, str) else username
