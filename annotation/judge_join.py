"""The human–judge join (Ekphrasis App. I.2, I.4, §5.4): judge outcomes as plain records from the judging
side, human pairs from the campaign's labels, and the agreement, BT and ablation views built from both.
Plain functions over plain records; the dashboard (``annotation.selectors``) gathers the inputs."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from annotation.choices import Dimension
from annotation.consensus import Stat
from engine import agreement
from engine.bt import fit_bradley_terry
from leaderboard.models import SubjectModel

#: Ridge penalty used for the human-subset BT fit when the plain MLE does not exist (sparse data).
HUMAN_BT_FALLBACK_L2 = 0.01


@dataclass(frozen=True)
class JudgeOutcome:
    """One judge comparison as the leaderboard app reports it: the task, the dimension, the two
    responses and the winning response (None for a tie); ``condition`` names the judge setup
    (e.g. "tig" / "no_tig" for the §5.4 ablation)."""

    task_external_id: str
    dimension: str
    response_a_id: int
    response_b_id: int
    winner_response_id: int | None
    condition: str = "primary"


#: The leaderboard app names dimensions by letter (Ekphrasis Def. 3); this app by word.
LEADERBOARD_DIMENSION = {Dimension.USEFULNESS: "U", Dimension.EXPRESSIVENESS: "E", Dimension.NOVELTY: "N",
                         Dimension.OVERALL: "overall"}
_FROM_LEADERBOARD = {code: name for name, code in LEADERBOARD_DIMENSION.items()}


def judge_outcome_from(record: Any) -> JudgeOutcome:
    """Accept a JudgeOutcome, any object with the same attributes, or a mapping. The two responses
    may be named ``response_a_id``/``response_b_id`` or ``response_x_id``/``response_y_id`` (the
    leaderboard's ``JudgePairOutcome``); their order does not matter."""
    if type(record) is JudgeOutcome:
        return record  # already normalised (the dashboard cache keeps the judge side this way)
    get = record.get if isinstance(record, Mapping) else (lambda name, default=None: getattr(record, name, default))
    first = get("response_a_id") if get("response_a_id") is not None else get("response_x_id")
    second = get("response_b_id") if get("response_b_id") is not None else get("response_y_id")
    dimension = str(get("dimension"))
    return JudgeOutcome(
        str(get("task_external_id")), _FROM_LEADERBOARD.get(dimension, dimension), int(first), int(second),
        None if get("winner_response_id") is None else int(get("winner_response_id")),
        str(get("condition", "primary") or "primary"),
    )


@dataclass(frozen=True)
class HumanPair:
    """A complete human item of a pairwise kind with its majority in canonical order."""

    item_id: int
    task_external_id: str
    dimension: str
    response_a_id: int
    response_b_id: int
    model_a_id: int
    model_b_id: int
    majority: str | None  # "A", "B", "tie" or None (no majority)

    @cached_property
    def judged_as(self) -> tuple[str, str, frozenset[int]]:
        """(task, dimension, the two responses): what the judge's verdicts on this pair are indexed by
        (computed once per pair; the dashboards share pairs between loads)."""
        return self.task_external_id, self.dimension, frozenset((self.response_a_id, self.response_b_id))


def judge_label_for(pair: HumanPair, outcome: JudgeOutcome) -> str:
    """The judge's outcome in the human item's canonical order."""
    if outcome.winner_response_id is None:
        return "tie"
    if outcome.winner_response_id == pair.response_a_id:
        return "A"
    if outcome.winner_response_id == pair.response_b_id:
        return "B"
    raise ValueError(f"judge winner {outcome.winner_response_id} is neither response of item {pair.item_id}")


class IndexedOutcomes(list):
    """Judge outcomes (normalised) with their index by (condition, task, dimension, pair) built once:
    a caller that keeps them (the dashboard cache, per snapshot) saves every join the re-indexing."""

    def __init__(self, outcomes: Iterable[Any]):
        super().__init__(judge_outcome_from(r) for r in outcomes)
        self.by_pair = _judge_index(self)
        self.verdicts = _judge_verdicts(self.by_pair)


def _judge_verdicts(index: Mapping[tuple, list[JudgeOutcome]]) -> dict[tuple, tuple[bool, int | None, frozenset[int | None]]]:
    """Per pair of the index: whether a strict majority of its verdicts chose one winner, that
    winning response id (None: a tie) and the set of winners named. Which side a winner is depends on
    the human item's canonical order, but a majority of winners is a majority of labels either way
    (winner -> A, B or tie is one-to-one for one pair)."""
    out = {}
    for key, found in index.items():
        winners = Counter(o.winner_response_id for o in found)
        (winner, n), = winners.most_common(1)
        out[key] = (2 * n > len(found), winner, frozenset(winners))
    return out


def _judge_index(outcomes: Iterable[Any]) -> dict[tuple[str, str, str, frozenset[int]], list[JudgeOutcome]]:
    if isinstance(outcomes, IndexedOutcomes) and hasattr(outcomes, "by_pair"):
        return outcomes.by_pair
    index: dict[tuple[str, str, str, frozenset[int]], list[JudgeOutcome]] = defaultdict(list)
    for record in outcomes:
        o = judge_outcome_from(record)
        index[(o.condition, o.task_external_id, o.dimension, frozenset((o.response_a_id, o.response_b_id)))].append(o)
    return index


@dataclass
class BTComparison:
    n_models: int
    n_decisive: int
    human_theta: dict[int, float]
    judge_theta: dict[int, float]
    spearman: Stat
    spearman_p: float | None
    kendall: Stat
    kendall_p: float | None
    note: str = ""


@dataclass
class HumanJudgeJoin:
    """Human majority vs judge (App. H.6): pairwise agreement (a tie agrees only with a tie) with its
    counts, and the human-subset BT ranking against the judge's, by Spearman and Kendall."""

    condition: str
    n_pairs: int
    n_agree: int
    agreement: Stat
    n_human_no_majority: int
    n_unjudged: int
    bt: BTComparison | None


def human_bt_fit(pairs: Sequence[HumanPair], names: Mapping[int, str] | None = None) -> tuple[dict[int, float], int, str]:
    """Human-subset BT θ per model id from the decisive majorities (ties stay out, App. F.2)."""
    decisive = [p for p in pairs if p.majority in ("A", "B")]
    models = sorted({m for p in decisive for m in (p.model_a_id, p.model_b_id)})
    if len(models) < 2:
        return {}, len(decisive), "fewer than two models with decisive human majorities"
    index = {m: i for i, m in enumerate(models)}
    winners = [index[p.model_a_id if p.majority == "A" else p.model_b_id] for p in decisive]
    losers = [index[p.model_b_id if p.majority == "A" else p.model_a_id] for p in decisive]
    note = ""
    try:
        fit = fit_bradley_terry(winners, losers, len(models))
    except ValueError:
        fit = fit_bradley_terry(winners, losers, len(models), l2=HUMAN_BT_FALLBACK_L2)
        note = _bt_fallback_sentence(models, winners, losers, names)
    return {m: float(fit.theta[index[m]]) for m in models}, len(decisive), note


def _bt_fallback_sentence(models: Sequence[int], winners: Sequence[int], losers: Sequence[int],
                          names: Mapping[int, str] | None = None) -> str:
    """Why the plain Bradley–Terry estimate does not exist, in a sentence naming the models
    (Ford 1957: it exists iff every group of models loses at least once to the rest)."""
    if names is None:
        names = dict(SubjectModel.objects.filter(pk__in=models).values_list("pk", "display_name"))
    won, lost = set(winners), set(losers)
    never_lost = [names.get(models[i], str(models[i])) for i in range(len(models)) if i in won and i not in lost]
    never_won = [names.get(models[i], str(models[i])) for i in range(len(models)) if i in lost and i not in won]

    def listed(items: list[str]) -> str:
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]

    if never_lost:
        cause = f"{listed(never_lost)} never lost a decisive human majority"
    elif never_won:
        cause = f"{listed(never_won)} never won a decisive human majority"
    else:
        cause = "some group of models never lost to the others"
    return (f"No finite plain Bradley–Terry estimate: {cause}. The θ shown use a small ridge "
            f"(λ = {HUMAN_BT_FALLBACK_L2}) to keep every skill finite.")


def human_judge_join(
    *, pairs: Sequence[HumanPair], judge_outcomes: Iterable[Any], judge_scores: Mapping[int, float] | None,
    condition: str = "primary", names: Mapping[int, str] | None = None,
    human_bt: tuple[dict[int, float], int, str] | None = None,
) -> HumanJudgeJoin:
    """Join human item majorities to judge outcomes and rankings. Pure: takes plain records
    (task external id, dimension, the two response ids, winner response id or None), a judge
    ranking (subject model id -> θ) and the models' names (for the notes). ``human_bt``:
    ``human_bt_fit(pairs, names)`` when the caller already has it."""
    index = _judge_index(judge_outcomes)
    verdicts = getattr(judge_outcomes, "verdicts", None) if isinstance(judge_outcomes, IndexedOutcomes) else None
    verdicts = _judge_verdicts(index) if verdicts is None else verdicts
    human, judge = [], []
    no_majority = unjudged = 0
    for pair in pairs:
        if pair.majority is None:
            no_majority += 1
            continue
        key = (condition, *pair.judged_as)
        verdict = verdicts.get(key)
        if verdict is None:
            unjudged += 1
            continue
        decided, winner, named = verdict
        if not named <= {pair.response_a_id, pair.response_b_id, None}:
            [judge_label_for(pair, o) for o in index[key]]  # raises: a winner that is neither response
        if not decided:  # the judge's verdicts on this pair have no majority
            unjudged += 1
            continue
        human.append(pair.majority)
        judge.append("tie" if winner is None else "A" if winner == pair.response_a_id else "B")
    n_agree = sum(h == j for h, j in zip(human, judge))
    agree = Stat.of(lambda: agreement.pairwise_agreement(human, judge)) if human else Stat(None, "no judged pairs with a human majority")
    bt = None
    if judge_scores:
        theta, n_decisive, note = human_bt_fit(pairs, names) if human_bt is None else human_bt
        common = sorted(set(theta) & {int(m) for m in judge_scores})
        corr: dict[str, tuple[float, float]] | None = None
        try:
            corr = agreement.rank_correlation([theta[m] for m in common], [float(judge_scores[m]) for m in common])
        except ValueError as exc:
            note = (note + "; " if note else "") + str(exc)
        bt = BTComparison(
            len(common), n_decisive, theta, {int(m): float(v) for m, v in judge_scores.items()},
            Stat(corr["spearman"][0]) if corr else Stat(None, note), corr["spearman"][1] if corr else None,
            Stat(corr["kendall"][0]) if corr else Stat(None, note), corr["kendall"][1] if corr else None, note,
        )
    return HumanJudgeJoin(condition, len(human), n_agree, agree, no_majority, unjudged, bt)


@dataclass
class SignAgreementView:
    """Image-level vs text-level pair sign agreement (App. I.4) with the counts behind it."""

    source: str
    result: agreement.SignAgreement | None
    note: str = ""


def image_text_sign_agreement(
    *, pairs: Sequence[HumanPair], text_scores: Mapping[int, float], source: str
) -> SignAgreementView:
    """sign(Δtext) vs sign(p_img − 0.5) per image pair with a majority: p_img = 1, 0 or 0.5 for a
    majority A, B or tie; Δtext = θ_text(model A) − θ_text(model B)."""
    delta, p_img = [], []
    for pair in pairs:
        if pair.majority is None or pair.model_a_id not in text_scores or pair.model_b_id not in text_scores:
            continue
        delta.append(float(text_scores[pair.model_a_id]) - float(text_scores[pair.model_b_id]))
        p_img.append({"A": 1.0, "B": 0.0, "tie": 0.5}[pair.majority])
    if not delta:
        return SignAgreementView(source, None, "no image pairs with a majority and a text-level score for both models")
    return SignAgreementView(source, agreement.pair_sign_agreement(delta, p_img))


@dataclass
class AblationView:
    """Two judge conditions against the human majority (§5.4, Table 4 shape)."""

    conditions: tuple[str, str]
    n: int
    correct: tuple[int, int]
    discordant: tuple[int, int]
    mcnemar: agreement.McNemarResult | None
    interval: agreement.PairedInterval | None
    note: str = ""

    @property
    def rates(self) -> tuple[float | None, float | None]:
        return tuple(c / self.n if self.n else None for c in self.correct)  # type: ignore[return-value]


def novelty_ablation(*, pairs: Sequence[HumanPair], judge_outcomes: Iterable[Any], conditions: tuple[str, str]) -> AblationView:
    """correct/n per condition on pairs with a human majority judged under both conditions; McNemar
    on the discordant counts and the paired-difference interval (condition 1 − condition 2)."""
    index = _judge_index(judge_outcomes)
    n = c1 = c2 = b = c = both = 0
    for pair in pairs:
        if pair.majority is None:
            continue
        key = (pair.task_external_id, pair.dimension, frozenset((pair.response_a_id, pair.response_b_id)))
        first, second = index.get((conditions[0], *key)), index.get((conditions[1], *key))
        if not first or not second:
            continue
        ok1 = judge_label_for(pair, first[0]) == pair.majority
        ok2 = judge_label_for(pair, second[0]) == pair.majority
        n += 1
        c1 += ok1
        c2 += ok2
        b += ok1 and not ok2
        c += ok2 and not ok1
        both += ok1 and ok2
    view = AblationView(conditions, n, (c1, c2), (b, c), None, None)
    if n == 0:
        view.note = "no pair has a human majority and both judge conditions"
        return view
    try:
        view.mcnemar = agreement.mcnemar(b, c)
    except ValueError as exc:
        view.note = str(exc)
    try:
        view.interval = agreement.paired_difference_interval(b, c, n, a=both)
    except (ValueError, TypeError, NotImplementedError) as exc:
        view.note = (view.note + "; " if view.note else "") + f"interval unavailable: {exc or type(exc).__name__}"
    return view
