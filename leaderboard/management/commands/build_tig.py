"""manage.py build_tig: extract and embed a task set's responses for its Typed Idea Graphs."""

import time

from django.core.management.base import CommandError

from leaderboard.ekphrasis.models import TIGBuild
from leaderboard.ekphrasis.tig import (
    OFFLINE_EXTRACTOR,
    TIGConfigurationError,
    tig_build_create,
    tig_build_execute,
)
from leaderboard.management.base import TaskSetCommand
from leaderboard.management.progress_bar import progress_bar
from leaderboard.providers import OFFLINE_EMBEDDER


class Command(TaskSetCommand):
    help = (
        "Extract and embed every response of a task set once for the Typed Idea Graphs (resumable: stored per "
        "response). --extractor offline uses the labelled rule-based fallback; any other name is a judge-role "
        "model. --embedder minilm runs all-MiniLM-L6-v2 offline; any other name is an embedder-role model."
    )

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser, required=False)
        parser.add_argument("--extractor", default=OFFLINE_EXTRACTOR, metavar="NAME",
                            help=f"'{OFFLINE_EXTRACTOR}' (labelled rule-based fallback) or a judge-role model")
        parser.add_argument("--embedder", default=OFFLINE_EMBEDDER, metavar="NAME",
                            help=f"'{OFFLINE_EMBEDDER}' (all-MiniLM-L6-v2, offline) or an embedder-role model")
        parser.add_argument("--canonicaliser", default="embedding", choices=["embedding", "llm"],
                            help="synonym grouping: embedding similarity, or the extractor model ('llm')")
        parser.add_argument("--resume", type=int, metavar="BUILD_ID", help="resume an interrupted build (the other options are then ignored)")
        parser.add_argument("--queue", action="store_true", help="send the build to a Celery worker and follow it")

    def handle(self, *args, **opts):
        if opts["resume"]:
            build = TIGBuild.objects.filter(pk=opts["resume"]).first()
            if build is None:
                raise CommandError(f"no TIG build {opts['resume']}")
        else:
            if not opts["task_set"]:
                raise CommandError("--task-set is required (or --resume BUILD_ID)")
            task_set = self.task_set_from(opts)
            try:
                build = tig_build_create(
                    task_set=task_set, extractor=opts["extractor"], embedder=opts["embedder"],
                    canonicaliser=opts["canonicaliser"],
                )
            except TIGConfigurationError as exc:
                raise CommandError(str(exc)) from exc
        offline = " (offline fallback extractor)" if build.extractor == OFFLINE_EXTRACTOR else ""
        self.stdout.write(
            f"TIG build {build.pk} of {build.task_set}: extractor {build.extractor}{offline}, "
            f"embedder {build.embedder}, synonym grouping {build.canonicaliser}"
        )
        with progress_bar(total=build.tasks_total, unit="task", desc="TIG populations") as bar:
            if opts["queue"]:
                from leaderboard.runs.tasks import run_dispatch

                run_dispatch.delay("tig_build", build.pk)
                while build.status not in (TIGBuild.Status.DONE, TIGBuild.Status.FAILED):
                    time.sleep(1.0)
                    build.refresh_from_db()
                    bar.update(build.tasks_done - bar.n)
            else:
                self.execute_inline(build, lambda: tig_build_execute(
                    build_id=build.pk, progress=lambda done, total: bar.update(done - bar.n)), opts=opts)
        self.refuse_if_failed(build)
        self.stdout.write(
            f"{build.tasks_done} task population(s) extracted and embedded "
            f"({build.responses_extracted} responses)"
        )
