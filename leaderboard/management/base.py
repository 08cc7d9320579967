"""Shared shapes of the catalogue commands."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import TaskSet
from leaderboard.selectors import task_set_get


class TaskSetCommand(BaseCommand):
    """A command that takes ``--version`` for a task-set version.

    Django reserves ``--version`` for its own version flag; the issue's CLI
    names the task-set version that way, so ours replaces Django's.
    """

    def create_parser(self, prog_name, subcommand, **kwargs):
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def task_set_from(self, opts) -> TaskSet:
        """The task set named by ``--task-set`` / ``--version``, or a CommandError saying it does not exist."""
        try:
            return task_set_get(name=opts["task_set"], version=opts["task_set_version"])
        except TaskSet.DoesNotExist as exc:
            raise CommandError(str(exc)) from exc


class ExportCommand(TaskSetCommand):
    export = None  # set by subclasses: a service taking task_set= and fmt=

    def add_arguments(self, parser):
        parser.add_argument("--task-set", required=True, dest="task_set")
        parser.add_argument("--version", dest="task_set_version", default=None, help="default: the latest version")
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        text = self.export(task_set=task_set, fmt=opts["format"])
        if opts["output"] == "-":
            sys.stdout.write(text)
        else:
            Path(opts["output"]).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {opts['output']}")
