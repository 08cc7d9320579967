"""Token and cost accounting for one run (Ekphrasis App. D, "budget accounting").

A :class:`UsageLedger` is handed to a provider client and counts, per model and
in total: answered calls, cache hits, failed calls, retries (extra attempts),
prompt and completion tokens, and cost in US dollars from the configured
per-million-token prices. Cache hits cost nothing; a failed call costs its
retries but no tokens (the provider reported none). The ledger is shared
safely between threads; ``as_dict()`` gives a JSON-ready snapshot to store on
the run.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = ["UsageLedger", "UsageTotals", "cost_usd"]


def cost_usd(
    prompt_tokens: int, completion_tokens: int, price_input_per_mtok: float, price_output_per_mtok: float
) -> float:
    """Cost of one answered call from per-million-token prices."""
    return (prompt_tokens * price_input_per_mtok + completion_tokens * price_output_per_mtok) / 1_000_000


@dataclass(frozen=True)
class UsageTotals:
    """Counts for one model or for a whole run."""

    calls: int = 0
    cached_hits: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(
            calls=self.calls + other.calls,
            cached_hits=self.cached_hits + other.cached_hits,
            failures=self.failures + other.failures,
            retries=self.retries + other.retries,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class UsageLedger:
    """Thread-safe per-run accounting, broken down by model id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_model: dict[str, UsageTotals] = {}

    def __repr__(self) -> str:
        totals = self.totals()
        return f"UsageLedger(calls={totals.calls}, cached_hits={totals.cached_hits}, cost_usd={totals.cost_usd:.4f})"

    def _bump(self, model: str, **deltas: Any) -> None:
        with self._lock:
            current = self._by_model.get(model, UsageTotals())
            updated = {name: getattr(current, name) + value for name, value in deltas.items()}
            self._by_model[model] = replace(current, **updated)

    def record_answer(
        self, model: str, *, prompt_tokens: int, completion_tokens: int, cost_usd: float, attempts: int
    ) -> None:
        """One call the provider answered, after ``attempts`` HTTP attempts."""
        self._bump(
            model,
            calls=1,
            retries=max(0, attempts - 1),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost_usd,
        )

    def record_cache_hit(self, model: str) -> None:
        """One call answered from the request cache: no tokens, no cost."""
        self._bump(model, cached_hits=1)

    def record_failure(self, model: str, *, attempts: int) -> None:
        """One call that failed after ``attempts`` HTTP attempts."""
        self._bump(model, failures=1, retries=max(0, attempts - 1))

    def totals(self) -> UsageTotals:
        """Sum over all models."""
        with self._lock:
            snapshot = list(self._by_model.values())
        total = UsageTotals()
        for totals in snapshot:
            total = total + totals
        return total

    def by_model(self) -> dict[str, UsageTotals]:
        """A copy of the per-model counts."""
        with self._lock:
            return dict(self._by_model)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready snapshot: ``{"total": {...}, "by_model": {model: {...}}}``."""
        return {
            "total": asdict(self.totals()),
            "by_model": {model: asdict(totals) for model, totals in sorted(self.by_model().items())},
        }
