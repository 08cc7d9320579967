"""The one shape of the project's management commands: one option vocabulary, help that states every
default, and checks that refuse bad input before anything is written.

Vocabulary (the same name means the same thing in every command):

``--task-set NAME``
    the task set, by name.
``--version V`` (alias ``--task-set-version V``)
    the task-set version. In a project command ``--version`` is always the task-set version: Django's own
    ``--version`` flag (which printed Django's version and exited 0) is removed from project commands, so it
    can never silently win; ``python -m django --version`` still prints Django's version.
``--seed N``
    the random seed, an integer ≥ 0.
``--judge`` / ``--agent`` / ``--models``
    who is evaluated or judges, by display name (``simulated`` selects the labelled simulated component).
``-o`` / ``--output``
    where to write (``-`` = standard output).
``--resume RUN_ID`` / ``--queue``
    continue an interrupted run / send the work to Celery workers and follow it.

:class:`AtelierCommand` is the base of every project command; :class:`RunCommand` adds the run family's
(``run_judge``, ``run_easel``, ``run_c2``) common handling: the task set is resolved and its benchmark kind
checked, the service that creates the run validates every value before it writes a row (the same service the
page and the API call, so all three refuse the same values), and a queued run is followed by one loop.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter

__all__ = ["AtelierCommand", "AtelierHelpFormatter", "RunCommand", "has_stated_default", "positive_int", "seed_value"]

#: Seconds between two looks at a queued run's progress.
QUEUE_POLL_SECONDS = 1.0


def _int_at_least(minimum: int, refusal: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from exc
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} {refusal}")
        return value

    return parse


_non_negative = _int_at_least(0, "is negative; a seed is an integer ≥ 0")


def seed_value(text: str) -> int:
    """``--seed``: an integer ≥ 0 (numpy's generators refuse negative seeds) and at most the API's bound."""
    from leaderboard.api_contract import MAX_SEED

    value = _non_negative(text)
    if value > MAX_SEED:
        raise argparse.ArgumentTypeError(f"{value} is above {MAX_SEED}; a seed is an integer in 0..{MAX_SEED}")
    return value


#: A count that must be at least 1.
positive_int = _int_at_least(1, "is below 1; give a count of at least 1")
positive_int.__name__ = "positive_int"


def protocol_name(kind: str) -> str:
    """'EASEL', 'Ekphrasis', 'C²-Eval': a benchmark kind as its label says it, without the gloss."""
    from leaderboard.models import Benchmark

    return str(Benchmark.Kind(kind).label).split(" (")[0]


class AtelierHelpFormatter(DjangoHelpFormatter):
    """Django's formatter, plus ``(default: X)`` after every option — and every positional that may be left
    out (``nargs="?"``, e.g. serve_demo's HOST:PORT) — whose help does not state its default; ``--version`` (the
    task-set version) stays with the command's own options instead of Django's."""

    show_last = DjangoHelpFormatter.show_last - {"--version"}

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text.lower() or not (action.option_strings or action.nargs == "?") \
                or not has_stated_default(action):
            return text
        return f"{text} (default: %(default)s)"


def has_stated_default(action: argparse.Action) -> bool:
    """Whether an option's default is worth stating: not absent (None, SUPPRESS, ''), not a flag's False."""
    default = action.default
    return not (default is None or default is False or default is argparse.SUPPRESS or default == ""
                or isinstance(action, argparse._VersionAction))


class AtelierCommand(BaseCommand):
    """The base of every project command (see the module docstring for the shared vocabulary)."""

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("formatter_class", AtelierHelpFormatter)
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_base_argument(self, parser, *args, **kwargs):
        if args == ("--version",):
            return  # --version is the task-set version in every project command
        super().add_base_argument(parser, *args, **kwargs)

    # ------------------------------------------------------------ the shared options

    @staticmethod
    def add_task_set_arguments(parser, *, required: bool = True, version_required: bool = False,
                               version_help: str = "task-set version (default: the latest version of --task-set)"):
        parser.add_argument("--task-set", dest="task_set", required=required, metavar="NAME",
                            help="name of the task set" + ("" if required else " (required unless --resume)"))
        parser.add_argument("--version", "--task-set-version", dest="task_set_version", default=None,
                            required=version_required, metavar="VERSION", help=version_help)

    @staticmethod
    def add_seed_argument(parser, *, default: int | None, help: str = "random seed, an integer ≥ 0"):
        parser.add_argument("--seed", type=seed_value, default=default, required=default is None, help=help)

    @staticmethod
    def add_output_argument(parser, *, default: str | None = "-", help: str = "file to write ('-': standard output)",
                            metavar: str = "FILE"):
        parser.add_argument("-o", "--output", default=default, required=default is None, metavar=metavar, help=help)

    # ------------------------------------------------------------ a run executed in this process

    def execute_inline(self, run, execute: Callable[[], Any], *, opts) -> Any:
        """``execute()`` the run in this process; None if it stopped. An error stops the run as a worker would
        record it — not resumable for a configuration resuming cannot change, resumable otherwise — and is
        then reported by :meth:`refuse_if_failed` in one line (``--traceback`` re-raises it)."""
        from leaderboard.runs.errors import ProviderOutage, RunConfigurationError
        from leaderboard.runs.lifecycle import run_fail

        try:
            return execute()
        except RunConfigurationError as exc:
            run_fail(type(run), run.pk, str(exc), resumable=False)
            failure = exc
        except ProviderOutage as exc:
            run_fail(type(run), run.pk, str(exc))
            failure = exc
        except Exception as exc:  # noqa: BLE001 - recorded on the run (resumable), as a worker's last retry does
            run_fail(type(run), run.pk, f"{type(exc).__name__}: {exc}")
            failure = exc
        if opts.get("traceback"):
            raise failure
        return None

    def refuse_if_failed(self, run, *, resume_with: str = "--resume") -> None:
        """A failed run ends the command in one line: its error, and ``resume_with RUN_ID`` offered only when
        resuming can change the outcome."""
        from leaderboard.runs.lifecycle import run_may_resume
        from leaderboard.runs.models import RunStatus

        run.refresh_from_db()
        if run.status != RunStatus.FAILED:
            return
        hint = (f"; resume it with {resume_with} {run.pk}" if run_may_resume(run)
                else "; resuming cannot change that: start a new run")
        raise CommandError(f"{getattr(self, 'noun', '') or run._meta.verbose_name} {run.pk} failed: {run.error}{hint}")

    def task_set_from(self, opts):
        """The task set named by ``--task-set`` / ``--version``, or a CommandError saying which exist."""
        from leaderboard.models import TaskSet
        from leaderboard.selectors import task_set_get

        try:
            return task_set_get(name=opts["task_set"], version=opts["task_set_version"])
        except TaskSet.DoesNotExist as exc:
            versions = list(TaskSet.objects.filter(name=opts["task_set"]).order_by("created_at", "pk")
                            .values_list("version", flat=True))
            if versions:
                allowed = f"versions of {opts['task_set']!r}: {', '.join(versions)}"
            else:
                names = sorted(set(TaskSet.objects.values_list("name", flat=True)))
                allowed = "task sets: " + (", ".join(names[:20]) + (" …" if len(names) > 20 else "") if names else "none yet")
            raise CommandError(f"{exc}; {allowed}") from exc


class RunCommand(AtelierCommand):
    """A command that creates (or resumes) a run and follows it with the progress bar.

    Subclasses set :attr:`benchmark_kind`, :attr:`run_model`, :attr:`noun` and :attr:`configuration_errors`,
    add their own options in :meth:`add_run_arguments`, create the run in :meth:`create_run` (through the
    service that validates every value before the first write) and show it in :meth:`follow`."""

    benchmark_kind: str = ""
    run_model: Any = None
    noun: str = "run"
    #: Exceptions by which a service refuses a configuration (they become one CommandError, nothing written).
    configuration_errors: tuple[type[Exception], ...] = ()
    seed_default: int = 0
    queue_help: str = "send the work to Celery workers and follow progress"

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser, required=False)
        self.add_seed_argument(parser, default=self.seed_default)
        self.add_run_arguments(parser)
        parser.add_argument("--resume", type=int, metavar="RUN_ID",
                            help=f"resume an interrupted {self.noun} (the other options are then ignored)")
        parser.add_argument("--queue", action="store_true", help=self.queue_help)

    def add_run_arguments(self, parser) -> None:
        """The family member's own options."""

    def create_run(self, *, task_set, opts):  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def follow(self, run, opts) -> None:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def handle(self, *args, **opts):
        if opts["resume"]:
            run = self.run_model.objects.filter(pk=opts["resume"]).first()
            if run is None:
                raise CommandError(f"no {self.noun} {opts['resume']}")
        else:
            if not opts["task_set"]:
                raise CommandError("--task-set is required (or --resume RUN_ID)")
            task_set = self.task_set_from(opts)
            if task_set.benchmark.kind != self.benchmark_kind:
                raise CommandError(f"{task_set} is a task set of {protocol_name(task_set.benchmark.kind)}; "
                                   f"the {self.noun} needs one of {protocol_name(self.benchmark_kind)} "
                                   f"({self._task_sets_of_kind()})")
            try:
                run = self.create_run(task_set=task_set, opts=opts)
            except self.configuration_errors as exc:
                raise CommandError(str(exc)) from exc
        self.follow(run, opts)

    def _task_sets_of_kind(self) -> str:
        from leaderboard.models import TaskSet

        names = sorted({f"{n} v{v}" for n, v in TaskSet.objects.filter(benchmark__kind=self.benchmark_kind)
                        .values_list("name", "version")})
        return "available: " + (", ".join(names[:10]) + (" …" if len(names) > 10 else "") if names else "none yet")

    @staticmethod
    def follow_queued(run, bar, *, done: Callable[[Any], int], finished: tuple[str, ...]) -> None:
        """Poll a queued run until it is in one of the ``finished`` states, moving ``bar`` to ``done(run)``."""
        while True:
            run.refresh_from_db()
            bar.n = min(done(run), bar.total) if bar.total else done(run)
            bar.refresh()
            if run.status in finished:
                return
            time.sleep(QUEUE_POLL_SECONDS)
