from django.core.management.base import CommandError

from engine.providers.client import MAX_TEMPERATURE
from engine.simulated_subject import is_simulated_subject
from leaderboard.ekphrasis.provider_jobs import responses_generate, responses_simulate
from leaderboard.import_contract import ImportFailed
from leaderboard.management.base import TaskSetCommand
from leaderboard.models import SubjectModel
from leaderboard.providers import UnknownJudge


class Command(TaskSetCommand):
    help = (
        "Run a subject model on a task set through its OpenAI-compatible endpoint (App. A templates, "
        "temperature 0.7, 3 samples, sample 1 primary). Cached: re-running re-sends nothing answered."
    )

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser)
        parser.add_argument("--model", required=True, metavar="NAME", help="display name of a subject model with a base URL, or "
                            "simulated-NAME for the labelled simulated subject (offline; created on first use)")
        parser.add_argument("--samples", type=int, default=3, help="answers per task, ≥ 1 (sample 1 is the primary)")
        parser.add_argument("--temperature", type=float, default=0.7,
                            help=f"sampling temperature, in [0, {MAX_TEMPERATURE:g}]")

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        if is_simulated_subject(opts["model"]):
            try:
                report = responses_simulate(task_set=task_set, model_name=opts["model"], samples=opts["samples"])
            except (ImportFailed, ValueError) as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"SIMULATED subject {opts['model']}: responses {report.imported} (no provider called)")
            return
        try:
            model = SubjectModel.objects.get(display_name=opts["model"])
            report = responses_generate(task_set=task_set, model=model, samples=opts["samples"],
                                        temperature=opts["temperature"])
        except SubjectModel.DoesNotExist as exc:
            known = SubjectModel.objects.exclude(base_url="").values_list("display_name", flat=True)
            raise CommandError(f"no subject model named {opts['model']!r}; with an endpoint: "
                               f"{', '.join(known) or 'none'} (or simulated-NAME)") from exc
        except (UnknownJudge, ImportFailed, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{model}: responses {report.imported}")
        for failure in report.failures:
            self.stderr.write(f"failed: {failure}")
        total = report.usage.get("total", {})
        self.stdout.write(
            f"usage: {total.get('calls', 0)} calls, {total.get('cached_hits', 0)} cached, "
            f"{total.get('prompt_tokens', 0)}+{total.get('completion_tokens', 0)} tokens, ${total.get('cost_usd', 0):.4f}"
        )
        if report.failures:
            raise CommandError(f"{len(report.failures)} generation call(s) failed; re-run to retry them")
