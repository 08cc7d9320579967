"""The protocol registry: each evaluation protocol (Ekphrasis, EASEL, C²-Eval) registers itself here from
its ``AppConfig.ready()``, and everything that must cover every protocol reads the registry instead of a
list of its own — the role groups' permissions, the navigation, the home page, the check that a run takes
a task set of its own benchmark kind. A list written out by hand is a list a new protocol is left out of
(the C² app once had no role permissions for exactly that reason).

A fourth protocol writes one :class:`Protocol` and calls :func:`protocol_register` in its app's ``ready()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from leaderboard.runs.errors import RunConfigurationError

__all__ = [
    "Protocol", "protocol_app_labels", "protocol_for_kind", "protocol_register",
    "protocols", "task_set_kind_check", "task_set_runs",
]


@dataclass(frozen=True)
class Protocol:
    """One protocol as the rest of the site needs to know it."""

    kind: str  #: its ``Benchmark.Kind`` value: the kind of task set its runs take
    app_label: str  #: the Django app label its models live under (role permissions are granted per label)
    title: str  #: its name in the navigation and on the home page
    run_model: str  #: ``"app_label.ModelName"`` of its run (a :class:`leaderboard.runs.models.RunJob`)
    nav_url: str  #: URL name of its navigation entry (its leaderboard page)
    nav_label: str = ""  #: the navigation entry's text (its title when empty)
    summary: str = ""  #: one sentence for its home-page tile
    run_url: str = ""  #: URL name of its run page (``pk`` argument)
    exporters: tuple[str, ...] = field(default=())  #: the formats its leaderboard exports in
    #: its latest board for the home page: ``() -> leaderboard.overview.BoardSummary | None``
    board: Callable[[], Any] | None = None
    #: a model's results on its boards: ``(SubjectModel) -> list[leaderboard.overview.ModelResult]``
    model_results: Callable[[Any], list] | None = None
    compare_url: str = ""  #: URL name of its compare page (two runs or boards side by side)

    @property
    def nav_text(self) -> str:
        return self.nav_label or self.title

    def run_model_class(self):
        from django.apps import apps

        return apps.get_model(self.run_model)


_REGISTRY: dict[str, Protocol] = {}


def protocol_register(protocol: Protocol) -> None:
    """Register a protocol (idempotent for the same protocol; a second, different one of a kind is refused)."""
    existing = _REGISTRY.get(protocol.kind)
    if existing is not None and existing != protocol:
        raise ValueError(f"protocol kind {protocol.kind!r} is registered already ({existing.app_label})")
    _REGISTRY[protocol.kind] = protocol


def protocols() -> list[Protocol]:
    """The registered protocols, in registration order (the order of ``INSTALLED_APPS``)."""
    return list(_REGISTRY.values())


def protocol_for_kind(kind: str) -> Protocol:
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise LookupError(f"no protocol of kind {kind!r} is registered") from None


def protocol_app_labels() -> list[str]:
    """The app labels of every protocol's models (distinct, in registration order)."""
    return list(dict.fromkeys(p.app_label for p in _REGISTRY.values()))


def task_set_kind_check(task_set, *, kind: str) -> None:
    """Refuse a task set that is not of benchmark ``kind``, naming both kinds (every run creation calls this)."""
    actual = task_set.benchmark.kind
    if actual == kind:
        return
    wanted = protocol_for_kind(kind).title if kind in _REGISTRY else kind
    theirs = protocol_for_kind(actual).title if actual in _REGISTRY else actual
    raise RunConfigurationError(
        f"{task_set} is of benchmark kind {theirs}, but {wanted} runs take only {wanted} task sets"
    )


def task_set_runs(task_set) -> list[str]:
    """The runs of every protocol made on ``task_set`` ("C² run 3", …), first few only: a task they judged
    may not change in place, or their stored results would describe a task that no longer exists."""
    found: list[str] = []
    for protocol in _REGISTRY.values():
        model = protocol.run_model_class()
        ids = list(model.objects.filter(task_set=task_set).order_by("pk").values_list("pk", flat=True)[:3])
        found += [f"{protocol.title} run {pk}" for pk in ids]
    return found
