"""Checklist-assisted pairwise judging (Ekphrasis §4.1, App. D, App. E, App. F.2).

* :mod:`~engine.judge.comparison` — the contract: :class:`PairJudgeRequest`, :class:`PairJudgement`,
  :class:`Candidate`, :class:`ComparisonKind`, the :class:`Judge` protocol, comparison identity;
* :mod:`~engine.judge.prompt` — the judge prompt and the repair prompt;
* :mod:`~engine.judge.schema` — strict validation of the App. E JSON;
* :mod:`~engine.judge.repair` — validate, repair once, or fail: the path every reply takes;
* :mod:`~engine.judge.llm` — :class:`LLMJudge`, through an OpenAI-compatible provider;
* :mod:`~engine.judge.simulated` — :class:`SimulatedJudge`, labelled ``"simulated"``;
* :mod:`~engine.judge.sampling` — A/B order, swap share, fixed samples for duplicates and auxiliaries.
"""

from engine.judge.comparison import (
    Candidate,
    ComparisonKind,
    ItemOutcome,
    Judge,
    PairJudgement,
    PairJudgeRequest,
    Winner,
    automatic_judgement,
    comparison_key,
    pair_key,
)
from engine.judge.llm import LLMJudge
from engine.judge.prompt import judge_messages, repair_messages
from engine.judge.sampling import ReliabilityPlan, ab_order, fixed_pair_sample, is_swap_sampled, swap_order
from engine.judge.schema import JudgeReply, JudgeSchemaError, validate_judge_reply
from engine.judge.simulated import SIMULATED_JUDGE_NAME, SimulatedJudge

__all__ = [
    "SIMULATED_JUDGE_NAME",
    "Candidate",
    "ComparisonKind",
    "ItemOutcome",
    "Judge",
    "JudgeReply",
    "JudgeSchemaError",
    "LLMJudge",
    "PairJudgeRequest",
    "PairJudgement",
    "ReliabilityPlan",
    "SimulatedJudge",
    "Winner",
    "ab_order",
    "automatic_judgement",
    "comparison_key",
    "fixed_pair_sample",
    "is_swap_sampled",
    "judge_messages",
    "pair_key",
    "repair_messages",
    "swap_order",
    "validate_judge_reply",
]
