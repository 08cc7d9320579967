from django.core.management.base import CommandError

from leaderboard.demo import (
    DEMO_ACCOUNTS,
    demo_accounts_create,
    demo_catalogue_load,
    demo_judge_run,
    development_machine,
)
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Load the DEMO Ekphrasis task set, demo subject models and demo accounts (idempotent). On a "
            "development machine only, unless --allow-production; passwords are printed on a development machine only.")

    def add_arguments(self, parser):
        parser.add_argument("--no-accounts", action="store_true", help="do not create the demo accounts")
        parser.add_argument("--no-judge", action="store_true", help="skip the simulated judge run")
        parser.add_argument("--allow-production", action="store_true",
                            help="load the demo under production settings too (its accounts' passwords are then "
                                 "not printed: set them with `manage.py changepassword NAME`)")

    def handle(self, *args, **opts):
        production = not development_machine()
        if production and not opts["allow_production"]:
            raise CommandError("load_demo refuses to run under production settings (it creates the superuser "
                               "'admin'): on a development machine `export ATELIER_DEV=true`; to load the demo "
                               "here anyway, add --allow-production")
        catalogue = demo_catalogue_load()
        self.stdout.write(f"DEMO DATA {catalogue.task_set}: tasks {catalogue.tasks}; responses {catalogue.responses}")
        if not opts["no_judge"]:
            from leaderboard.ekphrasis.models import TIGBuild
            from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute
            from leaderboard.management.progress_bar import progress_bar

            # The graphs the demo's Novelty judgments use: offline extractor and MiniLM (labelled as such).
            build = TIGBuild.objects.filter(task_set=catalogue.task_set).first() or tig_build_create(
                task_set=catalogue.task_set
            )
            with progress_bar(total=build.tasks_total, unit="task", desc="TIG build (offline extractor)") as bar:
                tig_build_execute(build_id=build.pk, progress=lambda done, total: bar.update(done - bar.n))
            with progress_bar(unit="call", desc="simulated judge (demo)", dynamic_ncols=True) as bar:
                snapshot = demo_judge_run(task_set=catalogue.task_set, progress=bar.update)
            self.stdout.write(f"SIMULATED judge leaderboard for the demo: snapshot {snapshot.pk}")
            from leaderboard.ekphrasis.selectors import judge_run_launch_gates

            gates = judge_run_launch_gates(run=snapshot.run)
            self.stdout.write("Launch gates of the simulated demo run (App. D.3): " + "; ".join(
                f"{g['label']} {'pass' if g['passed'] else 'FAIL'} ({g['detail']})" for g in gates["results"]))
        from leaderboard.ekphrasis.task_construction import demo_source_pool_ensure

        pool = demo_source_pool_ensure()
        self.stdout.write(f"DEMO DATA source pool {pool.name}: {pool.n_records} records (for Task sets → Build a task set)")
        if opts["no_accounts"]:
            return
        passwords = demo_accounts_create()
        roles = dict(DEMO_ACCOUNTS)
        if production:
            self.stdout.write("Demo accounts: " + ", ".join(passwords) + " (production settings: no password is "
                              "printed; set one with `manage.py changepassword NAME`)")
            return
        self.stdout.write("Demo accounts (passwords are shown once, now):")
        for username, password in passwords.items():
            shown = password if password else "(already existed; password unchanged)"
            self.stdout.write(f"  {username:<12} {roles[username]:<11} {shown}")
