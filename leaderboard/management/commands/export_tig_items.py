import sys
from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.management.base import TaskSetCommand
from leaderboard.models import TaskSet
from leaderboard.selectors import task_set_get
from leaderboard.services.tig import tig_items_export


class Command(TaskSetCommand):
    help = "Export the materialised TIG Novelty items with cluster summaries (JSONL) for a TIG-audit campaign."

    def add_arguments(self, parser):
        parser.add_argument("--task-set", required=True, dest="task_set")
        parser.add_argument("--version", dest="task_set_version", default=None)
        parser.add_argument("--output", "-o", default="-")

    def handle(self, *args, **opts):
        try:
            task_set = task_set_get(name=opts["task_set"], version=opts["task_set_version"])
        except TaskSet.DoesNotExist as exc:
            raise CommandError(str(exc)) from exc
        text = tig_items_export(task_set=task_set)
        if opts["output"] == "-":
            sys.stdout.write(text)
        else:
            Path(opts["output"]).write_text(text, encoding="utf-8")
