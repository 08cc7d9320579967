"""What a page's header says about who is signed in (issue 25 audit): a panel participant's account name
is internal (``panel-<campaign>-<random>``) and a participant must read nothing of the site's inside, so
every page they can load, error pages included, says "Participant"; everyone else reads their user name.

A participant's account never has a usable password (the entry link is its only way in), so, as in
:func:`evalsite.middleware._participant_study`, everyone else's page asks nothing more of the database.
"""

from __future__ import annotations

from django.http import HttpRequest

from annotation.panel_models import Participant

#: What the header shows for a participant.
PARTICIPANT_NAME = "Participant"


def viewer(request: HttpRequest) -> dict[str, str | bool]:
    """Context processor: ``viewer_name``, the name the header shows ('' when nobody is signed in), and
    ``viewer_is_participant``."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"viewer_name": "", "viewer_is_participant": False}
    if not user.has_usable_password() and Participant.objects.filter(user_id=user.pk).exists():
        return {"viewer_name": PARTICIPANT_NAME, "viewer_is_participant": True}
    return {"viewer_name": user.get_username(), "viewer_is_participant": False}


__all__ = ["PARTICIPANT_NAME", "viewer"]
