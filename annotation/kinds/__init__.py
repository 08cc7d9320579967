"""The five campaign kinds, one module each with the same shape (see ``base.Kind``)."""

from __future__ import annotations

from annotation.kinds.base import Kind, ShownContent
from annotation.kinds.faithfulness import Faithfulness
from annotation.kinds.image_preference import ImagePreference
from annotation.kinds.strategy import Strategy
from annotation.kinds.text_pairwise import TextPairwise
from annotation.kinds.tig_audit import TigAudit

KINDS: dict[str, Kind] = {
    kind.code: kind
    for kind in (TextPairwise(), TigAudit(), Faithfulness(), ImagePreference(), Strategy())
}


def kind_for(code: str) -> Kind:
    return KINDS[code]


__all__ = ["KINDS", "Kind", "ShownContent", "kind_for"]
