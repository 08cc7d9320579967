"""Observers of provider calls: plain callables told about every chat call a client finishes.

The site registers one to count calls, failures, retries, latency and cost per model for its metrics
(``evalsite/metrics.py``); the engine knows nothing of who listens. An observer must be quick and must not
raise: an exception is logged and swallowed, never allowed to fail the call it describes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["CallOutcome", "add_call_observer", "notify_call", "remove_call_observer"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallOutcome:
    """One finished chat call: answered, answered from the cache, or failed after its attempts."""

    model: str
    ok: bool
    cached: bool
    attempts: int  # HTTP attempts made (0 for a cache hit); retries = attempts - 1
    latency_s: float
    cost_usd: float = 0.0
    status: int | None = None  # the last HTTP status of a failure, None for a transport error


_observers: list[Callable[[CallOutcome], None]] = []
_lock = threading.Lock()


def add_call_observer(observer: Callable[[CallOutcome], None]) -> None:
    """Tell ``observer`` about every call from now on (added once however often it is added)."""
    with _lock:
        if observer not in _observers:
            _observers.append(observer)


def remove_call_observer(observer: Callable[[CallOutcome], None]) -> None:
    with _lock:
        if observer in _observers:
            _observers.remove(observer)


def notify_call(outcome: CallOutcome) -> None:
    """Hand ``outcome`` to every observer; one that raises is logged and skipped."""
    for observer in list(_observers):
        try:
            observer(outcome)
        except Exception:  # an observer's bug must not fail the provider call
            logger.exception("provider call observer %r failed", observer)
