"""Persistent request cache: a resumed run re-sends nothing already answered.

Every provider answer is stored under a key that is the SHA-256 of the
canonical JSON of what determines it — the model id, the messages, the
sampling parameters and the sample index (Ekphrasis App. D: three samples per
model–task, repeated judge calls, each its own entry). The base URL is not part
of the key, so a run moved from one OpenAI-compatible route to another for the
same model id keeps its answers.

The store is one SQLite file (stdlib ``sqlite3``) in WAL mode, shared by every
worker process of a run: readers never block, writers wait on SQLite's lock
(``busy_timeout``) instead of failing, and each write is a single
``INSERT OR REPLACE`` so two workers that raced on the same key both leave one
complete, valid entry. Connections are per thread and per process.

Fork safety (Celery prefork workers): SQLite forbids carrying an open
connection across ``fork()`` — the child inherits SQLite's in-memory lock
bookkeeping but not the POSIX locks behind it, and concurrent writers then
overwrite each other's WAL frames (we saw writes lost exactly this way). So
every cache closes all its connections just before any fork
(``os.register_at_fork``) and reopens lazily afterwards, in parent and child.

Only successful answers are stored; a failed call leaves no entry and is sent
again on resume. A chat answer also stores the request's JSON body as sent and its
sample index (``request``; entries written before this was kept have none), so the
request can be shown beside its reply and :func:`chat_request_key` proves it hashes to
the entry's key. The body never holds the API key: that travels in a header only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["RequestCache", "canonical_json", "chat_request_key", "embedding_key", "request_key"]

# SQLite's default limit on host parameters is 999; stay well under it.
_LOOKUP_CHUNK = 500
_BUSY_TIMEOUT_S = 60.0


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def request_key(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    parameters: Mapping[str, Any],
    sample_index: int | str,
) -> str:
    """Cache key of one chat call: sha256 of canonical JSON of (model, messages, parameters, sample index)."""
    payload = {
        "kind": "chat",
        "model": model,
        "messages": [dict(message) for message in messages],
        "parameters": dict(parameters),
        "sample_index": sample_index,
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def chat_request_key(body: Mapping[str, Any], sample_index: int | str) -> str:
    """The key of a chat call from its body as sent: the body is the model, the messages and the
    sampling parameters (:func:`request_key` of those and the sample index)."""
    parameters = {k: v for k, v in body.items() if k not in ("model", "messages")}
    return request_key(str(body["model"]), body["messages"], parameters, sample_index)


def embedding_key(model: str, text: str) -> str:
    """Cache key of the embedding of one text by one model."""
    payload = {"kind": "embedding", "model": model, "input": text}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


_live_caches: weakref.WeakSet[RequestCache] = weakref.WeakSet()


def _close_connections(connections: list[sqlite3.Connection]) -> None:
    """Close and forget every connection in ``connections`` (emptied in place)."""
    while connections:
        try:
            connections.pop().close()
        except sqlite3.Error:
            pass


def _close_before_fork() -> None:
    for cache in list(_live_caches):
        cache._close_all_connections()


def _reset_locks_in_child() -> None:
    # A lock some other thread held at fork time would stay locked forever in the child.
    for cache in list(_live_caches):
        cache._lock = threading.Lock()


os.register_at_fork(before=_close_before_fork, after_in_child=_reset_locks_in_child)


class RequestCache:
    """SQLite-backed map from request key to the stored answer (a JSON object).

    ``RequestCache(path)`` creates the file and its table on first use.
    ``get``/``get_many`` read, ``put`` writes (replacing any earlier answer
    under the same key, which is what a deliberate re-send asks for).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._generation = 0
        _live_caches.add(self)
        # sqlite3 connections sit in reference cycles (their statement cache), so dropping
        # the last reference does not close them; close them when the cache itself goes.
        weakref.finalize(self, _close_connections, self._connections)
        # Create the schema eagerly so a bad path fails here, not mid-run.
        self._connection()

    def __repr__(self) -> str:
        return f"RequestCache({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is not None and getattr(self._local, "generation", None) == self._generation:
            return connection
        # check_same_thread=False only so the fork hook may close it; each thread still uses its own.
        connection = sqlite3.connect(
            self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS answers ("
            " key TEXT PRIMARY KEY,"
            " value TEXT NOT NULL,"
            " stored_at REAL NOT NULL)"
        )
        with self._lock:
            self._connections.append(connection)
            self._local.connection = connection
            self._local.generation = self._generation
        return connection

    def _close_all_connections(self) -> None:
        with self._lock:
            self._generation += 1
            _close_connections(self._connections)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for ``key``, or None."""
        row = self._connection().execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Stored answers for those of ``keys`` that have one."""
        unique = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        connection = self._connection()
        for start in range(0, len(unique), _LOOKUP_CHUNK):
            chunk = unique[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = connection.execute(f"SELECT key, value FROM answers WHERE key IN ({marks})", chunk)
            for key, value in rows:
                found[key] = json.loads(value)
        return found

    def put(self, key: str, value: Mapping[str, Any]) -> None:
        """Store ``value`` under ``key``; one atomic statement, safe against concurrent writers."""
        self._connection().execute(
            "INSERT OR REPLACE INTO answers (key, value, stored_at) VALUES (?, ?, ?)",
            (key, canonical_json(dict(value)), time.time()),
        )

    def chat_entries(self, models: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
        """(key, answer) of every stored chat answer whose request was sent for one of ``models``
        (entries without a stored request cannot be attributed and are left out), in key order."""
        wanted = list(dict.fromkeys(models))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = self._connection().execute(
            f"SELECT key, value FROM answers WHERE json_extract(value, '$.request.body.model') IN ({marks})"
            " ORDER BY key",
            wanted,
        )
        return [(key, json.loads(value)) for key, value in rows]

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return (
            self._connection().execute("SELECT 1 FROM answers WHERE key = ?", (key,)).fetchone() is not None
        )

    def close(self) -> None:
        """Close every connection of this cache (it reopens on next use)."""
        self._close_all_connections()
