"""One contract for every EASEL agent (EASEL §3.1: the agent observes (R, C_t) and emits an action).

A policy has a ``name``, an ``is_simulated`` flag and ``act(observation) -> str``: the raw action text
(JSON), exactly what a model would answer, so every policy goes through the same strict parser.
Implementations: painter.SearchPainter (stand-in for Learning-to-Paint), simulated.SimulatedAgent
(labelled simulated), agent.MLLMAgent (a multimodal model through a chat callable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine.easel.task import EaselTask

__all__ = ["HISTORY_WINDOW", "Observation", "Policy", "Turn"]

HISTORY_WINDOW = 3  # semantic tasks keep a 3-turn history window (EASEL §3.1)


@dataclass(frozen=True)
class Turn:
    """One past step as the agent may see it again: its raw answer and the environment's feedback."""

    step: int
    raw: str
    kind: str
    valid: bool
    feedback: str | None = None


@dataclass(frozen=True, eq=False)
class Observation:
    """What the agent sees before step ``step`` (0-based) of ``budget``.

    ``extra`` carries environment facts a policy may use; semantic episodes give ``strokes_on_canvas``.
    """

    task: EaselTask
    canvas: np.ndarray
    step: int
    budget: int
    history: tuple[Turn, ...] = ()
    feedback: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Policy(Protocol):
    name: str
    is_simulated: bool

    def act(self, observation: Observation) -> str:
        """The raw action text (JSON) for this observation."""
        ...
