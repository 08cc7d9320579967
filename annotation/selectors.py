"""Reads of the annotation app: the annotator's queue and blinded item, consensus, the researcher
dashboards (Ekphrasis Table 17, App. H.6, I.2, I.4, §5.4), H.5 pair sampling and label exports. The
annotator side lives in :mod:`annotation.annotator_reads`, the human–judge join in
:mod:`annotation.judge_join`, H.5 pair sampling in :mod:`annotation.pair_sampling` and the consensus
primitives in :mod:`annotation.consensus`; their names are reachable from here as before.

Statistics are computed by :mod:`engine.agreement` and :mod:`engine.bt`; this module only gathers
label rows into the shapes those functions take. Everything is recomputed from the current labels
on each call (no cache): stale labels and gold items never enter agreement numbers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db.models import Case, Count, IntegerField, Value, When
from django.db.models.functions import Length

from annotation.annotator_quality import AnnotatorQuality, annotator_quality
from annotation.choices import AuditCode, CampaignKind, Dimension, StrategyRole
from annotation.consensus import Stat, majority
from annotation.counted_labels import counted_labels
from annotation.judge_join import (
    LEADERBOARD_DIMENSION,
    HumanPair,
    IndexedOutcomes,
    human_bt_fit,
    human_judge_join,
    image_text_sign_agreement,
    judge_outcome_from,
    novelty_ablation,
)
from annotation.kinds import kind_for
from annotation.kinds.faithfulness import PASS_SCORE
from annotation.kinds.strategy import NONE as NO_STRATEGY
from annotation.kinds.text_pairwise import PRIMARY_FIELD
from annotation.label_models import STRATEGIES, TIG_CRITERIA
from annotation.models import Adjudication, Assignment, Campaign, Item
from annotation.validation_dashboards import validation_panel
from engine import agreement
from leaderboard.ekphrasis.selectors import (
    judge_condition_outcomes,
    judge_condition_runs,
    judge_model_scores,
    judge_pair_outcomes,
)

# ---------------------------------------------------------------------------------------------------
# Label rows and consensus
# ---------------------------------------------------------------------------------------------------


@dataclass
class ItemRow:
    """What the dashboards need of an item (researcher side: identities are fine here)."""

    id: int
    key: str
    task_external_id: str
    family: str
    dimension: str
    is_gold: bool
    gold_answer: Any
    model_a: str | None = None
    model_b: str | None = None
    model_a_id: int | None = None
    model_b_id: int | None = None
    response_a_id: int | None = None
    response_b_id: int | None = None
    length_a: int | None = None
    length_b: int | None = None
    #: withheld for blinding after a catalogue change (:mod:`annotation.blinding_recheck`): never handed
    #: out again, so it is complete only if it was before (see :func:`consensus_row`)
    withheld: bool = False


@dataclass(slots=True)
class LabelRow:
    """One current label, flattened (``strategies``/``criteria`` are set for their kinds only)."""

    item_id: int
    annotator: str
    category: str
    is_simulated: bool
    flag_reason: str
    time_ms: int | None
    swapped: bool = False
    shown_choice: str = ""
    score: int | None = None
    strategies: dict[str, str] | None = None
    criteria: dict[str, str] | None = None


def item_rows(*, campaign: Campaign) -> dict[int, ItemRow]:
    """What the dashboards need of every item of the campaign, by item id."""
    return _item_rows(campaign)


def _item_rows(campaign: Campaign) -> dict[int, ItemRow]:
    fields = ["id", "key", "task__external_id", "task__family", "dimension", "is_gold", "gold_answer", "withheld_at"]
    # the path to side a's response among the kind's relations, as a pattern for either side
    side = next((r.replace("_a", "_{s}", 1) for r in kind_for(campaign.kind).content_relations
                 if r.startswith(("response_a", "render_a"))), None)
    extra = []
    lengths = {}
    if side:
        for s in ("a", "b"):
            p = side.format(s=s)
            extra += [f"{p}__id", f"{p}__subject_model__display_name", f"{p}__subject_model_id"]
            if campaign.kind == CampaignKind.TEXT_PAIRWISE:
                # the shown field's length, computed by the database (the texts are not fetched)
                lengths[f"length_{s}"] = Case(
                    *(When(dimension=d, then=Length(f"{p}__{f}")) for d, (f, _) in PRIMARY_FIELD.items()),
                    default=Value(None), output_field=IntegerField(),
                )
    rows = {}
    for r in Item.objects.filter(campaign=campaign).annotate(**lengths).values(*fields, *extra, *lengths):
        row = ItemRow(r["id"], r["key"], r["task__external_id"], r["task__family"], r["dimension"], r["is_gold"], r["gold_answer"],
                      withheld=r["withheld_at"] is not None)
        if side:
            for s in ("a", "b"):
                p = side.format(s=s)
                if r[f"{p}__id"] is None:
                    continue
                setattr(row, f"response_{s}_id", r[f"{p}__id"])
                setattr(row, f"model_{s}", r[f"{p}__subject_model__display_name"])
                setattr(row, f"model_{s}_id", r[f"{p}__subject_model_id"])
                setattr(row, f"length_{s}", r.get(f"length_{s}"))
        rows[row.id] = row
    return rows


def _label_rows(campaign: Campaign, *, include_stale: bool = False) -> list[LabelRow]:
    kind = kind_for(campaign.kind)
    labels = counted_labels(kind.label_model, campaign_id=campaign.pk, include_stale=include_stale)
    base = ["item_id", "annotator__username", "is_simulated", "flag_reason", "time_on_item_ms"]
    if campaign.kind in (CampaignKind.TEXT_PAIRWISE, CampaignKind.IMAGE_PREFERENCE, CampaignKind.CANVAS_SIMILARITY):
        out = [LabelRow(item, who, choice, simulated, flag, ms, swapped=swapped, shown_choice=shown)
               for item, who, simulated, flag, ms, choice, swapped, shown
               in labels.values_list(*base, "choice", "swapped", "shown_choice")]
    elif campaign.kind == CampaignKind.FAITHFULNESS:
        out = [LabelRow(r["item_id"], r["annotator__username"], "pass" if r["passed"] else "fail", r["is_simulated"],
                        r["flag_reason"], r["time_on_item_ms"], score=r["score"])
               for r in labels.values(*base, "passed", "score")]
    elif campaign.kind == CampaignKind.TIG_AUDIT:
        out = [LabelRow(r["item_id"], r["annotator__username"], r["overall_action"], r["is_simulated"], r["flag_reason"],
                        r["time_on_item_ms"], criteria={c: r[c] for c in TIG_CRITERIA})
               for r in labels.values(*base, "overall_action", *TIG_CRITERIA)]
    elif campaign.kind == CampaignKind.STRATEGY:
        out = []
        for r in labels.values(*base, *STRATEGIES):
            present = {s: r[s] for s in STRATEGIES if r[s] != StrategyRole.ABSENT}
            out.append(LabelRow(r["item_id"], r["annotator__username"], "+".join(sorted(present)) or NO_STRATEGY,
                                r["is_simulated"], r["flag_reason"], r["time_on_item_ms"], strategies=present))
    else:  # the EASEL/C² validation kinds: the kind names the category (their statistics: validation_dashboards)
        out = [LabelRow(label.item_id, label.annotator.username, kind.category(label), label.is_simulated,
                        label.flag_reason, label.time_on_item_ms)
               for label in labels.select_related("annotator")]
    return out


@dataclass(frozen=True)
class ItemConsensus:
    n_labels: int
    complete: bool
    majority: str | None


def item_consensus(*, item: Item) -> ItemConsensus:
    """The current (non-stale) labels of one item and their strict majority."""
    kind = kind_for(item.campaign.kind)
    labels = list(counted_labels(kind.label_model, campaign_id=item.campaign_id).filter(item=item))
    categories = tuple(kind.category(label) for label in labels)
    majority = agreement.majority_label(list(categories)) if categories else None
    return ItemConsensus(len(labels), len(labels) >= item.campaign.k, majority)


@dataclass
class ConsensusRow:
    """One row of Table 17: items / judgments, agreement, consensus, majority outcome."""

    scope: str
    n_items: int
    n_complete: int
    n_judgments: int
    n_annotators: int
    kappa: Stat
    kappa_p: float | None
    unanimous: float | None
    majority: float | None
    outcome_counts: list[tuple[str, int]]
    no_majority: int

    @property
    def completion(self) -> float | None:
        return self.n_complete / self.n_items if self.n_items else None


def _fleiss_counts(label_lists: Sequence[Sequence[str]], categories: Sequence[str]) -> np.ndarray:
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(label_lists), len(categories)), dtype=int)
    for row, labels in enumerate(label_lists):
        for label in labels:
            counts[row, index[label]] += 1
    return counts


def consensus_row(
    *, scope: str, items: Sequence[int], labels_by_item: Mapping[int, list[LabelRow]], k: int,
    categories: Sequence[str] | None = None, category: Callable[[LabelRow], str] = lambda r: r.category,
    withheld: Collection[int] = frozenset(),
) -> ConsensusRow:
    """Table 17 columns for a set of (non-gold) items; κ and consensus use items with exactly k
    current labels (Fleiss' κ needs the same number of raters per item).

    ``withheld``: the ids of withheld items (blinding after a catalogue change) among ``items``. One that
    holds k current labels finished before it was withheld and counts like any complete item; one with
    fewer will never finish, so it is not an item of the row (nor of its completion), while the labels it
    holds still count among the judgments and annotators (as the progress counters, which take withheld
    items out of the outstanding work, and the statistics, which keep the labels given)."""
    per_item = [[category(r) for r in labels_by_item.get(i, [])] for i in items]
    complete = [labels for labels in per_item if len(labels) == k]
    n_items = sum(1 for i, labels in zip(items, per_item) if i not in withheld or len(labels) == k)
    judgments = sum(len(labels) for labels in per_item)
    annotators = {r.annotator for i in items for r in labels_by_item.get(i, [])}
    derived = categories is None
    if derived:
        categories = sorted({c for labels in complete for c in labels})
    kappa, kappa_p = Stat(None, "no complete items yet"), None
    unanimous = majority = None
    outcome: list[tuple[str, int]] = [(c, 0) for c in categories]
    no_majority = 0
    if complete:
        summary = agreement.consensus_summary(complete)
        if k >= 2:  # one label per item is trivially unanimous: 100% would read as perfect agreement
            unanimous, majority = summary["unanimous_rate"], summary["majority_rate"]
        no_majority = summary["no_majority"]
        outcome = [(c, summary["majority_counts"].get(c, 0)) for c in categories]
        if derived:  # open-ended categories (strategy sets): list only the outcomes that occur
            outcome = [(c, n) for c, n in outcome if n]
        if k >= 2 and len(categories) >= 2:
            counts = _fleiss_counts(complete, categories)
            try:
                test = agreement.fleiss_kappa_test(counts)
                kappa, kappa_p = Stat(test.kappa), test.p
            except ValueError as exc:
                kappa = Stat(None, str(exc))
        else:
            kappa = Stat(None, "needs at least two annotators per item and two categories")
    return ConsensusRow(scope, n_items, len(complete), judgments, len(annotators), kappa, kappa_p,
                        unanimous, majority, outcome, no_majority)


# ---------------------------------------------------------------------------------------------------
# The dashboard
# ---------------------------------------------------------------------------------------------------


@dataclass
class RateRow:
    name: str
    passed: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.n if self.n else None


@dataclass
class ICCView:
    form: str
    label: str
    result: agreement.ICCResult | None
    n_items: int
    note: str = ""


@dataclass
class Dashboard:
    campaign: Campaign
    kind_title: str
    paper_section: str
    rows: list[ConsensusRow]
    n_stale: int
    n_simulated: int
    n_gold_items: int
    quality: list[AnnotatorQuality]
    adjudication: list[dict[str, Any]]
    extras: dict[str, Any] = field(default_factory=dict)


def _group(labels: Iterable[LabelRow]) -> dict[int, list[LabelRow]]:
    grouped: dict[int, list[LabelRow]] = defaultdict(list)
    for row in labels:
        grouped[row.item_id].append(row)
    return grouped


def human_pairs(*, items: Mapping[int, ItemRow], labels_by_item: Mapping[int, list[LabelRow]], k: int) -> list[HumanPair]:
    """Complete non-gold pairwise items with their canonical majority (None when there is none)."""
    pairs = []
    for item in items.values():
        labels = labels_by_item.get(item.id, [])
        if item.is_gold or len(labels) != k or item.response_a_id is None or item.response_b_id is None:
            continue
        pairs.append(HumanPair(item.id, item.task_external_id, item.dimension, item.response_a_id, item.response_b_id,
                               item.model_a_id, item.model_b_id, majority([r.category for r in labels])))
    return pairs


def faithfulness_gate(*, campaign: Campaign) -> dict[int, bool]:
    """Render id -> passes the gate (majority of its k annotators pass, App. I.2), for complete items."""
    if campaign.kind != CampaignKind.FAITHFULNESS:
        raise ValueError("the gate is read from a faithfulness campaign")
    labels = _group(r for r in _label_rows(campaign))
    gate = {}
    for item_id, render_id in Item.objects.filter(campaign=campaign, is_gold=False).values_list("id", "render_a_id"):
        rows = labels.get(item_id, [])
        if len(rows) == campaign.k:
            gate[render_id] = majority([r.category for r in rows]) == "pass"
    return gate


def gate_passing_renders(*, task_set) -> set[int]:
    """Renders of this task set that passed the faithfulness gate in any faithfulness campaign
    (majority of their k annotators pass, App. I.2)."""
    passing: set[int] = set()
    for campaign in Campaign.objects.filter(task_set=task_set, kind=CampaignKind.FAITHFULNESS):
        passing.update(render for render, ok in faithfulness_gate(campaign=campaign).items() if ok)
    return passing


def campaign_dashboard(
    *, campaign: Campaign, judge_outcomes: Callable[[str], Iterable[Any] | None] | None = None,
    judge_scores: Callable[[str], Mapping[int, float] | None] | None = None,
    judge_conditions: Callable[[str], tuple[Sequence[Any], Sequence[Any]]] | None = None,
    items: Mapping[int, ItemRow] | None = None,
) -> Dashboard:
    """Everything a researcher sees for one campaign, recomputed from the current labels.

    ``judge_outcomes(dimension)`` / ``judge_scores(dimension)`` supply the judge side (None when
    there is no judge run); see :func:`human_judge_join`. ``judge_conditions(dimension)`` supplies
    the Novelty ablation's runs and their condition-labelled outcomes (see :func:`judge_condition_source`).
    ``items``: the campaign's item rows when the caller keeps them (:func:`item_rows`), else read here.
    """
    kind = kind_for(campaign.kind)
    items = item_rows(campaign=campaign) if items is None else items
    current = _label_rows(campaign)
    n_stale = counted_labels(kind.label_model, campaign_id=campaign.pk, include_stale=True).filter(is_stale=True).count()
    labels = [r for r in current if not items[r.item_id].is_gold]
    gold_labels = [r for r in current if items[r.item_id].is_gold]
    by_item = _group(labels)
    regular = [i for i in items.values() if not i.is_gold]
    withheld = {i.id for i in regular if i.withheld}
    k = campaign.k

    rows: list[ConsensusRow] = []
    extras: dict[str, Any] = {}
    if campaign.kind == CampaignKind.TEXT_PAIRWISE:
        for dimension in (Dimension.USEFULNESS, Dimension.EXPRESSIVENESS, Dimension.NOVELTY):
            ids = [i.id for i in regular if i.dimension == dimension]
            if ids:
                rows.append(consensus_row(scope=Dimension(dimension).label, items=ids, labels_by_item=by_item, k=k,
                                          categories=kind.categories, withheld=withheld))
        if len(rows) > 1:
            rows.append(consensus_row(scope="All dimensions", items=[i.id for i in regular], labels_by_item=by_item, k=k,
                                      categories=kind.categories, withheld=withheld))
    elif campaign.kind == CampaignKind.STRATEGY:
        rows.append(consensus_row(scope="Exact strategy set", items=[i.id for i in regular], labels_by_item=by_item, k=k,
                                  withheld=withheld))
    else:
        rows.append(consensus_row(scope=kind.title, items=[i.id for i in regular], labels_by_item=by_item, k=k,
                                  categories=kind.categories or None, withheld=withheld))

    if campaign.kind == CampaignKind.FAITHFULNESS:
        extras["faithfulness"] = _faithfulness_extras(campaign, regular, by_item)
    elif campaign.kind == CampaignKind.TIG_AUDIT:
        extras["criteria"] = [
            consensus_row(scope=c.replace("_", " ").capitalize(), items=[i.id for i in regular], labels_by_item=by_item,
                          k=k, categories=AuditCode.values, category=lambda r, c=c: r.criteria[c], withheld=withheld)
            for c in TIG_CRITERIA
        ]
    elif campaign.kind == CampaignKind.STRATEGY:
        extras["strategies"] = _strategy_extras(regular, by_item, k, withheld)
    extras["validation"] = validation_panel(campaign=campaign)
    if campaign.kind in (CampaignKind.TEXT_PAIRWISE, CampaignKind.IMAGE_PREFERENCE):
        extras["judge"] = _judge_extras(campaign, items, by_item, judge_outcomes, judge_scores, judge_conditions)

    skips = dict(
        Assignment.objects.filter(campaign=campaign, status=Assignment.Status.SKIPPED)
        .values_list("annotator__username").annotate(n=Count("pk"))
    )
    quality = annotator_quality(campaign=campaign, items=items, labels=labels, labels_by_item=by_item,
                                gold_labels=gold_labels, skips=skips)
    adjudication = _adjudication_rows(campaign, items, by_item) if kind.adjudicated else []
    return Dashboard(
        campaign, kind.title, kind.paper_section, rows, n_stale, sum(r.is_simulated for r in current),
        sum(i.is_gold for i in items.values()), quality, adjudication, extras,
    )


def _faithfulness_extras(campaign: Campaign, regular: Sequence[ItemRow], by_item: Mapping[int, list[LabelRow]]) -> dict[str, Any]:
    k = campaign.k
    complete = [i for i in regular if len(by_item.get(i.id, [])) == k]
    scores_all = [r.score for i in regular for r in by_item.get(i.id, []) if r.score is not None]
    by_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in complete:
        passed = majority([r.category for r in by_item[item.id]]) == "pass"
        for bucket in (by_model[item.model_a or "?"], by_family[item.family]):
            bucket[0] += passed
            bucket[1] += 1
    icc = _score_icc(complete, by_item, k)
    return {
        "mean_score": float(np.mean(scores_all)) if scores_all else None,
        "n_scores": len(scores_all),
        "icc": icc,
        "by_model": [RateRow(name, p, n) for name, (p, n) in sorted(by_model.items())],
        "by_family": [RateRow(name, p, n) for name, (p, n) in sorted(by_family.items())],
        "pass_score": PASS_SCORE,
    }


def _score_icc(complete: Sequence[ItemRow], by_item: Mapping[int, list[LabelRow]], k: int) -> ICCView:
    """Score reliability. With a fixed rater panel (the same k annotators on every complete item)
    the ratings form a two-way design: ICC(A,1), absolute agreement of a single rater (McGraw & Wong
    1996; numerically Shrout–Fleiss ICC(2,1), whose estimator is the same for fixed and random
    raters). Otherwise raters differ per item and only the one-way ICC(1,1) is valid."""
    if len(complete) < 2:
        return ICCView("", "", None, len(complete), "needs at least two complete items")
    panels = {frozenset(r.annotator for r in by_item[i.id]) for i in complete}
    if len(panels) == 1:
        raters = sorted(next(iter(panels)))
        matrix = [[next(r.score for r in by_item[i.id] if r.annotator == a) for a in raters] for i in complete]
        form = "ICC2"
        why = ("a fixed panel (the same annotators) rated every complete item, and the gate is a threshold on the "
               "score (≥ 4), so absolute agreement matters, not only consistency; with fixed raters the two-way "
               "mixed ICC(A,1) has this same estimator (McGraw & Wong 1996)")
    else:
        matrix = [[r.score for r in by_item[i.id]][:k] for i in complete]
        form = "ICC1"
        why = f"raters differ across items ({len(panels)} different panels), so the two-way forms do not apply"
    try:
        result = agreement.intraclass_correlation(matrix)[form]
    except ValueError as exc:
        return ICCView(form, agreement.ICC_FORM_LABELS[form], None, len(complete), str(exc))
    return ICCView(form, agreement.ICC_FORM_LABELS[form], result, len(complete), why)


def _strategy_extras(regular: Sequence[ItemRow], by_item: Mapping[int, list[LabelRow]], k: int,
                     withheld: Collection[int]) -> list[dict[str, Any]]:
    from annotation.kinds.strategy import STRATEGY_DEFINITIONS

    out = []
    ids = [i.id for i in regular]
    all_rows = [r for i in ids for r in by_item.get(i, [])]
    for code in STRATEGIES:
        row = consensus_row(scope=STRATEGY_DEFINITIONS[code][0], items=ids, labels_by_item=by_item, k=k,
                            categories=("present", "absent"),
                            category=lambda r, code=code: "present" if code in r.strategies else "absent",
                            withheld=withheld)
        marked = [r for r in all_rows if code in r.strategies]
        out.append({
            "code": code, "row": row, "n_marked": len(marked), "n_labels": len(all_rows),
            "n_central": sum(r.strategies[code] == StrategyRole.CENTRAL for r in marked),
        })
    return out


def judge_sources(*, campaign: Campaign) -> tuple[Callable[[str], Any], Callable[[str], Any]]:
    """The judge's outcomes and model scores for this campaign's task set, per dimension (the
    leaderboard's ``judge_pair_outcomes`` / ``judge_model_scores``)."""

    def wrap(fn):
        return lambda dimension: fn(task_set=campaign.task_set, dimension=LEADERBOARD_DIMENSION.get(dimension, dimension))

    return wrap(judge_pair_outcomes), wrap(judge_model_scores)


def judge_condition_source(*, campaign: Campaign) -> Callable[[str], tuple[list[Any], list[Any]]]:
    """For the Novelty ablation: ``source(dimension)`` gives the latest finished fixed-pair run per
    judge condition on this campaign's task set and their verdicts labelled with ``condition``
    (the leaderboard's ``judge_condition_runs`` / ``judge_condition_outcomes``)."""

    def source(dimension: str) -> tuple[list[Any], list[Any]]:
        code = LEADERBOARD_DIMENSION.get(dimension, dimension)
        return (list(judge_condition_runs(task_set=campaign.task_set, dimension=code)),
                list(judge_condition_outcomes(task_set=campaign.task_set, dimension=code)))

    return source


def judge_rankings(*, campaign: Campaign, dimensions: Sequence[str]) -> tuple[dict[str, dict[int, float]], str]:
    """The current judge ranking per dimension (subject model id -> θ) for pair sampling (App. H.5),
    and a label saying where it came from."""
    _, scores = judge_sources(campaign=campaign)
    rankings = {}
    if scores is not None:
        for dimension in dimensions:
            ranking = scores(dimension)
            if ranking:
                rankings[dimension] = {int(m): float(t) for m, t in ranking.items()}
    if rankings:
        return rankings, "strata from the current judge ranking"
    return {}, "no judge run yet: pairs drawn in random order, stratum 'random_order'"


#: How the dashboard names the ablation's judge conditions (Ekphrasis Table 4).
CONDITION_LABELS = {"tig": "TIG anchors", "generic": "No TIG (generic anchors)"}
SIMULATED_ABLATION_NOTE = (
    "simulated judge: it does not read the checklist anchors (its verdict depends only on latent skills, "
    "position and length), so the two conditions give the same verdicts by construction; this shows the "
    "pipeline, not an effect of TIG anchors"
)


def _condition_order(condition: str) -> tuple[int, str]:
    # TIG first, as in Table 4: the reported difference is TIG − no TIG.
    return (0 if condition == "tig" else 1, condition)


def _conditions(records: Sequence[Any]) -> set[str]:
    """The judge conditions the records name (read off the index of records indexed once)."""
    if isinstance(records, IndexedOutcomes):
        return {key[0] for key in records.by_pair}
    return {judge_outcome_from(r).condition for r in records}


def _ablation_panel(subset: Sequence[HumanPair], records: Sequence[Any], runs: Sequence[Any],
                    condition_records: Sequence[Any] = ()) -> dict[str, Any]:
    """The Novelty ablation of one dimension's pairs: the view, one row per condition with its run
    (when the condition comes from a stored run) and the notes a reader needs. ``records`` and
    ``condition_records`` are the judge's verdicts (primary, and labelled with their condition)."""
    conditions = sorted((_conditions(records) | _conditions(condition_records)) - {"primary"}, key=_condition_order)
    records = [*records, *condition_records] if condition_records else records
    out: dict[str, Any] = {"ablation": None, "conditions": conditions, "ablation_rows": [], "ablation_notes": [],
                           "ablation_runs": list(runs), "ablation_simulated": any(r.is_simulated for r in runs),
                           "n_with_majority": sum(p.majority is not None for p in subset)}
    if len(conditions) < 2:
        return out
    view = novelty_ablation(pairs=subset, judge_outcomes=records, conditions=(conditions[0], conditions[1]))
    by_condition = {r.condition: r for r in runs}
    out["ablation"] = view
    out["ablation_rows"] = [
        {"condition": c, "label": CONDITION_LABELS.get(c, c), "correct": view.correct[k], "rate": view.rates[k],
         "run": by_condition.get(c)}
        for k, c in enumerate(view.conditions)
    ]
    if out["ablation_simulated"]:
        out["ablation_notes"].append(SIMULATED_ABLATION_NOTE)
    if len({r.judge_name for r in runs}) > 1:
        out["ablation_notes"].append("the two conditions were judged by different judges")
    if len({r.seed for r in runs}) > 1:
        out["ablation_notes"].append("the two runs have different seeds")
    return out


def novelty_ablation_panel(*, campaign: Campaign) -> dict[str, Any]:
    """The Novelty ablation of a text pairwise campaign alone, as the dashboard shows it (the command
    and the demo print it): the human majorities of its complete Novelty items against the latest
    finished fixed-pair run per condition. Keys as in :func:`_ablation_panel`."""
    items = _item_rows(campaign)
    by_item = _group(r for r in _label_rows(campaign) if not items[r.item_id].is_gold)
    pairs = [p for p in human_pairs(items=items, labels_by_item=by_item, k=campaign.k) if p.dimension == Dimension.NOVELTY]
    source = judge_condition_source(campaign=campaign)
    runs, records = source(Dimension.NOVELTY) if source else ([], [])
    return _ablation_panel(pairs, records, runs)


def _judge_extras(
    campaign: Campaign, items: Mapping[int, ItemRow], by_item: Mapping[int, list[LabelRow]],
    judge_outcomes: Callable[[str], Any] | None, judge_scores: Callable[[str], Any] | None,
    judge_conditions: Callable[[str], tuple[Sequence[Any], Sequence[Any]]] | None = None,
) -> dict[str, Any]:
    pairs = human_pairs(items=items, labels_by_item=by_item, k=campaign.k)
    return judge_extras(campaign, items, pairs, judge_outcomes, judge_scores, judge_conditions)


def judge_extras(
    campaign: Campaign, items: Mapping[int, ItemRow], pairs: Sequence[HumanPair],
    judge_outcomes: Callable[[str], Any] | None, judge_scores: Callable[[str], Any] | None,
    judge_conditions: Callable[[str], tuple[Sequence[Any], Sequence[Any]]] | None = None,
) -> dict[str, Any]:
    """The dashboard's judge panel: the human-subset BT ranking, per text dimension the human–judge
    join and (Novelty) the ablation, for image pairs the sign agreement (App. H.6, I.4, §5.4).
    ``pairs``: the campaign's complete human pairs (:func:`human_pairs`)."""
    # The paper's order U, E, N (not alphabetical), then anything else.
    order = [Dimension.USEFULNESS, Dimension.EXPRESSIVENESS, Dimension.NOVELTY]
    dims = sorted({p.dimension for p in pairs}, key=lambda d: (order.index(d) if d in order else len(order), d))
    out: dict[str, Any] = {"available": False, "dimensions": [], "sign": None, "ablation": None}
    names = _model_names(items)
    fit = human_bt_fit(pairs, names)
    human_theta, _, human_note = fit
    out["human_bt"] = {"theta": _named_theta(names, human_theta), "note": human_note}
    # Image pairs have no judge counterpart (the judge compares texts): only the sign agreement below.
    for dimension in dims if campaign.kind == CampaignKind.TEXT_PAIRWISE else ():
        subset = [p for p in pairs if p.dimension == dimension]
        records = (judge_outcomes(dimension) or []) if judge_outcomes else []
        records = records if isinstance(records, list) else list(records)
        scores = judge_scores(dimension) if judge_scores else None
        runs, condition_records = (
            judge_conditions(dimension) if judge_conditions and dimension == Dimension.NOVELTY else ([], [])
        )
        if not records and not scores and not condition_records:
            out["dimensions"].append({"dimension": dimension, "join": None})
            continue
        out["available"] = True
        join = (human_judge_join(pairs=subset, judge_outcomes=records, judge_scores=scores, names=names,
                                 human_bt=fit if len(subset) == len(pairs) else None)  # one dimension: the same fit
                if records or scores else None)
        panel = _ablation_panel(subset, records, runs, condition_records) if dimension == Dimension.NOVELTY else {}
        out["dimensions"].append({"dimension": dimension, "join": join, "ablation": None, "conditions": [], **panel})
    if campaign.kind == CampaignKind.IMAGE_PREFERENCE:
        text_scores, source = _judge_text_ordering(judge_scores)
        if text_scores:
            out["available"] = True
            out["sign"] = image_text_sign_agreement(pairs=pairs, text_scores=text_scores, source=source)
        else:
            text_campaign = (
                Campaign.objects.filter(task_set=campaign.task_set, kind=CampaignKind.TEXT_PAIRWISE).order_by("pk").first()
            )
            if text_campaign is not None:
                t_items = _item_rows(text_campaign)
                t_pairs = human_pairs(items=t_items, labels_by_item=_group(_label_rows(text_campaign)), k=text_campaign.k)
                theta, _, note = human_bt_fit(t_pairs, _model_names(t_items))
                if theta:
                    out["sign"] = image_text_sign_agreement(
                        pairs=pairs, text_scores=theta,
                        source=f"human text-level BT (campaign “{text_campaign.name}”, all dimensions pooled) — "
                               "no judge run yet" + (f"; {note}" if note else ""),
                    )
    return out


def _judge_text_ordering(judge_scores: Callable[[str], Any] | None) -> tuple[dict[int, float], str]:
    """The judge's text-level ordering of models for App. I.4: its Overall score when the leaderboard
    supplies one, else the mean of its per-dimension BT θ (each θ vector sums to zero, so the mean
    orders models by their average skill); empty when there is no judge run."""
    if judge_scores is None:
        return {}, ""
    overall = judge_scores(Dimension.OVERALL)
    if overall:
        return {int(m): float(v) for m, v in overall.items()}, "judge text-level Overall ranking"
    per_dimension = [judge_scores(d) or {} for d in (Dimension.USEFULNESS, Dimension.EXPRESSIVENESS, Dimension.NOVELTY)]
    per_dimension = [d for d in per_dimension if d]
    if not per_dimension:
        return {}, ""
    common = set.intersection(*(set(d) for d in per_dimension))
    mean = {int(m): float(np.mean([float(d[m]) for d in per_dimension])) for m in common}
    return mean, f"judge BT θ averaged over {len(per_dimension)} text dimension(s) (no Overall score supplied)"


def _model_names(items: Mapping[int, ItemRow]) -> dict[int, str]:
    """Subject model id -> display name over the items' two sides (read off items that carry them,
    as :class:`annotation.dashboard_tallies.ItemTable` does)."""
    names = getattr(items, "model_names", None)
    return dict(names) if names is not None else model_names(items)


def model_names(items: Mapping[int, ItemRow]) -> dict[int, str]:
    """Subject model id -> display name over the items' two sides."""
    names = {item.model_a_id: item.model_a for item in items.values() if item.model_a_id is not None}
    names.update((item.model_b_id, item.model_b) for item in items.values() if item.model_b_id is not None)
    return names


def _named_theta(names: Mapping[int, str], theta: Mapping[int, float]) -> list[tuple[str, float]]:
    return sorted(((names.get(m, str(m)), t) for m, t in theta.items()), key=lambda x: -x[1])


def _adjudication_rows(campaign: Campaign, items: Mapping[int, ItemRow], by_item: Mapping[int, list[LabelRow]]) -> list[dict[str, Any]]:
    existing = {a.item_id: a for a in Adjudication.objects.filter(item__campaign=campaign)}
    rows = []
    for item in items.values():
        labels = by_item.get(item.id, [])
        if item.is_gold or len(labels) != campaign.k:
            continue
        outcome = majority([r.category for r in labels])
        if outcome is None or item.id in existing:
            rows.append({"item": item, "labels": sorted(Counter(r.category for r in labels).items()),
                         "majority": outcome, "adjudication": existing.get(item.id)})
    return rows


# ---------------------------------------------------------------------------------------------------
# Researcher lists (the labels export is annotation/label_export.py)
# ---------------------------------------------------------------------------------------------------


def campaign_list_rows() -> list[dict[str, Any]]:
    """Every campaign with its regular items, labels and completion, in one query (the counters of
    :mod:`annotation.progress`: regular items x k = slots)."""
    rows = []
    for campaign in Campaign.objects.select_related("task_set", "progress").order_by("name"):
        counters = getattr(campaign, "progress", None)
        slots, labels = (counters.slots, counters.labels) if counters is not None else (0, 0)
        rows.append({"campaign": campaign, "n_items": slots // campaign.k, "labels": labels, "total": slots,
                     "completion": labels / slots if slots else None})
    return rows
