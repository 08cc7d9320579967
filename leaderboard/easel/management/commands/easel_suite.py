"""manage.py easel_suite: store the generated EASEL suite as a frozen task set."""

from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.easel import services
from leaderboard.management.base import TaskSetCommand
from leaderboard.run_command import AtelierCommand

CATEGORIES = services.PAPER_SUITE_ORDER


def per_category_counts(text: str | None) -> dict[str, int] | None:
    """``--per-category 2`` (every category) or ``programmatic=2,natural=3`` (the named ones, others 0)."""
    if not text:
        return None
    if text.isdigit():
        return {name: int(text) for name in CATEGORIES}
    counts = {name: 0 for name in CATEGORIES}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name.strip() not in counts or not value.strip().isdigit():
            raise CommandError(f"--per-category: {part!r} is not CATEGORY=COUNT with CATEGORY one of {', '.join(CATEGORIES)}")
        counts[name.strip()] = int(value)
    return counts


class Command(AtelierCommand):
    help = ("Generate the EASEL suite for a seed (paper size: 15/40/15/40 = 110 references, Table 1) plus the five "
            "semantic tasks, and store it as a frozen task set. The same seed gives byte-identical references.")

    def add_arguments(self, parser):
        self.add_seed_argument(parser, default=0, help="seed of the generated references, an integer ≥ 0")
        parser.add_argument("--name", default=services.DEFAULT_SUITE_NAME, help="task-set name")
        parser.add_argument("--version", "--task-set-version", dest="task_set_version", default=None, metavar="VERSION",
                            help="task-set version (default: seed<N>, plus the counts of a small suite)")
        parser.add_argument("--per-category", default=None, metavar="COUNTS",
                            help="a small suite: N ≥ 1 references per category, or programmatic=2,natural=3,... "
                                 "(default: the paper's 15/40/15/40)")
        parser.add_argument("--images", default=None, metavar="DIR",
                            help="also import every image file in DIR as a Natural Images reference (centre crop, "
                                 "128×128; default: none)")

    def handle(self, *args, **opts):
        images = []
        if opts["images"]:
            folder = Path(opts["images"])
            if not folder.is_dir():
                raise CommandError(f"--images: {folder} is not a directory")
            # an unreadable file is a CommandError naming it, not a traceback
            images = [(str(path), TaskSetCommand.import_file_bytes(path)) for path in sorted(folder.iterdir())
                      if path.is_file() and not path.name.startswith(".")]
            if not images:
                raise CommandError(f"--images: no files in {folder}")
        try:
            task_set, created = services.easel_suite_create(
                seed=opts["seed"], per_category=per_category_counts(opts["per_category"]), name=opts["name"],
                version=opts["task_set_version"], images=images,
            )
        except (services.SuiteConflict, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        counts = {}
        for family in task_set.tasks.values_list("family", flat=True):
            counts[family] = counts.get(family, 0) + 1
        verb = "created" if created else "already present, byte-identical"
        self.stdout.write(f"{task_set} {verb}: {sum(counts.values())} tasks (frozen)")
        for family, n in counts.items():
            self.stdout.write(f"  {family:<20} {n}")
