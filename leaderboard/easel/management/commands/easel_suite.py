"""manage.py easel_suite: store the generated EASEL suite as a frozen task set."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from leaderboard.easel import services

CATEGORIES = ("programmatic", "spatial_geometry", "abstract_cartoon", "natural")


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


class Command(BaseCommand):
    help = ("Generate the EASEL suite for a seed (paper size: 15/40/15/40 = 110 references, Table 1) plus the five "
            "semantic tasks, and store it as a frozen task set. The same seed gives byte-identical references.")

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version names the task-set version here, as in the other catalogue commands
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--name", default=services.DEFAULT_SUITE_NAME, help="task-set name (default: easel)")
        parser.add_argument("--version", dest="suite_version", default=None,
                            help="task-set version (default: seed<N>, plus the counts of a small suite)")
        parser.add_argument("--per-category", default=None,
                            help="a small suite: N references per category, or programmatic=2,natural=3,...")
        parser.add_argument("--images", default=None, metavar="DIR",
                            help="also import every image file in DIR as a Natural Images reference (centre crop, 128×128)")

    def handle(self, *args, **opts):
        images = []
        if opts["images"]:
            folder = Path(opts["images"])
            if not folder.is_dir():
                raise CommandError(f"--images: {folder} is not a directory")
            images = [(str(path), path.read_bytes()) for path in sorted(folder.iterdir())
                      if path.is_file() and not path.name.startswith(".")]
            if not images:
                raise CommandError(f"--images: no files in {folder}")
        try:
            task_set, created = services.easel_suite_create(
                seed=opts["seed"], per_category=per_category_counts(opts["per_category"]), name=opts["name"],
                version=opts["suite_version"], images=images,
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
