"""The LLM judge against the fake server: schema, repair, failures, cache, anonymity."""

from __future__ import annotations

import json

from engine.checklists import Dimension
from engine.judge.comparison import ComparisonKind, Winner
from engine.judge.llm import LLMJudge
from engine.providers.cache import RequestCache
from engine.providers.client import OpenAICompatibleClient, ProviderConfig
from engine.providers.usage import UsageLedger
from tests.engine.judge.conftest import ALICE, BOB, CHARLIE
from tests.fakes import FakeOpenAIServer, Fault, Script


def verdict(request_json: dict, winner: str = "A") -> str:
    """A valid judge reply for whatever dimension the prompt asks about."""
    user = request_json["messages"][-1]["content"]
    dimension = user.split("Dimension: ", 1)[1].split()[0]
    return json.dumps(
        {
            "dimension": dimension,
            "winner": winner,
            "confidence": 0.75,
            "overall_rationale": "A is more specific.",
            "per_item_outcomes": [
                {
                    "item_index": n,
                    "item": f"item {n}",
                    "winner": winner,
                    "confidence": 0.6,
                    "evidence_a": "bowed string",
                    "evidence_b": None,
                    "rationale": "More specific.",
                }
                for n in (1, 2, 3)
            ],
        }
    )


def make_judge(server, *, cache=None, usage=None) -> LLMJudge:
    config = ProviderConfig(base_url=server.base_url, model="fake/judge", backoff_base_s=0.01, max_retries=0)
    return LLMJudge(OpenAICompatibleClient(config, cache=cache, usage=usage))


def test_a_valid_reply_becomes_a_judgement(comparison):
    with FakeOpenAIServer(handler=verdict) as server:
        (judgement,) = make_judge(server).judge_pairs([comparison()])
    assert judgement.ok
    assert (judgement.winner, judgement.confidence) == (Winner.A, 0.75)
    assert judgement.winner_model == "alice-model"
    assert len(judgement.per_item_outcomes) == 3
    assert (judgement.repaired, judgement.calls, judgement.judge_name) == (False, 1, "fake/judge")


def test_no_request_ever_contains_a_model_name(comparison):
    requests = [comparison(dimension=d) for d in Dimension] + [
        comparison(a=BOB, b=ALICE, kind=ComparisonKind.SWAP)
    ]
    with FakeOpenAIServer(handler=verdict) as server:
        make_judge(server).judge_pairs(requests)
        sent = json.dumps([r.body for r in server.chat_requests])
    assert "alice-model" not in sent and "bob-model" not in sent


def test_an_invalid_reply_is_repaired_once_and_marked(comparison):
    replies = iter(["I prefer A because it is better."])

    def answer(request_json):
        return next(replies, None) or verdict(request_json)

    with FakeOpenAIServer(handler=answer) as server:
        (judgement,) = make_judge(server).judge_pairs([comparison()])
        repair_prompt = server.chat_requests[1].body["messages"][-1]["content"]
    assert judgement.ok and judgement.repaired
    assert judgement.calls == 2
    assert judgement.raw_output == "I prefer A because it is better."
    assert "I prefer A because it is better." in repair_prompt


def test_a_reply_still_invalid_after_repair_is_recorded_as_failed(comparison):
    with FakeOpenAIServer(handler=lambda request: '{"winner": "left"}') as server:
        (judgement,) = make_judge(server).judge_pairs([comparison()])
        sent = len(server.chat_requests)
    assert not judgement.ok
    assert judgement.winner is None
    assert "invalid after repair" in judgement.error
    assert (judgement.calls, sent) == (2, 2)


def test_a_provider_failure_is_recorded_as_failed_without_repair(comparison):
    with FakeOpenAIServer(handler=lambda request: Fault.http(400)) as server:
        (judgement,) = make_judge(server).judge_pairs([comparison()])
        sent = len(server.chat_requests)
    assert not judgement.ok
    assert judgement.error.startswith("provider:")
    assert sent == 1


def test_an_empty_response_is_judged_without_a_call(comparison):
    with FakeOpenAIServer(handler=verdict) as server:
        automatic, asked = make_judge(server).judge_pairs([comparison(a=ALICE, b=CHARLIE), comparison()])
        sent = len(server.chat_requests)
    assert automatic.automatic and automatic.winner is Winner.A and automatic.calls == 0
    assert asked.ok and not asked.automatic
    assert sent == 1


def test_results_follow_request_order(comparison):
    def answer(request_json):
        return verdict(
            request_json,
            winner="B" if "Dimension: novelty" in request_json["messages"][-1]["content"] else "A",
        )

    requests = [comparison(dimension=d) for d in (Dimension.NOVELTY, Dimension.USEFULNESS, Dimension.NOVELTY)]
    with FakeOpenAIServer(handler=answer) as server:
        judgements = make_judge(server).judge_pairs(requests)
    assert [j.winner for j in judgements] == [Winner.B, Winner.A, Winner.B]
    assert [j.request for j in judgements] == requests


def test_a_resumed_run_reads_answered_comparisons_from_the_cache(comparison, tmp_path):
    cache = RequestCache(tmp_path / "judge.sqlite3")
    requests = [comparison(), comparison(dimension=Dimension.NOVELTY)]
    with FakeOpenAIServer(handler=verdict) as server:
        make_judge(server, cache=cache).judge_pairs(requests)
    with FakeOpenAIServer(handler=verdict) as server:
        judgements = make_judge(server, cache=cache).judge_pairs(requests)
        sent = len(server.chat_requests)
    assert sent == 0
    assert all(j.ok and j.cached for j in judgements)


def test_a_duplicate_is_a_fresh_call_even_with_the_same_prompt(comparison, tmp_path):
    cache = RequestCache(tmp_path / "judge.sqlite3")
    requests = [
        comparison(),
        comparison(kind=ComparisonKind.DUPLICATE, repeat=0),
        comparison(kind="duplicate", repeat=1),
    ]
    with FakeOpenAIServer(handler=verdict) as server:
        make_judge(server, cache=cache).judge_pairs(requests)
        sent = len(server.chat_requests)
    assert sent == 3


def test_a_retry_bypasses_the_cache(comparison, tmp_path):
    cache = RequestCache(tmp_path / "judge.sqlite3")
    with FakeOpenAIServer(
        handler=Script(
            '{"bad": 1}', '{"bad": 2}', verdict({"messages": [{"content": "Dimension: usefulness"}]})
        )
    ) as server:
        judge = make_judge(server, cache=cache)
        (failed,) = judge.judge_pairs([comparison()])
        (retried,) = judge.judge_pairs([comparison(retry=1)])
        sent = len(server.chat_requests)
    assert not failed.ok
    assert retried.ok and not retried.cached
    assert sent == 3


def test_judge_calls_are_counted_in_the_ledger(comparison):
    usage = UsageLedger()
    with FakeOpenAIServer(handler=verdict) as server:
        make_judge(server, usage=usage).judge_pairs([comparison(), comparison(dimension=Dimension.NOVELTY)])
    assert usage.totals().calls == 2
    assert usage.totals().prompt_tokens > 0


def test_judges_with_different_cache_namespaces_do_not_share_answers(comparison, tmp_path):
    cache = RequestCache(tmp_path / "judge.sqlite3")
    with FakeOpenAIServer(handler=verdict) as server:
        config = ProviderConfig(base_url=server.base_url, model="fake/judge", max_retries=0)
        client = OpenAICompatibleClient(config, cache=cache)
        LLMJudge(client, cache_namespace="run-1").judge_pairs([comparison()])
        LLMJudge(client, cache_namespace="run-1").judge_pairs([comparison()])
        LLMJudge(client, cache_namespace="run-2").judge_pairs([comparison()])
        sent = len(server.chat_requests)
    assert sent == 2
