import argparse
import re

from django.core.management.base import CommandError

from engine.providers.client import ProviderError
from engine.providers.images import DEFAULT_SIZE
from leaderboard.ekphrasis.renders import RenderConfigurationError, renders_generate
from leaderboard.management.base import TaskSetCommand
from leaderboard.management.progress_bar import progress_bar
from leaderboard.models import SubjectModel


def image_size(text: str) -> str:
    """``--size``: WIDTHxHEIGHT in pixels (as the images API takes it) or ``auto``."""
    if text == "auto" or re.fullmatch(r"[1-9][0-9]{1,4}x[1-9][0-9]{1,4}", text):
        return text
    raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT (e.g. {DEFAULT_SIZE}) or 'auto'")


class Command(TaskSetCommand):
    help = (
        "Render every primary response of a task set with a renderer model through its OpenAI-compatible images "
        "endpoint, from the Core Idea and Visual Description only (App. I.1). Resumable: existing "
        "(response, renderer, seed) renders are skipped."
    )

    def add_arguments(self, parser):
        self.add_task_set_arguments(parser)
        parser.add_argument("--renderer", required=True, metavar="NAME",
                            help="display name of a subject model with role renderer")
        self.add_seed_argument(parser, default=None, help="seed sent to the images endpoint, an integer ≥ 0 (required)")
        parser.add_argument("--size", default=DEFAULT_SIZE, type=image_size,
                            help=f"image size asked for, WIDTHxHEIGHT or 'auto' (default {DEFAULT_SIZE})")

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        try:
            renderer = SubjectModel.objects.get(display_name=opts["renderer"], role=SubjectModel.Role.RENDERER)
        except SubjectModel.DoesNotExist as exc:
            known = SubjectModel.objects.filter(role=SubjectModel.Role.RENDERER).values_list("display_name", flat=True)
            raise CommandError(
                f"no renderer model named {opts['renderer']!r}; known: {', '.join(known) or 'none'}"
            ) from exc
        with progress_bar(unit="image", desc=f"renders by {renderer}") as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            try:
                report = renders_generate(
                    task_set=task_set, renderer=renderer, seed=opts["seed"], size=opts["size"], progress=progress
                )
            except (RenderConfigurationError, ProviderError) as exc:
                raise CommandError(str(exc)) from exc
        self.stdout.write(f"{task_set}: renders by {renderer} (seed {opts['seed']}): {report}")
        for line in report.unsplit:
            self.stderr.write(f"skipped (no Core Idea / Visual Description; run split_responses): {line}")
        for failure in report.failures:
            self.stderr.write(f"failed: {failure}")
        total = report.usage.get("total", {})
        self.stdout.write(
            f"usage: {total.get('calls', 0)} calls, {total.get('retries', 0)} retries, ${total.get('cost_usd', 0):.4f}"
        )
        if report.failures:
            raise CommandError(f"{len(report.failures)} render call(s) failed; re-run to retry them")
