"""Benchmark: leave-two-models-out Typed Idea Graph contexts (Ekphrasis App. G.5).

Synthetic tasks: 14 models x 3 samples per task; every Core Idea reads
"<subject> <verb> into <object> beside <object 2>, symbolising <purpose>, for <audience>." so the offline
extractor finds six atoms per idea -- 216 atoms in a 36-idea context -- and two motifs per task are planted
in ~60% of the models' ideas, as population clichés would be. Vocabulary is drawn per task from shared
pools, so labels repeat across tasks as real atoms do.

Two measurements, each against a baseline measured in the same run:

1. one context (36 ideas) from cached embeddings through canonicalisation, graph, Leiden, scores and items;
2. 10,000 contexts for 400 tasks (25 judged pairs per task), including each task's one-off extraction.

Optimised path: :class:`engine.tig.PopulationIndex` (per-response extraction and embedding done once per
task; dense numpy graph). Baseline: the same pipeline with the graph built edge by edge in networkx and no
per-response reuse -- every context re-extracts its 36 ideas and reads their embeddings back from the
persistent SQLite cache (no in-process memo). The embedding cache is warmed before any timing (setup time
is printed separately).

Goals (issue 5): <= 50 ms per context; 10,000 contexts <= 5 minutes; >= 5x faster than the baseline.

3. Cross-population reuse (issue 30): each of the first ``--reuse-tasks`` tasks' contexts built with
   ``PopulationIndex(reuse=True)`` (the task's :class:`~engine.tig.leaveout.LeaveOutBasis` and Leiden memo,
   built anew each time and counted) and with ``reuse=False`` (every population from its own table, nothing
   shared), alternating, each path's minimum CPU time of ``--reuse-repeats`` runs per task summed: on a
   shared machine the minimum is the steadiest figure. Both paths give the same contexts, bit for bit
   (``tests/engine/tig/test_leaveout.py``).

Run: ``.venv/bin/python -m tests.benchmarks.bench_tig [--tasks 400] [--pairs-per-task 25]
[--baseline-every 2] [--full-baseline] [--cache-dir DIR] [--blas-threads 1]``. In the 10,000-context run
the baseline is timed on one pair of every ``--baseline-every``-th task, interleaved with the optimised run,
and extrapolated (labelled so) unless ``--full-baseline`` is given. Wall-clock and CPU (process) time are
both printed: on a shared machine the CPU ratio is the steadier one; the goals are judged on wall-clock.
"""

from __future__ import annotations

import argparse
import os
import sys


def _set_blas_threads(argv: list[str]) -> str:
    """BLAS threads must be fixed before numpy loads; tiny matrices gain nothing from threads."""
    value = "1"
    if "--blas-threads" in argv:
        value = argv[argv.index("--blas-threads") + 1]
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = value
    return value


_BLAS_THREADS = (
    _set_blas_threads(sys.argv)
    if __name__ == "__main__"
    else os.environ.get("OPENBLAS_NUM_THREADS", "default")
)

import random
import statistics
import tempfile
import time
from itertools import combinations

import numpy as np

from engine.embed import CachedEmbedder, EmbeddingCache, MiniLMEmbedder
from engine.tig.atoms import AtomTable, idea_record
from engine.tig.canonical import canonicalise
from engine.tig.checklist import materialise_items
from engine.tig.clusters import same_type_clusters
from engine.tig.graph import IdeaGraph, build_graph_networkx
from engine.tig.offline import OfflineExtractor
from engine.tig.population import PopulationIndex, pair_context_key
from engine.tig.score import score_clusters

MODELS = tuple(f"model-{i:02d}" for i in range(14))
SAMPLES = (1, 2, 3)
GOAL_CONTEXT_MS = 50.0
GOAL_TOTAL_S = 300.0
GOAL_SPEEDUP = 5.0
CLICHE_SHARE = 0.6

_ADJ = (
    "old",
    "broken",
    "tiny",
    "giant",
    "paper",
    "glass",
    "wooden",
    "iron",
    "floating",
    "sleeping",
    "hollow",
    "woven",
    "frozen",
    "folded",
    "ancient",
    "silver",
)
_NOUNS = (
    "lighthouse",
    "teacup",
    "hourglass",
    "violin",
    "kite",
    "snail shell",
    "subway map",
    "beehive",
    "chess board",
    "typewriter",
    "bonsai tree",
    "pocket watch",
    "jar",
    "crane",
    "bicycle wheel",
    "staircase",
    "compass",
    "kettle",
    "ladder",
    "umbrella",
    "chandelier",
    "record",
    "fishing net",
    "quilt",
    "birdcage",
    "telescope",
    "windmill",
    "sandcastle",
    "ferris wheel",
    "mailbox",
    "spool",
    "scissors",
    "greenhouse",
    "paintbrush",
    "loaf",
    "key",
    "sewing machine",
    "diving helmet",
    "piano",
    "weather vane",
    "whale",
    "owl",
    "fox",
    "moth",
    "river",
    "glacier",
    "forest",
    "bridge",
    "tower",
    "harbour",
)
_VERBS = (
    "melting",
    "dissolving",
    "unfolding",
    "folding",
    "splitting",
    "morphing",
    "crumbling",
    "growing",
    "spiralling",
    "weaving",
)
_FEELINGS = (
    "resilience",
    "memory",
    "grief",
    "patience",
    "renewal",
    "curiosity",
    "belonging",
    "trust",
    "joy",
    "speed",
    "labour",
    "courage",
    "knowledge",
    "solitude",
    "generosity",
    "rebellion",
    "tenderness",
    "ambition",
    "homesickness",
    "wonder",
    "healing",
    "pride",
    "friendship",
    "strength",
    "gratitude",
    "nostalgia",
    "hospitality",
    "discipline",
    "migration",
    "forgiveness",
)
_QUALIFIERS = ("quiet", "shared", "fragile", "stubborn", "slow", "hidden", "collective", "inherited")
_AUDIENCES = (
    "young readers",
    "busy commuters",
    "retired teachers",
    "first-time parents",
    "night-shift nurses",
    "amateur gardeners",
    "city cyclists",
    "museum visitors",
    "exchange students",
    "small farmers",
)


def synthetic_task(task: int) -> list[dict]:
    """One task's 42 ideas (14 models x 3 samples) with two planted clichés."""
    rng = random.Random(task)
    nouns = [f"{rng.choice(_ADJ)} {n}" for n in rng.sample(_NOUNS, 40)]
    cliches = nouns[:2]
    carriers = [set(rng.sample(MODELS, round(CLICHE_SHARE * len(MODELS)))) for _ in cliches]
    ideas = []
    for model in MODELS:
        for sample in SAMPLES:
            subject, obj, obj2 = rng.sample(nouns[2:], 3)
            for cliche, users in zip(cliches, carriers):
                if model in users and sample == 1 + cliches.index(cliche) % 3:
                    obj = cliche
            purpose = f"{rng.choice(_QUALIFIERS)} {rng.choice(_FEELINGS)}"
            text = (
                f"A {subject} {rng.choice(_VERBS)} into a {obj} beside a {obj2}, symbolising {purpose}, "
                f"for {rng.choice(_AUDIENCES)}."
            )
            ideas.append({"model": model, "sample": sample, "core_idea": text, "task": f"task-{task:04d}"})
    return ideas


def judged_pairs(task: int, count: int) -> list[tuple[str, str]]:
    """``count`` of the 91 pairs, as an active sampler would pick a subset."""
    pairs = list(combinations(MODELS, 2))
    return random.Random(10_000 + task).sample(pairs, min(count, len(pairs)))


# -- baseline: networkx graph, no per-response reuse ----------------------------------------------------


def baseline_context(ideas: list[dict], pair: tuple[str, str], embedder: CachedEmbedder):
    """The same pipeline as PopulationIndex.context, rebuilt from scratch for one pair."""
    reference = [idea_record(i) for i in ideas if i["model"] not in pair]
    extractor = OfflineExtractor()
    table = AtomTable.build([extractor.extract(i) for i in reference], embedder.embed, task=reference[0].task)
    canon = canonicalise(table)
    g = build_graph_networkx(canon)
    import networkx as nx

    n = canon.n_nodes
    weight = nx.to_numpy_array(g, nodelist=range(n), weight="weight")
    degree = np.array([d for _, d in g.degree(range(n), weight="weight")])
    incidence = np.zeros((table.n_responses, n), dtype=bool)
    incidence[table.response, canon.mention_node] = True
    models = sorted(set(table.models))
    response_model = np.array([models.index(m) for m in table.models])
    node_models = np.zeros((n, len(models)), dtype=bool)
    node_models[canon.mention_node, response_model[table.response]] = True
    none = np.zeros(0, dtype=np.int64)
    graph = IdeaGraph(  # scoring reads the combined weights and degrees only, not the three parts
        canon=canon,
        incidence=incidence,
        typed_edges=np.zeros((0, 4), dtype=np.int64),
        weight=weight,
        degree=degree,
        node_models=node_models,
        models=models,
        cooccurrence_entries=(none, none, np.zeros(0)),
        similarity_entries=(none, np.zeros(0)),
    )
    clusters = score_clusters(graph, same_type_clusters(weight, canon.node_type))
    items = materialise_items(clusters, task=table.task, context_key=pair_context_key(pair))
    return clusters, items, table.n_mentions


# -- runs -----------------------------------------------------------------------------------------------


def warm_cache(tasks: dict[int, list[dict]], cache: EmbeddingCache) -> tuple[float, int]:
    """Embed every distinct atom label of every task once into the persistent cache."""
    t0 = time.perf_counter()
    extractor = OfflineExtractor()
    labels = {
        a.label for ideas in tasks.values() for i in ideas for a in extractor.extract(idea_record(i)).atoms
    }
    embedder = CachedEmbedder(MiniLMEmbedder(), cache)
    embedder.embed(sorted(labels))
    return time.perf_counter() - t0, len(labels)


def one_context(ideas: list[dict], cache: EmbeddingCache, repeats: int) -> dict:
    """Each pair's context by both paths, alternating, so both see the same machine load."""
    index = PopulationIndex(ideas, embedder=CachedEmbedder(MiniLMEmbedder(), cache), max_contexts=0)
    baseline_embedder = CachedEmbedder(MiniLMEmbedder(), cache, memo=False)
    pairs = judged_pairs(0, repeats)
    index.context(pairs[0])  # imports and first-call set-up stay out of the timing
    baseline_context(ideas, pairs[0], baseline_embedder)
    fast, slow, fast_cpu, slow_cpu = [], [], [], []
    agree = True
    for pair in pairs:
        t0, c0 = time.perf_counter(), time.process_time()
        ctx = index.context(pair)
        fast.append(time.perf_counter() - t0)
        fast_cpu.append(time.process_time() - c0)
        t0, c0 = time.perf_counter(), time.process_time()
        clusters, _, atoms = baseline_context(ideas, pair, baseline_embedder)
        slow.append(time.perf_counter() - t0)
        slow_cpu.append(time.process_time() - c0)
        # the two paths must produce the same ranking
        agree &= [c.label for c in clusters[:5]] == [c.label for c in ctx.clusters[:5]]
    return {
        "fast": fast,
        "slow": slow,
        "fast_cpu": fast_cpu,
        "slow_cpu": slow_cpu,
        "atoms": atoms,
        "ideas": ctx.n_reference_ideas,
        "agree": agree,
        "items": len(ctx.items),
    }


def many_contexts(
    tasks: dict[int, list[dict]],
    cache: EmbeddingCache,
    pairs_per_task: int,
    baseline_every: int,
    full_baseline: bool,
    progress_every: int = 0,
) -> dict:
    """All contexts of all tasks by the optimised path; the baseline on the first pair of every
    ``baseline_every``-th task (or on every context with ``full_baseline``), interleaved with the
    optimised run so that both sample the same stretch of machine load."""
    embedder = CachedEmbedder(MiniLMEmbedder(), cache)
    baseline_embedder = CachedEmbedder(MiniLMEmbedder(), cache, memo=False)
    extractions: dict = {}
    fast_total = fast_cpu = slow_total = slow_cpu = 0.0
    n_contexts = n_slow = 0
    for task, ideas in tasks.items():
        pairs = judged_pairs(task, pairs_per_task)
        t0, c0 = time.perf_counter(), time.process_time()
        index = PopulationIndex(ideas, embedder=embedder, extractions=extractions, max_contexts=0)
        for pair in pairs:
            index.context(pair)
        fast_total += time.perf_counter() - t0
        fast_cpu += time.process_time() - c0
        n_contexts += len(pairs)
        if full_baseline or task % baseline_every == 0:
            chosen = pairs if full_baseline else pairs[:1]
            t0, c0 = time.perf_counter(), time.process_time()
            for pair in chosen:
                baseline_context(ideas, pair, baseline_embedder)
            slow_total += time.perf_counter() - t0
            slow_cpu += time.process_time() - c0
            n_slow += len(chosen)
        if progress_every and (task + 1) % progress_every == 0:
            print(
                f"   ... {task + 1} tasks, {n_contexts} contexts: optimised {fast_total:.1f} s, "
                f"baseline {slow_total:.1f} s on {n_slow}",
                file=sys.stderr,
                flush=True,
            )
    scale = n_contexts / n_slow
    return {
        "contexts": n_contexts,
        "fast_total": fast_total,
        "fast_cpu": fast_cpu,
        "slow_measured": slow_total,
        "slow_contexts": n_slow,
        "slow_total": slow_total * scale,
        "slow_cpu": slow_cpu * scale,
        "extrapolated": n_slow < n_contexts,
    }


def reuse_contexts(tasks: dict[int, list[dict]], cache: EmbeddingCache, pairs_per_task: int, repeats: int) -> dict:
    """Every context of each task with cross-population reuse and without, alternating; per task the
    minimum CPU time of ``repeats`` runs of each path (fresh basis and Leiden memo every run)."""
    embedder = CachedEmbedder(MiniLMEmbedder(), cache)
    cpu = {True: 0.0, False: 0.0}
    n = 0
    for task, ideas in tasks.items():
        pairs = judged_pairs(task, pairs_per_task)
        index = PopulationIndex(ideas, embedder=embedder, max_contexts=0)
        index.context(pairs[0])  # the task's shared tables (label cosines, key order) outside the timing
        best = {True: float("inf"), False: float("inf")}
        for run in range(repeats):
            for reuse in (True, False) if run % 2 else (False, True):
                index.reuse = reuse
                index._basis = None
                index._leiden_memo.clear()
                c0 = time.process_time()
                for pair in pairs:
                    index.context(pair)
                best[reuse] = min(best[reuse], time.process_time() - c0)
        cpu[True] += best[True]
        cpu[False] += best[False]
        n += len(pairs)
    return {"contexts": n, "reuse": cpu[True], "scratch": cpu[False]}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f}"


def contexts_arguments(parser: argparse.ArgumentParser, *, tasks: int) -> None:
    """The options every script over these synthetic tasks' contexts takes (this benchmark, callgrind_tig,
    tig_digest): how many tasks, judged pairs a task, and where the embeddings are cached."""
    parser.add_argument("--tasks", type=int, default=tasks)
    parser.add_argument("--pairs-per-task", type=int, default=25)
    parser.add_argument("--cache-dir", default=None, help="embedding cache directory (default: a temp dir)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    contexts_arguments(parser, tasks=400)
    parser.add_argument("--one-context-repeats", type=int, default=30)
    parser.add_argument(
        "--baseline-every",
        type=int,
        default=2,
        help="in the 10,000-context run, time the baseline on one pair of every N-th task "
        "and extrapolate (default 2: 200 of 10,000 contexts)",
    )
    parser.add_argument("--full-baseline", action="store_true", help="run the baseline on every context")
    parser.add_argument("--blas-threads", default="1", help="BLAS threads (set before numpy loads)")
    parser.add_argument("--reuse-tasks", type=int, default=10, help="tasks of the cross-population reuse run")
    parser.add_argument("--reuse-repeats", type=int, default=3, help="runs of each path per task (minimum kept)")
    args = parser.parse_args(argv)

    tmp = None
    cache_dir = args.cache_dir
    if cache_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-tig-")
        cache_dir = tmp.name
    cache = EmbeddingCache(cache_dir)
    tasks = {t: synthetic_task(t) for t in range(args.tasks)}

    print("Typed Idea Graph contexts (leave-two-models-out), offline extractor, all-MiniLM-L6-v2 embeddings")
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
        f"BLAS threads: {_BLAS_THREADS}; embedding cache: SQLite in {cache_dir}"
    )
    setup_s, n_labels = warm_cache(tasks, cache)
    print(
        f"setup (not timed below): embedded {n_labels} distinct atom labels of {args.tasks} tasks in {setup_s:.1f} s"
    )
    print()

    one = one_context(tasks[0], cache, args.one_context_repeats)
    med = {k: statistics.median(one[k]) for k in ("fast", "slow", "fast_cpu", "slow_cpu")}
    p90 = lambda xs: sorted(xs)[int(0.9 * (len(xs) - 1))]
    print(
        f"1) one context: {one['ideas']} reference ideas, {one['atoms']} atoms, {one['items']} items; "
        f"{len(one['fast'])} pairs, the two paths alternating (ms)"
    )
    print(f"   {'path':<46}{'median':>9}{'p90':>9}{'ratio':>8}{'CPU med':>9}{'ratio':>8}")
    print(
        f"   {'baseline (networkx graph, no reuse)':<46}{ms(med['slow'])} {ms(p90(one['slow']))}{1.0:7.2f}x"
        f"{ms(med['slow_cpu'])}{1.0:7.2f}x"
    )
    print(
        f"   {'PopulationIndex.context (numpy graph, reuse)':<46}{ms(med['fast'])} {ms(p90(one['fast']))}"
        f"{med['slow'] / med['fast']:7.2f}x{ms(med['fast_cpu'])}{med['slow_cpu'] / med['fast_cpu']:7.2f}x"
    )
    print(f"   top-5 clusters identical in both paths for every pair: {one['agree']}")
    print()

    many = many_contexts(
        tasks, cache, args.pairs_per_task, args.baseline_every, args.full_baseline, progress_every=50
    )
    n = many["contexts"]
    label = (
        f"extrapolated from {many['slow_contexts']} contexts ({many['slow_measured']:.1f} s), interleaved"
        if many["extrapolated"]
        else "measured"
    )
    print(
        f"2) {n} contexts for {args.tasks} tasks ({args.pairs_per_task} pairs per task), "
        f"including each task's extraction and index"
    )
    print(f"   {'path':<46}{'total s':>9}{'ms/ctx':>9}{'ratio':>8}{'CPU s':>9}{'ratio':>8}")
    print(
        f"   {'baseline (networkx graph, no reuse)':<46}{many['slow_total']:9.1f}{ms(many['slow_total'] / n)}"
        f"{1.0:7.2f}x{many['slow_cpu']:9.1f}{1.0:7.2f}x  [{label}]"
    )
    print(
        f"   {'PopulationIndex (numpy graph, reuse)':<46}{many['fast_total']:9.1f}{ms(many['fast_total'] / n)}"
        f"{many['slow_total'] / many['fast_total']:7.2f}x{many['fast_cpu']:9.1f}"
        f"{many['slow_cpu'] / many['fast_cpu']:7.2f}x  [measured]"
    )
    print()
    reuse = reuse_contexts({t: tasks[t] for t in list(tasks)[: args.reuse_tasks]}, cache, args.pairs_per_task,
                           args.reuse_repeats)
    n_reuse = reuse["contexts"]
    print(
        f"3) cross-population reuse: {n_reuse} contexts of {min(args.reuse_tasks, args.tasks)} tasks, each path's "
        f"minimum CPU of {args.reuse_repeats} alternating runs per task"
    )
    print(f"   {'path':<46}{'CPU ms/ctx':>11}{'ratio':>8}")
    print(f"   {'every population from its own table':<46}{reuse['scratch'] / n_reuse * 1000:11.3f}{1.0:7.2f}x")
    print(
        f"   {'task basis and Leiden memo shared':<46}{reuse['reuse'] / n_reuse * 1000:11.3f}"
        f"{reuse['scratch'] / reuse['reuse']:7.2f}x"
    )
    print()
    speedup = min(med["slow"] / med["fast"], many["slow_total"] / many["fast_total"])
    print("goals (wall-clock):")
    print(
        f"   one context <= {GOAL_CONTEXT_MS:.0f} ms: {med['fast'] * 1000:.1f} ms "
        f"-> {'met' if med['fast'] * 1000 <= GOAL_CONTEXT_MS else 'NOT met'}"
    )
    if n >= 10_000:
        print(
            f"   10,000 contexts <= {GOAL_TOTAL_S:.0f} s: {many['fast_total']:.1f} s "
            f"-> {'met' if many['fast_total'] <= GOAL_TOTAL_S else 'NOT met'}"
        )
    else:
        print(
            f"   10,000 contexts <= {GOAL_TOTAL_S:.0f} s: ran {n}; extrapolated to 10,000: "
            f"{many['fast_total'] / n * 10_000:.1f} s"
        )
    print(
        f"   >= {GOAL_SPEEDUP:.0f}x faster than baseline: {speedup:.1f}x (smaller of the two ratios) "
        f"-> {'met' if speedup >= GOAL_SPEEDUP else 'NOT met'}"
    )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
