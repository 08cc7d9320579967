"""manage.py run_easel: run an agent on an EASEL suite (or resume a run) with a progress bar."""

from engine.easel.leaderboard import INTERVAL_LEVEL
from engine.easel.simulated import SKILL_RANGE
from leaderboard.easel import agents, selectors, services
from leaderboard.easel.models import EaselRun
from leaderboard.management.progress_bar import progress_bar
from leaderboard.models import Benchmark
from leaderboard.run_command import RunCommand
from leaderboard.runs.errors import RunConfigurationError


class Command(RunCommand):
    help = ("Run an agent on an EASEL suite: --agent simulated (the labelled simulated agent), painter (the search "
            "painter), an anchor (blank_fill, mean_colour_fill, dominant_colour_fill) or a subject model's display name.")
    benchmark_kind = Benchmark.Kind.EASEL
    run_model = EaselRun
    noun = "EASEL run"
    configuration_errors = (RunConfigurationError,)
    queue_help = "send episodes to Celery workers and follow progress"

    def add_run_arguments(self, parser):
        parser.add_argument("--agent", default=agents.SIMULATED, metavar="NAME",
                            help="simulated, painter, an anchor or a subject model's display name")
        parser.add_argument("--budget", choices=EaselRun.Budget.values, default=EaselRun.Budget.ALIGNED,
                            help="aligned: Table 1 budgets; native: 250 steps per reference")
        low, high = SKILL_RANGE
        parser.add_argument("--skill", type=float, default=None,
                            help=f"simulated agent only: skill in [{low:g}, {high:g}] "
                                 f"(default: {agents.DEFAULT_SIMULATED_SKILL})")
        parser.add_argument("--label", default="", help="simulated agent and painter: the row label "
                                                        "(default: the agent's own name)")

    def create_run(self, *, task_set, opts):
        return services.easel_run_create(task_set=task_set, agent=opts["agent"], budget_setting=opts["budget"],
                                         seed=opts["seed"], skill=opts["skill"], label=opts["label"])

    def follow(self, run, opts):
        label = " (SIMULATED agent)" if run.is_simulated else ""
        self.stdout.write(f"EASEL run {run.pk}: {run.agent_name}{label} on {run.task_set}, "
                          f"budget {run.budget_setting}, seed {run.seed}, {run.episodes_total} episodes")
        by_episode = run.agent_kind == EaselRun.AgentKind.ANCHOR
        unit, total = ("episode", run.episodes_total) if by_episode else ("step", run.steps_planned)
        bar = progress_bar(total=total, initial=run.episodes_done if by_episode else run.steps_done, unit=unit,
                           desc=f"EASEL run {run.pk}")
        if opts["queue"]:
            from leaderboard.runs.tasks import run_dispatch

            run_dispatch.delay("easel_run", run.pk)
            self.follow_queued(run, bar, done=lambda r: r.episodes_done if by_episode else r.steps_done,
                               finished=(EaselRun.Status.DONE, EaselRun.Status.FAILED))
        elif by_episode:
            if self.execute_inline(run, lambda: services.easel_run_execute_inline(run=run), opts=opts):
                run.refresh_from_db()
                bar.update(run.episodes_done - bar.n)
        else:
            self.execute_inline(run, lambda: services.easel_run_execute_inline(run=run, progress=bar.update), opts=opts)
        run.refresh_from_db()
        if run.status == EaselRun.Status.DONE and not by_episode:
            bar.total = max(bar.n, 1)  # the budget is an upper bound: agents may stop early, and the run is done
        bar.close()
        self.refuse_if_failed(run)
        self.stdout.write(f"run {run.pk} {run.status}: {run.episodes_done}/{run.episodes_total} episodes, "
                          f"{run.steps_done} steps; intervals: {INTERVAL_LEVEL:.0%} bootstrap over references")
        for name, (value, low, high) in selectors.run_summary_intervals(run=run).items():
            interval = "" if low is None else f"  [{low:.3f}, {high:.3f}]"
            self.stdout.write(f"  {name:<28} {value:.3f}{interval}")
