"""The request cache: keys, persistence, resumption and concurrent writers."""

from __future__ import annotations

import multiprocessing

from engine.providers.cache import RequestCache, request_key
from engine.providers.client import ChatRequest, OpenAICompatibleClient, ProviderConfig
from engine.providers.usage import UsageLedger
from tests.fakes import FakeOpenAIServer, Fault, Script

USER = [{"role": "user", "content": "Fuse a lighthouse and a violin."}]
PARAMETERS = {"temperature": 0.7, "max_tokens": 512}


def make_client(server, cache, usage=None) -> OpenAICompatibleClient:
    config = ProviderConfig(
        base_url=server.base_url, model="fake/subject", backoff_base_s=0.01, max_retries=1
    )
    return OpenAICompatibleClient(config, cache=cache, usage=usage)


def test_key_is_stable_under_dict_key_order():
    reordered = [{"content": "Fuse a lighthouse and a violin.", "role": "user"}]
    assert request_key("m", USER, PARAMETERS, 0) == request_key(
        "m", reordered, dict(reversed(PARAMETERS.items())), 0
    )


def test_key_changes_with_model_messages_parameters_and_sample_index():
    base = request_key("m", USER, PARAMETERS, 1)
    assert request_key("other", USER, PARAMETERS, 1) != base
    assert request_key("m", [{"role": "user", "content": "x"}], PARAMETERS, 1) != base
    assert request_key("m", USER, {**PARAMETERS, "temperature": 0.0}, 1) != base
    assert request_key("m", USER, PARAMETERS, 2) != base


def test_an_answered_request_is_not_sent_again(tmp_path):
    cache = RequestCache(tmp_path / "answers.sqlite3")
    with FakeOpenAIServer(handler=lambda request: "an answer") as server:
        client = make_client(server, cache)
        first = client.chat(USER)
        second = client.chat(USER)
        assert len(server.chat_requests) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == "an answer"
    assert second.attempts == 0


def test_a_resumed_run_with_a_new_client_reads_the_same_file(tmp_path):
    path = tmp_path / "answers.sqlite3"
    samples = [ChatRequest(messages=USER, sample_index=n) for n in (1, 2, 3)]
    with FakeOpenAIServer() as server:
        make_client(server, RequestCache(path)).chat_many(samples[:2])
    with FakeOpenAIServer() as server:
        usage = UsageLedger()
        results = make_client(server, RequestCache(path), usage).chat_many(samples)
        sent = len(server.chat_requests)
    assert sent == 1  # only the third sample was never answered
    assert [r.cached for r in results] == [True, True, False]
    assert usage.totals().cached_hits == 2


def test_samples_with_different_indices_are_separate_entries(tmp_path):
    cache = RequestCache(tmp_path / "answers.sqlite3")
    with FakeOpenAIServer(handler=Script("first", "second")) as server:
        results = make_client(server, cache).chat_many(
            [ChatRequest(messages=USER, sample_index=1), ChatRequest(messages=USER, sample_index=2)]
        )
    assert sorted(r.text for r in results) == ["first", "second"]
    assert len(cache) == 2


def test_refresh_sends_again_and_replaces_the_entry(tmp_path):
    cache = RequestCache(tmp_path / "answers.sqlite3")
    with FakeOpenAIServer(handler=Script("old", "new")) as server:
        client = make_client(server, cache)
        client.chat(USER)
        refreshed = client.chat(USER, refresh=True)
        again = client.chat(USER)
    assert refreshed.text == "new" and refreshed.cached is False
    assert again.text == "new" and again.cached is True


def test_failed_calls_are_not_cached(tmp_path):
    cache = RequestCache(tmp_path / "answers.sqlite3")
    with FakeOpenAIServer(handler=Script(Fault.http(400), "recovered")) as server:
        client = make_client(server, cache)
        first = client.chat_many([ChatRequest(messages=USER)])[0]
        second = client.chat(USER)
    assert not hasattr(first, "text")
    assert second.text == "recovered" and second.cached is False


def test_embeddings_are_cached_per_text(tmp_path):
    cache = RequestCache(tmp_path / "answers.sqlite3")
    with FakeOpenAIServer(embedding_dim=4) as server:
        client = make_client(server, cache)
        client.embed(["kite", "salt"])
        client.embed(["salt", "kite", "harbour"])
        second_inputs = server.embedding_requests[1].body["input"]
    assert second_inputs == ["harbour"]


def _write_entries(path: str, worker: int, count: int) -> None:
    cache = RequestCache(path)
    for n in range(count):
        cache.put(f"{worker}-{n}", {"text": f"answer {worker}-{n}"})
        cache.put("shared", {"text": f"written by {worker}"})


def test_concurrent_writer_processes_lose_nothing(tmp_path):
    path = str(tmp_path / "answers.sqlite3")
    RequestCache(path)
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_write_entries, args=(path, w, 150)) for w in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0, 0, 0]
    cache = RequestCache(path)
    assert len(cache) == 3 * 150 + 1
    assert cache.get("2-149") == {"text": "answer 2-149"}
    assert cache.get("shared")["text"].startswith("written by ")


def test_a_cache_opened_before_fork_works_in_the_child(tmp_path):
    cache = RequestCache(tmp_path / "answers.sqlite3")
    cache.put("parent", {"text": "p"})
    context = multiprocessing.get_context("fork")
    child = context.Process(target=lambda: cache.put("child", {"text": "c"}))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert cache.get("child") == {"text": "c"}


def test_a_chat_answer_is_stored_with_its_request_body_as_sent_and_no_key(tmp_path, monkeypatch):
    from engine.providers.cache import chat_request_key
    from engine.providers.client import OpenAICompatibleClient, ProviderConfig
    from tests.fakes import FakeOpenAIServer

    monkeypatch.setenv("ATELIER_TEST_CACHE_KEY_VAR", "sk-cache-test-5e2f81")
    cache = RequestCache(tmp_path / "c.sqlite3")
    with FakeOpenAIServer() as server:
        client = OpenAICompatibleClient(ProviderConfig(base_url=server.base_url, model="fake/judge",
                                                       api_key_env="ATELIER_TEST_CACHE_KEY_VAR"), cache=cache)
        result = client.chat([{"role": "user", "content": "Describe one static image."}], temperature=0.3,
                             sample_index=4)
        sent = server.chat_requests[0].body
    ((key, entry),) = cache.chat_entries(["fake/judge"])
    assert key == result.key and entry["request"] == {"body": sent, "sample_index": 4}
    assert chat_request_key(entry["request"]["body"], 4) == key
    assert all(b"sk-cache-test-5e2f81" not in p.read_bytes() for p in tmp_path.iterdir())  # with the WAL file
    assert cache.chat_entries(["another/model"]) == []
