from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.import_contract import ImportFailed
from leaderboard.management.base import TaskSetCommand
from leaderboard.models import Benchmark
from leaderboard.services.catalogue import tasks_import


class Command(TaskSetCommand):
    help = "Import task records (JSONL or CSV) into a task set version; all or nothing, re-runnable."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the task records, JSONL or CSV")
        self.add_task_set_arguments(parser, version_required=True, version_help="the task-set version to create")
        parser.add_argument("--benchmark", default=Benchmark.Kind.EKPHRASIS, choices=Benchmark.Kind.values,
                            help="the protocol the task set belongs to")
        parser.add_argument("--format", choices=["jsonl", "csv"], default=None, help="default: from the file extension")
        parser.add_argument("--description", default="", help="a line describing the task set (default: none)")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        raw = self.import_file_bytes(path)
        try:
            task_set, summary = tasks_import(
                name=str(path),
                raw=raw,
                task_set_name=opts["task_set"],
                version=opts["task_set_version"],
                benchmark_kind=opts["benchmark"],
                description=opts["description"],
                fmt=opts["format"],
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{task_set}: tasks {summary}")
