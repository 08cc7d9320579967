"""Judge throughput against the fake OpenAI-compatible server (issue: "Benchmark").

Run::

    .venv/bin/python -m tests.benchmarks.bench_judge_throughput [--calls 2000] [--concurrency 100] [--latency 0.2]

The fake server answers every call after a fixed latency (200 ms by default)
on 127.0.0.1. At concurrency 100 the ideal is 100 / 0.2 s = 500 calls/s; the
table shows the sustained rate as a ratio of that ideal (goal: >= 0.8), for

* ``client.chat_many`` — the provider client alone;
* ``LLMJudge.judge_pairs`` — the whole judge path: prompt building, the same
  client, App. E schema validation (every reply is a valid judgement).

The server runs in its own process so that its request threads do not compete
with the client for one interpreter lock: the figure is the client's, not the
fake's. Wall-clock time includes opening the connections. No cache is used,
so every call goes over HTTP. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from dataclasses import dataclass
from typing import Any

from engine.checklists import Dimension, template_checklist
from engine.generation import Family, TaskBrief
from engine.judge.comparison import Candidate, PairJudgeRequest
from engine.judge.llm import LLMJudge
from engine.providers.client import ChatRequest, OpenAICompatibleClient, ProviderConfig, ProviderError

DEFAULT_CALLS = 2_000
DEFAULT_CONCURRENCY = 100
DEFAULT_LATENCY_S = 0.2
GOAL_RATIO = 0.8
# A shorter GIL switch interval in the server process: with 100+ handler threads
# waking from their latency sleep at once, the default 5 ms slice adds queueing
# delay that belongs to the fake, not to the client being measured.
SERVER_SWITCH_INTERVAL_S = 0.0005


def judge_reply(request_json: dict[str, Any]) -> str:
    """A valid App. E reply for the dimension named in the prompt (module level: picklable)."""
    user = request_json["messages"][-1]["content"]
    if not user.startswith("Dimension: "):
        return "plain answer"
    dimension = user.split("Dimension: ", 1)[1].split()[0]
    outcome = {
        "winner": "A",
        "confidence": 0.7,
        "evidence_a": "a bowed string",
        "evidence_b": None,
        "rationale": "More specific.",
    }
    return json.dumps(
        {
            "dimension": dimension,
            "winner": "A",
            "confidence": 0.72,
            "overall_rationale": "A maps the brief more specifically.",
            "per_item_outcomes": [{"item_index": n, "item": f"item {n}", **outcome} for n in (1, 2, 3)],
        }
    )


def serve(latency_s: float, connection: Any) -> None:
    """Child process: run the fake server and answer 'stats' / 'reset' / 'stop' over a pipe."""
    from tests.fakes import FakeOpenAIServer

    sys.setswitchinterval(SERVER_SWITCH_INTERVAL_S)
    with FakeOpenAIServer(handler=judge_reply, latency_s=latency_s) as server:
        connection.send(server.port)
        while True:
            command = connection.recv()
            if command == "stats":
                connection.send((len(server.requests), server.max_concurrency, time.process_time()))
            elif command == "reset":
                server.reset()
                connection.send("ok")
            else:
                break


@dataclass
class Row:
    path: str
    calls: int
    concurrency: int
    seconds: float
    cpu_seconds: float
    server_cpu_seconds: float
    failures: int
    received: int
    peak_in_flight: int
    ideal: float

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def ratio(self) -> float:
        return self.rate / self.ideal


def judge_requests(calls: int) -> list[PairJudgeRequest]:
    """``calls`` distinct comparisons spread over tasks and dimensions."""
    dimensions = list(Dimension)
    requests = []
    for n in range(calls):
        task = TaskBrief(
            task_id=f"bench-{n // 30}", family=Family.COMBINATION, brief=f"Fuse a kite and clock {n}."
        )
        dimension = dimensions[n % 3]
        a = Candidate(
            f"model-{n % 7}",
            f"a{n}",
            f"A kite whose tail is a pendulum, variant {n}.",
            f"A red kite {n}. " * 20,
        )
        b = Candidate(
            f"model-{7 + n % 5}",
            f"b{n}",
            f"A clock face stitched from kite silk, {n}.",
            f"A pale clock {n}. " * 20,
        )
        requests.append(
            PairJudgeRequest(f"bench-{n}", task, dimension, template_checklist(task, dimension), a, b)
        )
    return requests


def measure(path: str, run: Any, control: Any, calls: int, concurrency: int, ideal: float) -> Row:
    """Time ``run`` (which returns its failure count) and read the server's request count, peak and CPU."""
    control.send("reset")
    control.recv()
    control.send("stats")
    _, _, server_cpu_started = control.recv()
    started, cpu_started = time.perf_counter(), time.process_time()
    failures = run()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    control.send("stats")
    received, peak, server_cpu = control.recv()
    return Row(
        path,
        calls,
        concurrency,
        seconds,
        cpu_seconds,
        server_cpu - server_cpu_started,
        failures,
        received,
        peak,
        ideal,
    )


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    parser.add_argument("--latency", type=float, default=DEFAULT_LATENCY_S)
    args = parser.parse_args(argv)
    ideal = args.concurrency / args.latency

    context = multiprocessing.get_context("spawn")
    control, child_end = context.Pipe()
    server = context.Process(target=serve, args=(args.latency, child_end), daemon=True)
    server.start()
    try:
        port = control.recv()
        config = ProviderConfig(base_url=f"http://127.0.0.1:{port}/v1", model="bench/judge", max_retries=0)
        client = OpenAICompatibleClient(config, concurrency=args.concurrency)
        judge = LLMJudge(client)

        # Warm-up: imports, SSL context, first connections.
        client.chat_many([ChatRequest(messages=[{"role": "user", "content": "warm-up"}])])

        chats = [ChatRequest(messages=[{"role": "user", "content": f"call {n}"}]) for n in range(args.calls)]
        comparisons = judge_requests(args.calls)

        def run_chats() -> int:
            return sum(isinstance(result, ProviderError) for result in client.chat_many(chats))

        def run_judge() -> int:
            return sum(not judgement.ok for judgement in judge.judge_pairs(comparisons))

        rows = [
            measure("client.chat_many", run_chats, control, args.calls, args.concurrency, ideal),
            measure("LLMJudge.judge_pairs", run_judge, control, args.calls, args.concurrency, ideal),
        ]
        control.send("stop")
    finally:
        server.join(timeout=5)
        if server.is_alive():
            server.terminate()

    print(
        f"Judge throughput: fake OpenAI-compatible server on 127.0.0.1, {args.latency * 1000:.0f} ms latency per call, "
        f"concurrency {args.concurrency}, ideal {ideal:.0f} calls/s"
    )
    header = (
        f"{'path':<22} {'calls':>6} {'served':>6} {'failed':>6} {'seconds':>8} {'calls/s':>8} {'ideal':>6} {'ratio':>6} "
        f"{'peak in flight':>14} {'client CPU ms/call':>18} {'server CPU ms/call':>18}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.path:<22} {row.calls:>6} {row.received:>6} {row.failures:>6} {row.seconds:>8.2f} {row.rate:>8.1f} {row.ideal:>6.0f} "
            f"{row.ratio:>6.2f} {row.peak_in_flight:>14} {row.cpu_seconds / row.calls * 1000:>18.2f} "
            f"{row.server_cpu_seconds / row.calls * 1000:>18.2f}"
        )
    verdict = "met" if min(row.ratio for row in rows) >= GOAL_RATIO else "NOT met"
    print(f"goal: ratio >= {GOAL_RATIO:.2f} of ideal -> {verdict}")
    return rows


if __name__ == "__main__":
    main()
