"""Benchmark: building a Table-5 task set (400 tasks) from the demo pools by Algorithm 1.

Baseline, measured in the same run: MiniLM embedding of exactly the texts the build must embed at least
once (every pool concept used for distance bands and every kept brief), in one call, with a fresh
embedder. The ratio build / baseline says how much the build costs beyond that irreducible embedding
work (sampling, screening batches, the duplicate check, composing and bookkeeping).

Run: ``.venv/bin/python -m tests.benchmarks.bench_task_construction [--seed 0]``.
"""

from __future__ import annotations

import argparse
import time

from engine.embed import text_embedder
from engine.task_construction.build import build_task_set
from engine.task_construction.demo_pools import demo_pool
from engine.task_construction.grid import TABLE5_GRID


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pool = demo_pool()
    text_embedder("minilm").embed(["warm-up"])  # weights loaded once, outside both timings

    start = time.perf_counter()
    result = build_task_set([pool], grid=TABLE5_GRID, seed=args.seed, embedder=text_embedder("minilm"))
    build_s = time.perf_counter() - start

    concepts = sorted({r.concept for r in pool.records if r.type in ("abstract", "concrete", "condition")})
    texts = concepts + [t.brief for t in result.tasks]
    start = time.perf_counter()
    text_embedder("minilm").embed(texts)
    baseline_s = time.perf_counter() - start

    print(f"Table-5 grid ({TABLE5_GRID.total} tasks) from the demo pools, seed {args.seed}, offline screen")
    print(f"  kept {len(result.tasks)} tasks, rejected {len(result.rejected)} candidates")
    print(f"  build                      {build_s:8.2f} s")
    print(f"  baseline: embed {len(texts)} texts  {baseline_s:8.2f} s")
    print(f"  ratio build / baseline     {build_s / baseline_s:8.2f}x")


if __name__ == "__main__":
    main()
