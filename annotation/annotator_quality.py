"""Per-annotator quality on a campaign's dashboard (Ekphrasis App. H.6): leave-one-out agreement with the
other annotators' majority, gold accuracy, tie rate, position and length preference, median time, flags.
Reachable from :mod:`annotation.selectors` under the same names."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from annotation.consensus import majority
from annotation.kinds import kind_for
from annotation.models import Campaign

if TYPE_CHECKING:  # the label-row shapes are gathered by the dashboard's selectors
    from annotation.selectors import ItemRow, LabelRow


@dataclass
class AnnotatorQuality:
    annotator: str
    n_labels: int
    simulated: bool
    loo_agree: int
    loo_n: int
    gold_correct: int
    gold_n: int
    ties: int
    decisive: int
    shown_a: int
    longer: int
    longer_n: int
    median_time_s: float | None
    flags: int
    skips: int

    @staticmethod
    def _rate(x: int, n: int) -> float | None:
        return x / n if n else None

    @property
    def loo_rate(self) -> float | None:
        return self._rate(self.loo_agree, self.loo_n)

    @property
    def gold_rate(self) -> float | None:
        return self._rate(self.gold_correct, self.gold_n)

    @property
    def tie_rate(self) -> float | None:
        return self._rate(self.ties, self.ties + self.decisive)

    @property
    def a_bias_pp(self) -> float | None:
        """A-position bias: share of decisive choices for the left/first shown side, minus 50%."""
        rate = self._rate(self.shown_a, self.decisive)
        return None if rate is None else 100.0 * (rate - 0.5)

    @property
    def longer_rate(self) -> float | None:
        return self._rate(self.longer, self.longer_n)


def annotator_quality(
    *, campaign: Campaign, items: Mapping[int, ItemRow], labels: Sequence[LabelRow],
    labels_by_item: Mapping[int, list[LabelRow]], gold_labels: Sequence[LabelRow], skips: Mapping[str, int],
) -> list[AnnotatorQuality]:
    """Agreement with the leave-one-out majority, gold accuracy, tie rate, A-position bias, the
    longer-response rate (the biases measured for the judge, App. D.2), median time, flags.
    ``labels_by_item`` is ``labels`` grouped by item (as :func:`campaign_dashboard` already has it)."""
    kind = kind_for(campaign.kind)
    out: dict[str, AnnotatorQuality] = {}
    times: dict[str, list[float]] = defaultdict(list)

    def entry(name: str, simulated: bool) -> AnnotatorQuality:
        if name not in out:
            out[name] = AnnotatorQuality(name, 0, simulated, 0, 0, 0, 0, 0, 0, 0, 0, 0, None, 0, skips.get(name, 0))
        return out[name]

    for row in labels:
        q = entry(row.annotator, row.is_simulated)
        q.n_labels += 1
        q.flags += bool(row.flag_reason)
        if row.time_ms is not None:
            times[row.annotator].append(row.time_ms / 1000.0)
        others = [o.category for o in labels_by_item[row.item_id] if o is not row]
        if len(others) >= 2 or (len(others) == 1 and campaign.k == 2):
            loo = majority(others)
            if loo is not None:
                q.loo_n += 1
                q.loo_agree += row.category == loo
        if kind.two_sided:
            if row.category == "tie":
                q.ties += 1
            else:
                q.decisive += 1
                q.shown_a += row.shown_choice == "A"
                item = items[row.item_id]
                if item.length_a is not None and item.length_b is not None and item.length_a != item.length_b:
                    q.longer_n += 1
                    q.longer += (row.category == "A") == (item.length_a > item.length_b)
    for row in gold_labels:
        q = entry(row.annotator, row.is_simulated)
        item = items[row.item_id]
        q.gold_n += 1
        q.gold_correct += row.category == item.gold_answer
    for name, values in times.items():
        out[name].median_time_s = float(np.median(values))
    for name, n in skips.items():
        entry(name, False).skips = n
    return sorted(out.values(), key=lambda q: q.annotator)
