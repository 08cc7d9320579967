"""The researcher's view across the protocols: the home page's one block per protocol, the search box,
and a model's profile (every protocol and task set it was evaluated on) and two-model comparison.

Every protocol answers in one shape: its :class:`~leaderboard.protocols.Protocol` names a ``board``
function (its latest board as a :class:`BoardSummary`) and a ``model_results`` function (a model's
results as :class:`ModelResult` rows). The functions here only walk the registry, so a fourth protocol
shows on the home page and in the profiles by registering its two functions. Human-validation figures
come from the annotation app, which may read this app but not the other way round: it registers a
source with :func:`validation_source_register` from its ``ready()``.

Reads only; each protocol function makes a bounded number of queries (no query per row).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from leaderboard.models import SubjectModel, TaskSet
from leaderboard.protocols import protocols

__all__ = [
    "BoardRow", "BoardSummary", "Breakdown", "ModelResult", "RunLink", "SearchResults", "ValidationFigure",
    "catalogue_search", "model_pair", "model_profile", "overview_boards", "validation_source_register",
]

#: Rows of each protocol's block on the home page.
OVERVIEW_TOP = 5
#: Search results per kind.
SEARCH_LIMIT = 25


@dataclass(frozen=True)
class BoardRow:
    rank: int
    name: str
    value: float | None
    low: float | None = None
    high: float | None = None
    model_id: int | None = None  #: the catalogue model the row is, when it is one (its profile link)
    tier: int | None = None


@dataclass(frozen=True)
class BoardSummary:
    """A protocol's latest board as the home page shows it."""

    protocol: str  #: the protocol's title
    measure: str  #: what the value column is (e.g. "Overall VCI")
    interval: str  #: how the intervals were made
    url: str  #: the full board
    task_set: str
    date: datetime | None
    n: str  #: what the board rests on, in words ("8 tasks, 1,270 judge calls")
    simulated: bool
    demo: bool
    rows: list[BoardRow]
    digits: int = 3  #: decimals the values are printed with
    compare_url: str = ""  #: where this protocol's compare page starts

    @property
    def margin(self) -> float | None:
        """Best minus second-best value (None with fewer than two scored rows)."""
        values = [r.value for r in self.rows if r.value is not None]
        return values[0] - values[1] if len(values) >= 2 else None


@dataclass(frozen=True)
class Breakdown:
    """One cell of a result's per-family / per-category / per-task-type breakdown."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None


@dataclass(frozen=True)
class RunLink:
    label: str
    url: str
    usage: dict = field(default_factory=dict)  #: calls, tokens, cost_usd of the run (all its models)


@dataclass(frozen=True)
class ModelResult:
    """A model on one board (a protocol × task set): its score, interval, rank and rank set, breakdown, runs."""

    protocol: str
    task_set: str
    board_url: str
    measure: str
    value: float | None
    low: float | None
    high: float | None
    rank: int | None
    of: int
    rank_set: tuple[int, int] | None
    n: str
    date: datetime | None
    simulated: bool
    demo: bool
    interval: str = ""
    breakdown: list[Breakdown] = field(default_factory=list)
    runs: list[RunLink] = field(default_factory=list)
    digits: int = 3
    key: str = ""  #: identifies the board across models (protocol kind and task set id), for comparisons

    @property
    def breakdown_has_n(self) -> bool:
        """Whether a breakdown row gives its n (C²: the task type's prompts): the profile shows an n column
        only then, not a column of empty cells."""
        return any(b.n is not None for b in self.breakdown)


@dataclass(frozen=True)
class ValidationFigure:
    """A human-validation figure of a model (from the annotation app's registered source)."""

    what: str
    value: str
    url: str = ""


_VALIDATION_SOURCES: list[Callable[[SubjectModel], list[ValidationFigure]]] = []


def validation_source_register(source: Callable[[SubjectModel], list[ValidationFigure]]) -> None:
    """Register a source of human-validation figures (idempotent)."""
    if source not in _VALIDATION_SOURCES:
        _VALIDATION_SOURCES.append(source)


def overview_boards() -> list[tuple[object, BoardSummary | None]]:
    """(protocol, its latest board or None) for every registered protocol, in registry order."""
    return [(p, p.board() if p.board is not None else None) for p in protocols()]


@dataclass(frozen=True)
class SearchResults:
    query: str
    models: list[SubjectModel]
    task_sets: list[TaskSet]


def catalogue_search(query: str) -> SearchResults:
    """Subject models (by display name, provider id or family) and task sets (by name or description)
    whose text contains ``query`` (case-insensitive); two queries."""
    query = query.strip()
    if not query:
        return SearchResults(query, [], [])
    models = list(SubjectModel.objects.filter(role=SubjectModel.Role.SUBJECT).filter(
        Q(display_name__icontains=query) | Q(provider_id__icontains=query) | Q(family__icontains=query)
    ).order_by("display_name")[:SEARCH_LIMIT])
    task_sets = list(TaskSet.objects.select_related("benchmark").filter(
        Q(name__icontains=query) | Q(description__icontains=query)
    ).order_by("name", "version")[:SEARCH_LIMIT])
    return SearchResults(query, models, task_sets)


def model_results(model: SubjectModel) -> list[ModelResult]:
    """Every board of every protocol that ranks ``model``, protocol by protocol."""
    out: list[ModelResult] = []
    for protocol in protocols():
        if protocol.model_results is not None:
            out += protocol.model_results(model)
    return out


def model_profile(model: SubjectModel) -> dict:
    """The profile page's and the API's content: results per board, and human-validation figures."""
    validation = [figure for source in _VALIDATION_SOURCES for figure in source(model)]
    results = model_results(model)
    return {"model": model, "results": results, "validation": validation,
            "protocols_evaluated": sorted({r.protocol for r in results})}


@dataclass(frozen=True)
class PairRow:
    """Two models on one board both were ranked on."""

    left: ModelResult
    right: ModelResult

    @property
    def difference(self) -> float | None:
        if self.left.value is None or self.right.value is None:
            return None
        return self.left.value - self.right.value

    @property
    def apart(self) -> bool:
        """The two intervals do not overlap."""
        a, b = self.left, self.right
        if None in (a.low, a.high, b.low, b.high):
            return False
        return a.high < b.low or b.high < a.low


def model_pair(left: SubjectModel, right: SubjectModel) -> dict:
    """Two models side by side on every board both were ranked on, and the boards only one of them has."""
    mine = {r.key: r for r in model_results(left)}
    theirs = {r.key: r for r in model_results(right)}
    shared = [PairRow(mine[k], theirs[k]) for k in mine if k in theirs]
    return {"left": left, "right": right, "shared": shared,
            "left_only": [mine[k] for k in mine if k not in theirs],
            "right_only": [theirs[k] for k in theirs if k not in mine]}


def rank_set_of(probabilities: Sequence[float], level: float = 0.90) -> tuple[int, int] | None:
    """The 1-based central ``level`` range of a rank distribution P(rank = r): from the first rank where the
    cumulative probability passes (1 − level)/2 to the first where it reaches (1 + level)/2."""
    if not probabilities or any(p is None for p in probabilities):
        return None
    low_tail, high_tail = (1 - level) / 2, (1 + level) / 2
    cumulative, low, high = 0.0, None, None
    for r, p in enumerate(probabilities, start=1):
        cumulative += p
        if low is None and cumulative > low_tail:
            low = r
        if high is None and cumulative >= high_tail - 1e-9:
            high = r
    if low is None or high is None:
        return None
    return low, high
