"""Which accounts are crowd participants' (issue 25): the one gatekeeper of that question, and its twin
as a filter of accounts. Asked by the login middleware (:class:`evalsite.middleware.LoginRequiredEverywhere`:
a participant opens their study's pages only), the page header (:mod:`annotation.viewer`: "Participant",
never the internal ``panel-<campaign>-<random>`` name) and the study's entry (a site account's session is not
replaced: :mod:`annotation.panel_views`).

A participant's account is made at their first entry with an unusable password
(:func:`annotation.participants.participant_enter`): the study's entry link is its only way in, and the
Participant row says whose it is. An account with a usable password is therefore no participant's, and
is answered without a query: every researcher's and annotator's request asks the database nothing here.
"""

from __future__ import annotations

from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from annotation.panel_models import Participant


def account_participant(user: AbstractBaseUser | AnonymousUser) -> Participant | None:
    """The crowd participant whose account ``user`` is; None for anyone else (nobody signed in, an
    account with a usable password, an account without a Participant row)."""
    if not user.is_authenticated:
        return None
    if user.has_usable_password():
        return None
    try:
        # The reverse one-to-one caches its answer, the row or its absence, on the user: the middleware
        # and the header of one request ask the database once between them.
        return user.panel_participant
    except Participant.DoesNotExist:
        return None


def is_participant_account(user: AbstractBaseUser | AnonymousUser) -> bool:
    return account_participant(user) is not None


def participant_accounts_filter() -> Q:
    """:func:`account_participant`'s rule as a filter of accounts (users), for choices over many."""
    return Q(password__startswith=UNUSABLE_PASSWORD_PREFIX) & Q(panel_participant__isnull=False)


__all__ = ["account_participant", "is_participant_account", "participant_accounts_filter"]
