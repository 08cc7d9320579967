"""The campaign kinds (five Ekphrasis, three EASEL/C² validation kinds), one module each with the same shape (see ``base.Kind``)."""

from __future__ import annotations

from annotation.kinds.base import Kind
from annotation.kinds.canvas_similarity import CanvasSimilarity
from annotation.kinds.faithfulness import Faithfulness
from annotation.kinds.handwriting import Handwriting
from annotation.kinds.image_preference import ImagePreference
from annotation.kinds.strategy import Strategy
from annotation.kinds.text_pairwise import TextPairwise
from annotation.kinds.tig_audit import TigAudit
from annotation.kinds.uos_rating import UOSRating

KINDS: dict[str, Kind] = {
    kind.code: kind
    for kind in (TextPairwise(), TigAudit(), Faithfulness(), ImagePreference(), Strategy(),
                 UOSRating(), CanvasSimilarity(), Handwriting())
}


def kind_for(code: str) -> Kind:
    return KINDS[code]


__all__ = ["KINDS", "kind_for"]
