"""Create an API token for a user and print its secret once (the page /account/api-tokens/ does the same)."""

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import CommandError

from leaderboard.api_tokens.services import api_token_create
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = "Create an API token for USERNAME and print the secret (shown once; only its SHA-256 is stored)."

    def add_arguments(self, parser):
        parser.add_argument("username", help="the user the token acts as")
        parser.add_argument("--name", default="cli", help="what the token is for")

    def handle(self, *args, username: str, name: str, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        try:
            _, secret = api_token_create(user=user, name=name)
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(secret)
