"""manage.py build_task_set: build a frozen Ekphrasis task-set version by Algorithm 1 (App. A, Table 5)."""

from pathlib import Path

from django.core.management.base import CommandError

from engine.task_construction.demo_pools import DEMO_POOL_NAME
from leaderboard.ekphrasis import task_construction as construction
from leaderboard.ekphrasis.models import SourcePool
from leaderboard.import_contract import ImportFailed
from leaderboard.management.progress_bar import progress_bar
from leaderboard.records import read_file_bytes
from leaderboard.run_command import AtelierCommand

DEMO_ALIAS = "demo"


class Command(AtelierCommand):
    help = (
        "Build a new frozen task-set version from source pools by Ekphrasis Algorithm 1. --pools takes pool names "
        "already imported, pool files (CSV/JSONL, imported under their file stem; idempotent) or 'demo' (the "
        "built-in demo pools, labelled demo data). --screen offline uses the labelled offline rules; any other "
        "name is a judge-role model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--pools", nargs="+", required=True, metavar="POOL",
                            help="pool names, pool files (CSV/JSONL) or 'demo'")
        parser.add_argument("--grid", default="table5", choices=sorted(construction.GRIDS),
                            help="the subtype grid and its quotas")
        self.add_seed_argument(parser, default=0, help="the construction's seed, an integer ≥ 0")
        parser.add_argument("--screen", default=construction.OFFLINE_SCREEN, metavar="NAME",
                            help="'offline' (the labelled offline rules) or a judge-role model")
        parser.add_argument("--name", default="ekphrasis-built", help="name of the task set to build")
        parser.add_argument("--version", "--task-set-version", dest="task_set_version", default=None,
                            metavar="VERSION", help="the task-set version to build (default: seed<SEED>-<grid>)")

    def _pool_source(self, ref: str) -> tuple[str, object]:
        """What a ``--pools`` entry names, checked without writing: ('demo', None), ('file', path) or ('pool', row)."""
        if ref in (DEMO_ALIAS, DEMO_POOL_NAME):
            return "demo", None
        path = Path(ref)
        if path.is_file():
            return "file", path
        pool = SourcePool.objects.filter(name=ref).first()
        if pool is None:
            raise CommandError(f"no pool or file named {ref!r}; imported pools: "
                               f"{', '.join(SourcePool.objects.values_list('name', flat=True)) or '(none)'}, or 'demo'")
        return "pool", pool

    def _pool(self, kind: str, source) -> SourcePool:
        if kind == "demo":
            return construction.demo_source_pool_ensure()
        if kind == "file":
            try:
                pool, summary = construction.source_pool_import(name=source.stem, raw=read_file_bytes(source),
                                                                file_name=str(source))
            except ImportFailed as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"pool {pool.name}: {summary}")
            return pool
        return source

    def handle(self, *args, **opts):
        version = opts["task_set_version"] or f"seed{opts['seed']}-{opts['grid']}"
        grid = construction.grid_for(opts["grid"])
        # Every check before the first write: the configuration, then every pool reference; only then are
        # pool files imported and the build created.
        try:
            construction.task_set_build_check(name=opts["name"], version=version, grid=grid, screen=opts["screen"])
        except construction.BuildConfigurationError as exc:
            raise CommandError(str(exc)) from exc
        sources = [self._pool_source(ref) for ref in opts["pools"]]
        pools = [self._pool(kind, source) for kind, source in sources]
        try:
            build = construction.task_set_build_create(
                name=opts["name"], version=version, pools=pools, grid=grid, seed=opts["seed"], screen=opts["screen"])
        except construction.BuildConfigurationError as exc:
            raise CommandError(str(exc)) from exc
        labelled = " (offline screening rules)" if build.screen == construction.OFFLINE_SCREEN else ""
        self.stdout.write(f"build {build.pk}: {build.name} v{build.version}, grid {opts['grid']}, seed {build.seed}, "
                          f"screen {build.screen}{labelled}")
        with progress_bar(total=build.tasks_total, unit="task", desc="task construction") as bar:
            try:
                build = construction.task_set_build_execute(
                    build_id=build.pk, progress=lambda kept, total: bar.update(kept - bar.n))
            except Exception as exc:
                raise CommandError(f"build {build.pk} failed: {exc}") from exc
        achieved, quotas = build.record["achieved"], build.record["quotas"]
        short = [f"{cell} {achieved[cell]}/{q}" for cell, q in quotas.items() if achieved.get(cell, 0) < q]
        self.stdout.write(f"{build.tasks_kept} tasks kept in frozen {build.task_set}; "
                          f"{build.rejected.count()} rejected candidates (see /task-sets/builds/{build.pk}/)")
        if short:
            self.stdout.write("short of quota: " + ", ".join(short))
