"""A fake OpenAI-compatible HTTP server for tests and benchmarks (loopback only).

It implements ``POST /v1/chat/completions``, ``POST /v1/embeddings``,
``POST /v1/images/generations`` and ``GET /v1/models`` in the OpenAI wire
format, on 127.0.0.1 and a free port chosen by the OS, served from a
background thread::

    with FakeOpenAIServer(handler=lambda request: "hello", latency_s=0.05) as server:
        config = ProviderConfig(base_url=server.base_url, model="fake-model")
        ...
        assert len(server.chat_requests) == 1
        assert server.max_concurrency <= 10

Scripting. ``handler(request_json)`` decides each chat answer and returns one of

* ``str`` — the assistant's reply text (token counts are word counts);
* :class:`Reply` — text with explicit token counts, finish reason or an extra delay;
* :class:`Fault` — ``Fault.http(429, retry_after=1)``, ``Fault.malformed()``
  (a 200 whose body is not JSON), ``Fault.raw(200, '{"error": ...}')`` (any
  body verbatim), ``Fault.hang(seconds)`` (answer nothing, then drop the
  connection: a client timeout), ``Fault.disconnect()``.

:class:`Script` plays a fixed sequence (by arrival order, last item repeated);
:func:`faults_then` returns a handler that injects N faults before answering.
``embedding_handler(request_json)`` may return a list of vectors or a
:class:`Fault`; the default gives each text a deterministic unit vector
(:func:`hash_embedding`).

Images. ``image_handler(request_json)`` may return an :class:`ImageReply`
(bytes to send, as ``b64_json`` or as a ``url`` the fake then serves at
``GET /v1/images/files/<n>.png``), raw ``bytes`` (sent as ``b64_json``, for
broken images) or a :class:`Fault`. The default answers every request with
:func:`deterministic_png` of its prompt and seed, as a URL when the request
asks ``response_format: "url"``.

Observation: ``requests`` (every request, in arrival order, with path, JSON body,
headers and arrival time), ``chat_requests``, ``embedding_requests``,
``image_requests``, ``image_downloads`` (the GETs of image URLs), and
``max_concurrency`` (most requests in flight at once, latency included).

It is a ``ThreadingHTTPServer`` with daemon threads, HTTP/1.1 keep-alive and a
deep accept queue, so it sustains hundreds of concurrent connections. Pass a
server-side ``ssl.SSLContext`` as ``tls`` to serve HTTPS.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import itertools
import json
import math
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = [
    "FakeOpenAIServer",
    "Fault",
    "ImageReply",
    "RecordedRequest",
    "Reply",
    "Script",
    "deterministic_png",
    "faults_then",
    "hash_embedding",
]


@dataclass(frozen=True)
class Reply:
    """A scripted chat answer; ``None`` token counts are word counts.

    Wire variations, for exercising the client's HTTP handling: ``framing`` is
    ``"length"`` (Content-Length), ``"chunked"`` (Transfer-Encoding) or
    ``"close"`` (body ends with the connection); ``gzip`` compresses the body;
    ``early_hints`` sends a 103 interim response first; ``close_after`` closes
    the connection after answering without announcing it (a keep-alive
    connection the client will find dead when it reuses it).
    """

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    delay_s: float = 0.0
    framing: str = "length"
    gzip: bool = False
    early_hints: bool = False
    close_after: bool = False


@dataclass(frozen=True)
class Fault:
    """A scripted failure. Build with the class methods."""

    kind: str
    status: int = 500
    retry_after: str | None = None
    seconds: float = 0.0
    body: str = ""

    @classmethod
    def http(cls, status: int, *, retry_after: float | str | None = None) -> Fault:
        """An HTTP error status with a JSON error body, optionally with ``Retry-After``."""
        return cls("http", status=status, retry_after=None if retry_after is None else str(retry_after))

    @classmethod
    def raw(cls, status: int, body: str) -> Fault:
        """Exactly ``body`` with ``status``: for replies that are JSON but not a usable completion."""
        return cls("raw", status=status, body=body)

    @classmethod
    def malformed(cls) -> Fault:
        """HTTP 200 whose body is truncated, not JSON."""
        return cls("malformed", status=200)

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Say nothing for ``seconds``, then drop the connection."""
        return cls("hang", seconds=seconds)

    @classmethod
    def disconnect(cls) -> Fault:
        """Close the connection without answering."""
        return cls("disconnect")


@dataclass(frozen=True)
class ImageReply:
    """A scripted image answer.

    ``data``: the image bytes (default: :func:`deterministic_png` of the request's prompt and
    seed). ``as_url``: answer with a ``url`` to fetch instead of ``b64_json``; ``url_host`` puts
    another host name in that URL (``"localhost"``: the same server under a different origin).
    ``revised_prompt`` is echoed in the answer when given.
    """

    data: bytes | None = None
    as_url: bool = False
    url_host: str | None = None
    revised_prompt: str | None = None


Answer = str | Reply | Fault
Handler = Callable[[dict[str, Any]], Answer]
EmbeddingHandler = Callable[[dict[str, Any]], "Sequence[Sequence[float]] | Fault"]
ImageHandler = Callable[[dict[str, Any]], "ImageReply | bytes | Fault"]


class Script:
    """A handler that answers with ``answers`` in arrival order, repeating the last one."""

    def __init__(self, *answers: Answer) -> None:
        if not answers:
            raise ValueError("a script needs at least one answer")
        self._answers = list(answers)
        self._lock = threading.Lock()
        self._next = 0

    def __call__(self, request: dict[str, Any]) -> Answer:
        with self._lock:
            answer = self._answers[min(self._next, len(self._answers) - 1)]
            self._next += 1
        return answer


def faults_then(fault: Fault, count: int, answer: Handler | Answer) -> Handler:
    """A handler that returns ``fault`` for the first ``count`` calls, then ``answer``."""
    counter = itertools.count()
    lock = threading.Lock()

    def handler(request: dict[str, Any]) -> Answer:
        with lock:
            seen = next(counter)
        if seen < count:
            return fault
        return answer(request) if callable(answer) else answer

    return handler


def hash_embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for ``text`` (equal texts, equal vectors)."""
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).digest())
    values = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def deterministic_png(prompt: str, seed: Any = None, size: tuple[int, int] = (64, 48)) -> bytes:
    """A small PNG drawn with Pillow from the SHA-256 of (prompt, seed): equal inputs, equal bytes."""
    from PIL import Image, ImageDraw

    digest = hashlib.sha256(f"{seed}\n{prompt}".encode()).digest()
    image = Image.new("RGB", size, (digest[0], digest[1], digest[2]))
    draw = ImageDraw.Draw(image)
    width, height = size
    for k in range(4):
        x0, y0 = digest[3 + 4 * k] % width, digest[4 + 4 * k] % height
        x1, y1 = x0 + 4 + digest[5 + 4 * k] % (width // 2), y0 + 4 + digest[6 + 4 * k] % (height // 2)
        draw.rectangle((x0, y0, x1, y1), fill=(digest[20 + k], digest[24 + k], digest[28 + k]))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def echo(request: dict[str, Any]) -> str:
    """Default chat handler: echo the start of the last message."""
    messages = request.get("messages") or [{}]
    content = str(messages[-1].get("content", ""))
    return f"echo: {content[:80]}"


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str]
    received_at: float = field(default=0.0)
    peer_port: int = 0  # the client's source port: equal ports, one reused connection


def _words(text: str) -> int:
    return len(text.split())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    fake: FakeOpenAIServer


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in one segment (a buffered writer flushed once per
    # answer) on a socket without Nagle's algorithm: no 40 ms delayed-ACK stalls.
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing ------------------------------------------------------------

    def _send_json(
        self, status: int, payload: Any, headers: dict[str, str] | None = None, reply: Reply | None = None
    ) -> None:
        self._send_raw(status, json.dumps(payload).encode("utf-8"), headers, reply)

    def _send_raw(
        self, status: int, body: bytes, headers: dict[str, str] | None = None, reply: Reply | None = None
    ) -> None:
        framing = reply.framing if reply else "length"
        try:
            if reply is not None and reply.early_hints:
                self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if reply is not None and reply.gzip:
                body = gzip.compress(body)
                self.send_header("Content-Encoding", "gzip")
            if framing == "chunked":
                self.send_header("Transfer-Encoding", "chunked")
                pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
                body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
            elif framing == "close":
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        if reply is not None and reply.close_after:
            self._drop()

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _apply_fault(self, fault: Fault) -> None:
        if fault.kind == "http":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            self._send_json(
                fault.status,
                {"error": {"message": f"scripted {fault.status}", "code": fault.status}},
                headers,
            )
        elif fault.kind == "raw":
            self._send_raw(fault.status, fault.body.encode("utf-8"))
        elif fault.kind == "malformed":
            self._send_raw(200, b'{"id": "chatcmpl-fake", "choices": [{"message": {"content": "tru')
        elif fault.kind == "hang":
            time.sleep(fault.seconds)
            self._drop()
        elif fault.kind == "disconnect":
            self._drop()
        else:  # pragma: no cover - guarded by the constructors
            raise ValueError(f"unknown fault kind {fault.kind!r}")

    # -- endpoints -----------------------------------------------------------

    def do_GET(self) -> None:
        fake = self.server.fake
        if self.path.rstrip("/") == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        elif self.path.startswith(_IMAGE_FILES):
            fake._record(
                RecordedRequest(self.path, None, dict(self.headers.items()), time.monotonic(), self.client_address[1])
            )
            name = self.path[len(_IMAGE_FILES):].split("?", 1)[0]
            data = fake._image_file(name)
            if data is None:
                self._send_json(404, {"error": {"message": f"no image {name}"}})
            else:
                self._send_image(data)
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def _send_image(self, data: bytes) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        fake._record(
            RecordedRequest(
                self.path, body, dict(self.headers.items()), time.monotonic(), self.client_address[1]
            )
        )
        fake._enter()
        try:
            if fake.latency_s:
                time.sleep(fake.latency_s)
            path = self.path.rstrip("/")
            if body is None or not isinstance(body, dict):
                self._send_json(400, {"error": {"message": "request body is not a JSON object"}})
            elif path == "/v1/chat/completions":
                self._chat(fake, body)
            elif path == "/v1/embeddings":
                self._embeddings(fake, body)
            elif path == "/v1/images/generations":
                self._images(fake, body)
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
        finally:
            fake._leave()

    def _chat(self, fake: FakeOpenAIServer, body: dict[str, Any]) -> None:
        try:
            answer = fake.handler(body)
        except Exception as exc:  # noqa: BLE001 - a broken test handler shows up as a 500 with its message
            self._send_json(500, {"error": {"message": f"handler raised {exc!r}"}})
            return
        if isinstance(answer, Fault):
            self._apply_fault(answer)
            return
        reply = answer if isinstance(answer, Reply) else Reply(str(answer))
        if reply.delay_s:
            time.sleep(reply.delay_s)
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = sum(_words(str(m.get("content", ""))) for m in body.get("messages", []))
        completion_tokens = (
            reply.completion_tokens if reply.completion_tokens is not None else _words(reply.text)
        )
        self._send_json(
            200,
            {
                "id": f"chatcmpl-fake-{fake._next_id()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake-model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": reply.finish_reason,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
            reply=reply,
        )

    def _embeddings(self, fake: FakeOpenAIServer, body: dict[str, Any]) -> None:
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        if fake.embedding_handler is not None:
            answer = fake.embedding_handler(body)
            if isinstance(answer, Fault):
                self._apply_fault(answer)
                return
            vectors = [list(vector) for vector in answer]
        else:
            vectors = [hash_embedding(str(text), fake.embedding_dim) for text in texts]
        tokens = sum(_words(str(text)) for text in texts)
        self._send_json(
            200,
            {
                "object": "list",
                "model": body.get("model", "fake-embedding"),
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


    def _images(self, fake: FakeOpenAIServer, body: dict[str, Any]) -> None:
        try:
            answer = fake.image_handler(body) if fake.image_handler is not None else default_image(body)
        except Exception as exc:  # noqa: BLE001 - a broken test handler shows up as a 500 with its message
            self._send_json(500, {"error": {"message": f"image handler raised {exc!r}"}})
            return
        if isinstance(answer, Fault):
            self._apply_fault(answer)
            return
        reply = ImageReply(data=answer) if isinstance(answer, bytes) else answer
        data = reply.data if reply.data is not None else deterministic_png(str(body.get("prompt", "")), body.get("seed"))
        row: dict[str, Any] = {}
        if reply.as_url:
            name = fake._store_image(data)
            host = reply.url_host or "127.0.0.1"
            row["url"] = f"http://{host}:{fake.port}{_IMAGE_FILES}{name}?signature=fake"
        else:
            row["b64_json"] = base64.b64encode(data).decode("ascii")
        if reply.revised_prompt is not None:
            row["revised_prompt"] = reply.revised_prompt
        self._send_json(200, {"created": int(time.time()), "data": [row]})


_IMAGE_FILES = "/v1/images/files/"


def default_image(request: dict[str, Any]) -> ImageReply:
    """Default image handler: the deterministic PNG of prompt and seed, delivered as the request asks."""
    return ImageReply(as_url=request.get("response_format") == "url")


class FakeOpenAIServer:
    """Threaded fake of the OpenAI chat/embeddings/images API on 127.0.0.1; a context manager."""

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        latency_s: float = 0.0,
        embedding_dim: int = 16,
        embedding_handler: EmbeddingHandler | None = None,
        image_handler: ImageHandler | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.handler: Handler = handler or echo
        self.image_handler = image_handler
        self._image_files: dict[str, bytes] = {}
        self.tls = tls
        self.latency_s = latency_s
        self.embedding_dim = embedding_dim
        self.embedding_handler = embedding_handler
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        server = _Server(("127.0.0.1", 0), _RequestHandler)
        if self.tls is not None:
            server.socket = self.tls.wrap_socket(server.socket, server_side=True)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses -----------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the fake server is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """OpenAI-style base URL, ending in ``/v1``."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    # -- observation ---------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/") == "/v1/chat/completions"]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/") == "/v1/embeddings"]

    @property
    def image_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/") == "/v1/images/generations"]

    @property
    def image_downloads(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.startswith(_IMAGE_FILES)]

    @property
    def max_concurrency(self) -> int:
        with self._lock:
            return self._max_in_flight

    def reset(self) -> None:
        """Forget recorded requests and the concurrency high-water mark."""
        with self._lock:
            self._requests.clear()
            self._max_in_flight = self._in_flight

    # -- called from handler threads -----------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _store_image(self, data: bytes) -> str:
        name = f"{self._next_id()}.png"
        with self._lock:
            self._image_files[name] = data
        return name

    def _image_file(self, name: str) -> bytes | None:
        with self._lock:
            return self._image_files.get(name)
