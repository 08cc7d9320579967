"""What a page's header says about who is signed in (issue 25 audit): a panel participant's account name
is internal (``panel-<campaign>-<random>``) and a participant must read nothing of the site's inside, so
every page they can load, error pages included, says "Participant"; everyone else reads their user name.

Whose account is a participant's is :func:`annotation.participant_accounts.account_participant`'s to say,
as for the login middleware: everyone else's page (a usable password) asks nothing more of the database.
"""

from __future__ import annotations

from django.http import HttpRequest

from annotation.participant_accounts import is_participant_account

#: What the header shows for a participant.
PARTICIPANT_NAME = "Participant"


def viewer(request: HttpRequest) -> dict[str, str | bool]:
    """Context processor: ``viewer_name``, the name the header shows ('' when nobody is signed in), and
    ``viewer_is_participant``."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"viewer_name": "", "viewer_is_participant": False}
    if is_participant_account(user):
        return {"viewer_name": PARTICIPANT_NAME, "viewer_is_participant": True}
    return {"viewer_name": user.get_username(), "viewer_is_participant": False}


__all__ = ["PARTICIPANT_NAME", "viewer"]
