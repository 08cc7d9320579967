"""The three roles: annotator, researcher, admin (Django groups with permissions).

Access checks are single gatekeeper functions, one condition per line, so that
tests can cover each case (zulip's `access_*` habit).
"""

from __future__ import annotations

from collections.abc import Callable

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


#: The rule that names crowd participants' internal accounts, as a filter of accounts. The annotation app, which
#: keeps the panels' participants, registers its one gatekeeper
#: (:func:`annotation.participant_accounts.participant_accounts_filter`) from its ``ready()``: this app may not
#: import it (annotation -> leaderboard -> engine).
_participant_accounts_rule: Callable[[], Q] | None = None


def participant_accounts_rule_register(rule: Callable[[], Q]) -> None:
    """Register the rule of :func:`participant_accounts_filter` (one rule: a second registration replaces it)."""
    global _participant_accounts_rule
    _participant_accounts_rule = rule


def participant_accounts_filter() -> Q:
    """The crowd participants' internal accounts as a filter of accounts (users), by the registered rule.
    While nothing is registered it errs on the safe side: every account that signs in with no password and has
    no role (what a participant's account is made as) counts as one, so no token is offered to it."""
    if _participant_accounts_rule is None:
        return (Q(password__startswith=UNUSABLE_PASSWORD_PREFIX) & Q(is_staff=False) & Q(is_superuser=False)
                & ~Q(groups__name__in=ROLE_NAMES))
    return _participant_accounts_rule()


def token_holder_accounts() -> QuerySet:
    """The accounts an API token may be made for: every account but a crowd participant's internal account,
    whose study's entry link is its only way in and the study its only access (a role or staff given to it
    later changes neither). Whose account is a participant's is the annotation app's gatekeeper's to say
    (:func:`participant_accounts_filter`), the rule the login middleware and the admin's annotator choices
    follow: an account is refused a token exactly when it is refused every page outside its study."""
    return get_user_model().objects.filter(~participant_accounts_filter())


def require_researcher(user) -> None:
    if not is_researcher(user):
        raise PermissionDenied("Researchers only.")


def require_admin(user) -> None:
    if not is_admin(user):
        raise PermissionDenied("Admins only.")


def require_annotator(user) -> None:
    if not is_annotator(user):
        raise PermissionDenied("Annotators only.")
