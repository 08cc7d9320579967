"""Checklists: fixed slots, inspected fields, templates, TIG replacement, judge-model generation (App. E)."""

from __future__ import annotations

import json

import pytest

from engine.checklists import (
    DIMENSION_FIELD,
    SLOTS,
    Checklist,
    ChecklistFailure,
    Dimension,
    InspectedField,
    checklist_messages,
    generate_checklists,
    template_checklist,
    with_population_cliche,
)
from engine.generation import Family, TaskBrief
from engine.providers.client import OpenAICompatibleClient, ProviderConfig
from tests.fakes import FakeOpenAIServer, Script

TASK = TaskBrief(
    task_id="cmb-004",
    family=Family.COMBINATION,
    brief="Fuse coffee culture with Chinese landscape painting for a vertical brand poster.",
    constraints={"medium": "vertical poster"},
)


def make_client(server) -> OpenAICompatibleClient:
    config = ProviderConfig(base_url=server.base_url, model="fake/judge", backoff_base_s=0.01, max_retries=0)
    return OpenAICompatibleClient(config)


def valid_reply(dimension: Dimension) -> str:
    items = [{"slot": slot, "item": f"Which response handles {slot} better?"} for slot in SLOTS[dimension]]
    return json.dumps({"dimension": dimension.value, "items": items})


@pytest.mark.parametrize("dimension", list(Dimension))
def test_template_has_the_three_fixed_slots_in_order(dimension):
    checklist = template_checklist(TASK, dimension)
    assert [item.slot for item in checklist.items] == list(SLOTS[dimension])
    assert [item.index for item in checklist.items] == [1, 2, 3]


def test_slots_are_those_of_app_e():
    assert SLOTS[Dimension.USEFULNESS] == ("brief_fit", "operation_completion", "constraint_context_fit")
    assert SLOTS[Dimension.EXPRESSIVENESS] == (
        "visual_grounding",
        "spatial_organisation",
        "appearance_specificity",
    )
    assert SLOTS[Dimension.NOVELTY] == (
        "cliche_distance",
        "source_domain_shift",
        "perspective_relation_shift",
    )


def test_usefulness_and_novelty_inspect_the_core_idea_and_expressiveness_the_visual_description():
    assert DIMENSION_FIELD[Dimension.USEFULNESS] is InspectedField.CORE_IDEA
    assert DIMENSION_FIELD[Dimension.NOVELTY] is InspectedField.CORE_IDEA
    assert DIMENSION_FIELD[Dimension.EXPRESSIVENESS] is InspectedField.VISUAL_DESCRIPTION
    for dimension in Dimension:
        assert {item.inspects for item in template_checklist(TASK, dimension).items} == {
            DIMENSION_FIELD[dimension]
        }


@pytest.mark.parametrize(
    ("family", "focus"),
    [
        (Family.COMBINATION, "the fused entity"),
        (Family.TRANSFORMATION, "the transformed object"),
        (Family.ADAPTATION, "the whole intended deliverable"),
        (Family.ABSTRACTION, "the concrete carrier"),
    ],
)
def test_expressiveness_items_aim_at_the_family_focus(family, focus):
    task = TaskBrief(task_id="t", family=family, brief="A brief.")
    assert all(focus in item.text for item in template_checklist(task, Dimension.EXPRESSIVENESS).items)


def test_template_items_are_labelled_as_templates():
    checklist = template_checklist(TASK, "usefulness")
    assert checklist.source == "template"
    assert {item.source for item in checklist.items} == {"template"}


def test_usefulness_template_quotes_the_brief_and_constraints():
    first, _, third = template_checklist(TASK, Dimension.USEFULNESS).items
    assert "coffee culture" in first.text
    assert "vertical poster" in third.text


def test_prompt_line_names_the_inspected_field():
    item = template_checklist(TASK, Dimension.EXPRESSIVENESS).items[0]
    assert item.prompt_line().startswith("1. [Inspects: Visual Description] Which")


def test_population_cliche_item_replaces_the_first_novelty_item():
    base = template_checklist(TASK, Dimension.NOVELTY)
    tig = "Which response avoids relying on steaming-cup-as-mountain imagery unless it transforms it?"
    checklist = with_population_cliche(base, tig)
    assert checklist.items[0].text == tig
    assert checklist.items[0].source == "tig"
    assert checklist.items[0].slot == "cliche_distance"
    assert checklist.items[1:] == base.items[1:]


def test_population_cliche_item_is_refused_outside_novelty():
    with pytest.raises(ValueError):
        with_population_cliche(template_checklist(TASK, Dimension.USEFULNESS), "Which ...?")


def test_checklist_round_trips_through_a_dict():
    checklist = with_population_cliche(
        template_checklist(TASK, Dimension.NOVELTY), "Which avoids the cliché?"
    )
    assert Checklist.from_dict(json.loads(json.dumps(checklist.to_dict()))) == checklist


def test_generation_prompt_names_the_dimension_slots_and_inspected_field():
    content = checklist_messages(TASK, Dimension.EXPRESSIVENESS)[0]["content"]
    assert "expressiveness checklist" in content
    assert "Visual Description" in content
    assert "the fused entity" in content
    for slot in SLOTS[Dimension.EXPRESSIVENESS]:
        assert slot in content


def test_generated_checklist_is_labelled_with_the_judge_model():
    with FakeOpenAIServer(handler=lambda request: valid_reply(Dimension.NOVELTY)) as server:
        (checklist,) = generate_checklists(make_client(server), [(TASK, Dimension.NOVELTY)])
    assert checklist.source == "judge_model"
    assert checklist.model == "fake/judge"
    assert {item.source for item in checklist.items} == {"judge_model"}
    assert checklist.items[1].text == "Which response handles source_domain_shift better?"
    assert checklist.repaired is False


def test_invalid_checklist_reply_gets_one_repair_call():
    with FakeOpenAIServer(handler=Script("three items: ...", valid_reply(Dimension.USEFULNESS))) as server:
        (checklist,) = generate_checklists(make_client(server), [(TASK, Dimension.USEFULNESS)])
        repair_turn = server.chat_requests[1].body["messages"]
    assert checklist.repaired is True
    assert repair_turn[-2] == {"role": "assistant", "content": "three items: ..."}
    assert "invalid" in repair_turn[-1]["content"]


def test_checklist_still_invalid_after_repair_is_a_failure():
    wrong_slots = json.dumps({"dimension": "usefulness", "items": [{"slot": "x", "item": "Which?"}] * 3})
    with FakeOpenAIServer(handler=lambda request: wrong_slots) as server:
        (outcome,) = generate_checklists(make_client(server), [(TASK, Dimension.USEFULNESS)])
        sent = len(server.chat_requests)
    assert isinstance(outcome, ChecklistFailure)
    assert "slot" in outcome.error
    assert sent == 2
