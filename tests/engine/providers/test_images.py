"""The image-generation client against the fake OpenAI-compatible server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from engine.providers.client import ProviderConfig, ProviderError
from engine.providers.images import (
    DEFAULT_SIZE,
    ImageGenerationClient,
    ImageRequest,
    InvalidImage,
    read_image,
)
from engine.providers.usage import UsageLedger
from tests.fakes import FakeOpenAIServer, Fault, ImageReply, deterministic_png, faults_then

FAST_RETRIES = {"backoff_base_s": 0.01, "backoff_max_s": 0.05}
PROMPT = "Core idea: a kite made of receipts\nVisual description: a paper kite over a market at dusk"


def make_client(server: FakeOpenAIServer, *, usage=None, concurrency: int = 100, **config) -> ImageGenerationClient:
    settings = {"base_url": server.base_url, "model": "fake/painter", **FAST_RETRIES, **config}
    return ImageGenerationClient(ProviderConfig(**settings), concurrency=concurrency, usage=usage)


def jpeg_bytes() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (20, 10), (200, 30, 30)).save(out, format="JPEG")
    return out.getvalue()


def test_it_posts_model_prompt_n_size_format_and_seed():
    with FakeOpenAIServer() as server:
        make_client(server).generate(PROMPT, seed=7, size="512x512")
        (request,) = server.image_requests
    assert request.body == {
        "model": "fake/painter", "prompt": PROMPT, "n": 1, "size": "512x512", "response_format": "b64_json", "seed": 7,
    }


def test_without_a_seed_none_is_sent_and_the_size_defaults():
    with FakeOpenAIServer() as server:
        make_client(server).generate(PROMPT)
        body = server.image_requests[0].body
    assert "seed" not in body
    assert body["size"] == DEFAULT_SIZE


def test_a_b64_reply_gives_the_exact_image_bytes_and_what_they_are():
    with FakeOpenAIServer() as server:
        image = make_client(server).generate(PROMPT, seed=3)
    assert image.data == deterministic_png(PROMPT, 3)
    assert image.source == "b64_json"
    assert (image.info.format, image.info.width, image.info.height) == ("PNG", 64, 48)
    assert image.info.extension == "png"
    assert image.attempts == 1
    assert (image.prompt, image.seed) == (PROMPT, 3)


def test_the_same_prompt_and_seed_give_the_same_image_and_another_seed_another():
    with FakeOpenAIServer() as server:
        client = make_client(server)
        first, again, other = (client.generate(PROMPT, seed=s).data for s in (1, 1, 2))
    assert first == again != other


def test_a_url_reply_is_downloaded_from_the_provider():
    with FakeOpenAIServer(image_handler=lambda request: ImageReply(as_url=True)) as server:
        image = make_client(server).generate(PROMPT, seed=5)
        downloads = server.image_downloads
    assert image.source == "url"
    assert image.data == deterministic_png(PROMPT, 5)
    assert len(downloads) == 1 and downloads[0].path.endswith("?signature=fake")
    assert image.attempts == 2  # the generation and the download


def test_the_api_key_goes_to_the_provider_origin_but_never_to_another_host(monkeypatch):
    monkeypatch.setenv("ATELIER_TEST_IMAGE_KEY", "sk-image-secret")
    with FakeOpenAIServer(image_handler=lambda request: ImageReply(as_url=True, url_host="localhost")) as server:
        image = make_client(server, api_key_env="ATELIER_TEST_IMAGE_KEY").generate(PROMPT)
        (generation,), (download,) = server.image_requests, server.image_downloads
    assert image.data == deterministic_png(PROMPT, None)
    assert generation.headers["Authorization"] == "Bearer sk-image-secret"
    assert "Authorization" not in download.headers
    assert download.headers["Host"].startswith("localhost:")


def test_a_data_url_reply_is_decoded_in_place():
    png = deterministic_png("anything", 1)
    data_url = "data:image/png;base64," + base64.b64encode(png).decode()
    with FakeOpenAIServer(image_handler=lambda request: Fault.raw(200, f'{{"data": [{{"url": "{data_url}"}}]}}')) as server:
        image = make_client(server).generate(PROMPT)
    assert (image.data, image.source) == (png, "data-url")


def test_a_jpeg_reply_is_accepted_with_its_format():
    with FakeOpenAIServer(image_handler=lambda request: ImageReply(data=jpeg_bytes())) as server:
        image = make_client(server).generate(PROMPT)
    assert (image.info.format, image.info.extension) == ("JPEG", "jpg")


def test_it_retries_after_429_honouring_retry_after_then_succeeds():
    handler = faults_then(Fault.http(429, retry_after=0.3), 1, ImageReply())
    with FakeOpenAIServer(image_handler=handler) as server:
        usage = UsageLedger()
        image = make_client(server, usage=usage).generate(PROMPT, seed=9)
        first, second = server.image_requests
    assert image.data == deterministic_png(PROMPT, 9)
    assert image.attempts == 2
    assert second.received_at - first.received_at >= 0.25
    assert usage.totals().calls == 1 and usage.totals().retries == 1


def test_a_download_that_fails_is_reported_as_a_download_failure():
    with FakeOpenAIServer() as server:
        # A URL the fake does not serve: 404 is final, and the error says it was the download.
        server.image_handler = lambda request: Fault.raw(
            200, f'{{"data": [{{"url": "{server.base_url}/images/files/missing.png"}}]}}'
        )
        with pytest.raises(ProviderError, match="image download: HTTP 404") as caught:
            make_client(server).generate(PROMPT)
        assert len(server.image_requests) == 1
    assert caught.value.status == 404


def test_bytes_that_are_not_an_image_fail_with_a_clear_error_and_are_not_regenerated():
    with FakeOpenAIServer(image_handler=lambda request: b"<html>quota exceeded</html>") as server:
        usage = UsageLedger()
        with pytest.raises(ProviderError, match="b64_json image is not a decodable image") as caught:
            make_client(server, usage=usage).generate(PROMPT)
        assert len(server.image_requests) == 1
    assert caught.value.status is None
    assert usage.totals().failures == 1


def test_a_truncated_png_is_not_a_decodable_image():
    png = deterministic_png(PROMPT, 1)
    with FakeOpenAIServer(image_handler=lambda request: png[: len(png) // 2]) as server:
        with pytest.raises(ProviderError, match="not a decodable image"):
            make_client(server).generate(PROMPT)


def test_a_reply_without_data_is_retried_then_reported():
    with FakeOpenAIServer(image_handler=lambda request: Fault.raw(200, '{"data": []}')) as server:
        with pytest.raises(ProviderError, match="image response has no data") as caught:
            make_client(server, max_retries=2).generate(PROMPT)
        assert len(server.image_requests) == 3
    assert caught.value.retryable is True


def test_a_client_error_is_not_retried():
    with FakeOpenAIServer(image_handler=lambda request: Fault.http(400)) as server:
        with pytest.raises(ProviderError, match="HTTP 400") as caught:
            make_client(server).generate(PROMPT)
        assert len(server.image_requests) == 1
    assert caught.value.status == 400


def test_generate_many_keeps_input_order_reports_each_outcome_and_respects_the_cap():
    requests = [ImageRequest(prompt=f"{PROMPT} {k}", seed=k) for k in range(6)]
    seen = []
    with FakeOpenAIServer(latency_s=0.05) as server:
        results = make_client(server, concurrency=2).generate_many(
            requests, on_result=lambda index, outcome: seen.append(index)
        )
        assert server.max_concurrency <= 2
    assert [r.data for r in results] == [deterministic_png(r.prompt, r.seed) for r in requests]
    assert sorted(seen) == list(range(6))


def test_one_failure_does_not_sink_the_batch():
    def handler(request):
        return b"not an image" if request["seed"] == 1 else ImageReply()

    with FakeOpenAIServer(image_handler=handler) as server:
        results = make_client(server).generate_many([ImageRequest(PROMPT, seed=k) for k in range(3)])
    assert isinstance(results[1], ProviderError)
    assert results[0].data == deterministic_png(PROMPT, 0) and results[2].data == deterministic_png(PROMPT, 2)


def test_token_usage_of_gpt_image_style_replies_is_costed():
    body = '{"data": [{"b64_json": "%s"}], "usage": {"input_tokens": 40, "output_tokens": 1000}}' % (
        base64.b64encode(deterministic_png("x")).decode()
    )
    with FakeOpenAIServer(image_handler=lambda request: Fault.raw(200, body)) as server:
        usage = UsageLedger()
        image = make_client(server, usage=usage, price_input_per_mtok=5.0, price_output_per_mtok=40.0).generate(PROMPT)
    assert image.cost_usd == pytest.approx((40 * 5.0 + 1000 * 40.0) / 1_000_000)
    assert usage.totals().prompt_tokens == 40 and usage.totals().completion_tokens == 1000


def test_read_image_names_what_is_wrong():
    with pytest.raises(InvalidImage, match="empty"):
        read_image(b"")
    with pytest.raises(InvalidImage, match="not a decodable image"):
        read_image(b"GIF89a but not really")
    info = read_image(deterministic_png("p", 2))
    assert (info.format, info.width, info.height, len(info.sha256)) == ("PNG", 64, 48, 64)
