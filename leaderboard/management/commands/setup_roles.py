from django.core.management.base import BaseCommand

from leaderboard.services.catalogue import role_groups_ensure


class Command(BaseCommand):
    help = "Create the annotator / researcher / admin groups with their permissions (idempotent)."

    def handle(self, *args, **opts):
        role_groups_ensure()
        self.stdout.write("roles ready: annotator, researcher, admin")
