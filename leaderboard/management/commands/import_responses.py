from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.import_contract import ImportFailed
from leaderboard.management.base import TaskSetCommand
from leaderboard.services.catalogue import responses_import


class Command(TaskSetCommand):
    help = "Import response records (JSONL or CSV) into a task set; all or nothing, re-runnable."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the response records, JSONL or CSV")
        self.add_task_set_arguments(parser)
        parser.add_argument("--format", choices=["jsonl", "csv"], default=None, help="default: from the file extension")
        parser.add_argument("--create-models", action="store_true", help="create unknown subject models")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        raw = self.import_file_bytes(path)
        task_set = self.task_set_from(opts)
        try:
            summary = responses_import(
                name=str(path), raw=raw, task_set=task_set, fmt=opts["format"],
                create_models=opts["create_models"],
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{task_set}: responses {summary}")
