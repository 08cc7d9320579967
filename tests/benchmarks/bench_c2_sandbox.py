"""Benchmark: what grading one code sample costs now that its runner sees one input at a time and the
grader compares outside (issue 23), against the single-process harness it replaced, and grading throughput over all cores (C², issue 12).

1. Per-sample cost. One LiveCodeBench-style stdin problem with ``--tests`` tests and a correct solution
   is graded ``--repeats`` times by ``engine.c2.grading.grade_code`` — a fresh bubblewrap sandbox per
   sample (seccomp filter, read-only root, capped tmpfs), whose runner compiles once and is sent one
   input at a time, answering the raw output, compared in the grader — and, as the baseline in the same run, by the harness before issue 23
   (read from git at commit ``BASELINE_COMMIT``): ONE sandbox per sample running every test in the
   process that held the expected outputs (which model code could reach). The two alternate (pairs),
   so both see the same load on a shared machine. Reported: median ms per sample for both, the median
   per-pair ratio, and the cost per test of the new design. The same for a call-based problem.
2. Of which sandbox setup alone: ``bwrap`` (with the seccomp filter) running ``/bin/true`` vs ``/bin/true``.
3. Throughput. ``--samples`` samples (a mix of passing, wrong and erroring programs) graded one at a
   time and then with ``grade_code_many`` over all cores; samples/s for both and the speedup.

Run: ``.venv/bin/python -m tests.benchmarks.bench_c2_sandbox [--tests 5] [--repeats 15] [--samples 30]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from engine.c2.grading import CODE_MEMORY_MB, CodeTests, grade_code, grade_code_many
from engine.c2.sandbox import SandboxLimits, run_sandboxed, sandbox_available, start_sandboxed

#: The last commit whose engine/c2/lcb_harness.py ran all tests in one process (the baseline).
BASELINE_COMMIT = "fd94dfc"
REPO = Path(__file__).resolve().parents[2]

SOLUTION = "a, b = map(int, input().split())\nprint(a + b)"
WRONG = "a, b = map(int, input().split())\nprint(a - b)"
CRASH = "raise SystemError('boom')"
CALL_SOLUTION = "class Solution:\n    def add(self, a, b):\n        return a + b"


def stdio_problem(n_tests: int) -> CodeTests:
    pairs = [(f"{i} {2 * i}\n", f"{3 * i}\n") for i in range(n_tests)]
    return CodeTests(inputs=tuple(p[0] for p in pairs), outputs=tuple(p[1] for p in pairs))


def call_problem(n_tests: int) -> CodeTests:
    pairs = [(f"{i}\n{2 * i}", f"{3 * i}") for i in range(n_tests)]
    return CodeTests(inputs=tuple(p[0] for p in pairs), outputs=tuple(p[1] for p in pairs), func_name="add")


def baseline_harness() -> str | None:
    """The single-process harness's source from git history, or None outside a git checkout."""
    done = subprocess.run(["git", "-C", str(REPO), "show", f"{BASELINE_COMMIT}:engine/c2/lcb_harness.py"],
                          capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else None


def single_process_grade(harness: str, code: str, tests: CodeTests) -> bool:
    """The old design: one sandbox, every test in the harness's own process (global timeout as then)."""
    payload = json.dumps({"code": code, "timeout": 6, **tests.as_json()})
    wall = 7 * len(tests.inputs) + 5
    run = run_sandboxed(harness, stdin=payload,
                        limits=SandboxLimits(cpu_s=wall + 1, wall_s=float(wall), memory_mb=CODE_MEMORY_MB))
    return all(value is True for value in json.loads(run.stdout)["results"])


def _ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return 1000 * (time.perf_counter() - start)


def paired_timings(baseline, candidate, repeats: int) -> tuple[list[float], list[float]]:
    """Alternate baseline and candidate runs so both see the same (shared, noisy) machine."""
    baseline(), candidate()  # warm-up: page cache, interpreter files
    pairs = [(_ms(baseline), _ms(candidate)) for _ in range(repeats)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def report_per_sample(label: str, harness: str, code: str, tests: CodeTests, repeats: int) -> None:
    assert grade_code(code, tests).passed and single_process_grade(harness, code, tests)
    old, new = paired_timings(lambda: single_process_grade(harness, code, tests),
                              lambda: grade_code(code, tests), repeats)
    old_ms, new_ms = statistics.median(old), statistics.median(new)
    ratio = statistics.median(b / a for a, b in zip(old, new))
    n = len(tests.inputs)
    print(f"{label} ({n} tests, {repeats} alternating pairs):")
    print(f"  baseline: one sandbox, all tests in the harness's process:  median {old_ms:7.1f} ms/sample")
    print(f"  grade_code: one input at a time, compared outside:          median {new_ms:7.1f} ms/sample")
    print(f"  ratio {ratio:.2f}x the baseline; {(new_ms - old_ms) / n:+.1f} ms per test; "
          f"{new_ms / n:.1f} ms per test in all")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args(argv)
    if not sandbox_available():
        print("bench_c2_sandbox skipped: /usr/bin/bwrap (Debian bubblewrap) is not installed")
        return
    harness = baseline_harness()
    load_before = os.getloadavg()[0]
    if harness is None:
        print(f"per-sample comparison skipped: the baseline harness ({BASELINE_COMMIT}) is not in this checkout")
    else:
        report_per_sample("Per-sample cost, stdin problem", harness, SOLUTION, stdio_problem(args.tests), args.repeats)
        report_per_sample("Per-sample cost, call-based problem", harness, CALL_SOLUTION, call_problem(args.tests),
                          args.repeats)

    def bwrap_true() -> None:
        with start_sandboxed(["/bin/true"], limits=SandboxLimits()) as session:
            session.finish(wait_s=10)

    bare, boxed = paired_timings(lambda: subprocess.run(["/bin/true"], check=True), bwrap_true, args.repeats)
    setup = statistics.median(b - a for a, b in zip(bare, boxed))
    print(f"Sandbox setup alone (bwrap + seccomp filter running /bin/true, vs /bin/true): {setup:+.1f} ms")

    tests = stdio_problem(args.tests)
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
    print(f"Grading throughput ({args.samples} samples, pass/wrong/crash mix, {args.tests} tests each):")
    print(f"  1 worker:        {args.samples / serial_s:6.1f} samples/s")
    print(f"  {cores} workers (all cores): {args.samples / parallel_s:6.1f} samples/s  "
          f"speedup {serial_s / parallel_s:.2f}x of ideal {cores}x")
    print(f"  load average before/after: {load_before:.2f} / {os.getloadavg()[0]:.2f} (shared machine)")


if __name__ == "__main__":
    main()
