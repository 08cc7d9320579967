"""Instructions per TIG Novelty context under callgrind (issue 30): a count, not a timing.

Builds the first ``--tasks`` of ``bench_tig``'s synthetic tasks (each task's index -- extraction and
embedding -- outside the count), then every judged pair's context (``--pairs-per-task``, as ``bench_tig``
picks them) inside it: the task-wide tables a task's first context builds (label cosines, key order,
leave-out basis) are counted, as a run pays them once per task. Callgrind's counters are zeroed just
before the first context and dumped just after the last, through its client requests (a tiny C library
compiled here with ``cc``), so the dump holds the contexts alone; the instructions a context are printed
from it. Outside valgrind the marks do nothing and the script just builds the contexts.

Run: ``valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p .venv/bin/python -m
tests.benchmarks.callgrind_tig --out /tmp/cg.%p [--tasks 4] [--pairs-per-task 25] [--cache-dir DIR] [--top-k 3]``; then
``callgrind_annotate --inclusive=no /tmp/cg.<pid>.1`` for the top functions of the contexts.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # as bench_tig sets them: tiny matrices, one BLAS thread

import argparse
import ctypes
import glob
import subprocess
import tempfile

from engine.embed import CachedEmbedder, EmbeddingCache, MiniLMEmbedder
from engine.tig.population import PopulationIndex
from tests.benchmarks.bench_tig import contexts_arguments, judged_pairs, synthetic_task, warm_cache

_MARKS_C = r"""
#include <valgrind/callgrind.h>
void marks_zero(void) { CALLGRIND_ZERO_STATS; }
void marks_dump(void) { CALLGRIND_DUMP_STATS_AT("tig contexts"); }
"""


def _marks(directory: str) -> ctypes.CDLL | None:
    """The zero/dump client requests as C functions, or None where no compiler or callgrind.h is found."""
    source = os.path.join(directory, "marks.c")
    library = os.path.join(directory, "marks.so")
    with open(source, "w") as f:
        f.write(_MARKS_C)
    done = subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", library, source], capture_output=True)
    return ctypes.CDLL(library) if done.returncode == 0 else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    contexts_arguments(parser, tasks=4)
    parser.add_argument("--out", default="callgrind.out", help="valgrind's --callgrind-out-file, %%p for the pid")
    parser.add_argument("--top-k", type=int, default=3,
                        help="items a context (PopulationIndex.context's default 3; the Ekphrasis run stores only "
                        "the anchor and asks for 1)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="callgrind-tig-") as tmp:
        cache = EmbeddingCache(args.cache_dir or tmp)
        tasks = {t: synthetic_task(t) for t in range(args.tasks)}
        warm_cache(tasks, cache)
        embedder = CachedEmbedder(MiniLMEmbedder(), cache)
        extractions: dict = {}
        indexes = [
            (PopulationIndex(ideas, embedder=embedder, extractions=extractions, max_contexts=0),
             judged_pairs(task, args.pairs_per_task))
            for task, ideas in tasks.items()
        ]
        # one context of another task first, so that first-call set-up (imports, igraph's) stays out
        PopulationIndex(synthetic_task(args.tasks), embedder=embedder, max_contexts=0).context(
            judged_pairs(args.tasks, 1)[0])
        marks = _marks(tmp)
        n = sum(len(pairs) for _, pairs in indexes)
        if marks is not None:
            marks.marks_zero()
        for index, pairs in indexes:
            for pair in pairs:
                index.context(pair, top_k=args.top_k)
        if marks is not None:
            marks.marks_dump()
    print(f"{n} contexts of {args.tasks} tasks")
    dumps = sorted(glob.glob(args.out.replace("%p", str(os.getpid())) + ".*"))
    for dump in dumps:
        with open(dump) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total = int(line.split()[1])
                    print(f"{dump}: {total:,} instructions, {total / n / 1e6:.3f} M a context")
                    break


if __name__ == "__main__":
    main()
