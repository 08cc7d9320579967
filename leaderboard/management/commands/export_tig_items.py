import sys
from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.ekphrasis.tig import tig_items_export
from leaderboard.management.base import TaskSetCommand
from leaderboard.models import Benchmark
from leaderboard.run_command import protocol_name


class Command(TaskSetCommand):
    help = "Export the materialised TIG Novelty items with cluster summaries (JSONL) for a TIG-audit campaign."

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser)
        self.add_output_argument(parser)

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        if task_set.benchmark.kind != Benchmark.Kind.EKPHRASIS:
            raise CommandError(f"{task_set} is a task set of {protocol_name(task_set.benchmark.kind)}; TIG items exist "
                               f"only for {protocol_name(Benchmark.Kind.EKPHRASIS)} task sets")
        self.output_folder_check(opts["output"])
        text = tig_items_export(task_set=task_set)
        if not text:
            self.stderr.write(f"no TIG Novelty items for {task_set}: a judge run of Novelty with TIG anchors (the "
                              "default) materialises them "
                              "(manage.py run_judge --task-set NAME)")
        if opts["output"] == "-":
            sys.stdout.write(text)
        else:
            Path(opts["output"]).write_text(text, encoding="utf-8")
