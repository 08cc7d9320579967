"""Benchmark: offline MiniLM embedding throughput, numpy runtime against sentence-transformers.

1,000 short phrases (2-6 words, the length of typed idea atoms) are embedded by
``engine.embed.MiniLMEmbedder`` (numpy forward pass from the safetensors weights) and, where it is
installed, by ``sentence_transformers.SentenceTransformer`` on CPU with the same model files -- both on this
machine, in this run. Each is warmed up once, then timed ``--repeats`` times; the best run is reported
(least disturbed by other processes), with the median beside it. No cache is involved.

Run: ``.venv/bin/python -m tests.benchmarks.bench_embed [--phrases 1000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import numpy as np

from engine.embed import MINILM_BATCH_SIZE, MiniLMEmbedder, minilm_model_dir

_WORDS = """lighthouse beam fog coffee steam city skyline plant leaf growth calm ocean wave clock gear hourglass sand
    bird flight cage key door bridge river mountain sun moon star tree root seed paper boat teacup violin kite
    snail shell subway map beehive chess typewriter bonsai watch jar crane wheel staircase compass kettle
    ladder umbrella melting folding dissolving woven broken ancient quiet hidden shared""".split()


def phrases(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 6))) for _ in range(n)]


def timed(fn, repeats: int) -> list[float]:
    fn()  # warm-up: weights loaded, code paths compiled
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phrases", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    texts = phrases(args.phrases)
    ours = MiniLMEmbedder()
    rows: list[tuple[str, list[float]]] = [
        (
            f"engine.embed MiniLMEmbedder (numpy, batch {MINILM_BATCH_SIZE})",
            timed(lambda: ours.embed(texts), args.repeats),
        )
    ]
    note = ""
    agreement = None
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        note = "sentence-transformers is not installed here: no reference run, no ratio"
    else:
        import torch

        st = SentenceTransformer(str(minilm_model_dir()), device="cpu")
        rows.insert(
            0,
            (
                (
                    f"sentence-transformers {__import__('sentence_transformers').__version__} "
                    f"(torch {torch.__version__}, {torch.get_num_threads()} threads, batch 32)"
                ),
                timed(lambda: st.encode(texts, batch_size=32, normalize_embeddings=True), args.repeats),
            ),
        )
        agreement = float(
            np.min(np.sum(ours.embed(texts) * st.encode(texts, normalize_embeddings=True), axis=1))
        )

    print(f"Offline embedding throughput: {len(texts)} short phrases (2-6 words), all-MiniLM-L6-v2, CPU")
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(
        f"machine: {os.cpu_count()} cores, load average {load_before:.2f} before / "
        f"{os.getloadavg()[0]:.2f} after; numpy BLAS threads: {blas}; best of {args.repeats} runs after one warm-up"
    )
    baseline = min(rows[0][1])
    print(f"{'embedder':<70}{'best s':>8}{'median s':>10}{'phrases/s':>11}{'ratio':>8}")
    for name, runs in rows:
        best = min(runs)
        print(
            f"{name:<70}{best:8.2f}{statistics.median(runs):10.2f}{len(texts) / best:11.0f}{baseline / best:7.2f}x"
        )
    if agreement is not None:
        print(f"lowest cosine between the two runtimes over the {len(texts)} phrases: {agreement:.6f}")
    if note:
        print(note)


if __name__ == "__main__":
    main()
