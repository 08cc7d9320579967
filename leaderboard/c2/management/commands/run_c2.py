"""manage.py run_c2: start (or resume) a C² run with a progress bar."""

from engine.c2.uos import BOOTSTRAP_LEVEL
from engine.providers.client import MAX_TEMPERATURE
from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs
from leaderboard.management.progress_bar import progress_bar
from leaderboard.models import Benchmark
from leaderboard.run_command import RunCommand
from leaderboard.runs.errors import RunConfigurationError


class Command(RunCommand):
    help = (
        "Run C²-Eval on a task set: n samples per prompt and model, convergent answers graded (with the model's "
        "confidence asked in the same conversation), divergent answers rated. Model names 'simulated-*' and the "
        "rater name 'simulated' select the labelled simulated components; any other name is a subject / judge model."
    )
    benchmark_kind = Benchmark.Kind.C2
    run_model = C2Run
    noun = "C² run"
    configuration_errors = (RunConfigurationError,)
    seed_default = 42
    queue_help = "send prompts to Celery workers and follow progress"

    def add_run_arguments(self, parser):
        parser.add_argument("--models", default="", metavar="NAMES",
                            help="comma-separated subject model display names (required unless --resume)")
        parser.add_argument("--samples", type=int, default=runs.DEFAULT_SAMPLES, help="samples per prompt, 1..50")
        parser.add_argument("--template", choices=C2Run.Template.values, default=C2Run.Template.STANDARD,
                            help="prompt template")
        parser.add_argument("--rater", default="simulated", metavar="NAME", help="'simulated' or a judge-role model")
        parser.add_argument("--second-rater", default="", metavar="NAME",
                            help="a second rater for inter-rater ICC, not scored (default: none)")
        parser.add_argument("--surprise-policy", choices=C2Run.SurprisePolicy.values, default=C2Run.SurprisePolicy.ZERO,
                            help="Surprise when no sample is correct: 'zero' (default) or 'formula' (S = 1 as printed)")
        parser.add_argument("--tau", type=float, default=0.9, help="Originality cosine threshold, in (0, 1]")
        parser.add_argument("--temperature", type=float, default=0.8,
                            help=f"sampling temperature, in [0, {MAX_TEMPERATURE:g}]")
        parser.add_argument("--embedder", default="minilm", metavar="NAME", help="'minilm' or an embedder-role model")

    def create_run(self, *, task_set, opts):
        return runs.c2_run_create(
            task_set=task_set, model_names=opts["models"].split(","), n_samples=opts["samples"],
            template=opts["template"], rater_name=opts["rater"], second_rater_name=opts["second_rater"], seed=opts["seed"],
            surprise_policy=opts["surprise_policy"], tau=opts["tau"], temperature=opts["temperature"],
            embedder=opts["embedder"],
        )

    def follow(self, run, opts):
        label = " (SIMULATED components)" if run.is_simulated else ""
        self.stdout.write(f"C² run {run.pk}{label}: {', '.join(run.subject_names)} on {run.task_set}, "
                          f"{run.template} template, n={run.n_samples}, rater {run.rater_name}, seed {run.seed}")
        bar = progress_bar(total=run.calls_planned, initial=run.calls_done, unit="call", desc=f"C² run {run.pk}")
        if opts["queue"]:
            from leaderboard.runs.tasks import run_dispatch

            run_dispatch.delay("c2_run", run.pk)
            self.follow_queued(run, bar, done=lambda r: r.calls_done, finished=(C2Run.Status.DONE, C2Run.Status.FAILED))
        else:
            self.execute_inline(run, lambda: runs.c2_run_execute_inline(run=run, progress=bar.update), opts=opts)
        bar.close()
        self.refuse_if_failed(run)
        results = run.results or {}
        self.stdout.write(f"C² run {run.pk} done: {run.calls_done} calls; creativity per task type with its "
                          f"{BOOTSTRAP_LEVEL:.0%} bootstrap interval over prompts")
        for model in results.get("models", []):
            combined = results["combined"].get(model, {})
            shown = ", ".join(f"{table} {value:.1f}" for table, value in combined.items() if value is not None)
            self.stdout.write(f"  {model:<28} Combined creativity: {shown or 'n/a'}")
            for task_type, scores in results.get("scores", {}).get(model, {}).items():
                c = scores["creativity"]
                self.stdout.write(f"    {task_type:<26} {c['value']:.1f} [{c['low']:.1f}, {c['high']:.1f}] "
                                  f"({scores['n_prompts']} prompts)")

