"""Token and cost accounting of runs: one ledger fold for judge, EASEL and C² runs alike."""

from __future__ import annotations

from typing import Any

from django.db import models, transaction

from engine.providers.usage import UsageLedger


def client_usage_take(client: Any) -> dict[str, float]:
    """The totals a provider client has recorded so far; the client then starts a fresh ledger, so what
    was taken is never counted twice. A client without a ledger (simulated components) gives ``{}``."""
    usage = getattr(client, "usage", None)
    if usage is None:
        return {}
    totals = usage.as_dict()["total"]
    client.usage = UsageLedger()
    return totals


def run_usage_add(run: models.Model, totals: dict[str, float]) -> None:
    """Fold ``totals`` into ``run.usage`` (any run model with a ``usage`` JSON field), as a
    read-modify-write under a row lock so that concurrent workers' chunks add up."""
    if not totals:
        return
    with transaction.atomic():
        locked = type(run).objects.select_for_update().get(pk=run.pk)
        merged = dict(locked.usage or {})
        for key, value in totals.items():
            merged[key] = merged.get(key, 0) + value
        locked.usage = merged
        locked.save(update_fields=["usage"])
