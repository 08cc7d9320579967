"""manage.py load_demo_easel: the EASEL demo (small seeded suite, anchors, painter, simulated agents)."""

import time

from leaderboard.easel.demo import demo_runs_load, demo_suite_load
from leaderboard.management.progress_bar import progress_bar
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Load the DEMO EASEL suite (two references per category plus the five semantic tasks) and run the anchors, "
            "the search painter and three SIMULATED agents on it (idempotent: finished runs are kept).")

    def handle(self, *args, **opts):
        started = time.monotonic()
        task_set = demo_suite_load()
        self.stdout.write(f"DEMO DATA {task_set}: {task_set.tasks.count()} tasks")
        bars = {}

        def on_run(run):
            bar = progress_bar(total=run.steps_planned or run.episodes_total, initial=run.steps_done,
                               unit="step" if run.steps_planned else "episode", desc=run.agent_name[:32])
            bars[run.pk] = (bar, bool(run.steps_planned))
            return bar.update if run.steps_planned else None

        runs = demo_runs_load(task_set=task_set, on_run=on_run)
        for run in runs:
            bar, by_step = bars.get(run.pk, (None, False))
            if bar is None:
                continue
            if run.status == run.Status.DONE:
                # the step budget is an upper bound (agents submit early): a finished run's bar ends at 100 %
                bar.total = max(bar.n, 1) if by_step else run.episodes_total
                bar.n = bar.total
            bar.close()
        for run in runs:
            label = " [SIMULATED]" if run.is_simulated else ""
            self.stdout.write(f"  run {run.pk}: {run.agent_name}{label} ({run.budget_setting}) {run.status} "
                              f"in {run.demo_seconds:.1f} s")
        self.stdout.write(f"EASEL demo ready in {time.monotonic() - started:.1f} s: /easel/?task_set={task_set.pk}")
