"""Check a bundle's provider exchanges: every request as sent hashes to the cache key its reply was
stored under (:func:`engine.providers.cache.chat_request_key`), so an edited prompt, parameter or
sample index is named by its line, and a reply cannot be moved to another request unnoticed."""

from __future__ import annotations

from pathlib import Path

from engine.bundle.manifest import read_jsonl
from engine.bundle.numbers import NumberCheck
from engine.providers.cache import chat_request_key

__all__ = ["REQUESTS", "request_checks"]

REQUESTS = "records/requests.jsonl"


def request_checks(root: Path) -> list[NumberCheck]:
    """One check per exchange: its stored key beside the key its request hashes to (none without the file)."""
    if not (Path(root) / REQUESTS).is_file():
        return []
    out = []
    for line, row in enumerate(read_jsonl(root, REQUESTS), start=1):
        try:
            recomputed = chat_request_key(row["request"], row["sample_index"])
        except (KeyError, TypeError, ValueError) as exc:
            recomputed = f"unreadable request ({type(exc).__name__}: {exc})"
        out.append(NumberCheck(f"{REQUESTS} line {line} ({row.get('cache')} cache, model {row.get('model')}): "
                               "request hashes to its key", row.get("key"), recomputed))
    return out
