"""Benchmark: the researcher's pages at the paper's scale (issue 30: "the cross-protocol overview page
≤ 100 ms at paper scale").

On a throwaway SQLite database the demo's three protocols are loaded; the overview (``/``), a model
profile and the Ekphrasis board are timed there (the baseline, measured in the same run); then the
paper-scale Ekphrasis run (:mod:`tests.benchmarks.paper_scale_world`: 400 tasks, ~69,000 simulated judge
calls) is added and the same pages are timed again. Each page is requested in-process through Django's
test client as a researcher: the first request (cold: nothing of it cached) and the median of the next
``--repeat`` (warm). Printed: each page's times at both scales, the ratio paper ÷ demo, and the overview
against its goal.

Run: ``.venv/bin/python -m tests.benchmarks.bench_overview [--tasks 400] [--work DIR]``. The world is kept in
DIR (default ``var/bench-paper-scale``, shared with ``bench_bundles --paper-scale --work DIR``) and read back
next time (making it takes ~10 minutes on two cores); the demo-scale baseline is printed only when the world
is made, so ``--work`` a new folder to see both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tests.benchmarks.paper_scale_world import paper_scale_setup, paper_scale_world

ROOT = Path(__file__).resolve().parents[2]

#: Issue 30: the cross-protocol overview page at paper scale within this many milliseconds.
OVERVIEW_GOAL_MS = 100.0


def _researcher_client():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    from leaderboard.services.catalogue import role_groups_ensure

    role_groups_ensure()
    user, _ = get_user_model().objects.get_or_create(username="bench-researcher")
    user.groups.add(Group.objects.get(name="researcher"))
    client = Client()
    client.force_login(user)
    return client


def _page_times(client, url: str, repeat: int) -> tuple[float, float]:
    """(first request, median of the next ``repeat``) in ms; every answer must be a 200."""
    times = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return times[0], statistics.median(times[1:])


def _pages(repeat: int, model_name: str | None) -> dict[str, tuple[float, float]]:
    from django.core.cache import cache
    from django.urls import reverse

    from leaderboard.ekphrasis.models import LeaderboardSnapshot
    from leaderboard.models import SubjectModel

    cache.clear()
    client = _researcher_client()
    snapshot = LeaderboardSnapshot.objects.order_by("-pk").first()
    model = (SubjectModel.objects.get(display_name=model_name) if model_name else
             SubjectModel.objects.filter(role=SubjectModel.Role.SUBJECT).order_by("pk").first())
    urls = {"overview /": reverse("home"), "model profile": reverse("model_profile", args=[model.pk]),
            "Ekphrasis board (newest snapshot)": reverse("snapshot_detail", args=[snapshot.pk])}
    return {label: _page_times(client, url, repeat) for label, url in urls.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--work", type=Path, default=ROOT / "var" / "bench-paper-scale")
    args = parser.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    paper_scale_setup(work, args.tasks, with_demo=True)
    demo: dict[str, tuple[float, float]] = {}
    paper_scale_world(work, args.tasks, args.n_boot, with_demo=True,
                      before_run=lambda: demo.update(_pages(args.repeat, None)))
    paper = _pages(args.repeat, None)
    print(f"pages in-process as a researcher (ms; first request cold, then the median of {args.repeat}); "
          f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    print(f"{'page':<36} {'demo first':>11} {'demo warm':>10} {'paper first':>12} {'paper warm':>11} {'warm paper/demo':>16}")
    for label, (first, warm) in paper.items():
        d_first, d_warm = demo.get(label, (float("nan"), float("nan")))
        print(f"{label:<36} {d_first:>11.1f} {d_warm:>10.1f} {first:>12.1f} {warm:>11.1f} {warm / d_warm:>16.2f}")
    first, warm = paper["overview /"]
    print(f"overview at paper scale: warm {warm:.1f} ms, goal <= {OVERVIEW_GOAL_MS:.0f} ms: ratio {warm / OVERVIEW_GOAL_MS:.2f} "
          f"({'met' if warm <= OVERVIEW_GOAL_MS else 'NOT met'}); first request {first:.1f} ms")


if __name__ == "__main__":
    main()
