from django.core.management.base import BaseCommand

from leaderboard.demo import DEMO_ACCOUNTS, demo_accounts_create, demo_catalogue_load


class Command(BaseCommand):
    help = "Load the DEMO Ekphrasis task set, demo subject models and demo accounts (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--no-accounts", action="store_true")

    def handle(self, *args, **opts):
        catalogue = demo_catalogue_load()
        self.stdout.write(f"DEMO DATA {catalogue.task_set}: tasks {catalogue.tasks}; responses {catalogue.responses}")
        if opts["no_accounts"]:
            return
        passwords = demo_accounts_create()
        roles = dict(DEMO_ACCOUNTS)
        self.stdout.write("Demo accounts (passwords are shown once, now):")
        for username, password in passwords.items():
            shown = password if password else "(already existed; password unchanged)"
            self.stdout.write(f"  {username:<12} {roles[username]:<11} {shown}")
