"""Fault benchmark (issue 28), full length: PostgreSQL restarted under 20 annotators (a clean stop and a
crash), Redis stopped for 30 s during a running judge run, and a provider failing for a minute mid-run.

Each prints its figures: answers during the outage by status, labels or units lost / duplicated /
over-assigned (all must be 0), and the recovery time. The baseline measured in the same run is the
scenario's own uninterrupted part (the reference run for the broker and the provider, the first third of
the labels for the database); the ratio printed is recovery time / outage length.

Run: ``.venv/bin/python -m tests.benchmarks.bench_faults`` (``--quick`` for the in-suite lengths). Needs the
PostgreSQL server binaries (a throwaway cluster on a free port) and redis-server; loopback only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from tests.faults.servers import ROOT, postgres_binaries


def scenario(module: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{module} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def provider_outage(outage_s: float) -> dict:
    """The judge run of tests/faults/test_provider_outage.py with the provider failing ``outage_s``
    seconds: the run retries within its bound (ATELIER_PROVIDER_MAX_RETRIES, backoff doubling to 60 s),
    stops resumable, and is resumed once the provider is back."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           "tests/faults/test_provider_outage.py"], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800, env={**__import__("os").environ, "FAULT_PROVIDER_OUTAGE_S": str(outage_s)})
    return {"passed": done.returncode == 0, "summary": done.stdout.strip().splitlines()[-1] if done.stdout else ""}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the in-suite lengths (seconds, not minutes)")
    args = parser.parse_args(argv)
    if postgres_binaries() is None:
        print("SKIPPED bench_faults: no PostgreSQL server binaries under /usr/lib/postgresql")
        return 0
    db_outage, broker_outage, provider_s = (2, 5, 3) if args.quick else (10, 30, 60)
    failures = 0
    for mode in ("fast", "immediate"):
        t0 = time.perf_counter()
        f = scenario("tests.faults.database_restart", "--annotators", "20", "--items-each", "12",
                     "--outage-s", str(db_outage), "--mode", mode, "--timeout-s", "600")
        bad = f["lost"] + f["duplicated"] + f["over_assigned"] + f["unexpected"]
        failures += bad > 0 or not f["all_done"]
        print(f"database restart ({mode}, {db_outage} s, 20 annotators, {f['items']} items x k={f['k']}): "
              f"answers during the outage next {f['answers_during_outage']['next']} submit "
              f"{f['answers_during_outage']['submit']}; overall next {f['answers_overall']['next']} submit "
              f"{f['answers_overall']['submit']}; lost {f['lost']} duplicated {f['duplicated']} over-assigned "
              f"{f['over_assigned']} unexpected {f['unexpected']}; recovery {f['recovery_s']:.2f} s "
              f"(ratio to the outage x{f['recovery_s'] / db_outage:.2f}); /readyz 503 after "
              f"{f['readyz_to_503_s']:.2f} s, 200 again {f['readyz_back_to_200_s']:.2f} s after the start; "
              f"{time.perf_counter() - t0:.0f} s wall")
    f = scenario("tests.faults.broker_outage", "--tasks", "16", "--budget", "30", "--outage-s", str(broker_outage),
                 "--timeout-s", "600")
    failures += f["chunks_lost"] + f["repeated"] > 0 or not f["identical_to_reference"]
    print(f"broker outage ({f['outage_s']} s during a judge run of {f['tasks']} chunks): status {f['status']}; "
          f"chunks lost {f['chunks_lost']}, comparisons repeated {f['repeated']}, identical to the uninterrupted "
          f"run: {f['identical_to_reference']}; chunks done during the outage {f['chunks_done_during_outage']}; "
          f"recovery {f['recovery_s']:.2f} s (ratio to the outage x{f['recovery_s'] / broker_outage:.3f}), "
          f"finished {f['finished_after_back_s']:.1f} s after Redis returned; a run started during the outage: "
          f"refused={f['started_during_outage']['refused']}, done "
          f"{f['started_during_outage']['done_after_back_s']} s after Redis returned")
    p = provider_outage(provider_s)
    failures += not p["passed"]
    print(f"provider outage ({provider_s} s mid-run): resumed to the uninterrupted result: {p['passed']} ({p['summary']})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
