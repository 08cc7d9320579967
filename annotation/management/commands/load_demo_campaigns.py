from django.core.management.base import CommandError

from annotation.demo import SIMULATED_USERNAMES, demo_campaigns_load
from annotation.demo_panel import panel_demo_load
from annotation.demo_validation import validation_demo_load
from leaderboard.models import TaskSet
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = (
        "Create one DEMO campaign of each kind on the demo task set, pre-filled with labels from SIMULATED "
        "annotators, with items left open for annotator1..3 (idempotent; --reset recreates them)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--task-set", default="ekphrasis-demo", metavar="NAME", help="name of the (demo) task set")
        self.add_seed_argument(parser, default=7, help="seed of the simulated annotators, an integer ≥ 0")
        parser.add_argument("--reset", action="store_true", help="delete the demo campaigns and create them again")
        parser.add_argument(
            "--no-protocol-demo-data", action="store_true",
            help="do not load missing EASEL/C² demo data for the validation campaigns: skip those campaigns with a note",
        )

    def handle(self, *args, **opts):
        task_set = TaskSet.objects.filter(name=opts["task_set"]).order_by("-created_at").first()
        if task_set is None:
            raise CommandError(f"no task set named {opts['task_set']!r}: run `manage.py load_demo` first")
        summary = demo_campaigns_load(task_set=task_set, seed=opts["seed"], reset=opts["reset"])
        if summary.skipped:
            self.stdout.write(f"DEMO campaigns already exist on {task_set} ({len(summary.campaigns)}); use --reset to recreate.")
        else:
            self._ekphrasis_summary(task_set, summary)
        self._validation(opts)
        self._panel(task_set, opts)

    def _panel(self, task_set, opts):
        """The DEMO crowd study (issue 25): a Prolific campaign with SIMULATED participants in every state."""
        summary = panel_demo_load(task_set=task_set, seed=opts["seed"], reset=opts["reset"])
        if summary.skipped:
            self.stdout.write(f"DEMO crowd study already exists ({summary.campaign}).")
        elif summary.campaign is not None:
            states = ", ".join(f"{n} {state.replace('_', ' ')}" for state, n in sorted(summary.states.items()))
            self.stdout.write(f"DEMO crowd study: {summary.campaign} with SIMULATED participants ({states}); "
                              f"researcher page /annotate/campaigns/{summary.campaign.pk}/panel/")

    def _validation(self, opts):
        """The EASEL/C² validation campaigns (issue 13), on the EASEL and C² demo data."""
        summary = validation_demo_load(seed=opts["seed"], reset=opts["reset"], load_missing=not opts["no_protocol_demo_data"])
        for note in summary.notes:
            self.stdout.write(note)
        if summary.campaigns and summary.simulated_labels:
            self.stdout.write(f"DEMO validation campaigns: {summary.simulated_labels} labels from SIMULATED annotators.")
        for campaign in summary.campaigns:
            if campaign.name in summary.open_items:
                self.stdout.write(f"  {campaign.name:<48} {campaign.items.count():>4} items, "
                                  f"{summary.open_items[campaign.name]:>3} left open for annotator1..3")

    def _ekphrasis_summary(self, task_set, summary):
        self.stdout.write(f"DEMO campaigns on {task_set}: {summary.renders_created} placeholder renders drawn, "
                          f"{summary.simulated_labels} labels from SIMULATED annotators ({', '.join(SIMULATED_USERNAMES)}).")
        for campaign in summary.campaigns:
            self.stdout.write(f"  {campaign.name:<48} {campaign.items.count():>4} items, "
                              f"{summary.open_items[campaign.name]:>3} left open for annotator1..3")
        view = summary.ablation.get("ablation")
        runs = ", ".join(f"run {r.run_id} ({r.condition})" for r in summary.ablation.get("ablation_runs", []))
        if view is not None:
            counts = ", ".join(f"{row['label']} {row['correct']}/{view.n}" for row in summary.ablation["ablation_rows"])
            self.stdout.write(f"Novelty ablation with the SIMULATED judge ({runs}): {counts}. "
                              "The simulated judge does not read the anchors, so both conditions agree by construction.")
        if summary.calibration_items:
            self.stdout.write(f"{summary.calibration_items} text pairs chosen by the calibration sampling rule "
                              "(stratum 'calibration'), left open; the rest by the classical App. H.5 rule.")
