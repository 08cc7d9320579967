"""Every request as sent and reply as received, from the provider caches, into a bundle.

The site's provider caches (``<ATELIER_PROVIDER_CACHE_DIR>/<name>.sqlite3``, one per use:
:func:`leaderboard.ekphrasis.judges.provider_client_for`) store each chat answer under the hash of its request
and, since issue 29's follow-up, the request's JSON body as sent beside it. A bundle carries the
exchanges of the caches its protocol uses, for the models its manifest names (the subjects, the
judge, the rater), in ``records/requests.jsonl``: one line per exchange with the cache, the key, the
request body and sample index, and the reply. ``verify_bundle`` checks each request hashes to its key.

What is and is not in it: a cache is shared by every run of a model, so the file holds every
recorded exchange of these models in these caches — a superset of the board's own calls. The API key
is never in a body (it travels in a header, which is not stored), and every line still passes the
bundle's secret redactor. Answers cached before requests were stored have no body and are not listed
(they are counted in the manifest). A simulated component sends nothing; its file is empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from django.conf import settings

from engine.bundle.exchanges import REQUESTS
from engine.bundle.manifest import BundleWriter
from engine.providers.cache import RequestCache

__all__ = ["CACHES", "provider_exchanges"]

#: The provider caches each protocol's board is made with (the ``cache_name`` of its clients).
CACHES = {"ekphrasis": ("generation", "judge"), "easel": ("easel",), "c2": ("c2", "c2-rater")}


def _provider_ids(value: Any) -> Iterator[str]:
    """The provider model id (as the client sends it) of every model described in manifest fields."""
    if isinstance(value, Mapping):
        if "provider_id" in value and "display_name" in value:
            yield str(value["provider_id"] or value["display_name"])
        for item in value.values():
            yield from _provider_ids(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _provider_ids(item)


def _count_without_request(cache: RequestCache) -> int:
    row = cache._connection().execute(
        "SELECT COUNT(*) FROM answers WHERE json_extract(value, '$.request') IS NULL"
        " AND json_extract(value, '$.embedding') IS NULL").fetchone()
    return int(row[0])


def provider_exchanges(writer: BundleWriter, kind: str, fields: Mapping[str, Any]) -> dict:
    """Write ``records/requests.jsonl`` (always, possibly empty); the manifest's account of it."""
    models = sorted(set(_provider_ids(fields)))
    folder = Path(settings.ATELIER_PROVIDER_CACHE_DIR)
    rows, without = [], 0
    for name in CACHES[kind]:
        path = folder / f"{name}.sqlite3"
        if not path.is_file():
            continue
        cache = RequestCache(path)
        try:
            for key, value in cache.chat_entries(models):
                request = value.pop("request")
                rows.append({"cache": name, "key": key, "model": request["body"].get("model"),
                             "sample_index": request["sample_index"], "request": request["body"], "reply": value})
            without += _count_without_request(cache)
        finally:
            cache.close()
    writer.jsonl(REQUESTS, rows)
    return {"requests_recorded": bool(rows), "file": REQUESTS, "exchanges": len(rows), "caches": list(CACHES[kind]),
            "models": models, "cached_without_request": without,
            "selection": "every cached chat exchange of these models in these caches (a cache is shared by the "
                         "model's runs, so this may include calls of other boards); the request bodies as sent, "
                         "without headers, so without any key"}
