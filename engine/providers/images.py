"""A client for OpenAI-compatible image-generation APIs, for the grounding renders (Ekphrasis App. I.1).

App. I.1 passes each visual plan's rendering prompt (:func:`engine.render_prompt.rendering_prompt`)
to "a fixed text-to-image system with one seed". Any system that speaks the OpenAI wire format will
do (OpenAI, OpenRouter-style gateways, LocalAI, a vLLM-Omni or ComfyUI bridge): one call is ::

    POST {base_url}/images/generations
    {"model": ..., "prompt": ..., "n": 1, "size": "1024x1024", "response_format": "b64_json", "seed": 7}

and the answer's ``data[0]`` carries either ``b64_json`` (the image bytes, base64) or a ``url``
(fetched with a GET: on the provider's own origin with its API key, anywhere else without it, so
the key never leaves for a storage host; a ``data:`` URL is decoded in place).

:class:`ImageGenerationClient` is the provider client of :mod:`engine.providers.client` with one
more call: the same :class:`~engine.providers.client.ProviderConfig`, HTTP/1.1 transport,
concurrency cap, retries with backoff honouring ``Retry-After``, per-attempt timeout, API key from
the environment variable the config names, and :class:`~engine.providers.usage.UsageLedger`.
Answers are not put in the request cache (images are large; callers store them and skip what they
have, which is what makes a rendering job resumable).

Every answer is checked to be a decodable image (:func:`read_image`, fully decoded with Pillow);
bytes that are not come back as a :class:`~engine.providers.client.ProviderError` saying so. An
undecodable ``b64_json`` image is not retried (each retry would be another paid generation; a
gateway that sends broken bytes once usually sends them again); an undecodable download is
fetched again, with the client's retries, since fetching costs nothing. ``attempts`` counts every
HTTP attempt, downloads included.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import io
import logging
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from PIL import Image, UnidentifiedImageError

from engine.image_limits import ImageTooLarge, image_size_checked
from engine.providers.client import (
    OpenAICompatibleClient,
    ProviderError,
    _RetryableFailure,
    _run_sync,
    _shared_ssl_context,
)
from engine.providers.transport import Http11Transport, HttpResponse
from engine.providers.usage import cost_usd

__all__ = [
    "DEFAULT_SIZE",
    "GeneratedImage",
    "ImageGenerationClient",
    "ImageInfo",
    "ImageRequest",
    "InvalidImage",
    "read_image",
]

logger = logging.getLogger(__name__)

#: Image size asked for when the caller names none (the OpenAI API's square default).
DEFAULT_SIZE = "1024x1024"
#: File name extension of each image format Pillow reports.
_EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp", "GIF": "gif", "BMP": "bmp", "TIFF": "tif"}
ImageHook = Callable[[int, "GeneratedImage | ProviderError"], None]


class InvalidImage(ValueError):
    """Bytes that Pillow cannot decode as an image."""


@dataclass(frozen=True)
class ImageInfo:
    """What decoding an image's bytes established: format, size, content hash and file extension."""

    format: str
    width: int
    height: int
    sha256: str

    @property
    def extension(self) -> str:
        return _EXTENSIONS.get(self.format, self.format.lower())


def read_image(data: bytes) -> ImageInfo:
    """Decode ``data`` fully with Pillow; raise :class:`InvalidImage` (with the reason) if it is not an image.

    Fully means every pixel: a truncated file whose header is intact fails here, not later on a page.
    An image over :data:`engine.image_limits.PIXEL_BUDGET` pixels is refused from its header, undecoded.
    """
    if not data:
        raise InvalidImage("no bytes (an empty image)")
    try:
        with warnings.catch_warnings():
            # A decompression-bomb *warning* is an error here: a renderer has no business sending one.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image_size_checked(data)  # from the header: no pixel decoded yet
            with Image.open(io.BytesIO(data)) as image:
                image.load()
                fmt, (width, height) = image.format or "", image.size
    except ImageTooLarge as exc:
        raise InvalidImage(str(exc)) from None
    except UnidentifiedImageError:
        raise InvalidImage(f"not a decodable image ({len(data)} bytes, starting {data[:8]!r})") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise InvalidImage(f"not a decodable image: {exc}") from exc
    if not fmt:
        raise InvalidImage("Pillow read the bytes but could not name their format")
    return ImageInfo(format=fmt, width=width, height=height, sha256=hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class ImageRequest:
    """One image to generate. ``seed=None`` sends no seed; ``size=None`` uses :data:`DEFAULT_SIZE`."""

    prompt: str
    seed: int | None = None
    size: str | None = None


@dataclass(frozen=True)
class GeneratedImage:
    """A generated image: its bytes (checked decodable), what they are, and how the call went."""

    data: bytes
    info: ImageInfo
    prompt: str
    seed: int | None
    size: str
    model: str
    source: str  # "b64_json", "url" or "data-url": how the provider delivered the bytes
    revised_prompt: str | None = None
    attempts: int = 1
    cost_usd: float = 0.0
    latency_s: float = 0.0


@dataclass(frozen=True)
class _Delivery:
    """``data[0]`` of an images/generations answer, before any download."""

    b64: str | None
    url: str | None
    revised_prompt: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int


def _generation_payload(payload: Any) -> _Delivery:
    if not isinstance(payload, dict):
        raise _RetryableFailure("response body is not a JSON object")
    rows = payload.get("data")
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        if payload.get("error"):
            raise _RetryableFailure(f"provider error in body: {str(payload['error'])[:200]}")
        raise _RetryableFailure("image response has no data")
    row = rows[0]
    b64, url = row.get("b64_json"), row.get("url")
    if not (isinstance(b64, str) and b64) and not (isinstance(url, str) and url):
        raise _RetryableFailure("image response has neither b64_json nor url")
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    # gpt-image-style usage says input/output tokens; chat-style gateways say prompt/completion.
    prompt_tokens = int(usage.get("input_tokens") or usage.get("prompt_tokens") or 0)
    completion_tokens = int(usage.get("output_tokens") or usage.get("completion_tokens") or 0)
    revised = row.get("revised_prompt")
    return _Delivery(
        b64=b64 if isinstance(b64, str) and b64 else None,
        url=url if isinstance(url, str) and url else None,
        revised_prompt=revised if isinstance(revised, str) else None,
        model=str(payload.get("model") or ""),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


def _checked_image(data: bytes, how: str) -> tuple[bytes, ImageInfo]:
    try:
        return data, read_image(data)
    except InvalidImage as exc:
        raise _RetryableFailure(f"the {how} is {exc}") from exc


def _decoded_b64(text: str, how: str) -> tuple[bytes, ImageInfo]:
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _RetryableFailure(f"the {how} is not valid base64: {exc}") from exc
    return _checked_image(data, how)


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


class ImageGenerationClient(OpenAICompatibleClient):
    """An :class:`OpenAICompatibleClient` that also calls ``images/generations``; see the module docstring."""

    def generate(self, prompt: str, *, seed: int | None = None, size: str | None = None) -> GeneratedImage:
        """One image; raises :class:`ProviderError` if none could be obtained."""
        (result,) = self.generate_many([ImageRequest(prompt=prompt, seed=seed, size=size)])
        if isinstance(result, ProviderError):
            raise result
        return result

    def generate_many(
        self, requests: Sequence[ImageRequest], *, on_result: ImageHook | None = None
    ) -> list[GeneratedImage | ProviderError]:
        """Generate ``requests`` concurrently (at most ``concurrency`` HTTP requests in flight), in input order.

        A request that still fails after its retries comes back as a :class:`ProviderError` in its
        place. ``on_result(index, outcome)`` is called as each finishes, on the event loop's thread:
        keep it quick (a progress count), and never touch a database from it.
        """
        requests = list(requests)
        if not requests:
            return []
        return _run_sync(lambda: self._generate_all(requests, on_result))

    def body_for(self, request: ImageRequest) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        body: dict[str, Any] = {
            "model": self.config.model,
            "prompt": request.prompt,
            "n": 1,
            "size": request.size or DEFAULT_SIZE,
            "response_format": "b64_json",
        }
        if request.seed is not None:
            body["seed"] = int(request.seed)
        return body

    async def _generate_all(
        self, requests: list[ImageRequest], on_result: ImageHook | None
    ) -> list[GeneratedImage | ProviderError]:
        results: list[GeneratedImage | ProviderError | None] = [None] * len(requests)
        gate = asyncio.Semaphore(self.concurrency)
        async with self._transport() as http:
            downloads: dict[tuple[str, str, int], Http11Transport] = {}
            try:

                async def answer(index: int) -> None:
                    results[index] = await self._generate_one(http, downloads, gate, requests[index])
                    if on_result is not None:
                        on_result(index, results[index])

                await asyncio.gather(*(answer(index) for index in range(len(requests))))
            finally:
                for transport in downloads.values():
                    await transport.aclose()
        assert all(result is not None for result in results), "every request is answered or failed"
        return results  # type: ignore[return-value]

    async def _generate_one(
        self,
        http: Http11Transport,
        downloads: dict[tuple[str, str, int], Http11Transport],
        gate: asyncio.Semaphore,
        request: ImageRequest,
    ) -> GeneratedImage | ProviderError:
        model = self.config.model
        started = time.monotonic()
        try:
            delivery, attempts = await self._post(http, gate, "images/generations", self.body_for(request),
                                                  _generation_payload)
        except ProviderError as error:
            return self._failed(error)
        try:
            if delivery.b64 is not None:
                data, info = _decoded_b64(delivery.b64, "b64_json image")
                source = "b64_json"
            elif delivery.url.startswith("data:"):
                _, _, encoded = delivery.url.partition(",")
                data, info = _decoded_b64(encoded, "data: URL image")
                source = "data-url"
            else:
                (data, info), fetches = await self._download(http, downloads, gate, delivery.url)
                attempts += fetches
                source = "url"
        except _RetryableFailure as failure:
            # The provider answered (and a paid generation is not re-run for it), but not with an image.
            return self._failed(ProviderError(str(failure), status=failure.status, attempts=attempts))
        except ProviderError as error:
            # The generation was answered; fetching its URL failed.
            return self._failed(ProviderError(f"image download: {error.message}", status=error.status,
                                              attempts=attempts + error.attempts, retryable=error.retryable))
        cost = cost_usd(delivery.prompt_tokens, delivery.completion_tokens,
                        self.config.price_input_per_mtok, self.config.price_output_per_mtok)
        if self.usage is not None:
            self.usage.record_answer(model, prompt_tokens=delivery.prompt_tokens,
                                     completion_tokens=delivery.completion_tokens, cost_usd=cost, attempts=attempts)
        return GeneratedImage(
            data=data, info=info, prompt=request.prompt, seed=request.seed, size=request.size or DEFAULT_SIZE,
            model=delivery.model or model, source=source, revised_prompt=delivery.revised_prompt,
            attempts=attempts, cost_usd=cost, latency_s=time.monotonic() - started,
        )

    def _failed(self, error: ProviderError) -> ProviderError:
        if self.usage is not None:
            self.usage.record_failure(self.config.model, attempts=error.attempts)
        logger.warning("%s image call failed: %s", self.config.model, error.message)
        return error

    async def _download(
        self,
        http: Http11Transport,
        downloads: dict[tuple[str, str, int], Http11Transport],
        gate: asyncio.Semaphore,
        url: str,
    ) -> tuple[tuple[bytes, ImageInfo], int]:
        """GET a generated image's URL with the client's retries; ((bytes, info), attempts)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderError(f"the image url is not http(s) or data: {url[:80]!r}", attempts=0)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        origin = _origin(url)
        if origin == _origin(self.config.base_url):
            fetcher = http  # the provider's own origin: the same connections, the same credentials
        else:
            # Another host (a storage bucket): a fresh transport with no Authorization header.
            if origin not in downloads:
                ssl_context = None
                if origin[0] == "https":
                    ssl_context = _shared_ssl_context(self.config.ca_file)
                downloads[origin] = Http11Transport(f"{parts.scheme}://{parts.netloc}", ssl_context=ssl_context)
            fetcher = downloads[origin]

        def read(response: HttpResponse) -> tuple[bytes, ImageInfo]:
            return _checked_image(response.body, "downloaded image")

        return await self._send(gate, "image download", lambda: fetcher.get(target), read)
