"""One client for OpenAI-compatible chat-completions and embeddings APIs (Ekphrasis App. C.2, D.3).

OpenRouter, vLLM, Ollama and the llama.cpp server all speak the same wire
format; a :class:`ProviderConfig` says where and how (base URL, model id,
sampling defaults, prices), and an :class:`OpenAICompatibleClient` sends.

Entry points are synchronous — ``chat``, ``chat_many``, ``embed`` — so a
Celery task or a management command calls them directly. ``chat_many`` runs
its requests concurrently on a private asyncio loop, over pooled keep-alive
HTTP/1.1 connections (:mod:`engine.providers.transport`), with at most
``concurrency`` HTTP requests in flight (default 100, the global cap of
App. D.3). The cap is per client call; several worker processes each have
their own.

Each call

* is first looked up in the :class:`~engine.providers.cache.RequestCache`
  (if one is given) under the hash of (model, messages, parameters,
  sample index); a hit is returned with ``cached=True`` and nothing is sent.
  ``ChatRequest(refresh=True)`` skips the lookup and overwrites the entry.
  Identical requests inside one batch are sent once;
* is retried on HTTP 408/409/425/429/5xx, timeouts, dropped connections and
  unreadable 200 bodies, up to ``max_retries`` extra attempts, with
  exponential backoff and jitter, honouring ``Retry-After``; any other status
  fails at once;
* is bounded by ``timeout_s`` per attempt, end to end;
* is counted in the :class:`~engine.providers.usage.UsageLedger` (if given).

A call that still fails comes back from ``chat_many`` as a
:class:`ProviderError` in its place — one failure never sinks the batch.

Secrets: the API key is read from the environment variable *named* by
``api_key_env`` each time a batch starts; it is never stored on the client,
never logged, and ``repr`` of config and client shows only the variable name.
Extra header values are redacted in ``repr`` too.

Example::

    config = ProviderConfig(base_url="https://openrouter.ai/api/v1", model="deepseek/deepseek-v4-flash",
                            api_key_env="OPENROUTER_API_KEY", price_input_per_mtok=0.1)
    client = OpenAICompatibleClient(config, cache=RequestCache("var/cache/run-7.sqlite3"), usage=UsageLedger())
    answers = client.chat_many([ChatRequest(messages=[{"role": "user", "content": "..."}], sample_index=1)])
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np

from engine.providers.cache import RequestCache, embedding_key, request_key
from engine.providers.observers import CallOutcome, notify_call
from engine.providers.transport import Http11Transport, HttpResponse, TransportError, default_ssl_context
from engine.providers.usage import UsageLedger, cost_usd

__all__ = ["MAX_TEMPERATURE", "ChatRequest", "ChatResult", "OpenAICompatibleClient", "ProviderConfig", "ProviderError",
           "temperature_check"]

logger = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 100
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
RETRY_AFTER_CAP_S = 300.0
_ERROR_SNIPPET = 200
# A NUL or a lone surrogate (JSON's "\u0000", an unpaired "\ud800") can be sent by a provider but stored by
# nothing downstream: the request cache's UTF-8 refuses the surrogate, PostgreSQL's text refuses the NUL.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_T = TypeVar("_T")
#: The highest sampling temperature the OpenAI chat-completions protocol accepts (its range is [0, 2]).
MAX_TEMPERATURE = 2.0


def temperature_check(temperature: float) -> None:
    """Refuse a sampling temperature the protocol does not accept, naming the allowed range."""
    if not 0.0 <= temperature <= MAX_TEMPERATURE:
        raise ValueError(f"temperature must lie in [0, {MAX_TEMPERATURE:g}]; got {temperature:g}")
ResultHook = Callable[[int, "ChatResult | ProviderError"], None]


@dataclass(frozen=True, repr=False)
class ProviderConfig:
    """Where and how to call one model. Holds the *name* of the key's environment variable, never the key."""

    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 4096
    reasoning: bool | None = None
    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    embedding_batch_size: int = 64
    ca_file: str | None = None

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ValueError("base_url is required")
        if not self.model:
            raise ValueError("model is required")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.embedding_batch_size < 1:
            raise ValueError("embedding_batch_size must be >= 1")
        # Freeze the headers: a plain dict copy the caller cannot mutate through us.
        object.__setattr__(self, "extra_headers", dict(self.extra_headers))

    def __hash__(self) -> int:
        return hash((self.base_url, self.model, self.api_key_env, tuple(sorted(self.extra_headers.items()))))

    def __repr__(self) -> str:
        headers = {name: "<redacted>" for name in self.extra_headers}
        return (
            f"ProviderConfig(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r}, "
            f"temperature={self.temperature!r}, max_tokens={self.max_tokens!r}, reasoning={self.reasoning!r}, "
            f"timeout_s={self.timeout_s!r}, max_retries={self.max_retries!r}, "
            f"price_input_per_mtok={self.price_input_per_mtok!r}, "
            f"price_output_per_mtok={self.price_output_per_mtok!r}, extra_headers={headers!r})"
        )


@dataclass(frozen=True)
class ChatRequest:
    """One chat call. ``None`` parameters take the config's value.

    ``sample_index`` separates otherwise identical calls in the cache (the
    three generation samples 1..3; a judge's comparison kind and repeat, e.g.
    ``"duplicate:1"``). It is part of the cache key only, never sent.
    ``refresh=True`` ignores any cached answer and replaces it with the new one.
    """

    messages: Sequence[Mapping[str, Any]]
    temperature: float | None = None
    max_tokens: int | None = None
    sample_index: int | str = 0
    response_format: Mapping[str, Any] | None = None
    refresh: bool = False


@dataclass(frozen=True)
class ChatResult:
    """An answered chat call. ``attempts`` is 0 for a cache hit."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    attempts: int = 1
    cost_usd: float = 0.0
    finish_reason: str | None = None
    model: str = ""
    key: str = ""
    latency_s: float = 0.0


class ProviderError(Exception):
    """A call that did not produce an answer (after its retries, if retryable)."""

    def __init__(
        self, message: str, *, status: int | None = None, attempts: int = 0, retryable: bool = False
    ):
        super().__init__(message)
        self.message = message
        self.status = status
        self.attempts = attempts
        self.retryable = retryable

    def __reduce__(self) -> tuple[Any, ...]:
        # Picklable with its keyword fields (Celery result backends, multiprocessing).
        return (_rebuild_provider_error, (self.message, self.status, self.attempts, self.retryable))

    def __repr__(self) -> str:
        return f"ProviderError({self.message!r}, status={self.status!r}, attempts={self.attempts!r})"


def _rebuild_provider_error(
    message: str, status: int | None, attempts: int, retryable: bool
) -> ProviderError:
    return ProviderError(message, status=status, attempts=attempts, retryable=retryable)


class _RetryableFailure(Exception):
    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


_ssl_contexts: dict[str | None, ssl.SSLContext] = {}
_ssl_lock = threading.Lock()


def _shared_ssl_context(ca_file: str | None) -> ssl.SSLContext:
    """A verifying TLS context per CA bundle (None: certifi's), built once per process (it costs tens of ms)."""
    with _ssl_lock:
        if ca_file not in _ssl_contexts:
            _ssl_contexts[ca_file] = default_ssl_context(ca_file)
        return _ssl_contexts[ca_file]


def _run_sync(make_coroutine: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run a coroutine to completion from synchronous code, even if this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coroutine())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="provider-client") as pool:
        return pool.submit(lambda: asyncio.run(make_coroutine())).result()


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, min(seconds, RETRY_AFTER_CAP_S))


def _snippet(response: HttpResponse) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:_ERROR_SNIPPET]


def _storable(text: str) -> str:
    """``text`` with each NUL and lone surrogate replaced by U+FFFD, the replacement character: a reply
    keeps its length and everything else it said, and can be cached, stored and shown (a model that sends
    them otherwise failed its run on every resume, at the cache or at the database)."""
    return _UNSTORABLE.sub("\ufffd", text)


#: No single call reports more tokens than this; a larger count is garbage, not usage.
_MAX_REPORTED_TOKENS = 2**31 - 1


def _token_count(usage: dict, field: str) -> int:
    """A usage field as a count of tokens. A provider's garbage here (a negative or fractional number,
    ``1e999``, a string) would become a negative cost, a count no column holds, or an OverflowError that
    escaped the retry policy: it makes the body unreadable, retried like any other."""
    value = usage.get(field)
    if value is None:
        return 0
    # Some OpenAI-compatible servers write a count as 12.0 or "12": those are still counts.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_REPORTED_TOKENS:
        raise _RetryableFailure(f"usage {field} is not a token count: {str(value)[:40]}")
    return value


def _chat_payload(payload: Any) -> tuple[str, int, int, str | None, str]:
    """(text, prompt_tokens, completion_tokens, finish_reason, model) from a chat-completions body; the
    strings made storable (:func:`_storable`)."""
    if not isinstance(payload, dict):
        raise _RetryableFailure("response body is not a JSON object")
    if payload.get("error") and not payload.get("choices"):
        raise _RetryableFailure(f"provider error in body: {str(payload['error'])[:_ERROR_SNIPPET]}")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _RetryableFailure("response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _RetryableFailure("response choice has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _RetryableFailure("message content is not a string")
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    finish_reason = choices[0].get("finish_reason")
    return (
        _storable(content or ""),
        _token_count(usage, "prompt_tokens"),
        _token_count(usage, "completion_tokens"),
        _storable(finish_reason) if isinstance(finish_reason, str) else finish_reason,
        _storable(str(payload.get("model") or "")),
    )


def _embedding_payload(payload: Any, expected: int) -> tuple[list[list[float]], int]:
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        raise _RetryableFailure("embedding response has no data list")
    rows = payload["data"]
    if len(rows) != expected:
        raise _RetryableFailure(f"embedding response has {len(rows)} rows for {expected} inputs")
    try:
        ordered = sorted(rows, key=lambda row: int(row.get("index", 0)))
        vectors = [[float(x) for x in row["embedding"]] for row in ordered]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise _RetryableFailure(f"malformed embedding rows: {exc}") from exc
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    return vectors, _token_count(usage, "prompt_tokens")


class OpenAICompatibleClient:
    """Synchronous facade over concurrent OpenAI-compatible calls; see the module docstring."""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        cache: RequestCache | None = None,
        usage: UsageLedger | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.config = config
        self.concurrency = concurrency
        self.cache = cache
        self.usage = usage
        self._jitter = random.Random()
        # Fail loudly now rather than on the first call of a long run.
        self._api_key()

    def __repr__(self) -> str:
        key = f"<from ${self.config.api_key_env}>" if self.config.api_key_env else None
        return (
            f"OpenAICompatibleClient(model={self.config.model!r}, base_url={self.config.base_url!r}, "
            f"concurrency={self.concurrency}, api_key={key})"
        )

    # -- public entry points -------------------------------------------------

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sample_index: int | str = 0,
        response_format: Mapping[str, Any] | None = None,
        refresh: bool = False,
    ) -> ChatResult:
        """One chat call; raises :class:`ProviderError` if it cannot be answered."""
        request = ChatRequest(
            messages=messages,
            temperature=temperature,
            max_tokens=max_tokens,
            sample_index=sample_index,
            response_format=response_format,
            refresh=refresh,
        )
        (result,) = self.chat_many([request])
        if isinstance(result, ProviderError):
            raise result
        return result

    def chat_many(
        self, requests: Sequence[ChatRequest], *, on_result: ResultHook | None = None
    ) -> list[ChatResult | ProviderError]:
        """Answer ``requests`` concurrently (at most ``concurrency`` in flight), in input order.

        ``on_result(index, outcome)``, if given, is called once per request as
        soon as its outcome is known (cache hits first), on the event loop's
        thread while other calls are in flight: use it for quick work such as
        validation or a progress count, never for blocking I/O.
        """
        requests = list(requests)
        if not requests:
            return []
        return _run_sync(lambda: self._chat_all(requests, on_result))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embedding matrix, one row per text in input order; raises :class:`ProviderError` on failure."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float64)
        return _run_sync(lambda: self._embed_all(texts))

    def request_key(self, request: ChatRequest) -> str:
        """The cache key this client uses for ``request``."""
        return request_key(
            self.config.model, request.messages, self._parameters(request), request.sample_index
        )

    # -- request building ----------------------------------------------------

    def _api_key(self) -> str | None:
        name = self.config.api_key_env
        if not name:
            return None
        value = os.environ.get(name)
        if not value:
            raise ProviderError(
                f"environment variable {name} (the API key for {self.config.model}) is not set"
            )
        return value

    def _headers(self) -> dict[str, str]:
        headers = dict(self.config.extra_headers)
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _parameters(self, request: ChatRequest) -> dict[str, Any]:
        parameters: dict[str, Any] = {
            "temperature": self.config.temperature if request.temperature is None else request.temperature,
            "max_tokens": self.config.max_tokens if request.max_tokens is None else request.max_tokens,
        }
        if request.response_format is not None:
            parameters["response_format"] = dict(request.response_format)
        if self.config.reasoning is not None:
            parameters["reasoning"] = {"enabled": self.config.reasoning}
        return parameters

    def _transport(self) -> Http11Transport:
        ssl_context = (
            _shared_ssl_context(self.config.ca_file) if self.config.base_url.startswith("https:") else None
        )
        return Http11Transport(self.config.base_url, headers=self._headers(), ssl_context=ssl_context)

    # -- sending -------------------------------------------------------------

    def _backoff_s(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        ceiling = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (attempt - 1))
        # "Equal jitter": at least half the exponential step, plus a random share of the other half.
        return ceiling / 2 + self._jitter.uniform(0, ceiling / 2)

    async def _post(
        self,
        http: Http11Transport,
        gate: asyncio.Semaphore,
        endpoint: str,
        body: dict[str, Any],
        read: Callable[[Any], _T],
    ) -> tuple[_T, int]:
        """POST with retries; returns (read(payload), attempts) or raises ProviderError."""
        payload_bytes = json.dumps(body, ensure_ascii=False).encode("utf-8")

        def read_json(response: HttpResponse) -> _T:
            try:
                payload = json.loads(response.body)
            except ValueError as exc:
                raise _RetryableFailure("response body is not valid JSON", status=response.status) from exc
            return read(payload)

        return await self._send(gate, endpoint, lambda: http.post(endpoint, payload_bytes), read_json)

    async def _send(
        self,
        gate: asyncio.Semaphore,
        endpoint: str,
        exchange: Callable[[], Coroutine[Any, Any, HttpResponse]],
        read: Callable[[HttpResponse], _T],
    ) -> tuple[_T, int]:
        """One HTTP exchange with the retry policy of the module docstring; returns (read(response), attempts)
        for an HTTP 200 or raises ProviderError. ``endpoint`` names the call in logs."""
        attempt = 0
        while True:
            attempt += 1
            try:
                async with gate:
                    async with asyncio.timeout(self.config.timeout_s):
                        response = await exchange()
                status = response.status
                if status == 200:
                    try:
                        return read(response), attempt
                    except (AttributeError, KeyError, TypeError, ValueError) as exc:
                        raise _RetryableFailure(f"unreadable response body: {exc}", status=status) from exc
                if status in RETRYABLE_STATUSES or status >= 500:
                    raise _RetryableFailure(
                        f"HTTP {status}: {_snippet(response)}",
                        status=status,
                        retry_after=_parse_retry_after(response.headers.get("retry-after")),
                    )
                raise ProviderError(f"HTTP {status}: {_snippet(response)}", status=status, attempts=attempt)
            except _RetryableFailure as failure:
                reason, status_code, retry_after = str(failure), failure.status, failure.retry_after
            except TimeoutError:
                reason, status_code, retry_after = f"timed out after {self.config.timeout_s:g} s", None, None
            except (TransportError, OSError) as exc:
                reason, status_code, retry_after = f"transport error: {exc}", None, None
            if attempt > self.config.max_retries:
                raise ProviderError(
                    f"{reason} (gave up after {attempt} attempts)",
                    status=status_code,
                    attempts=attempt,
                    retryable=True,
                )
            delay = self._backoff_s(attempt, retry_after)
            logger.info("%s %s: %s; retry %d in %.2f s", self.config.model, endpoint, reason, attempt, delay)
            await asyncio.sleep(delay)

    async def _chat_all(
        self, requests: list[ChatRequest], on_result: ResultHook | None = None
    ) -> list[ChatResult | ProviderError]:
        model = self.config.model
        keys = [self.request_key(request) for request in requests]
        stored: dict[str, dict[str, Any]] = {}
        if self.cache is not None:
            stored = self.cache.get_many(key for key, request in zip(keys, requests) if not request.refresh)

        results: list[ChatResult | ProviderError | None] = [None] * len(requests)
        first_index: dict[str, int] = {}
        followers: list[tuple[int, int]] = []
        to_send: list[int] = []
        for index, (key, request) in enumerate(zip(keys, requests)):
            if not request.refresh and key in stored:
                results[index] = self._from_cache(stored[key], key)
                if on_result is not None:
                    on_result(index, results[index])
            elif not request.refresh and key in first_index:
                followers.append((index, first_index[key]))
            else:
                first_index.setdefault(key, index)
                to_send.append(index)

        if to_send:
            gate = asyncio.Semaphore(self.concurrency)
            async with self._transport() as http:

                async def answer(index: int) -> None:
                    results[index] = await self._chat_one(http, gate, requests[index], keys[index])
                    if on_result is not None:
                        on_result(index, results[index])

                await asyncio.gather(*(answer(index) for index in to_send))

        for index, leader in followers:
            # The same request twice in one batch: sent once, the copy counts as a cache hit.
            answered = results[leader]
            if isinstance(answered, ChatResult):
                results[index] = ChatResult(
                    text=answered.text,
                    prompt_tokens=answered.prompt_tokens,
                    completion_tokens=answered.completion_tokens,
                    cached=True,
                    attempts=0,
                    finish_reason=answered.finish_reason,
                    model=answered.model,
                    key=answered.key,
                )
                if self.usage is not None:
                    self.usage.record_cache_hit(model)
            else:
                results[index] = answered
            if on_result is not None:
                on_result(index, results[index])
        assert all(result is not None for result in results), "every request is answered or failed"
        return results  # type: ignore[return-value]

    def _from_cache(self, entry: Mapping[str, Any], key: str) -> ChatResult:
        if self.usage is not None:
            self.usage.record_cache_hit(self.config.model)
        notify_call(CallOutcome(model=self.config.model, ok=True, cached=True, attempts=0, latency_s=0.0))
        return ChatResult(
            text=str(entry.get("text", "")),
            prompt_tokens=int(entry.get("prompt_tokens", 0)),
            completion_tokens=int(entry.get("completion_tokens", 0)),
            cached=True,
            attempts=0,
            cost_usd=0.0,
            finish_reason=entry.get("finish_reason"),
            model=str(entry.get("model", "")),
            key=key,
        )

    async def _chat_one(
        self, http: Http11Transport, gate: asyncio.Semaphore, request: ChatRequest, key: str
    ) -> ChatResult | ProviderError:
        body = {"model": self.config.model, "messages": [dict(m) for m in request.messages]}
        body.update(self._parameters(request))
        started = time.monotonic()
        try:
            (text, prompt_tokens, completion_tokens, finish_reason, served_by), attempts = await self._post(
                http, gate, "chat/completions", body, _chat_payload
            )
        except ProviderError as error:
            if self.usage is not None:
                self.usage.record_failure(self.config.model, attempts=error.attempts)
            notify_call(CallOutcome(model=self.config.model, ok=False, cached=False, attempts=error.attempts,
                                    latency_s=time.monotonic() - started, status=error.status))
            logger.warning("%s chat call failed: %s", self.config.model, error.message)
            return error
        cost = cost_usd(
            prompt_tokens,
            completion_tokens,
            self.config.price_input_per_mtok,
            self.config.price_output_per_mtok,
        )
        if self.cache is not None:
            self.cache.put(
                key,
                {
                    "text": text,
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "finish_reason": finish_reason,
                    "model": served_by,
                    # The JSON body as sent (headers, and so the key, are never part of it) and the
                    # sample index the key also hashes: a bundle shows the request and proves its key.
                    "request": {"body": body, "sample_index": request.sample_index},
                },
            )
        if self.usage is not None:
            self.usage.record_answer(
                self.config.model,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost,
                attempts=attempts,
            )
        latency_s = time.monotonic() - started
        notify_call(CallOutcome(model=self.config.model, ok=True, cached=False, attempts=attempts,
                                latency_s=latency_s, cost_usd=cost))
        return ChatResult(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached=False,
            attempts=attempts,
            cost_usd=cost,
            finish_reason=finish_reason,
            model=served_by,
            key=key,
            latency_s=latency_s,
        )

    async def _embed_all(self, texts: list[str]) -> np.ndarray:
        model = self.config.model
        keys = [embedding_key(model, text) for text in texts]
        vectors: dict[str, list[float]] = {}
        if self.cache is not None:
            for key, entry in self.cache.get_many(keys).items():
                vectors[key] = entry["embedding"]
                if self.usage is not None:
                    self.usage.record_cache_hit(model)
        missing = list(dict.fromkeys(key for key in keys if key not in vectors))
        text_of = dict(zip(keys, texts))
        size = self.config.embedding_batch_size
        batches = [missing[start : start + size] for start in range(0, len(missing), size)]

        if batches:
            gate = asyncio.Semaphore(self.concurrency)
            async with self._transport() as http:

                async def send(batch: list[str]) -> None:
                    body = {"model": model, "input": [text_of[key] for key in batch]}
                    try:
                        (rows, prompt_tokens), attempts = await self._post(
                            http,
                            gate,
                            "embeddings",
                            body,
                            lambda payload: _embedding_payload(payload, len(batch)),
                        )
                    except ProviderError as error:
                        if self.usage is not None:
                            self.usage.record_failure(model, attempts=error.attempts)
                        raise
                    cost = cost_usd(prompt_tokens, 0, self.config.price_input_per_mtok, 0.0)
                    if self.usage is not None:
                        self.usage.record_answer(
                            model,
                            prompt_tokens=prompt_tokens,
                            completion_tokens=0,
                            cost_usd=cost,
                            attempts=attempts,
                        )
                    for key, row in zip(batch, rows):
                        vectors[key] = row
                        if self.cache is not None:
                            self.cache.put(key, {"embedding": row})

                outcomes = await asyncio.gather(*(send(batch) for batch in batches), return_exceptions=True)
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome
        matrix = np.asarray([vectors[key] for key in keys], dtype=np.float64)
        if matrix.ndim != 2:
            raise ProviderError("embeddings of different lengths in one answer")
        return matrix
