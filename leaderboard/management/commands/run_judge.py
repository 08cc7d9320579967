"""manage.py run_judge: start (or resume) a judge run with a progress bar."""

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import JudgeRun
from leaderboard.ekphrasis.selectors import judge_run_primary_done
from leaderboard.management.progress_bar import progress_bar
from leaderboard.models import Benchmark
from leaderboard.providers import UnknownJudge
from leaderboard.run_command import RunCommand, positive_int
from leaderboard.runs.errors import RunConfigurationError


class Command(RunCommand):
    help = (
        "Judge a task set pairwise (warm start + active BT selection per task) and store a leaderboard "
        "snapshot. --judge simulated uses the labelled simulated judge; any other name is a judge model."
    )
    benchmark_kind = Benchmark.Kind.EKPHRASIS
    run_model = JudgeRun
    noun = "judge run"
    configuration_errors = (UnknownJudge, RunConfigurationError)
    seed_default = 42
    queue_help = "send chunks to Celery workers and follow progress"

    def add_run_arguments(self, parser):
        parser.add_argument("--judge", default="simulated", metavar="NAME",
                            help="'simulated' (the labelled simulated judge) or a judge model's display name")
        parser.add_argument("--dimensions", default="UEN", help="letters of U (Usefulness), E (Expressiveness), N (Novelty)")
        parser.add_argument("--budget", type=positive_int, default=50, help="judge calls per task and dimension, ≥ 1")
        parser.add_argument("--novelty-anchor", choices=["tig", "generic"], default="tig",
                            help="what a Novelty judgment is anchored on")
        parser.add_argument("--tig-extractor", default="",
                            help="'offline' or a judge-role model (default: the latest TIG build's)")
        parser.add_argument("--tig-embedder", default="",
                            help="'minilm' or an embedder-role model (default: the latest TIG build's)")
        # '' stays a choice (the default, and what a script may pass explicitly), but argparse printed it as
        # an empty choice, {,embedding,llm}: the metavar names the two values and the help the default
        parser.add_argument("--tig-canonicaliser", default="", choices=["", "embedding", "llm"], metavar="{embedding,llm}",
                            help="synonym grouping: 'embedding' or 'llm' (the extractor model); default (left out, "
                                 "or ''): the latest TIG build's")

    def create_run(self, *, task_set, opts):
        return judge_runs.judge_run_create(
            task_set=task_set, judge_name=opts["judge"], dimensions=opts["dimensions"],
            budget_per_task=opts["budget"], seed=opts["seed"], novelty_anchor=opts["novelty_anchor"],
            config={"tig": {"extractor": opts["tig_extractor"], "embedder": opts["tig_embedder"],
                            "canonicaliser": opts["tig_canonicaliser"]}},
        )

    def follow(self, run, opts):
        label = " (SIMULATED judge)" if run.is_simulated else ""
        self.stdout.write(f"run {run.pk}: {run.judge_name}{label} on {run.task_set}, budget {run.budget_per_task}, seed {run.seed}")
        # The bar counts primary comparisons against the budget fixed at creation (calls_planned), so its total
        # never changes; the diagnostic calls (swaps, duplicates, auxiliary) are reported when the run is done.
        bar = progress_bar(total=run.calls_planned, initial=judge_run_primary_done(run=run), unit="call",
                           desc=f"run {run.pk}")
        if opts["queue"]:
            from leaderboard.runs.tasks import run_dispatch

            run_dispatch.delay("judge_run", run.pk)
            self.follow_queued(run, bar, done=lambda r: judge_run_primary_done(run=r),
                               finished=(JudgeRun.Status.DONE, JudgeRun.Status.FAILED))
            snapshot = run.snapshots.first()
        else:
            snapshot = self.execute_inline(
                run, lambda: judge_runs.judge_run_execute_inline(run=run, progress=bar.update), opts=opts)
        bar.close()
        self.refuse_if_failed(run)
        if snapshot is None:  # a fixed-pair run (e.g. the Novelty ablation) stores no leaderboard
            self.stdout.write(f"run {run.pk} done: {run.calls_done} judge calls on fixed pairs; no leaderboard snapshot")
            return
        payload = snapshot.payload
        self.stdout.write(f"run {run.pk} done: {run.calls_done} judge calls ({judge_run_primary_done(run=run)} primary of "
                          f"{run.calls_planned} planned, the rest diagnostic); leaderboard snapshot {snapshot.pk}; "
                          f"{payload.get('overall_measure', 'Overall VCI')}, {payload.get('interval', 'interval')}")
        low, high = payload.get("overall_ci90", [None, None])
        for rank, m in enumerate(payload["order"], start=1):
            interval = f"  [{low[m]:+.2f}, {high[m]:+.2f}]" if low and low[m] is not None else ""
            self.stdout.write(f"  {rank:>2}. {payload['models'][m]:<28} Overall {payload['overall'][m]:+.2f}{interval}")
