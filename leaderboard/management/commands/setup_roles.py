from leaderboard.run_command import AtelierCommand
from leaderboard.services.catalogue import role_groups_ensure


class Command(AtelierCommand):
    help = "Create the annotator / researcher / admin groups with their permissions (idempotent)."

    def handle(self, *args, **opts):
        role_groups_ensure()
        self.stdout.write("roles ready: annotator, researcher, admin")
