"""A lean HTTP/1.1 keep-alive transport on asyncio streams, for the provider client (Ekphrasis App. D.3).

Why not httpx: at the App. D.3 scale (100 calls in flight) httpx/httpcore spend
about 2 ms of CPU per call on this project's 2-core machines — its pool
re-scans every connection on each request — which caps one event loop near
400 calls/s against a 200 ms fake provider. This transport does only what an
OpenAI-compatible JSON POST needs (and the GET of a generated image's URL), at
about a tenth of that cost:

* ``http`` and ``https`` (TLS with certifi's CA bundle when installed, ALPN
  ``http/1.1``), IPv4/IPv6 hosts, a base-URL path prefix;
* one request per connection at a time, idle connections kept for reuse;
  a reused connection the server had silently closed is replaced once,
  transparently (the request had not been read);
* response bodies framed by ``Content-Length``, ``Transfer-Encoding: chunked``
  or connection close; ``1xx`` interim responses skipped; ``gzip``/``deflate``
  decoded (though ``Accept-Encoding: identity`` is requested);
* ``Connection: close`` and HTTP/1.0 honoured.

Not supported: HTTP proxies, HTTP/2, redirects, cookies — none is used by the
providers Atelier talks to. Errors are :class:`TransportError` (connection-level,
worth retrying); timeouts are the caller's (``asyncio.timeout``) and a
connection interrupted mid-exchange is closed, never reused.
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self
from urllib.parse import urlsplit

__all__ = ["Http11Transport", "HttpResponse", "TransportError", "default_ssl_context"]

_HEADER_LIMIT = 1 << 20
#: The most bytes of a response body, as received and once decoded: the largest image file the site reads
#: (engine.image_limits.IMAGE_FILE_BYTES, 129 MiB) base64-encoded in a JSON answer is 172 MiB. A larger body
#: (a hostile or broken endpoint: an EASEL agent answering gigabytes, a gzip bomb) is a TransportError
#: once this much has arrived, not a worker holding all of it in memory.
BODY_LIMIT = 192 << 20
_CLOSE_WAIT_S = 1.0
_USER_AGENT = "atelier-provider-client/1"


class TransportError(Exception):
    """The exchange failed at the connection level (refused, reset, closed early, unparseable)."""


class _StaleConnection(Exception):
    """A reused connection was closed by the server before any response byte."""


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def default_ssl_context(ca_file: str | None = None) -> ssl.SSLContext:
    """A verifying TLS context that offers only HTTP/1.1; CAs from ``ca_file``, else certifi's bundle."""
    if ca_file is None:
        try:
            import certifi
        except ImportError:  # pragma: no cover - certifi is a project dependency
            pass
        else:
            ca_file = certifi.where()
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["http/1.1"])
    return context


def _check_header(name: str, value: str) -> None:
    if any(c in name for c in "\r\n:") or any(c in value for c in "\r\n"):
        raise ValueError(f"header {name!r} contains a line break or colon")


class _Connection:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        try:
            self.writer.close()
        except (OSError, RuntimeError):  # already torn down, or the loop is closing
            pass


class Http11Transport:
    """POSTs to one origin over pooled keep-alive connections. Use within one event loop; close with ``aclose``."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL must be http(s)://host[:port][/path], got {base_url!r}")
        self.host = parts.hostname
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        host_text = f"[{self.host}]" if ":" in self.host else self.host
        default_port = 443 if self.tls else 80
        authority = host_text if self.port == default_port else f"{host_text}:{self.port}"
        self._ssl = (ssl_context or default_ssl_context()) if self.tls else None
        fixed = {
            "Host": authority,
            "User-Agent": _USER_AGENT,
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        for name, value in fixed.items():
            _check_header(name, value)
        self._fixed_headers = "".join(f"{name}: {value}\r\n" for name, value in fixed.items()).encode(
            "latin-1"
        )
        # A GET (a generated image's URL) has no body and accepts any type.
        get_headers = {name: value for name, value in fixed.items() if name != "Content-Type"}
        get_headers["Accept"] = "*/*"
        self._get_headers = "".join(f"{name}: {value}\r\n" for name, value in get_headers.items()).encode(
            "latin-1"
        )
        self._idle: list[_Connection] = []
        self._closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the idle connections and wait (briefly) until they are gone."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        if idle:
            waits = [connection.writer.wait_closed() for connection in idle]
            try:
                async with asyncio.timeout(_CLOSE_WAIT_S):
                    await asyncio.gather(*waits, return_exceptions=True)
            except TimeoutError:
                pass

    async def _open(self) -> _Connection:
        try:
            reader, writer = await asyncio.open_connection(
                self.host,
                self.port,
                ssl=self._ssl,
                server_hostname=self.host if self.tls else None,
                limit=_HEADER_LIMIT,
            )
        except OSError as exc:
            raise TransportError(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        return _Connection(reader, writer)

    async def post(self, endpoint: str, body: bytes) -> HttpResponse:
        """POST ``body`` (JSON bytes) to ``<base path>/<endpoint>``."""
        if self._closed:
            raise TransportError("transport is closed")
        path = f"{self.prefix}/{endpoint.lstrip('/')}"
        request = (
            f"POST {path} HTTP/1.1\r\n".encode("latin-1")
            + self._fixed_headers
            + f"Content-Length: {len(body)}\r\n\r\n".encode("latin-1")
            + body
        )
        return await self._send(request)

    async def get(self, target: str) -> HttpResponse:
        """GET ``target``, an origin-form path with its query (``/files/x.png?sig=...``), not prefixed."""
        if self._closed:
            raise TransportError("transport is closed")
        if not target.startswith("/") or any(c in target for c in "\r\n "):
            raise ValueError(f"GET target must be an absolute path without spaces, got {target[:80]!r}")
        request = f"GET {target} HTTP/1.1\r\n".encode("latin-1") + self._get_headers + b"\r\n"
        return await self._send(request)

    async def _send(self, request: bytes) -> HttpResponse:
        while True:
            reused = bool(self._idle)
            connection = self._idle.pop() if reused else await self._open()
            try:
                response, keep_alive = await self._exchange(connection, request)
            except _StaleConnection:
                connection.close()
                if reused:
                    continue  # the server dropped an idle connection; the request was not read
                raise TransportError("connection closed before any response") from None
            except BaseException:
                # Timeout, cancellation or a broken exchange: the connection's state is unknown.
                connection.close()
                raise
            if keep_alive and not self._closed:
                self._idle.append(connection)
            else:
                connection.close()
            return response

    async def _exchange(self, connection: _Connection, request: bytes) -> tuple[HttpResponse, bool]:
        reader, writer = connection.reader, connection.writer
        try:
            writer.write(request)
            await writer.drain()
        except (ConnectionResetError, BrokenPipeError) as exc:
            raise _StaleConnection() from exc
        except OSError as exc:
            raise TransportError(f"send failed: {exc}") from exc
        first_head = True
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError as exc:
                    if first_head and not exc.partial:
                        raise _StaleConnection() from exc
                    raise
                except ConnectionResetError as exc:
                    if first_head:
                        raise _StaleConnection() from exc
                    raise
                status, version, headers = self._head(head)
                if 100 <= status < 200:
                    first_head = False
                    continue  # an interim response (100 Continue, 103 Early Hints): the real one follows
                body, framed = await self._body(reader, status, headers)
                break
        except _StaleConnection:
            raise
        except asyncio.IncompleteReadError as exc:
            raise TransportError("connection closed mid-response") from exc
        except asyncio.LimitOverrunError as exc:
            raise TransportError("response headers too large") from exc
        except (OSError, ValueError) as exc:
            raise TransportError(f"unreadable response: {exc}") from exc
        connection_header = headers.get("connection", "").lower()
        keep_alive = framed and version == "HTTP/1.1" and "close" not in connection_header
        return HttpResponse(status, headers, self._decoded(body, headers)), keep_alive

    @staticmethod
    def _head(block: bytes) -> tuple[int, str, dict[str, str]]:
        """(status, HTTP version, lower-cased headers) from a response head ending in a blank line."""
        lines = block.decode("latin-1").split("\r\n")
        parts = lines[0].strip().split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise ValueError(f"bad status line {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for raw in lines[1:]:
            if not raw:
                continue
            name, sep, value = raw.partition(":")
            if not sep:
                raise ValueError(f"bad header line {raw[:80]!r}")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return int(parts[1]), parts[0], headers

    @staticmethod
    async def _body(
        reader: asyncio.StreamReader, status: int, headers: Mapping[str, str]
    ) -> tuple[bytes, bool]:
        """(body, framed): ``framed`` is False when the body ran to connection close."""
        if status in (204, 304):
            return b"", True
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            total = 0
            while True:
                size_line = await reader.readline()
                if not size_line:
                    raise asyncio.IncompleteReadError(b"", None)
                size = int(size_line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks), True
                total += size
                _body_size_check(total)
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        if "content-length" in headers:
            length = int(headers["content-length"])
            _body_size_check(length)
            return await reader.readexactly(length), True
        chunks, total = [], 0
        while chunk := await reader.read(1 << 16):
            total += len(chunk)
            _body_size_check(total)
            chunks.append(chunk)
        return b"".join(chunks), False

    @staticmethod
    def _decoded(body: bytes, headers: Mapping[str, str]) -> bytes:
        encoding = headers.get("content-encoding", "identity").lower()
        if encoding in ("", "identity"):
            return body
        if encoding == "gzip":
            return _decompressed(body, 16 + zlib.MAX_WBITS)
        if encoding == "deflate":
            try:
                return _decompressed(body, zlib.MAX_WBITS)
            except zlib.error:
                return _decompressed(body, -zlib.MAX_WBITS)
        raise TransportError(f"unsupported content encoding {encoding!r}")


def _body_size_check(size: int) -> None:
    if size > BODY_LIMIT:
        raise TransportError(f"response body over {BODY_LIMIT:,} bytes (the transport's limit)")


def _decompressed(body: bytes, wbits: int) -> bytes:
    """``zlib.decompress(body, wbits)`` that stops at :data:`BODY_LIMIT` bytes of output (a gzip bomb of a few
    kilobytes decompresses to gigabytes)."""
    decoder = zlib.decompressobj(wbits)
    out = decoder.decompress(body, BODY_LIMIT + 1)
    _body_size_check(len(out))
    out += decoder.flush()
    if not decoder.eof:  # as zlib.decompress
        raise zlib.error("Error -5 while decompressing data: incomplete or truncated stream")
    return out
