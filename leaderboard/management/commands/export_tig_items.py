import sys
from pathlib import Path

from leaderboard.ekphrasis.tig import tig_items_export
from leaderboard.management.base import TaskSetCommand


class Command(TaskSetCommand):
    help = "Export the materialised TIG Novelty items with cluster summaries (JSONL) for a TIG-audit campaign."

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser)
        self.add_output_argument(parser)

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        text = tig_items_export(task_set=task_set)
        if opts["output"] == "-":
            sys.stdout.write(text)
        else:
            Path(opts["output"]).write_text(text, encoding="utf-8")
