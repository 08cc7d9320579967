"""The HTTP/1.1 transport under the client: framing, encodings, keep-alive, TLS — over real sockets."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from urllib.parse import urlsplit

import httpx
import pytest

from engine.providers.client import ChatRequest, OpenAICompatibleClient, ProviderConfig
from engine.providers.transport import Http11Transport
from tests.fakes import FakeOpenAIServer, Reply, Script, deterministic_png

USER = [{"role": "user", "content": "hello"}]


def make_client(server, **config) -> OpenAICompatibleClient:
    settings = {"base_url": server.base_url, "model": "m", "backoff_base_s": 0.01, "max_retries": 0, **config}
    return OpenAICompatibleClient(ProviderConfig(**settings), concurrency=1)


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
def test_every_body_framing_is_read(framing):
    text = "a visual plan " * 40
    with FakeOpenAIServer(handler=lambda request: Reply(text, framing=framing)) as server:
        results = make_client(server).chat_many(
            [ChatRequest(messages=USER, sample_index=n) for n in range(3)]
        )
    assert [r.text for r in results] == [text] * 3


def test_a_gzip_body_is_decoded():
    with FakeOpenAIServer(handler=lambda request: Reply("compressed", gzip=True)) as server:
        assert make_client(server).chat(USER).text == "compressed"


def test_an_interim_response_is_skipped():
    with FakeOpenAIServer(handler=lambda request: Reply("final", early_hints=True)) as server:
        assert make_client(server).chat(USER).text == "final"


def test_a_silently_closed_keep_alive_connection_is_replaced_without_a_retry():
    handler = Script(Reply("first", close_after=True), Reply("second"))
    requests = [ChatRequest(messages=USER, sample_index=n) for n in range(2)]
    with FakeOpenAIServer(handler=handler) as server:
        first, second = make_client(server, max_retries=0).chat_many(requests)
        ports = [r.peer_port for r in server.chat_requests]
    assert (first.text, second.text) == ("first", "second")
    assert (first.attempts, second.attempts) == (1, 1)
    assert ports[0] != ports[1]


def test_keep_alive_reuses_one_connection_for_sequential_calls():
    requests = [ChatRequest(messages=USER, sample_index=n) for n in range(5)]
    with FakeOpenAIServer() as server:
        make_client(server).chat_many(requests)
        ports = [r.peer_port for r in server.chat_requests]
    assert len(ports) == 5
    assert len(set(ports)) == 1


def test_base_url_path_prefix_and_host_header_are_used():
    with FakeOpenAIServer() as server:
        make_client(server).chat(USER)
        recorded = server.chat_requests[0]
        port = server.port
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["Host"] == f"127.0.0.1:{port}"
    assert recorded.headers["Content-Type"] == "application/json"


def test_header_values_with_line_breaks_are_refused():
    with pytest.raises(ValueError):
        Http11Transport("http://127.0.0.1:9/v1", headers={"X-Title": "a\r\nInjected: yes"})


def test_a_non_http_base_url_is_refused():
    with pytest.raises(ValueError):
        Http11Transport("ftp://example.org/v1")


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context, str(cert)


def test_https_with_a_configured_ca_bundle(self_signed):
    context, cert = self_signed
    with FakeOpenAIServer(handler=lambda request: "over tls", tls=context) as server:
        assert server.base_url.startswith("https://")
        assert make_client(server, ca_file=cert).chat(USER).text == "over tls"


def test_https_refuses_an_untrusted_certificate(self_signed):
    context, _cert = self_signed
    with FakeOpenAIServer(tls=context) as server:
        outcome = make_client(server).chat_many([ChatRequest(messages=USER)])[0]
    assert not hasattr(outcome, "text")
    assert "CERTIFICATE_VERIFY_FAILED" in outcome.message


def test_a_get_fetches_an_absolute_path_with_its_query_and_reuses_the_connection():
    async def fetch_twice(base_url: str, target: str):
        async with Http11Transport(base_url) as http:
            return await http.get(target), await http.get(target)

    with FakeOpenAIServer() as server:
        url = httpx.post(f"{server.base_url}/images/generations",
                         json={"prompt": "p", "seed": 1, "response_format": "url"}).json()["data"][0]["url"]
        parts = urlsplit(url)
        first, second = asyncio.run(fetch_twice(server.base_url, f"{parts.path}?{parts.query}"))
        downloads = server.image_downloads
    assert first.status == second.status == 200
    assert first.body == second.body == deterministic_png("p", 1)
    assert downloads[0].path == f"{parts.path}?{parts.query}"
    assert downloads[0].peer_port == downloads[1].peer_port  # one kept-alive connection
    assert "Content-Type" not in downloads[0].headers and downloads[0].headers["Accept"] == "*/*"


def test_a_get_target_must_be_an_absolute_path():
    async def fetch(target: str):
        async with Http11Transport("http://127.0.0.1:9/v1") as http:
            return await http.get(target)

    for target in ("relative/path", "/with space", "/line\r\nInjected: 1"):
        with pytest.raises(ValueError, match="absolute path"):
            asyncio.run(fetch(target))


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
def test_a_body_over_the_limit_is_a_transport_error_in_every_framing(framing, monkeypatch):
    # A hostile or broken endpoint (an EASEL agent answering without end) was read whole into memory.
    from engine.providers import transport
    from engine.providers.client import ProviderError

    monkeypatch.setattr(transport, "BODY_LIMIT", 4096)
    with FakeOpenAIServer(handler=lambda request: Reply("x" * 8000, framing=framing)) as server:
        with pytest.raises(ProviderError, match="response body over 4,096 bytes"):
            make_client(server).chat(USER)
    with FakeOpenAIServer(handler=lambda request: Reply("x" * 2000, framing=framing)) as server:
        assert make_client(server).chat(USER).text == "x" * 2000  # within the limit: read as before


def test_a_gzip_body_that_decompresses_over_the_limit_is_a_transport_error(monkeypatch):
    from engine.providers import transport
    from engine.providers.client import ProviderError

    monkeypatch.setattr(transport, "BODY_LIMIT", 4096)
    # ~8 KB of JSON compresses to well under the limit: only its decoded size is over it (a gzip bomb)
    with FakeOpenAIServer(handler=lambda request: Reply("x" * 8000, gzip=True)) as server:
        with pytest.raises(ProviderError, match="response body over 4,096 bytes"):
            make_client(server).chat(USER)
