"""manage.py import_c2: one C² dataset file into a task set version (all or nothing, re-runnable)."""

from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.c2.services.imports import FORMATS, c2_tasks_import
from leaderboard.import_contract import ImportFailed
from leaderboard.management.base import TaskSetCommand


class Command(TaskSetCommand):
    help = (
        "Import a C² dataset in its published record format (TriviaQA, LiveCodeBench, OK-VQA questions + "
        "annotations + images, WritingPrompts, MacGyver, Creation-MMBench + images). Every error names "
        "file:line:field and nothing is written; re-importing the same file changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the dataset file in its published format")
        self.add_task_set_arguments(parser, version_required=True, version_help="the task-set version to create")
        parser.add_argument("--format", required=True, choices=list(FORMATS), help="the dataset's record format")
        parser.add_argument("--annotations", default=None, metavar="FILE",
                            help="okvqa: the annotations file (ten answers per question)")
        parser.add_argument("--images", default=None, metavar="DIR", help="okvqa, creation_mmbench: the image folder")
        parser.add_argument("--description", default="", help="a line describing the task set (default: none)")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        raw = self.import_file_bytes(path)
        annotations = Path(opts["annotations"]) if opts["annotations"] else None
        annotations_raw = self.import_file_bytes(annotations) if annotations is not None else None
        try:
            task_set, summary = c2_tasks_import(
                fmt=opts["format"], name=str(path), raw=raw,
                task_set_name=opts["task_set"], version=opts["task_set_version"],
                annotations_name=str(annotations or ""),
                annotations_raw=annotations_raw,
                images_dir=opts["images"], description=opts["description"],
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{task_set}: {opts['format']} tasks {summary}")
        for note in summary.notes:
            self.stdout.write(f"  {note}")
