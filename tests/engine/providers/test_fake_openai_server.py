"""The fake server itself speaks the OpenAI wire format (checked with plain httpx, not our client)."""

from __future__ import annotations

import base64

import httpx

from tests.fakes import FakeOpenAIServer, Fault, Script, deterministic_png, hash_embedding


def test_it_listens_on_loopback_with_an_os_chosen_port():
    with FakeOpenAIServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.port > 0


def test_chat_completion_has_the_openai_shape():
    with FakeOpenAIServer(handler=lambda request: "two words") as server:
        body = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "one two three"}]},
        ).json()
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "two words"}
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert body["model"] == "m"


def test_scripted_fault_carries_status_and_retry_after():
    with FakeOpenAIServer(handler=Script(Fault.http(429, retry_after=3))) as server:
        response = httpx.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": []})
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "3"


def test_embeddings_are_deterministic_unit_vectors():
    with FakeOpenAIServer(embedding_dim=5) as server:
        body = httpx.post(f"{server.base_url}/embeddings", json={"model": "e", "input": ["a", "b"]}).json()
    assert [row["index"] for row in body["data"]] == [0, 1]
    assert body["data"][0]["embedding"] == hash_embedding("a", 5)


def test_it_records_requests_in_arrival_order():
    with FakeOpenAIServer() as server:
        for n in range(3):
            httpx.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": [], "n": n})
        assert [r.body["n"] for r in server.chat_requests] == [0, 1, 2]
        server.reset()
        assert server.requests == []


def test_image_generation_answers_the_deterministic_png_of_prompt_and_seed_as_b64_json():
    with FakeOpenAIServer() as server:
        body = httpx.post(
            f"{server.base_url}/images/generations",
            json={"model": "i", "prompt": "a kite", "n": 1, "size": "64x48", "response_format": "b64_json", "seed": 4},
        ).json()
        (recorded,) = server.image_requests
    assert base64.b64decode(body["data"][0]["b64_json"]) == deterministic_png("a kite", 4)
    assert deterministic_png("a kite", 4) != deterministic_png("a kite", 5)
    assert recorded.body["prompt"] == "a kite"


def test_image_generation_asked_for_a_url_serves_the_image_there():
    with FakeOpenAIServer() as server:
        body = httpx.post(
            f"{server.base_url}/images/generations", json={"model": "i", "prompt": "a kite", "response_format": "url"}
        ).json()
        image = httpx.get(body["data"][0]["url"])
        assert len(server.image_downloads) == 1
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/png"
    assert image.content == deterministic_png("a kite", None)
