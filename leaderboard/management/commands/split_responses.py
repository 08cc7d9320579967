from django.core.management.base import CommandError

from leaderboard.ekphrasis.provider_jobs import responses_split_with_llm
from leaderboard.management.base import TaskSetCommand
from leaderboard.models import SubjectModel
from leaderboard.providers import UnknownJudge


class Command(TaskSetCommand):
    help = "Split the answers the deterministic parser could not split with the LLM splitter (App. C.3)."

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser)
        parser.add_argument("--splitter", required=True, metavar="NAME", help="display name of the model used as splitter")

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        splitter = SubjectModel.objects.filter(display_name=opts["splitter"]).exclude(base_url="").first()
        if splitter is None:
            known = SubjectModel.objects.exclude(base_url="").order_by("display_name").values_list("display_name", flat=True)
            raise CommandError(f"no model with an endpoint named {opts['splitter']!r}; known: {', '.join(known) or 'none'}")
        try:
            split, pending = responses_split_with_llm(task_set=task_set, splitter=splitter)
        except UnknownJudge as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{split} response(s) split by {splitter}; {pending} still pending")
