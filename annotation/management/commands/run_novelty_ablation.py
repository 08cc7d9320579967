"""manage.py run_novelty_ablation: judge a text pairwise campaign's Novelty pairs with TIG anchors and
with generic anchors (Ekphrasis §5.4, Table 4, App. D.1), with a progress bar, and print the result."""

from django.core.management.base import CommandError

from annotation import novelty_ablation, selectors
from annotation.errors import AnnotationError
from annotation.models import Campaign
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import JudgeRun
from leaderboard.management.progress_bar import progress_bar
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = (
        "Start two fixed-pair Novelty judge runs on a text pairwise campaign's Novelty items — the same judge, "
        "seed and pairs, one with TIG anchors and one with generic anchors — judge them in this process and "
        "print correct/n per condition against the human majority. --judge simulated uses the labelled "
        "simulated judge, which does not read the anchors."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", type=int, required=True, metavar="ID", help="a text pairwise campaign's id")
        parser.add_argument("--judge", required=True, metavar="NAME", help="'simulated' or a judge model's display name")
        self.add_seed_argument(parser, default=42, help="the judge runs' seed, an integer ≥ 0")

    def handle(self, *args, **opts):
        campaign = Campaign.objects.filter(pk=opts["campaign"]).select_related("task_set").first()
        if campaign is None:
            raise CommandError(f"no campaign {opts['campaign']}")
        try:
            runs = novelty_ablation.novelty_ablation_runs_create(campaign=campaign, judge_name=opts["judge"], seed=opts["seed"])
        except AnnotationError as exc:
            raise CommandError(exc.message) from exc
        label = " (SIMULATED judge)" if runs[0].is_simulated else ""
        self.stdout.write(
            f"campaign {campaign.pk} “{campaign.name}”: {runs[0].calls_planned} Novelty pairs; judge {runs[0].judge_name}{label}, "
            f"seed {runs[0].seed}: run {runs[0].pk} (TIG anchors), run {runs[1].pk} (generic anchors)"
        )
        bar = progress_bar(total=sum(r.calls_planned for r in runs), unit="call", desc="Novelty ablation")
        for run in runs:
            self.execute_inline(run, lambda run=run: judge_runs.judge_run_execute_inline(
                run=run, progress=bar.update), opts=opts)
            run.refresh_from_db()
            if run.status == JudgeRun.Status.FAILED:
                break
        bar.close()
        for run in runs:
            self.refuse_if_failed(run, resume_with="manage.py run_judge --resume")
            if run.status != JudgeRun.Status.DONE:
                raise CommandError(f"run {run.pk} ended {run.status}: {run.error}")
        panel = selectors.novelty_ablation_panel(campaign=campaign)
        view = panel["ablation"]
        if view is None:
            self.stdout.write("no ablation yet: the campaign's Novelty items need complete human labels")
            return
        for row in panel["ablation_rows"]:
            run = f"run {row['run'].run_id}" if row["run"] else "supplied outcomes"
            rate = "—" if row["rate"] is None else f"{100 * row['rate']:.1f}%"
            self.stdout.write(f"  {row['label']:<26} {run:<10} {row['correct']:>4} / {view.n:<4} {rate}")
        detail = f"discordant correct {view.discordant[0]} vs {view.discordant[1]}"
        if view.mcnemar is not None:
            detail += f"; McNemar p = {view.mcnemar.p:.4g} ({view.mcnemar.method})"
        self.stdout.write(f"  {detail}" + (f" — {view.note}" if view.note else ""))
        for note in panel["ablation_notes"]:
            self.stdout.write(f"  note: {note}")
