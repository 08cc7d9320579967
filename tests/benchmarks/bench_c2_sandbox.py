"""Benchmark: sandbox overhead per code sample, and grading throughput over all cores (C², issue 12).

1. Overhead. One LiveCodeBench-style stdin problem with ``--tests`` tests and a correct solution is
   graded ``--repeats`` times by ``engine.c2.grading.grade_code`` (bubblewrap, rlimits, the harness)
   and, as the baseline in the same run, by a bare ``python3 -I -c <the same harness>`` subprocess
   fed the same payload — the same interpreter, harness and tests, without the sandbox. The two
   alternate (pairs), so both see the same load on a shared machine. Reported: median ms per sample
   for both, the median per-pair ratio and extra ms, and the ratio of the minima. Goal: ≤ 1.5× or
   ≤ 20 ms extra.
2. Throughput. ``--samples`` samples (a mix of passing, wrong and erroring programs) graded one at a
   time and then with ``grade_code_many`` over all cores; samples/s for both and the speedup.

Run: ``.venv/bin/python -m tests.benchmarks.bench_c2_sandbox [--tests 5] [--repeats 30] [--samples 40]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

from engine.c2.grading import _HARNESS_SOURCE, CodeTests, grade_code, grade_code_many
from engine.c2.sandbox import _bwrap_argv, python_executable, sandbox_available

SOLUTION = "a, b = map(int, input().split())\nprint(a + b)"
WRONG = "a, b = map(int, input().split())\nprint(a - b)"
CRASH = "raise SystemError('boom')"


def problem(n_tests: int) -> CodeTests:
    pairs = [(f"{i} {2 * i}\n", f"{3 * i}\n") for i in range(n_tests)]
    return CodeTests(inputs=tuple(p[0] for p in pairs), outputs=tuple(p[1] for p in pairs))


def bare_subprocess(code: str, tests: CodeTests) -> bool:
    payload = json.dumps({"code": code, "timeout": 6, **tests.as_json()})
    out = subprocess.run(
        [python_executable(), "-I", "-c", _HARNESS_SOURCE], input=payload, capture_output=True, text=True, check=False
    ).stdout
    return all(value is True for value in json.loads(out)["results"])


def _ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return 1000 * (time.perf_counter() - start)


def paired_timings(baseline, candidate, repeats: int) -> tuple[list[float], list[float]]:
    """Alternate baseline and candidate runs so both see the same (shared, noisy) machine."""
    baseline(), candidate()  # warm-up: page cache, interpreter files
    pairs = [(_ms(baseline), _ms(candidate)) for _ in range(repeats)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args(argv)
    if not sandbox_available():
        print("bench_c2_sandbox skipped: /usr/bin/bwrap (Debian bubblewrap) is not installed")
        return

    load_before = os.getloadavg()[0]
    tests = problem(args.tests)
    assert grade_code(SOLUTION, tests).passed and bare_subprocess(SOLUTION, tests)
    bare, boxed = paired_timings(
        lambda: bare_subprocess(SOLUTION, tests), lambda: grade_code(SOLUTION, tests), args.repeats
    )
    bare_ms, boxed_ms = statistics.median(bare), statistics.median(boxed)
    print(f"Sandbox overhead per code sample ({args.tests} stdin tests, {args.repeats} alternating pairs):")
    print(f"  bare python3 subprocess (baseline): median {bare_ms:7.1f} ms  (min {min(bare):.1f})")
    print(f"  grade_code under bubblewrap:        median {boxed_ms:7.1f} ms  (min {min(boxed):.1f})")
    ratio = statistics.median(b / a for a, b in zip(bare, boxed))
    extra = statistics.median(b - a for a, b in zip(bare, boxed))
    print(f"  per-pair medians: ratio {ratio:.2f}x, extra {extra:+.1f} ms; ratio of mins {min(boxed) / min(bare):.2f}x")
    true_bare, true_boxed = paired_timings(
        lambda: subprocess.run(["/bin/true"], check=True),
        lambda: subprocess.run(_bwrap_argv(["/bin/true"]), check=True, cwd="/"),
        args.repeats,
    )
    setup = statistics.median(b - a for a, b in zip(true_bare, true_boxed))
    print(f"  of which namespace + mount setup alone (bwrap running /bin/true): {setup:+.1f} ms")
    verdict = "meets" if ratio <= 1.5 or extra <= 20 else "misses"
    print(f"  ratio {ratio:.2f}x, extra {extra:+.1f} ms -> {verdict} the goal (<= 1.5x or <= 20 ms extra)")

    programs = (SOLUTION, WRONG, CRASH)
    jobs = [(programs[i % 3], tests) for i in range(args.samples)]
    cores = os.cpu_count() or 1
    start = time.perf_counter()
    serial = grade_code_many(jobs, workers=1)
    serial_s = time.perf_counter() - start
    start = time.perf_counter()
    parallel = grade_code_many(jobs, workers=cores)
    parallel_s = time.perf_counter() - start
    assert [v.result for v in serial] == [v.result for v in parallel]
    print(f"Grading throughput ({args.samples} samples, pass/wrong/crash mix):")
    print(f"  1 worker:        {args.samples / serial_s:6.1f} samples/s")
    print(f"  {cores} workers (all cores): {args.samples / parallel_s:6.1f} samples/s  "
          f"speedup {serial_s / parallel_s:.2f}x of ideal {cores}x")
    print(f"  load average before/after: {load_before:.2f} / {os.getloadavg()[0]:.2f} (shared machine)")


if __name__ == "__main__":
    main()
