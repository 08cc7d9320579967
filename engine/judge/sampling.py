"""Which comparisons a judge run makes besides the primary ones, and in which A/B order (Ekphrasis App. D).

All choices are deterministic functions of a seed and the identity of what is
chosen — never of call order or of how the work was chunked — so a resumed
run makes exactly the same choices.

* :func:`ab_order` — the randomised A/B presentation of a primary comparison;
  a swap is its reverse (:func:`swap_order`), a duplicate or auxiliary
  comparison reuses it.
* :func:`is_swap_sampled` — whether a pair (per task and dimension) also gets
  an order-swapped comparison; default share 10 % (App. D, Table 9).
* :func:`fixed_pair_sample` — a fixed-count sample of (task, pair) items for a
  purpose: 200 duplicate pairs per dimension judged twice (Expressiveness and
  Novelty), 100 auxiliary pairs per dimension (App. D, Table 9). The sample
  is a prefix of one seeded order, so growing ``n`` only adds items.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from engine.checklists import Dimension
from engine.judge.comparison import pair_key

__all__ = [
    "ReliabilityPlan",
    "ab_order",
    "fixed_pair_sample",
    "is_swap_sampled",
    "swap_order",
    "unit_draw",
]

SWAP_SHARE = 0.10
DUPLICATE_PAIRS_PER_DIMENSION = 200
DUPLICATE_REPEATS = 2
DUPLICATE_DIMENSIONS = (Dimension.EXPRESSIVENESS, Dimension.NOVELTY)
AUXILIARY_PAIRS_PER_DIMENSION = 100
JUDGE_CALLS_PER_TASK_PER_DIMENSION = 50


@dataclass(frozen=True)
class ReliabilityPlan:
    """The reliability budget of App. D, Table 9, as defaults a judge run can override."""

    calls_per_task_per_dimension: int = JUDGE_CALLS_PER_TASK_PER_DIMENSION
    swap_share: float = SWAP_SHARE
    duplicate_pairs_per_dimension: int = DUPLICATE_PAIRS_PER_DIMENSION
    duplicate_repeats: int = DUPLICATE_REPEATS
    duplicate_dimensions: tuple[Dimension, ...] = DUPLICATE_DIMENSIONS
    auxiliary_pairs_per_dimension: int = AUXILIARY_PAIRS_PER_DIMENSION


def unit_draw(seed: int | str, *identity: object) -> float:
    """A uniform number in [0, 1) determined by ``seed`` and ``identity`` alone."""
    text = "\x1f".join(str(part) for part in (seed, *identity))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def ab_order(
    seed: int | str,
    run_id: str,
    task_id: str,
    dimension: Dimension | str,
    first_model: str,
    second_model: str,
    repeat: int = 0,
) -> tuple[str, str]:
    """(model shown as A, model shown as B) for a primary comparison, a fair coin per identity."""
    low, high = pair_key(first_model, second_model)
    draw = unit_draw(seed, "ab-order", run_id, task_id, Dimension(dimension).value, low, high, repeat)
    return (low, high) if draw < 0.5 else (high, low)


def swap_order(order: tuple[str, str]) -> tuple[str, str]:
    """The order-swapped presentation of ``order``."""
    return order[1], order[0]


def is_swap_sampled(
    seed: int | str,
    task_id: str,
    dimension: Dimension | str,
    first_model: str,
    second_model: str,
    share: float = SWAP_SHARE,
) -> bool:
    """Whether this pair, on this task and dimension, is in the sampled share that also gets a swap."""
    if not 0.0 <= share <= 1.0:
        raise ValueError("share must be in [0, 1]")
    low, high = pair_key(first_model, second_model)
    return unit_draw(seed, "swap", task_id, Dimension(dimension).value, low, high) < share


def fixed_pair_sample(items: Iterable[Hashable], n: int, *, seed: int | str, purpose: str) -> list[Hashable]:
    """``n`` items (e.g. ``(task_id, pair)``) chosen by seeded hash order; independent of input order."""
    if n < 0:
        raise ValueError("n must be >= 0")
    unique: Sequence[Hashable] = list(dict.fromkeys(items))
    ranked = sorted(
        unique, key=lambda item: (unit_draw(seed, "fixed-sample", purpose, repr(item)), repr(item))
    )
    return ranked[:n]
