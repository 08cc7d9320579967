"""Benchmark: reproducibility bundles of the demo's three boards — size, export time, verify time.

The demo is loaded into a throwaway SQLite database through the command line and its boards exported
once (:mod:`tests.leaderboard.bundles.demo_bundles`); then, in this process on that database, each
board is exported again (directory and .tar.gz) and verified, timed. Baseline, measured in the same
run: the site's own computation of the same board from its database — the Ekphrasis finaliser's fit
(``judged_comparisons`` + ``build_leaderboard``), the EASEL selector's board
(``easel_leaderboard``), the C² scorer (``run_results``). The ratio printed is verify ÷ site recompute:
verify does everything the site does plus the hash checks and, for EASEL, the replay of every step
(which the site's board only reads as stored).

Run: ``.venv/bin/python -m tests.benchmarks.bench_bundles [--work DIR]`` (keeps DIR's demo database
between runs when given).

``--paper-scale [TASKS]`` (with ``--work DIR`` the run is kept there and read back next time) measures instead issue 30's goal "a bundle of the paper-scale run exported and
verified in ≤ 2 min": the paper-scale Ekphrasis run of ``bench_judge_bookkeeping`` (14 subject models × 3
samples per task, TIG built with the offline components, simulated judge on U, E and N with TIG anchors,
budget 50 per task and dimension, seed 42, ``n_boot`` 200; 400 tasks by default) is made on a throwaway
SQLite database, and its snapshot is exported (a ``.tar.gz``) and verified, each timed, against the goal.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from tests.benchmarks.paper_scale_world import paper_scale_setup, paper_scale_world
from tests.leaderboard.bundles.demo_bundles import demo_bundles_built


def _timed(fn, repeat: int = 1):
    best = float("inf")
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def _size(path: Path) -> tuple[int, int]:
    if path.is_file():
        return 1, path.stat().st_size
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


#: Issue 30: the paper-scale run's bundle exported and verified within this many seconds.
PAPER_SCALE_GOAL_S = 120.0


def paper_scale(work: Path, n_tasks: int, n_boot: int) -> None:
    """Make (or read back) the paper-scale run; time its bundle's export and verify."""
    # The demo's protocols beside it, so that ``bench_overview --work DIR`` reads back the same world.
    paper_scale_setup(work, n_tasks, with_demo=True)
    from engine.bundle.verify import verify_bundle
    from leaderboard.bundles.export import bundle_export

    snapshot = paper_scale_world(work, n_tasks, n_boot, with_demo=True)
    cpu0 = time.process_time()
    export_s, result = _timed(lambda: bundle_export("ekphrasis", snapshot.pk, work / f"paper-bundle-{time.monotonic_ns()}.tar.gz"))
    cpu1 = time.process_time()
    verify_s, report = _timed(lambda: verify_bundle(result.path))
    cpu2 = time.process_time()
    total = export_s + verify_s
    print(f"bundle {result.path.stat().st_size / 1e6:.1f} MB (.tar.gz, {result.files} files): export {export_s:.1f} s "
          f"({cpu1 - cpu0:.1f} s CPU), verify {verify_s:.1f} s ({cpu2 - cpu1:.1f} s CPU; {len(report.checks)} numbers, "
          f"{'VERIFIED' if report.ok else 'NOT VERIFIED'}); "
          f"export + verify {total:.1f} s, goal <= {PAPER_SCALE_GOAL_S:.0f} s: ratio {total / PAPER_SCALE_GOAL_S:.2f} "
          f"({'met' if total <= PAPER_SCALE_GOAL_S else 'NOT met'}); load average {os.getloadavg()[0]:.1f} at end")
    assert report.ok, report.lines()[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--paper-scale", type=int, nargs="?", const=400, default=None, metavar="TASKS",
                        help="time the bundle of the paper-scale Ekphrasis run instead (default 400 tasks)")
    parser.add_argument("--n-boot", type=int, default=200, help="bootstrap draws of the paper-scale run (default 200)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-bundles-"))
    if args.paper_scale:
        paper_scale(work, args.paper_scale, args.n_boot)
        return
    started = time.perf_counter()
    demo_bundles_built(work)
    print(f"demo loaded and exported through the CLI in {time.perf_counter() - started:.1f} s (load average "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")
    os.environ.update(ATELIER_DEV="true", DATABASE_URL=f"sqlite:///{work / 'demo.sqlite3'}",
                      DJANGO_SETTINGS_MODULE="evalsite.settings")
    import django

    django.setup()
    from engine.bundle.verify import verify_bundle
    from engine.leaderboard import build_leaderboard
    from leaderboard.bundles.export import bundle_export
    from leaderboard.c2.models import C2Run
    from leaderboard.c2.services.scoring import run_results
    from leaderboard.easel.selectors import easel_leaderboard
    from leaderboard.ekphrasis.judge_runs import judged_comparisons
    from leaderboard.ekphrasis.models import LeaderboardSnapshot
    from leaderboard.models import SubjectModel, TaskSet

    snapshot = LeaderboardSnapshot.objects.select_related("run").order_by("pk").first()
    suite = TaskSet.objects.get(benchmark__kind="easel")
    c2_run = C2Run.objects.order_by("pk").first()

    def ekphrasis_site():
        run = snapshot.run
        ids = snapshot.payload["model_ids"]
        names = dict(SubjectModel.objects.filter(pk__in=ids).values_list("pk", "display_name"))
        comparisons = judged_comparisons(run, {pk: i for i, pk in enumerate(ids)})
        return build_leaderboard(comparisons, [names[pk] for pk in ids], dimensions=tuple(run.dimensions),
                                 n_boot=int(run.config.get("n_boot", 1000)), seed=run.seed)

    boards = {"ekphrasis": (snapshot.pk, ekphrasis_site), "easel": (suite.pk, lambda: easel_leaderboard(task_set=suite)),
              "c2": (c2_run.pk, lambda: run_results(c2_run))}
    print(f"{'board':<10} {'files':>6} {'dir MB':>8} {'tar.gz MB':>10} {'export s':>9} {'verify s':>9} "
          f"{'site s':>8} {'verify/site':>12} numbers")
    for kind, (ident, site) in boards.items():
        export_s, result = _timed(lambda k=kind, i=ident: bundle_export(k, i, work / f"bench-{k}-{time.monotonic_ns()}"))
        _, archive = _timed(lambda k=kind, i=ident: bundle_export(k, i, work / f"bench-{k}-{time.monotonic_ns()}.tar.gz"))
        verify_s, report = _timed(lambda p=result.path: verify_bundle(p))
        assert report.ok, report.lines()[:10]
        site_s, _ = _timed(site, repeat=3)
        files, size = _size(result.path)
        print(f"{kind:<10} {files:>6} {size / 1e6:>8.2f} {archive.path.stat().st_size / 1e6:>10.2f} {export_s:>9.2f} "
              f"{verify_s:>9.2f} {site_s:>8.3f} {verify_s / site_s:>12.1f} {len(report.checks)}")


if __name__ == "__main__":
    main()
