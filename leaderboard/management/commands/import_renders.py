from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.ekphrasis.renders import renders_import_manifest
from leaderboard.import_contract import ImportFailed
from leaderboard.management.base import TaskSetCommand


class Command(TaskSetCommand):
    help = (
        "Import rendered images listed in a manifest (JSONL or CSV: task_id, model, sample, image, renderer, seed, "
        "optional prompt; image paths relative to the manifest) into a task set; all or nothing, re-runnable."
    )

    def add_arguments(self, parser):
        parser.add_argument("manifest", help="the manifest file, JSONL or CSV")
        self.add_task_set_arguments(parser)
        parser.add_argument("--format", choices=["jsonl", "csv"], default=None, help="default: from the file extension")

    def handle(self, *args, **opts):
        path = Path(opts["manifest"])
        raw = self.import_file_bytes(path)
        task_set = self.task_set_from(opts)
        try:
            summary = renders_import_manifest(
                name=str(path), raw=raw, task_set=task_set, base_dir=path.parent, fmt=opts["format"]
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{task_set}: renders {summary}")
