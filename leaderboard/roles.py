"""The three roles: annotator, researcher, admin (Django groups with permissions).

Access checks are single gatekeeper functions, one condition per line, so that
tests can cover each case (zulip's `access_*` habit).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet

ANNOTATOR = "annotator"
RESEARCHER = "researcher"
ADMIN = "admin"
ROLE_NAMES = (ANNOTATOR, RESEARCHER, ADMIN)


def user_roles(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    if not user.is_authenticated:
        return frozenset()
    names = set(user.groups.values_list("name", flat=True)) & set(ROLE_NAMES)
    if user.is_superuser:
        names.add(ADMIN)
    # An admin can do everything a researcher can.
    if ADMIN in names:
        names.add(RESEARCHER)
    return frozenset(names)


def is_researcher(user) -> bool:
    return RESEARCHER in user_roles(user)


def is_admin(user) -> bool:
    return ADMIN in user_roles(user)


def is_annotator(user) -> bool:
    return ANNOTATOR in user_roles(user)


def token_holder_accounts() -> QuerySet:
    """The accounts an API token may be made for: everyone who signs in with a password (the API-token page
    is theirs, whatever their role: an annotator's token reaches the annotator endpoints), and every account
    with a role; never a crowd participant's internal account, which has neither: its study's entry link is
    its only way in (``set_unusable_password`` when the participant enters) and the study its only access."""
    return get_user_model().objects.filter(
        ~Q(password__startswith=UNUSABLE_PASSWORD_PREFIX)
        | Q(is_staff=True) | Q(is_superuser=True) | Q(groups__name__in=ROLE_NAMES)).distinct()


def require_researcher(user) -> None:
    if not is_researcher(user):
        raise PermissionDenied("Researchers only.")


def require_admin(user) -> None:
    if not is_admin(user):
        raise PermissionDenied("Admins only.")


def require_annotator(user) -> None:
    if not is_annotator(user):
        raise PermissionDenied("Annotators only.")
