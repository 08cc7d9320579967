"""manage.py run_c2: start (or resume) a C² run with a progress bar."""

import time

from django.core.management.base import CommandError
from tqdm import tqdm

from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs
from leaderboard.management.base import TaskSetCommand
from leaderboard.models import TaskSet
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.selectors import task_set_get


class Command(TaskSetCommand):
    help = (
        "Run C²-Eval on a task set: n samples per prompt and model, convergent answers graded (with the model's "
        "confidence asked in the same conversation), divergent answers rated. Model names 'simulated-*' and the "
        "rater name 'simulated' select the labelled simulated components; any other name is a subject / judge model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--task-set", dest="task_set")
        parser.add_argument("--version", dest="task_set_version", default=None)
        parser.add_argument("--models", default="", help="comma-separated subject model names")
        parser.add_argument("--samples", type=int, default=runs.DEFAULT_SAMPLES, help="samples per prompt (default 5)")
        parser.add_argument("--template", choices=C2Run.Template.values, default=C2Run.Template.STANDARD)
        parser.add_argument("--rater", default="simulated", help="'simulated' or a judge-role model")
        parser.add_argument("--second-rater", default="", help="optional second rater (inter-rater ICC; not scored)")
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--surprise-policy", choices=C2Run.SurprisePolicy.values, default=C2Run.SurprisePolicy.ZERO,
                            help="Surprise when no sample is correct: 'zero' (default) or 'formula' (S = 1 as printed)")
        parser.add_argument("--tau", type=float, default=0.9, help="Originality cosine threshold")
        parser.add_argument("--temperature", type=float, default=0.8)
        parser.add_argument("--embedder", default="minilm", help="'minilm' or an embedder-role model")
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="resume an interrupted run")
        parser.add_argument("--queue", action="store_true", help="send prompts to Celery workers and follow progress")

    def handle(self, *args, **opts):
        if opts["resume"]:
            try:
                run = C2Run.objects.get(pk=opts["resume"])
            except C2Run.DoesNotExist as exc:
                raise CommandError(f"no C² run {opts['resume']}") from exc
        else:
            if not opts["task_set"]:
                raise CommandError("--task-set is required (or --resume RUN_ID)")
            try:
                task_set = task_set_get(name=opts["task_set"], version=opts["task_set_version"])
                run = runs.c2_run_create(
                    task_set=task_set, model_names=opts["models"].split(","), n_samples=opts["samples"],
                    template=opts["template"], rater_name=opts["rater"], second_rater_name=opts["second_rater"], seed=opts["seed"],
                    surprise_policy=opts["surprise_policy"], tau=opts["tau"], temperature=opts["temperature"],
                    embedder=opts["embedder"],
                )
            except (TaskSet.DoesNotExist, RunConfigurationError) as exc:
                raise CommandError(str(exc)) from exc
        label = " (SIMULATED components)" if run.is_simulated else ""
        self.stdout.write(f"C² run {run.pk}{label}: {', '.join(run.subject_names)} on {run.task_set}, "
                          f"{run.template} template, n={run.n_samples}, rater {run.rater_name}, seed {run.seed}")
        bar = tqdm(total=run.calls_planned, initial=run.calls_done, unit="call", desc=f"C² run {run.pk}", dynamic_ncols=True)
        try:
            if opts["queue"]:
                from leaderboard.runs.tasks import run_dispatch

                run_dispatch.delay("c2_run", run.pk)
                while True:
                    run.refresh_from_db()
                    bar.n = min(run.calls_done, bar.total)
                    bar.refresh()
                    if run.status in (C2Run.Status.DONE, C2Run.Status.FAILED):
                        break
                    time.sleep(1.0)
            else:
                run = runs.c2_run_execute_inline(run=run, progress=bar.update)
        except RunConfigurationError as exc:
            runs.c2_run_fail(run_id=run.pk, error=str(exc))
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        run.refresh_from_db()
        if run.status == C2Run.Status.FAILED:
            raise CommandError(f"C² run {run.pk} failed: {run.error} (resume with --resume {run.pk})")
        self.stdout.write(f"C² run {run.pk} done: {run.calls_done} calls")
        results = run.results or {}
        for model in results.get("models", []):
            combined = results["combined"].get(model, {})
            shown = ", ".join(f"{table} {value:.1f}" for table, value in combined.items() if value is not None)
            self.stdout.write(f"  {model:<28} Combined creativity: {shown or 'n/a'}")
