"""Role flags and the registered protocols for templates (navigation shows only what a role may do, and
one entry per protocol of the registry)."""

from leaderboard.protocols import protocols
from leaderboard.roles import user_roles


def roles(request):
    return {"roles": user_roles(request.user) if request.user.is_authenticated else frozenset(),
            "protocols": protocols()}
