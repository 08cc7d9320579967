"""manage.py run_judge: start (or resume) a judge run with a progress bar."""

import time

from django.core.management.base import CommandError
from tqdm import tqdm

from leaderboard.ekphrasis import judge_runs
from leaderboard.management.base import TaskSetCommand
from leaderboard.management.progress_bar import progress_bar
from leaderboard.models import JudgeRun, TaskSet
from leaderboard.providers import UnknownJudge
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.selectors import task_set_get


class Command(TaskSetCommand):
    help = (
        "Judge a task set pairwise (warm start + active BT selection per task) and store a leaderboard "
        "snapshot. --judge simulated uses the labelled simulated judge; any other name is a judge model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--task-set", dest="task_set")
        parser.add_argument("--version", dest="task_set_version", default=None)
        parser.add_argument("--judge", default="simulated")
        parser.add_argument("--dimensions", default="UEN")
        parser.add_argument("--budget", type=int, default=50, help="judge calls per task and dimension")
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--novelty-anchor", choices=["tig", "generic"], default="tig")
        parser.add_argument("--tig-extractor", default="", help="'offline' or a judge-role model (default: the latest TIG build's)")
        parser.add_argument("--tig-embedder", default="", help="'minilm' or an embedder-role model (default: the latest TIG build's)")
        parser.add_argument("--tig-canonicaliser", default="", choices=["", "embedding", "llm"],
                            help="synonym grouping: 'embedding' or 'llm' (the extractor model); default: the latest TIG build's")
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="resume an interrupted run")
        parser.add_argument("--queue", action="store_true", help="send chunks to Celery workers and follow progress")

    def handle(self, *args, **opts):
        if opts["resume"]:
            try:
                run = JudgeRun.objects.get(pk=opts["resume"])
            except JudgeRun.DoesNotExist as exc:
                raise CommandError(f"no run {opts['resume']}") from exc
        else:
            if not opts["task_set"]:
                raise CommandError("--task-set is required (or --resume RUN_ID)")
            try:
                task_set = task_set_get(name=opts["task_set"], version=opts["task_set_version"])
                run = judge_runs.judge_run_create(
                    task_set=task_set, judge_name=opts["judge"], dimensions=opts["dimensions"],
                    budget_per_task=opts["budget"], seed=opts["seed"], novelty_anchor=opts["novelty_anchor"],
                    config={"tig": {"extractor": opts["tig_extractor"], "embedder": opts["tig_embedder"],
                                    "canonicaliser": opts["tig_canonicaliser"]}},
                )
            except (TaskSet.DoesNotExist, UnknownJudge, RunConfigurationError) as exc:
                raise CommandError(str(exc)) from exc
        label = " (SIMULATED judge)" if run.is_simulated else ""
        self.stdout.write(f"run {run.pk}: {run.judge_name}{label} on {run.task_set}, budget {run.budget_per_task}, seed {run.seed}")
        bar = progress_bar(total=run.calls_planned, initial=run.calls_done, unit="call", desc=f"run {run.pk}", dynamic_ncols=True)
        if opts["queue"]:
            from leaderboard.runs.tasks import run_dispatch

            run_dispatch.delay("judge_run", run.pk)
            while True:
                run.refresh_from_db()
                bar.n = min(run.calls_done, bar.total)
                bar.refresh()
                if run.status in (JudgeRun.Status.DONE, JudgeRun.Status.FAILED):
                    break
                time.sleep(1.0)
            snapshot = run.snapshots.first()
        else:
            snapshot = judge_runs.judge_run_execute_inline(run=run, progress=lambda k: _advance(bar, k))
        bar.close()
        run.refresh_from_db()
        if run.status == JudgeRun.Status.FAILED:
            raise CommandError(f"run {run.pk} failed: {run.error}")
        if snapshot is None:  # a fixed-pair run (e.g. the Novelty ablation) stores no leaderboard
            self.stdout.write(f"run {run.pk} done: {run.calls_done} judge calls on fixed pairs; no leaderboard snapshot")
            return
        self.stdout.write(f"run {run.pk} done: {run.calls_done} judge calls; leaderboard snapshot {snapshot.pk}")
        payload = snapshot.payload
        for rank, m in enumerate(payload["order"], start=1):
            self.stdout.write(f"  {rank:>2}. {payload['models'][m]:<28} Overall VCI {payload['overall'][m]:+.2f}")


def _advance(bar: tqdm, calls: int) -> None:
    # Diagnostic layers (swaps, duplicates, auxiliary) come on top of the primary budget.
    bar.total = max(bar.total, bar.n + calls)
    bar.update(calls)
