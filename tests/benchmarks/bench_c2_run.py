"""A full convergent C² run against the fake OpenAI-compatible server (issue 12 "Benchmarks").

Run::

    .venv/bin/python -m tests.benchmarks.bench_c2_run [--prompts 200] [--models 2] [--samples 5]
                                                      [--concurrency 100] [--latency 0.2]

The fake server (its own process, so its threads do not share the client's interpreter lock) answers
every call after a fixed latency. The run is the site's whole path on a temporary SQLite database:
planned rows, ``c2_run_execute_inline`` with answers and the confidence question in the same
conversation (2 calls per sample), TriviaQA grading, Originality embeddings (an embedder-role model on
the same fake server) and scoring. Ideal: ``concurrency / latency`` calls/s (500 at 100 in flight and
200 ms); the baseline measured in the same run is the bare provider client sending the same number of
calls with ``chat_many``. Goal: run calls/s ÷ ideal ≥ 0.8. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_PROMPTS = 200
DEFAULT_MODELS = 2
DEFAULT_SAMPLES = 5
DEFAULT_CONCURRENCY = 100
DEFAULT_LATENCY_S = 0.2
GOAL_RATIO = 0.8
SERVER_SWITCH_INTERVAL_S = 0.0005  # as in bench_judge_throughput: keep the fake's thread wake-ups prompt


def serve(latency_s: float, connection: Any) -> None:
    """Child process: the fake server with the C² handler; answers 'stats' / 'stop' over a pipe."""
    from tests.fakes.c2_model import C2FakeModel
    from tests.fakes.openai_server import FakeOpenAIServer

    sys.setswitchinterval(SERVER_SWITCH_INTERVAL_S)
    with FakeOpenAIServer(handler=C2FakeModel(qa_answers={"which planet is red?": ["Mars", "mars", "Planet Mars"]}),
                          latency_s=latency_s) as server:
        connection.send(server.port)
        while True:
            command = connection.recv()
            if command == "stats":
                connection.send((len(server.chat_requests), server.max_concurrency))
            elif command == "reset":
                server.reset()
                connection.send("ok")
            else:
                break


def _setup_django(folder: Path, concurrency: int) -> None:
    os.environ.update(
        DATABASE_URL=f"sqlite:///{folder / 'bench.sqlite3'}", ATELIER_VAR_DIR=str(folder / "var"),
        ATELIER_PROVIDER_CONCURRENCY=str(concurrency), DJANGO_SETTINGS_MODULE="evalsite.settings",
    )
    os.environ.pop("CELERY_BROKER_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=DEFAULT_PROMPTS)
    parser.add_argument("--models", type=int, default=DEFAULT_MODELS)
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    parser.add_argument("--latency", type=float, default=DEFAULT_LATENCY_S)
    args = parser.parse_args(argv)
    ideal = args.concurrency / args.latency

    context = multiprocessing.get_context("spawn")
    control, child_end = context.Pipe()
    server = context.Process(target=serve, args=(args.latency, child_end), daemon=True)
    server.start()
    with tempfile.TemporaryDirectory(prefix="bench-c2-") as folder:
        try:
            port = control.recv()
            base_url = f"http://127.0.0.1:{port}/v1"
            _setup_django(Path(folder), args.concurrency)
            figures = _measure(args, base_url, control, ideal)
            control.send("stop")
        finally:
            server.join(timeout=5)
            if server.is_alive():
                server.terminate()
    _print(figures, args, ideal)
    return figures


def _measure(args, base_url: str, control, ideal: float) -> dict:
    from engine.providers.client import ChatRequest, OpenAICompatibleClient, ProviderConfig, ProviderError
    from leaderboard.c2.models import C2Sample
    from leaderboard.c2.services import runs
    from leaderboard.c2.services.imports import c2_tasks_import
    from leaderboard.models import SubjectModel

    trivia = {"Data": [{"Question": f"Bench trivia question {k}: which planet is red?", "QuestionId": f"bench_{k}",
                        "Answer": {"Value": "Mars", "NormalizedAliases": ["mars"]}} for k in range(args.prompts)]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="bench.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="bench-c2", version="1")
    names = [f"bench-model-{k}" for k in range(args.models)]
    for name in names:
        SubjectModel.objects.create(display_name=name, provider_id=f"bench/{name}", base_url=base_url)
    SubjectModel.objects.create(display_name="bench-embedder", role="embedder", provider_id="bench/embed", base_url=base_url)

    # Baseline: the bare client, the same number of calls, the same cap and latency.
    calls = 2 * args.prompts * args.models * args.samples
    client = OpenAICompatibleClient(ProviderConfig(base_url=base_url, model="bench/raw", max_retries=0),
                                    concurrency=args.concurrency)
    client.chat_many([ChatRequest(messages=[{"role": "user", "content": "warm-up"}])])
    started = time.perf_counter()
    raw = client.chat_many([ChatRequest(messages=[{"role": "user", "content": f"call {n}"}]) for n in range(calls)])
    raw_seconds = time.perf_counter() - started
    raw_failures = sum(isinstance(r, ProviderError) for r in raw)

    control.send("reset")
    control.recv()
    run = runs.c2_run_create(task_set=task_set, model_names=names, n_samples=args.samples, rater_name="simulated",
                             embedder="bench-embedder")
    started = time.perf_counter()
    run = runs.c2_run_execute_inline(run=run)
    run_seconds = time.perf_counter() - started
    control.send("stats")
    received, peak = control.recv()
    return {
        "calls": calls, "raw_seconds": raw_seconds, "raw_failures": raw_failures, "run_seconds": run_seconds,
        "run_status": run.status, "run_calls_done": run.calls_done, "received": received, "peak_in_flight": peak,
        "samples_done": C2Sample.objects.filter(run=run, status=C2Sample.Status.DONE).count(),
        "raw_ratio": calls / raw_seconds / ideal, "run_ratio": run.calls_done / run_seconds / ideal,
    }


def _print(f: dict, args, ideal: float) -> None:
    print(f"C² convergent run: {args.prompts} TriviaQA prompts × {args.models} models × n={args.samples} "
          f"= {f['calls']} chat calls (answer + confidence), latency {args.latency * 1000:.0f} ms, "
          f"{args.concurrency} in flight; ideal {ideal:.0f} calls/s")
    print(f"{'path':<34}{'calls':>7}{'seconds':>9}{'calls/s':>9}{'÷ ideal':>9}")
    print(f"{'client.chat_many (baseline)':<34}{f['calls']:>7}{f['raw_seconds']:>9.2f}{f['calls'] / f['raw_seconds']:>9.1f}"
          f"{f['raw_ratio']:>9.2f}")
    print(f"{'c2_run_execute_inline (whole run)':<34}{f['run_calls_done']:>7}{f['run_seconds']:>9.2f}"
          f"{f['run_calls_done'] / f['run_seconds']:>9.1f}{f['run_ratio']:>9.2f}")
    print(f"run status {f['run_status']}, samples done {f['samples_done']}, chat requests received {f['received']}, "
          f"peak in flight {f['peak_in_flight']}; run ÷ baseline {f['run_ratio'] / f['raw_ratio']:.2f}; "
          f"goal run ÷ ideal ≥ {GOAL_RATIO}: {'met' if f['run_ratio'] >= GOAL_RATIO else 'NOT met'}")


if __name__ == "__main__":
    main()
