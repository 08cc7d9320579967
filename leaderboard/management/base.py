"""Shared shapes of the catalogue commands (the vocabulary and checks they share: leaderboard/run_command.py)."""

import sys
from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.run_command import AtelierCommand


class TaskSetCommand(AtelierCommand):
    """A command about one task set: ``--task-set`` and ``--version`` (the task-set version)."""

    @staticmethod
    def import_file_bytes(path: Path) -> bytes:
        """The bytes of an import file; a missing path, a folder or an unreadable file is a CommandError
        naming it (read_bytes raises IsADirectoryError or PermissionError, a traceback otherwise)."""
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        try:
            return path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: not a readable file ({exc.strerror})") from exc


    @staticmethod
    def output_folder_check(output: str) -> None:
        """``-o FILE`` must be in an existing folder (or '-'): a CommandError saying so, before anything is read."""
        if output != "-" and not Path(output).parent.is_dir():
            raise CommandError(f"-o/--output: {Path(output).parent} is not a folder (give a file in an "
                               "existing folder, or '-' for standard output)")


class ExportCommand(TaskSetCommand):
    export = None  # set by subclasses: a service taking task_set= and fmt=

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser)
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl", help="file format")
        self.add_output_argument(parser)

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        self.output_folder_check(opts["output"])
        text = self.export(task_set=task_set, fmt=opts["format"])
        if opts["output"] == "-":
            sys.stdout.write(text)
        else:
            Path(opts["output"]).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {opts['output']}")
