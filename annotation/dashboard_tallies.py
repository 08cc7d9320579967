"""The pairwise dashboards (text pairwise, image preference) computed from tallies (issue 16).

:func:`annotation.selectors.campaign_dashboard` builds one :class:`~annotation.selectors.LabelRow` per
label and then walks the labels once per statistic; at 50,000 labels that is most of a second. Every
number of a pairwise dashboard is a function of much less:

* per regular item, how many current labels chose each category (A, B, tie): the *item tally*. The
  consensus columns (complete items, strict majority, unanimity, majority outcome), Fleiss' κ (whose
  input *is* the items × categories count matrix, Fleiss 1971), the human pairs of the judge join and
  Bradley–Terry fit, and the adjudication rows read only this;
* per annotator, sums over their labels (labels, flags, ties, decisive, shown-A, longer-side choices,
  gold answers) and their times; the leave-one-out majority of a label is the strict majority of its
  item's tally minus that label, so it is arithmetic on the tallies, not a recount of the item's labels.

One query reads the campaign's labels as an integer matrix (four columns, no join, categories and
flags encoded by the database), numpy builds both tallies from it, and everything else is arithmetic
on ~items rows; what depends on the items alone (their arrays, each item's human pair) is built once
per state of the items (:class:`ItemTable`, kept by :mod:`annotation.dashboard_cache`). The result
is the same :class:`~annotation.selectors.Dashboard` the label rows give, field for field (the tests compare the
two after every kind of change), and it is always computed from the current labels, so it needs no
maintenance by the writers: a label's revision, staleness or deletion is seen by the next read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connections
from django.db.models import Case, Count, IntegerField, Q, Value, When
from django.db.models.functions import Coalesce

from annotation import selectors
from annotation.annotator_quality import AnnotatorQuality
from annotation.choices import CampaignKind, Dimension
from annotation.consensus import Stat
from annotation.counted_labels import counted_labels
from annotation.judge_join import HumanPair
from annotation.kinds import kind_for
from annotation.label_models import PairwiseLabel
from annotation.models import Adjudication, Assignment, Campaign
from annotation.validation_dashboards import validation_panel
from engine import agreement

#: The kinds whose dashboard is computed here (the others keep :func:`selectors.campaign_dashboard`).
TALLIED_KINDS = (CampaignKind.TEXT_PAIRWISE, CampaignKind.IMAGE_PREFERENCE)

def strict_majority(tallies: np.ndarray) -> np.ndarray:
    """Per row of an items × categories count matrix, the index of the category chosen by a strict
    majority (> half) of that row's labels, or -1 (engine.agreement.majority_label on the labels
    the row counts; at most one category can hold more than half)."""
    if not len(tallies):
        return np.zeros(0, dtype=np.int64)
    over = 2 * tallies > tallies.sum(axis=1, keepdims=True)
    return np.where(over.any(axis=1), over.argmax(axis=1), -1)


#: The label matrix's columns (see :meth:`LabelTallies._label_matrix`) and the bits of its CODE column.
ITEM, ANNOTATOR, CODE, TIME_MS = range(4)
SIMULATED_BIT, FLAGGED_BIT, SHOWN_A_BIT, STALE_BIT, CATEGORY_SHIFT = 1, 2, 4, 8, 4


class ItemTable(dict):
    """The campaign's item rows by id (:func:`annotation.selectors.item_rows`) with what the tallies
    derive from them alone, built once per state of the items (the dashboard cache keeps one per
    ``item_version``): the regular items in the dashboard's order, the sorted ids with each one's
    place among them, the dimensions, shown lengths and withheld marks as arrays, and each item's human pair per
    majority, made on first use (a pair is immutable, so every dashboard of this state shares it)."""

    def __init__(self, rows: Mapping[int, selectors.ItemRow]):
        super().__init__(rows)
        self.regular = [i for i in self.values() if not i.is_gold]
        place = {item.id: n for n, item in enumerate(self.regular)}
        ids = np.array(list(self), dtype=np.int64)
        order = np.argsort(ids)
        self.sorted_ids = ids[order]
        self.place = np.array([place.get(i, -1) for i in self], dtype=np.int64)[order]  # -1: gold
        self.dimensions = sorted({i.dimension for i in self.regular})
        self.dimension = np.array([self.dimensions.index(i.dimension) for i in self.regular], dtype=np.int64)
        self.length_a = np.array([-1 if i.length_a is None else i.length_a for i in self.regular], dtype=np.int64)
        self.length_b = np.array([-1 if i.length_b is None else i.length_b for i in self.regular], dtype=np.int64)
        self.pairable = np.array([i.response_a_id is not None and i.response_b_id is not None for i in self.regular],
                                 dtype=bool)
        self.withheld = np.array([i.withheld for i in self.regular], dtype=bool)
        self.n_gold = len(self) - len(self.regular)
        self.model_names = selectors.model_names(self)
        self._pairs: list[HumanPair | None] = []

    def positions(self, item_ids: np.ndarray) -> np.ndarray:
        """Each label's item as its index in ``regular`` (-1 for a gold item); KeyError for an item
        the campaign does not have (as the label rows' lookup would)."""
        if not len(item_ids):
            return np.zeros(0, dtype=np.int64)
        at = np.searchsorted(self.sorted_ids, item_ids).clip(0, max(len(self.sorted_ids) - 1, 0))
        if not len(self.sorted_ids) or not np.array_equal(self.sorted_ids[at], item_ids):
            missing = sorted(set(item_ids.tolist()) - set(self.sorted_ids.tolist()))[:5]
            raise KeyError(f"labels of items not in the campaign: {missing}")
        return self.place[at]

    def pairs(self, positions: Sequence[int], majorities: Sequence[int], categories: Sequence[str]) -> list[HumanPair]:
        """The human pairs of the regular items at ``positions`` with these majorities (an index in
        ``categories``, -1: none), each made on first use."""
        out, made, width = [], self._pairs, len(categories)
        for n, m in zip(positions, majorities):
            pair = made[n * (width + 1) + m + 1]
            if pair is None:
                item = self.regular[n]
                pair = made[n * (width + 1) + m + 1] = HumanPair(
                    item.id, item.task_external_id, item.dimension, item.response_a_id, item.response_b_id,
                    item.model_a_id, item.model_b_id, categories[m] if m >= 0 else None)
            out.append(pair)
        return out


class LabelTallies:
    """The item and annotator tallies of a pairwise campaign's current labels, from one query.

    ``regular``: the regular items in the dashboard's order; ``counts``: their labels per category
    (rows aligned with ``regular``, columns with ``categories``); ``total`` and ``majority`` per row
    (:func:`strict_majority`); ``annotators``: dimension -> names of the annotators who labelled its
    regular items; ``quality``: the per-annotator rows (skips not yet counted); ``n_simulated``:
    simulated labels, gold included."""

    def __init__(self, *, campaign: Campaign, items: ItemTable):
        kind = kind_for(campaign.kind)
        self.categories: tuple[str, ...] = tuple(kind.categories)
        width = len(self.categories)
        self.items, self.regular = items, items.regular
        labels = self._label_matrix(campaign)
        stale = (labels[:, CODE] & STALE_BIT).astype(bool)
        self.n_stale = int(stale.sum())
        labels = labels[~stale]  # stale labels are counted, and enter no other number
        where = items.positions(labels[:, ITEM])  # the label's item among `regular`, -1: gold
        category = labels[:, CODE] >> CATEGORY_SHIFT
        regular = where >= 0
        self.counts = np.bincount(where[regular] * width + category[regular],
                                  minlength=len(self.regular) * width).reshape(len(self.regular), width)
        self.total = self.counts.sum(axis=1)
        self.majority = strict_majority(self.counts)
        self.n_simulated = int((labels[:, CODE] & SIMULATED_BIT).astype(bool).sum())

        people, who = np.unique(labels[:, ANNOTATOR], return_inverse=True)
        who = who.reshape(len(labels))
        names = dict(get_user_model().objects.filter(pk__in=people.tolist()).values_list("pk", "username"))
        self.names = [names[p] for p in people.tolist()]
        self.annotators: dict[str, set[str]] = defaultdict(set)
        if regular.any():
            for d, person in set(zip(items.dimension[where[regular]].tolist(), who[regular].tolist())):
                self.annotators[items.dimensions[d]].add(self.names[person])
        self.quality = self._quality(campaign.k, kind.two_sided, items, labels, regular, where, who)

    def _label_matrix(self, campaign: Campaign) -> np.ndarray:
        """The campaign's labels as a labels × 4 integer matrix (item, annotator, code, time on item
        in ms or -1), encoded by the database so that no value is converted one by one here. The code
        packs the category's index in ``categories`` (shifted by CATEGORY_SHIFT) with four bits: the
        label is stale, A was the key pressed, the label is flagged, it is simulated. (Stale labels
        are read too, so that one scan also counts them.)"""
        def bit(condition: Q, value: int) -> Case:
            return Case(When(condition, then=Value(value)), default=Value(0), output_field=IntegerField())

        category = Case(*(When(choice=c, then=Value(i << CATEGORY_SHIFT)) for i, c in enumerate(self.categories)),
                        output_field=IntegerField())
        rows = counted_labels(PairwiseLabel, campaign_id=campaign.pk, include_stale=True).annotate(
            t_code=category + bit(Q(shown_choice="A"), SHOWN_A_BIT) + bit(~Q(flag_reason=""), FLAGGED_BIT)
            + bit(Q(is_simulated=True), SIMULATED_BIT) + bit(Q(is_stale=True), STALE_BIT),
            t_time=Coalesce("time_on_item_ms", Value(-1)),
        ).values_list("item_id", "annotator_id", "t_code", "t_time")
        # The ORM's SQL, read through the cursor: every column is already an integer, and the ORM's
        # per-value converters would cost more than the query itself.
        sql, params = rows.query.sql_with_params()
        with connections[rows.db].cursor() as cursor:
            cursor.execute(sql, params)
            return np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 4)

    def _quality(self, k: int, two_sided: bool, items: ItemTable, labels: np.ndarray,
                 regular: np.ndarray, where: np.ndarray, who: np.ndarray) -> dict[str, AnnotatorQuality]:
        """annotator_quality's sums per annotator (its docstring gives each column's meaning), as
        counts over the label matrix; ``regular`` masks the labels of regular items."""
        m, category = len(self.names), labels[:, CODE] >> CATEGORY_SHIFT
        pressed_a, is_flagged, is_simulated = ((labels[:, CODE] & bit).astype(bool)
                                               for bit in (SHOWN_A_BIT, FLAGGED_BIT, SIMULATED_BIT))

        def per_person(mask: np.ndarray) -> list[int]:
            return np.bincount(who[mask], minlength=m).tolist()

        # leave-one-out: the strict majority of the item's other labels (at least two, or one when k = 2)
        own = np.flatnonzero(regular)
        others = self.counts[where[own]]
        others[np.arange(len(own)), category[own]] -= 1
        n_others = others.sum(axis=1)
        loo = strict_majority(others)
        defined = ((n_others >= 2) | ((n_others == 1) & (k == 2))) & (loo >= 0)
        in_loo, agrees = np.zeros(len(labels), dtype=bool), np.zeros(len(labels), dtype=bool)
        in_loo[own[defined]] = True
        agrees[own[defined & (loo == category[own])]] = True
        ties = decisive = shown_a = longer = longer_n = [0] * m
        if two_sided:
            tie = category == self.categories.index("tie")
            ties, decisive = per_person(regular & tie), per_person(regular & ~tie)
            shown_a = per_person(regular & ~tie & pressed_a)
            at = where[regular]
            la, lb = np.full(len(labels), -1), np.full(len(labels), -1)
            la[regular], lb[regular] = items.length_a[at], items.length_b[at]
            compared = regular & ~tie & (la >= 0) & (lb >= 0) & (la != lb)
            longer_n = per_person(compared)
            longer = per_person(compared & ((category == self.categories.index("A")) == (la > lb)))
        n_labels, flagged = per_person(regular), per_person(regular & is_flagged)
        loo_n, loo_agree = per_person(in_loo), per_person(agrees)
        # an annotator's row says simulated as their first label does (regular labels first, as read)
        order = np.concatenate([np.flatnonzero(regular), np.flatnonzero(~regular)])
        present, first = np.unique(who[order], return_index=True)
        simulated = dict(zip(present.tolist(), is_simulated[order[first]].tolist()))
        timed = regular & (labels[:, TIME_MS] >= 0)
        seconds = labels[:, TIME_MS] / 1000.0
        out: dict[str, AnnotatorQuality] = {}
        for p, name in enumerate(self.names):
            if p not in simulated:
                continue
            q = AnnotatorQuality(name, n_labels[p], simulated[p], loo_agree[p], loo_n[p], 0, 0, ties[p], decisive[p],
                                 shown_a[p], longer[p], longer_n[p], None, flagged[p], 0)
            mine = seconds[timed & (who == p)]
            if mine.size:
                q.median_time_s = float(np.median(mine))
            out[name] = q
        for n in np.flatnonzero(~regular).tolist():  # gold labels: few (each gold item once per annotator)
            q = out[self.names[who[n]]]
            q.gold_n += 1
            q.gold_correct += self.categories[category[n]] == items[int(labels[n, ITEM])].gold_answer
        return out

    def scope(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(counts, total, majority) of the regular items selected by ``mask``."""
        return self.counts[mask], self.total[mask], self.majority[mask]


def consensus_row(
    *, scope: str, tallies: LabelTallies, mask: np.ndarray, annotators: set[str], k: int,
) -> selectors.ConsensusRow:
    """:func:`annotation.selectors.consensus_row` from item tallies (the regular items ``mask``
    selects): κ and consensus over the items with exactly k current labels (Fleiss' κ needs the same
    number of raters per item)."""
    categories = tallies.categories
    counts, total, majorities = tallies.scope(mask)
    complete = total == k
    # a withheld item that is not complete will never be: not an item of the row (its labels still count)
    n_items = int((mask & ~(tallies.items.withheld & (tallies.total != k))).sum())
    kappa, kappa_p = Stat(None, "no complete items yet"), None
    unanimous = majority = None
    outcome: list[tuple[str, int]] = [(c, 0) for c in categories]
    no_majority = 0
    if complete.any():
        # engine.agreement.consensus_summary on tallies: unanimous = one category holds all k labels
        won = majorities[complete]
        unanimous = float(np.mean(counts[complete].max(axis=1) == k))
        majority = float(np.mean(won >= 0))
        no_majority = int((won < 0).sum())
        outcome = list(zip(categories, np.bincount(won[won >= 0], minlength=len(categories)).tolist()))
        if k >= 2 and len(categories) >= 2:
            try:
                test = agreement.fleiss_kappa_test(counts[complete])  # Fleiss' input: items × categories counts
                kappa, kappa_p = Stat(test.kappa), test.p
            except ValueError as exc:
                kappa = Stat(None, str(exc))
        else:
            kappa = Stat(None, "needs at least two annotators per item and two categories")
    return selectors.ConsensusRow(scope, n_items, int(complete.sum()), int(total.sum()), len(annotators),
                                  kappa, kappa_p, unanimous, majority, outcome, no_majority)


def human_pairs(*, tallies: LabelTallies, k: int) -> list[HumanPair]:
    """:func:`annotation.selectors.human_pairs` from item tallies."""
    table = tallies.items
    if len(table._pairs) != len(table.regular) * (len(tallies.categories) + 1):  # first use of this table
        table._pairs = [None] * (len(table.regular) * (len(tallies.categories) + 1))
    positions = np.flatnonzero((tallies.total == k) & table.pairable)
    return table.pairs(positions.tolist(), tallies.majority[positions].tolist(), tallies.categories)


def adjudication_rows(*, campaign: Campaign, tallies: LabelTallies) -> list[dict[str, Any]]:
    """The dashboard's adjudication list from item tallies (complete items without a majority, and
    those already sent)."""
    existing = {a.item_id: a for a in Adjudication.objects.filter(item__campaign=campaign)}
    categories, rows = tallies.categories, []
    complete = tallies.total == campaign.k
    listed = complete & ((tallies.majority < 0) | np.isin([i.id for i in tallies.regular], list(existing)))
    shown: dict[tuple[int, ...], list[tuple[str, int]]] = {}  # a tally's (category, labels), sorted, made once
    for n, tally, winner in zip(np.flatnonzero(listed).tolist(), map(tuple, tallies.counts[listed].tolist()),
                                tallies.majority[listed].tolist()):
        item = tallies.regular[n]
        if tally not in shown:
            shown[tally] = sorted((categories[c], v) for c, v in enumerate(tally) if v)
        rows.append({"item": item, "labels": list(shown[tally]), "majority": categories[winner] if winner >= 0 else None,
                     "adjudication": existing.get(item.id)})
    return rows


def campaign_dashboard_tallied(
    *, campaign: Campaign, judge_outcomes: Callable[[str], Any] | None = None,
    judge_scores: Callable[[str], Any] | None = None,
    judge_conditions: Callable[[str], tuple[Sequence[Any], Sequence[Any]]] | None = None,
    items: Mapping[int, selectors.ItemRow] | None = None,
) -> selectors.Dashboard:
    """The dashboard of a text pairwise or image preference campaign, equal to
    :func:`annotation.selectors.campaign_dashboard` (same arguments) and computed from tallies."""
    if campaign.kind not in TALLIED_KINDS:
        raise ValueError(f"{campaign.kind} dashboards are computed from label rows (selectors.campaign_dashboard)")
    kind = kind_for(campaign.kind)
    items = selectors.item_rows(campaign=campaign) if items is None else items
    items = items if isinstance(items, ItemTable) else ItemTable(items)
    tallies = LabelTallies(campaign=campaign, items=items)
    k = campaign.k

    def row(scope: str, mask: np.ndarray, dimensions: Sequence[str]) -> selectors.ConsensusRow:
        annotators = set().union(*(tallies.annotators.get(d, set()) for d in dimensions))
        return consensus_row(scope=scope, tallies=tallies, mask=mask, annotators=annotators, k=k)

    rows: list[selectors.ConsensusRow] = []
    everything = np.ones(len(tallies.regular), dtype=bool)
    if campaign.kind == CampaignKind.TEXT_PAIRWISE:
        for d in (Dimension.USEFULNESS, Dimension.EXPRESSIVENESS, Dimension.NOVELTY):
            mask = items.dimension == (items.dimensions.index(d) if d in items.dimensions else -1)
            if mask.any():
                rows.append(row(Dimension(d).label, mask, [d]))
        if len(rows) > 1:
            rows.append(row("All dimensions", everything, list(tallies.annotators)))
    else:
        rows.append(row(kind.title, everything, list(tallies.annotators)))
    extras: dict[str, Any] = {"validation": validation_panel(campaign=campaign)}
    pairs = human_pairs(tallies=tallies, k=k)
    extras["judge"] = selectors.judge_extras(campaign, items, pairs, judge_outcomes, judge_scores, judge_conditions)

    quality = tallies.quality
    skips = (Assignment.objects.filter(campaign=campaign, status=Assignment.Status.SKIPPED)
             .values_list("annotator__username").annotate(n=Count("pk")))
    for name, n in skips:
        if name not in quality:
            quality[name] = AnnotatorQuality(name, 0, False, 0, 0, 0, 0, 0, 0, 0, 0, 0, None, 0, 0)
        quality[name].skips = n
    return selectors.Dashboard(
        campaign, kind.title, kind.paper_section, rows, tallies.n_stale, tallies.n_simulated,
        items.n_gold, sorted(quality.values(), key=lambda q: q.annotator),
        adjudication_rows(campaign=campaign, tallies=tallies), extras,
    )
