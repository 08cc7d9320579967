"""Role flags for templates (navigation shows only what a role may do)."""

from leaderboard.roles import user_roles


def roles(request):
    return {"roles": user_roles(request.user) if request.user.is_authenticated else frozenset()}
