"""The comparison contract: identity, validation, automatic records (App. F.2)."""

from __future__ import annotations

import pytest

from engine.checklists import Dimension, template_checklist
from engine.judge.comparison import (
    ComparisonKind,
    Judge,
    PairJudgeRequest,
    Winner,
    automatic_judgement,
    comparison_key,
)
from engine.judge.llm import LLMJudge
from engine.judge.simulated import SimulatedJudge
from engine.providers.client import OpenAICompatibleClient, ProviderConfig
from tests.engine.judge.conftest import ALICE, BOB, CHARLIE, TASK


def test_comparison_key_ignores_the_order_of_the_pair():
    forward = comparison_key("run", "t1", "novelty", ("m1", "m2"), "primary", 0)
    backward = comparison_key("run", "t1", Dimension.NOVELTY, ("m2", "m1"), ComparisonKind.PRIMARY, 0)
    assert forward == backward


def test_key_separates_run_task_dimension_kind_and_repeat(comparison):
    keys = {
        comparison().key,
        comparison(run_id="run-2").key,
        comparison(dimension=Dimension.NOVELTY).key,
        comparison(kind=ComparisonKind.SWAP, a=BOB, b=ALICE).key,
        comparison(kind=ComparisonKind.DUPLICATE).key,
        comparison(repeat=1).key,
    }
    assert len(keys) == 6


def test_a_swap_has_the_same_pair_as_its_primary(comparison):
    assert comparison(kind=ComparisonKind.SWAP, a=BOB, b=ALICE).pair == comparison().pair


def test_retry_does_not_change_the_identity(comparison):
    assert comparison(retry=2).key == comparison().key


def test_one_model_on_both_sides_is_refused(comparison):
    with pytest.raises(ValueError):
        comparison(a=ALICE, b=ALICE)


def test_checklist_must_be_for_the_judged_dimension():
    with pytest.raises(ValueError):
        PairJudgeRequest("run", TASK, Dimension.NOVELTY, template_checklist(TASK, "usefulness"), ALICE, BOB)


def test_non_empty_beats_empty_with_full_confidence(comparison):
    judgement = automatic_judgement(comparison(a=CHARLIE, b=BOB), "any")
    assert (judgement.winner, judgement.confidence, judgement.automatic) == (Winner.B, 1.0, True)
    assert judgement.winner_model == "bob-model"


def test_two_empty_responses_tie(comparison):
    empty = CHARLIE.__class__(model="dana-model", response_id="r-d", core_idea=" ", visual_description=None)
    judgement = automatic_judgement(comparison(a=CHARLIE, b=empty), "any")
    assert judgement.winner is Winner.TIE
    assert judgement.score_a == 0.5


def test_emptiness_is_checked_on_the_inspected_field(comparison):
    only_visual = CHARLIE.__class__(
        model="dana-model", response_id="r-d", core_idea="", visual_description="A sea."
    )
    assert (
        automatic_judgement(comparison(a=only_visual, b=BOB, dimension=Dimension.EXPRESSIVENESS), "x") is None
    )
    assert automatic_judgement(comparison(a=only_visual, b=BOB, dimension=Dimension.NOVELTY), "x") is not None


def test_both_judges_satisfy_the_judge_protocol():
    client = OpenAICompatibleClient(ProviderConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    assert isinstance(LLMJudge(client), Judge)
    assert isinstance(SimulatedJudge(), Judge)
