"""The provider client against the fake OpenAI-compatible server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import pickle
import threading
import time

import numpy as np
import pytest

from engine.providers.cache import RequestCache
from engine.providers.client import (
    ChatRequest,
    ChatResult,
    OpenAICompatibleClient,
    ProviderConfig,
    ProviderError,
)
from engine.providers.usage import UsageLedger
from tests.fakes import FakeOpenAIServer, Fault, Reply, Script, faults_then

USER = [{"role": "user", "content": "Describe one static image."}]
FAST_RETRIES = {"backoff_base_s": 0.01, "backoff_max_s": 0.05}


def make_client(
    server: FakeOpenAIServer, *, concurrency: int = 100, usage=None, **config
) -> OpenAICompatibleClient:
    settings = {"base_url": server.base_url, "model": "fake/judge", **FAST_RETRIES, **config}
    return OpenAICompatibleClient(ProviderConfig(**settings), concurrency=concurrency, usage=usage)


def test_chat_returns_reply_text_and_token_counts():
    with FakeOpenAIServer(
        handler=lambda request: Reply("Core Idea: a kite.", prompt_tokens=12, completion_tokens=4)
    ) as server:
        result = make_client(server).chat(USER)
    assert result.text == "Core Idea: a kite."
    assert (result.prompt_tokens, result.completion_tokens) == (12, 4)
    assert result.cached is False
    assert result.attempts == 1
    assert result.finish_reason == "stop"


def test_request_body_carries_model_messages_and_sampling_parameters():
    with FakeOpenAIServer() as server:
        make_client(server, temperature=0.2, max_tokens=300).chat(USER, temperature=0.7)
        body = server.chat_requests[0].body
    assert body["model"] == "fake/judge"
    assert body["messages"] == USER
    assert body["temperature"] == 0.7
    assert body["max_tokens"] == 300
    assert "reasoning" not in body


def test_reasoning_flag_is_sent_when_configured():
    with FakeOpenAIServer() as server:
        make_client(server, reasoning=False).chat(USER)
        body = server.chat_requests[0].body
    assert body["reasoning"] == {"enabled": False}


def test_response_format_is_passed_through():
    with FakeOpenAIServer() as server:
        make_client(server).chat(USER, response_format={"type": "json_object"})
        body = server.chat_requests[0].body
    assert body["response_format"] == {"type": "json_object"}


def test_api_key_is_read_from_the_named_environment_variable(monkeypatch):
    monkeypatch.setenv("ATELIER_TEST_KEY", "sk-test-123")
    with FakeOpenAIServer() as server:
        make_client(server, api_key_env="ATELIER_TEST_KEY").chat(USER)
        headers = server.chat_requests[0].headers
    assert headers["Authorization"] == "Bearer sk-test-123"


def test_extra_headers_are_sent():
    with FakeOpenAIServer() as server:
        make_client(server, extra_headers={"X-Title": "Atelier"}).chat(USER)
        headers = server.chat_requests[0].headers
    assert headers["X-Title"] == "Atelier"


def test_missing_api_key_variable_fails_loudly(monkeypatch):
    monkeypatch.delenv("ATELIER_ABSENT_KEY", raising=False)
    config = ProviderConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="ATELIER_ABSENT_KEY")
    with pytest.raises(ProviderError, match="ATELIER_ABSENT_KEY"):
        OpenAICompatibleClient(config)


def test_repr_never_shows_the_api_key_or_header_values(monkeypatch):
    monkeypatch.setenv("ATELIER_TEST_KEY", "sk-secret-value")
    config = ProviderConfig(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env="ATELIER_TEST_KEY",
        extra_headers={"X-Api-Token": "header-secret"},
    )
    client = OpenAICompatibleClient(config)
    shown = repr(config) + repr(client) + str(vars(client))
    assert "sk-secret-value" not in shown
    assert "header-secret" not in shown
    assert "ATELIER_TEST_KEY" in shown


def test_it_retries_after_429_and_succeeds():
    with FakeOpenAIServer(handler=faults_then(Fault.http(429), 2, "fine")) as server:
        result = make_client(server).chat(USER)
        assert len(server.chat_requests) == 3
    assert result.text == "fine"
    assert result.attempts == 3


def test_it_honours_retry_after():
    with FakeOpenAIServer(handler=faults_then(Fault.http(429, retry_after=0.4), 1, "fine")) as server:
        make_client(server).chat(USER)
        first, second = server.chat_requests
    assert second.received_at - first.received_at >= 0.35


def test_it_retries_on_server_errors():
    with FakeOpenAIServer(handler=Script(Fault.http(500), Fault.http(503), "fine")) as server:
        result = make_client(server).chat(USER)
    assert result.text == "fine"
    assert result.attempts == 3


def test_it_retries_on_a_body_that_is_not_json():
    with FakeOpenAIServer(handler=Script(Fault.malformed(), "fine")) as server:
        result = make_client(server).chat(USER)
    assert result.text == "fine"
    assert result.attempts == 2


GARBAGE_USAGE_REPLY = ('{"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}], '
                       '"usage": %s}')


@pytest.mark.parametrize("usage", [
    '{"prompt_tokens": 1e999}',  # before: OverflowError out of the client, past its retry policy
    '{"prompt_tokens": -7, "completion_tokens": 3}',  # before: accepted, a negative cost
    '{"prompt_tokens": 1e30}',  # before: accepted, a count no column holds
    '{"completion_tokens": true}',
])
def test_it_retries_on_a_usage_count_that_is_not_a_token_count(usage):
    with FakeOpenAIServer(handler=Script(Fault.raw(200, GARBAGE_USAGE_REPLY % usage), "fine")) as server:
        result = make_client(server).chat(USER)
    assert (result.text, result.attempts) == ("fine", 2)


def test_a_usage_count_written_as_a_whole_float_or_a_digit_string_is_read():
    usage = '{"prompt_tokens": 12.0, "completion_tokens": "5"}'
    with FakeOpenAIServer(handler=Script(Fault.raw(200, GARBAGE_USAGE_REPLY % usage))) as server:
        result = make_client(server).chat(USER)
    assert (result.text, result.attempts, result.prompt_tokens, result.completion_tokens) == ("hi", 1, 12, 5)


def test_it_retries_after_a_timeout():
    with FakeOpenAIServer(handler=Script(Fault.hang(2.0), "fine")) as server:
        started = time.monotonic()
        result = make_client(server, timeout_s=0.3).chat(USER)
        elapsed = time.monotonic() - started
    assert result.text == "fine"
    assert result.attempts == 2
    assert elapsed < 1.5


def test_it_retries_after_a_dropped_connection():
    with FakeOpenAIServer(handler=Script(Fault.disconnect(), "fine")) as server:
        result = make_client(server).chat(USER)
    assert result.text == "fine"
    assert result.attempts == 2


def test_it_gives_up_after_max_retries():
    with FakeOpenAIServer(handler=lambda request: Fault.http(503)) as server:
        with pytest.raises(ProviderError) as raised:
            make_client(server, max_retries=2).chat(USER)
        assert len(server.chat_requests) == 3
    assert raised.value.status == 503
    assert raised.value.attempts == 3


def test_a_client_error_is_not_retried():
    with FakeOpenAIServer(handler=lambda request: Fault.http(400)) as server:
        with pytest.raises(ProviderError) as raised:
            make_client(server).chat(USER)
        assert len(server.chat_requests) == 1
    assert raised.value.status == 400


def test_chat_many_keeps_request_order():
    def answer(request):
        number = int(request["messages"][0]["content"])
        return Reply(str(number), delay_s=0.002 * (number % 5))

    requests = [ChatRequest(messages=[{"role": "user", "content": str(n)}]) for n in range(30)]
    with FakeOpenAIServer(handler=answer) as server:
        results = make_client(server, concurrency=8).chat_many(requests)
    assert [r.text for r in results] == [str(n) for n in range(30)]


def test_chat_many_never_exceeds_the_concurrency_cap():
    requests = [ChatRequest(messages=[{"role": "user", "content": f"q{n}"}]) for n in range(40)]
    with FakeOpenAIServer(latency_s=0.05) as server:
        make_client(server, concurrency=5).chat_many(requests)
        observed = server.max_concurrency
    assert observed == 5


def test_chat_many_returns_a_failure_in_place_without_failing_the_batch():
    def answer(request):
        content = request["messages"][0]["content"]
        return Fault.http(400) if content == "bad" else content.upper()

    requests = [ChatRequest(messages=[{"role": "user", "content": c}]) for c in ("one", "bad", "three")]
    with FakeOpenAIServer(handler=answer) as server:
        results = make_client(server).chat_many(requests)
    assert isinstance(results[0], ChatResult) and results[0].text == "ONE"
    assert isinstance(results[1], ProviderError)
    assert isinstance(results[2], ChatResult) and results[2].text == "THREE"


def test_identical_requests_in_one_batch_are_sent_once():
    request = ChatRequest(messages=USER)
    with FakeOpenAIServer() as server:
        first, second = make_client(server).chat_many([request, request])
        assert len(server.chat_requests) == 1
    assert first.text == second.text
    assert second.cached is True


@pytest.mark.parametrize("unstorable", ["\x00", "\ud800", "\udfff"], ids=["nul", "lone-high-surrogate", "lone-low-surrogate"])
def test_a_reply_with_a_nul_or_lone_surrogate_comes_back_storable_and_is_cached(tmp_path, unstorable):
    # a provider may send "\u0000" or an unpaired "\ud800" in JSON; neither the request cache (UTF-8) nor
    # PostgreSQL's text can hold them, and the run failed at the same reply on every resume
    reply = f"Core Idea: a kite{unstorable}, high.\n😀"
    with FakeOpenAIServer(handler=lambda request: Reply(reply)) as server:
        cache = RequestCache(tmp_path / "cache.sqlite3")
        settings = {"base_url": server.base_url, "model": "fake/judge", **FAST_RETRIES}
        first = OpenAICompatibleClient(ProviderConfig(**settings), cache=cache).chat(USER)
        again = OpenAICompatibleClient(ProviderConfig(**settings), cache=RequestCache(tmp_path / "cache.sqlite3")).chat(USER)
        assert len(server.chat_requests) == 1
    assert first.text == "Core Idea: a kite\ufffd, high.\n😀"
    assert again.cached is True and again.text == first.text
    first.text.encode("utf-8")  # storable: no lone surrogate left


def test_chat_works_when_called_from_inside_a_running_event_loop():
    with FakeOpenAIServer(handler=lambda request: "inside") as server:
        client = make_client(server)

        async def caller():
            return client.chat(USER)

        result = asyncio.run(caller())
    assert result.text == "inside"


def test_clients_in_several_threads_work_at_once():
    with FakeOpenAIServer(latency_s=0.02) as server:
        client = make_client(server, concurrency=4)
        outcomes: list[str] = []

        def work(n: int) -> None:
            outcomes.append(client.chat([{"role": "user", "content": f"t{n}"}]).text)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(outcomes) == sorted(f"echo: t{n}" for n in range(4))


def test_usage_is_recorded_with_cost_from_configured_prices():
    usage = UsageLedger()
    with FakeOpenAIServer(
        handler=lambda r: Reply("ok", prompt_tokens=1_000, completion_tokens=500)
    ) as server:
        client = make_client(server, usage=usage, price_input_per_mtok=2.0, price_output_per_mtok=10.0)
        result = client.chat(USER)
    totals = usage.totals()
    assert totals.calls == 1
    assert totals.prompt_tokens == 1_000 and totals.completion_tokens == 500
    assert totals.cost_usd == pytest.approx(0.002 + 0.005)
    assert result.cost_usd == pytest.approx(0.007)


def test_usage_counts_retries_and_failures():
    usage = UsageLedger()
    handler = Script(Fault.http(429), "ok", Fault.http(401))
    with FakeOpenAIServer(handler=handler) as server:
        client = make_client(server, usage=usage)
        client.chat(USER)
        with pytest.raises(ProviderError):
            client.chat([{"role": "user", "content": "second"}])
    totals = usage.totals()
    assert (totals.calls, totals.retries, totals.failures) == (1, 1, 1)


def test_embed_returns_one_row_per_text_in_order():
    with FakeOpenAIServer(embedding_dim=8) as server:
        client = make_client(server, embedding_batch_size=2)
        matrix = client.embed(["kite", "lantern", "kite", "harbour", "salt"])
        batches = len(server.embedding_requests)
    assert matrix.shape == (5, 8)
    np.testing.assert_allclose(matrix[0], matrix[2])
    assert not np.allclose(matrix[0], matrix[1])
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0)
    assert batches == 2  # four distinct texts, two per batch


def test_embed_retries_and_then_raises_on_persistent_failure():
    with FakeOpenAIServer(embedding_handler=lambda request: Fault.http(502)) as server:
        with pytest.raises(ProviderError):
            make_client(server, max_retries=1).embed(["kite"])
        assert len(server.embedding_requests) == 2


def test_provider_error_survives_pickling():
    error = ProviderError("HTTP 503: busy", status=503, attempts=4, retryable=True)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.status, copy.attempts, copy.retryable) == ("HTTP 503: busy", 503, 4, True)


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"message": "upstream overloaded"}}',
        '{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}}',
        '{"choices": []}',
        "[1, 2]",
    ],
)
def test_a_200_without_a_usable_completion_is_retried(body):
    with FakeOpenAIServer(handler=Script(Fault.raw(200, body), "fine")) as server:
        result = make_client(server).chat(USER)
    assert result.text == "fine"
    assert result.attempts == 2


def test_on_result_reports_each_outcome_once_as_it_arrives():
    seen: list[tuple[int, str]] = []
    requests = [ChatRequest(messages=[{"role": "user", "content": c}]) for c in ("a", "bad", "a", "c")]

    def answer(request):
        return Fault.http(400) if request["messages"][0]["content"] == "bad" else "ok"

    with FakeOpenAIServer(handler=answer) as server:
        make_client(server).chat_many(
            requests, on_result=lambda index, outcome: seen.append((index, type(outcome).__name__))
        )
    assert sorted(seen) == [(0, "ChatResult"), (1, "ProviderError"), (2, "ChatResult"), (3, "ChatResult")]


@pytest.mark.parametrize("temperature", [-0.1, 2.5])
def test_a_temperature_outside_the_protocols_range_is_refused(temperature):
    from engine.providers.client import temperature_check

    with pytest.raises(ValueError, match=r"temperature must lie in \[0, 2\]"):
        temperature_check(temperature)
