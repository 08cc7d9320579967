"""A digest of TIG Novelty contexts, to show that a speed change keeps them bit for bit (issue 30).

Over ``--tasks`` of ``bench_tig``'s synthetic tasks and ``--pairs-per-task`` judged pairs each (24 x 25 = 600
contexts by default), hashes every context's items and reference population, its ranked clusters of every
type, both scored partitions' arrays (the items' materialised types and every type), and the graph's arrays
(incidence, the three weight parts, typed edges, combined weights, degrees, node models, canonical nodes,
labels, keys). Prints one digest per part and one over all; run it before and after a change, with the
task's shared basis (default) and ``--scratch`` (every population on its own), and compare.

Run: ``ATELIER_DEV=true .venv/bin/python -m tests.benchmarks.tig_digest [--cache-dir DIR] [--scratch]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile

import numpy as np

from engine.embed import CachedEmbedder, EmbeddingCache, MiniLMEmbedder
from engine.tig.checklist import MATERIALISED_TYPES
from engine.tig.population import PopulationIndex
from tests.benchmarks.bench_tig import contexts_arguments, judged_pairs, synthetic_task

_GRAPH_ARRAYS = ("incidence", "cooccurrence", "similarity", "typed", "typed_edges", "weight", "degree",
                 "node_models")
_SCORED_ARRAYS = ("cluster_of_node", "score", "coverage", "centrality", "convergence", "n_models", "n_samples",
                  "covered", "node_rank", "mention_cluster", "order", "head")


def _array(h, a) -> None:
    a = np.ascontiguousarray(np.asarray(a))
    h.update(str((a.dtype.str, a.shape)).encode())
    h.update(a.tobytes())


def digests(tasks: int, pairs: int, cache_dir: str, reuse: bool = True) -> dict[str, str]:
    embedder = CachedEmbedder(MiniLMEmbedder(), EmbeddingCache(cache_dir))
    parts = {k: hashlib.sha256() for k in ("items", "clusters", "scored", "graph")}
    for t in range(tasks):
        index = PopulationIndex(synthetic_task(t), embedder=embedder, max_contexts=0, reuse=reuse)
        for pair in judged_pairs(t, pairs):
            ctx = index.context(pair, keep_graph=True)
            parts["items"].update(json.dumps([i.to_dict() for i in ctx.items], sort_keys=True).encode())
            parts["items"].update(json.dumps([ctx.n_reference_ideas, ctx.reference_models]).encode())
            parts["clusters"].update(json.dumps([c.to_dict() for c in ctx.clusters], sort_keys=True).encode())
            g, canon = ctx.graph, ctx.graph.canon
            for name in _GRAPH_ARRAYS:
                _array(parts["graph"], getattr(g, name))
            for a in (canon.mention_node, canon.node_type, canon.node_similarity):
                _array(parts["graph"], a)
            parts["graph"].update(json.dumps([canon.node_label, canon.node_key, g.models]).encode())
            items_scored = index.scored_clusters(pair, graph=g, only_types=MATERIALISED_TYPES)[0]
            for scored in (ctx.scored, items_scored):
                for name in _SCORED_ARRAYS:
                    _array(parts["scored"], getattr(scored, name))
    out = {k: h.hexdigest()[:16] for k, h in parts.items()}
    out["all"] = hashlib.sha256("".join(out.values()).encode()).hexdigest()[:16]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    contexts_arguments(parser, tasks=24)
    parser.add_argument("--scratch", action="store_true", help="every population from its own table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tig-digest-") as tmp:
        out = digests(args.tasks, args.pairs_per_task, args.cache_dir or tmp, reuse=not args.scratch)
    for name, value in out.items():
        print(f"{name:<9}{value}")
    print(f"({args.tasks * args.pairs_per_task} contexts, {'scratch' if args.scratch else 'shared basis'})")


if __name__ == "__main__":
    main()
