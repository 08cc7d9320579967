"""manage.py run_easel: run an agent on an EASEL suite (or resume a run) with a progress bar."""

import time

from django.core.management.base import CommandError
from tqdm import tqdm

from leaderboard.easel import selectors, services
from leaderboard.easel.models import EaselRun
from leaderboard.management.base import TaskSetCommand
from leaderboard.models import TaskSet
from leaderboard.runs.errors import RunConfigurationError


class Command(TaskSetCommand):
    help = ("Run an agent on an EASEL suite: --agent simulated (the labelled simulated agent), painter (the search "
            "painter), an anchor (blank_fill, mean_colour_fill, dominant_colour_fill) or a subject model's display name.")

    def add_arguments(self, parser):
        parser.add_argument("--task-set", dest="task_set")
        parser.add_argument("--version", dest="task_set_version", default=None)
        parser.add_argument("--agent", default="simulated")
        parser.add_argument("--budget", choices=EaselRun.Budget.values, default=EaselRun.Budget.ALIGNED,
                            help="aligned: Table 1 budgets; native: 250 steps per reference")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--skill", type=float, default=None, help="simulated agent only: skill in [0, 1]")
        parser.add_argument("--label", default="", help="simulated agent only: the row label")
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="resume an interrupted run")
        parser.add_argument("--queue", action="store_true", help="send episodes to Celery workers and follow progress")

    def handle(self, *args, **opts):
        if opts["resume"]:
            try:
                run = EaselRun.objects.select_related("task_set").get(pk=opts["resume"])
            except EaselRun.DoesNotExist as exc:
                raise CommandError(f"no EASEL run {opts['resume']}") from exc
        else:
            if not opts["task_set"]:
                raise CommandError("--task-set is required (or --resume RUN_ID)")
            try:
                run = services.easel_run_create(
                    task_set=self.task_set_from(opts), agent=opts["agent"], budget_setting=opts["budget"],
                    seed=opts["seed"], skill=opts["skill"], label=opts["label"],
                )
            except (TaskSet.DoesNotExist, RunConfigurationError) as exc:
                raise CommandError(str(exc)) from exc
        label = " (SIMULATED agent)" if run.is_simulated else ""
        self.stdout.write(f"EASEL run {run.pk}: {run.agent_name}{label} on {run.task_set}, "
                          f"budget {run.budget_setting}, seed {run.seed}, {run.episodes_total} episodes")
        unit, total = ("episode", run.episodes_total) if run.agent_kind == EaselRun.AgentKind.ANCHOR else ("step", run.steps_planned)
        bar = tqdm(total=total, initial=run.episodes_done if unit == "episode" else run.steps_done, unit=unit,
                   desc=f"EASEL run {run.pk}", dynamic_ncols=True)
        if opts["queue"]:
            from leaderboard.runs.tasks import run_dispatch

            run_dispatch.delay("easel_run", run.pk)
            while True:
                run.refresh_from_db()
                bar.n = min(run.episodes_done if unit == "episode" else run.steps_done, bar.total)
                bar.refresh()
                if run.status in (EaselRun.Status.DONE, EaselRun.Status.FAILED):
                    break
                time.sleep(1.0)
        else:
            try:
                if unit == "episode":
                    run = services.easel_run_execute_inline(run=run)
                    bar.update(run.episodes_done - bar.n)
                else:
                    run = services.easel_run_execute_inline(run=run, progress=bar.update)
            except Exception as exc:
                services.easel_run_fail(run_id=run.pk, error=repr(exc))
                raise CommandError(f"run {run.pk} stopped: {exc!r}; resume it with --resume {run.pk}") from exc
        bar.close()
        run.refresh_from_db()
        if run.status == EaselRun.Status.FAILED:
            raise CommandError(f"run {run.pk} failed: {run.error}; resume it with --resume {run.pk}")
        self.stdout.write(f"run {run.pk} {run.status}: {run.episodes_done}/{run.episodes_total} episodes, {run.steps_done} steps")
        for name, value in selectors.run_summary(run=run).items():
            self.stdout.write(f"  {name:<28} {value:.3f}")
