"""Generation prompts (App. A) and sampling defaults (App. C.2)."""

from __future__ import annotations

import pytest

from engine.generation import (
    GENERATION_TEMPERATURE,
    PRIMARY_SAMPLE,
    SAMPLES_PER_TASK,
    Family,
    TaskBrief,
    family_brief,
    generate_samples,
    generation_messages,
    generation_prompt,
    generation_requests,
)
from engine.providers.cache import RequestCache
from engine.providers.client import OpenAICompatibleClient, ProviderConfig
from tests.fakes import FakeOpenAIServer, Fault

TIME_PASSING = TaskBrief(
    task_id="abs-001",
    family=Family.ABSTRACTION,
    brief="Express “time passing” for a meditation-app launch image while avoiding clock imagery.",
)
ADAPTATION = TaskBrief(
    task_id="adp-001",
    family="adaptation",
    brief="Produce a visual deliverable for a library's late-night study campaign.",
    constraints={"audience": "university students", "medium": "bus-shelter poster", "notes": ""},
)


def make_client(server, cache=None) -> OpenAICompatibleClient:
    config = ProviderConfig(
        base_url=server.base_url, model="fake/subject", backoff_base_s=0.01, max_retries=0
    )
    return OpenAICompatibleClient(config, cache=cache)


@pytest.mark.parametrize("family", list(Family))
def test_every_family_prompt_names_its_task_type_and_asks_for_two_labelled_blocks(family):
    task = TaskBrief(task_id="t", family=family, brief="A brief.")
    prompt = generation_prompt(task)
    assert f"Task Type: {family.value.capitalize()}" in prompt
    assert "exactly two labeled blocks: Core Idea and Visual Description" in prompt
    assert "Core Idea: ...\nVisual Description: ..." in prompt


def test_prompt_asks_for_one_sentence_idea_100_to_140_words_and_one_static_image():
    prompt = generation_prompt(TIME_PASSING)
    assert "Core Idea: one sentence" in prompt
    assert "100–140 words" in prompt
    assert "exactly one static image" in prompt
    assert "prompt-engineering syntax" in prompt


def test_family_requirement_line_follows_app_a():
    combination = TaskBrief(task_id="c", family=Family.COMBINATION, brief="Fuse x and y.")
    transformation = TaskBrief(task_id="t", family=Family.TRANSFORMATION, brief="Re-present x.")
    assert (
        "Both source concepts must jointly participate in structure, function, or form."
        in generation_prompt(combination)
    )
    assert "rather than merely decorate it or provide a background" in generation_prompt(transformation)


def test_constraints_are_listed_and_empty_ones_left_out():
    prompt = generation_prompt(ADAPTATION)
    assert "- Audience: university students" in prompt
    assert "- Medium: bus-shelter poster" in prompt
    assert "Notes" not in prompt


def test_messages_are_a_single_user_turn_with_the_prompt():
    assert generation_messages(TIME_PASSING) == [{"role": "user", "content": generation_prompt(TIME_PASSING)}]


def test_family_brief_fills_the_app_a_sentence():
    assert family_brief("combination", first="a lighthouse", second="a violin") == (
        "Fuse a lighthouse and a violin into one coherent visual entity."
    )
    assert "abstract concept “calm”" in family_brief(Family.ABSTRACTION, concept="calm")


def test_family_brief_names_a_missing_source_field():
    with pytest.raises(ValueError, match="condition"):
        family_brief(Family.TRANSFORMATION, object="a teapot")


def test_defaults_are_three_samples_at_temperature_0_7_with_sample_1_primary():
    requests = generation_requests(TIME_PASSING)
    assert (SAMPLES_PER_TASK, PRIMARY_SAMPLE, GENERATION_TEMPERATURE) == (3, 1, 0.7)
    assert [r.sample_index for r in requests] == [1, 2, 3]
    assert {r.temperature for r in requests} == {0.7}


def test_generate_samples_marks_the_primary_and_returns_failures_in_place():
    def answer(request):
        return Fault.http(400) if "library" in request["messages"][0]["content"] else "Core Idea: x"

    with FakeOpenAIServer(handler=answer) as server:
        samples = generate_samples(make_client(server), [TIME_PASSING, ADAPTATION])
        bodies = [r.body for r in server.chat_requests]
    assert [(s.task_id, s.sample, s.is_primary) for s in samples] == [
        ("abs-001", 1, True),
        ("abs-001", 2, False),
        ("abs-001", 3, False),
        ("adp-001", 1, True),
        ("adp-001", 2, False),
        ("adp-001", 3, False),
    ]
    assert [s.text for s in samples[:3]] == ["Core Idea: x"] * 3
    assert all(s.text is None and "400" in s.error for s in samples[3:])
    assert {body["temperature"] for body in bodies} == {0.7}


def test_resumed_generation_sends_only_unanswered_samples(tmp_path):
    cache = RequestCache(tmp_path / "generation.sqlite3")
    with FakeOpenAIServer() as server:
        generate_samples(make_client(server, cache), [TIME_PASSING], samples=2)
    with FakeOpenAIServer() as server:
        samples = generate_samples(make_client(server, cache), [TIME_PASSING], samples=3)
        sent = len(server.chat_requests)
    assert sent == 1
    assert [s.result.cached for s in samples] == [True, True, False]
