"""What a bundle reports that verify does not recompute, and why, so that the verdict says so.

Verify recomputes the boards from the raw records (:mod:`engine.bundle.ekphrasis`, :mod:`~engine.bundle.easel`,
:mod:`~engine.bundle.c2`), but a few reported values have no raw record to be recomputed from: the site's
database ids of the models, the provider ledger's token counts and cost, the code versions, Originality
clusters (the embeddings are not in the bundle). A verdict of "VERIFIED" covered them silently, as if they
had been recomputed too. :func:`not_recomputed` lists each such value of a bundle with the reason, the
report prints them as ``reported, not recomputed: …`` and the verdict line counts them. A value listed
here is only as good as the signature: ``--public-key`` is what vouches for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["RECORDED", "not_recomputed"]

_CODE = ("manifest board_code_version, exporter_code_version, board_facts.code_version and engine source hashes",
         "the code's identity at the exporting site; nothing in the bundle derives it")
_COSTS = ("costs.json (token counts and USD cost)", "the provider ledger's totals; no record holds each call's "
          "tokens and price")
#: Each protocol's reported values that no record of its bundle recomputes: (what, why).
RECORDED: dict[str, tuple[tuple[str, str], ...]] = {
    "ekphrasis": (
        ("board/board.json model_ids", "the exporting site's database ids of the models; copied from the snapshot"),
        ("board/board.json usage", "the judge run's provider ledger as the snapshot stored it; copied"),
        _COSTS,
        ("manifest models[] provider ids, endpoints, prices and sampling settings",
         "who each named model is; the records name models by display name only"),
        _CODE,
    ),
    "easel": (
        ("records/runs.jsonl usage", "each run's provider ledger"),
        _COSTS,
        _CODE,
    ),
    "c2": (
        ("records/samples.jsonl cluster (Originality clusters)",
         "clustered from embeddings at grading; the embeddings are not in the bundle"),
        ("records/samples.jsonl verdict, usefulness and correct of code samples",
         "regrading runs each program in the sandbox, which verify does not"),
        _COSTS,
        ("manifest models[] provider ids, endpoints, prices and sampling settings",
         "who each named model is; the records name models by display name only"),
        _CODE,
    ),
}


def not_recomputed(manifest: Mapping[str, Any]) -> list[str]:
    """``what (why)`` of each reported value of this bundle's kind that verify takes as recorded."""
    return [f"{what} ({why})" for what, why in RECORDED.get(str(manifest.get("kind")), ())]
