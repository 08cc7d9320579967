"""manage.py easel_suite: store the generated EASEL suite as a frozen task set."""

from pathlib import Path

from django.core.management.base import CommandError

from engine.image_limits import IMAGE_FILE_BYTES, ImageTooLarge, image_size_checked
from leaderboard.easel import services
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


def image_file_bytes(path: Path) -> bytes:
    """The bytes of one ``--images`` file, read whole only once its size on disk (at most
    :data:`~engine.image_limits.IMAGE_FILE_BYTES`) and the pixel size its header declares (within the
    pixel budget) allow it; each refusal is a CommandError naming the file, never a traceback."""
    try:
        size = path.stat().st_size
        if size > IMAGE_FILE_BYTES:
            raise CommandError(f"{path} is {size:,} bytes, over the limit of {IMAGE_FILE_BYTES:,} bytes for an image "
                               "file: nothing was imported")
        with path.open("rb") as file:
            try:
                image_size_checked(file)  # reads the header only
            except ImageTooLarge as exc:
                raise CommandError(f"{path} is {exc}: nothing was imported") from exc
            except (OSError, SyntaxError, ValueError) as exc:  # Pillow's UnidentifiedImageError is an OSError
                raise CommandError(f"{path}: not a readable image ({exc})") from exc
            file.seek(0)
            data = file.read(IMAGE_FILE_BYTES + 1)  # bounded even if the file grew since its size was read
    except OSError as exc:
        raise CommandError(f"{path}: not a readable file ({exc.strerror})") from exc
    if len(data) > IMAGE_FILE_BYTES:
        raise CommandError(f"{path} grew past {IMAGE_FILE_BYTES:,} bytes while it was read: nothing was imported")
    return data


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
            # a file too large or unreadable is a CommandError naming it, found before the file is read whole
            images = [(str(path), image_file_bytes(path)) for path in sorted(folder.iterdir())
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
