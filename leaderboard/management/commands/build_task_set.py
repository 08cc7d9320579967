"""manage.py build_task_set: build a frozen Ekphrasis task-set version by Algorithm 1 (App. A, Table 5)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from engine.task_construction.demo_pools import DEMO_POOL_NAME
from leaderboard.ekphrasis import task_construction as construction
from leaderboard.models import SourcePool
from leaderboard.records import ImportFailed, read_file_bytes

DEMO_ALIAS = "demo"


class Command(BaseCommand):
    help = (
        "Build a new frozen task-set version from source pools by Ekphrasis Algorithm 1. --pools takes pool names "
        "already imported, pool files (CSV/JSONL, imported under their file stem; idempotent) or 'demo' (the "
        "built-in demo pools, labelled demo data). --screen offline uses the labelled offline rules; any other "
        "name is a judge-role model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--pools", nargs="+", required=True)
        parser.add_argument("--grid", default="table5", choices=sorted(construction.GRIDS))
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--screen", default=construction.OFFLINE_SCREEN)
        parser.add_argument("--name", default="ekphrasis-built")
        parser.add_argument("--task-set-version", dest="task_set_version", default=None,
                            help="default: seed<SEED>-<grid>")

    def _pool(self, ref: str) -> SourcePool:
        if ref == DEMO_ALIAS or ref == DEMO_POOL_NAME:
            return construction.demo_source_pool_ensure()
        path = Path(ref)
        if path.is_file():
            try:
                pool, summary = construction.source_pool_import(name=path.stem, raw=read_file_bytes(path),
                                                                file_name=str(path))
            except ImportFailed as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"pool {pool.name}: {summary}")
            return pool
        pool = SourcePool.objects.filter(name=ref).first()
        if pool is None:
            raise CommandError(f"no pool or file named {ref!r}; imported pools: "
                               f"{', '.join(SourcePool.objects.values_list('name', flat=True)) or '(none)'}")
        return pool

    def handle(self, *args, **opts):
        pools = [self._pool(ref) for ref in opts["pools"]]
        version = opts["task_set_version"] or f"seed{opts['seed']}-{opts['grid']}"
        try:
            build = construction.task_set_build_create(
                name=opts["name"], version=version, pools=pools, grid=construction.grid_for(opts["grid"]),
                seed=opts["seed"], screen=opts["screen"])
        except construction.BuildConfigurationError as exc:
            raise CommandError(str(exc)) from exc
        labelled = " (offline screening rules)" if build.screen == construction.OFFLINE_SCREEN else ""
        self.stdout.write(f"build {build.pk}: {build.name} v{build.version}, grid {opts['grid']}, seed {build.seed}, "
                          f"screen {build.screen}{labelled}")
        with tqdm(total=build.tasks_total, unit="task", desc="task construction") as bar:
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
