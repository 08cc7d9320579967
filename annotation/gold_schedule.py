"""When an annotator's next item is gold (an attention check): a seeded draw per (campaign, annotator,
position), so that gold falls at different positions for each annotator and nobody can tell from their
position alone, or by comparing notes, which of their items were gold.

The share stays within one item of the campaign's ``gold_rate``: after ``n`` items of which ``g`` were
gold, ``|g - n * gold_rate| < 1`` whatever was drawn. A gold item is never due when it would put the share
a whole item above the rate, always due when a regular one would put it a whole item below, and between
the two it is due with probability ``gold_rate``. The draw is an HMAC of the campaign, the annotator and
the position under the site's secret key: reproducible (the same position always draws the same, so an
item that expired and is handed out again does not re-roll it), costs no query, and cannot be computed
by an annotator who knows their own ids.
"""

from __future__ import annotations

from django.utils.crypto import salted_hmac

_SALT = "annotation.gold_schedule"
_EPS = 1e-9


def gold_draw(*, campaign_id: int, annotator_id: int, position: int) -> float:
    """The uniform draw in [0, 1) for the item at ``position`` (0-based) of this annotator in this campaign."""
    digest = salted_hmac(_SALT, f"{campaign_id}:{annotator_id}:{position}", algorithm="sha256").digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def gold_due(*, campaign_id: int, annotator_id: int, rate: float, shown: int, shown_gold: int) -> bool:
    """Whether the item after ``shown`` items (``shown_gold`` of them gold) should be gold."""
    if rate <= 0:
        return False
    target = (shown + 1) * rate  # the gold items due after this one, as a share
    if shown_gold >= target - _EPS:  # one more would be a whole item above the rate
        return False
    if shown_gold <= target - 1 + _EPS:  # a regular one would leave it a whole item below
        return True
    return gold_draw(campaign_id=campaign_id, annotator_id=annotator_id, position=shown) < rate


__all__ = ["gold_draw", "gold_due"]
