"""The fake C² model (tests/fakes/c2_model.py) answers the real protocol through the real client:
generation with the versioned templates, the confidence follow-up in the same conversation, and
the rubric rater with its strict JSON and one repair turn."""

from __future__ import annotations

import pytest

from engine.c2.grading import CodeTests, grade_code_sample, triviaqa_exact_match
from engine.c2.prompts import confidence_messages, generation_messages, parse_confidence
from engine.c2.rater import build_rater_messages, parse_rating, repair_messages
from engine.providers.client import OpenAICompatibleClient, ProviderConfig
from engine.providers.json_reply import MalformedReply
from tests.fakes import FakeOpenAIServer
from tests.fakes.c2_model import C2FakeModel


def _client(server: FakeOpenAIServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(ProviderConfig(base_url=server.base_url, model="fake-c2", max_retries=0))


def test_qa_samples_cycle_answers_and_confidence_follows_in_the_same_conversation() -> None:
    model = C2FakeModel(qa_answers={"Abbey Road": ["The Beatles", "Beatles!", "Oasis"]})
    with FakeOpenAIServer(handler=model) as server:
        client = _client(server)
        messages = generation_messages("qa", "standard", "Which band recorded Abbey Road?")
        answers = [client.chat(messages, temperature=1.0, sample_index=i).text for i in range(3)]
        confidence = client.chat(confidence_messages(messages, answers[0])).text
        last = server.chat_requests[-1].body["messages"]
    assert answers == ["The Beatles", "Beatles!", "Oasis"]
    assert [triviaqa_exact_match(a, ["beatles"]) for a in answers] == [True, True, False]
    assert last[0] == messages[0] and last[1]["content"] == "The Beatles"
    value = parse_confidence(confidence)
    assert value is not None and 0.0 <= value <= 1.0


def test_missing_confidence_stays_missing() -> None:
    model = C2FakeModel(no_confidence_for=["Abbey Road"])
    with FakeOpenAIServer(handler=model) as server:
        messages = generation_messages("qa", "standard", "Which band recorded Abbey Road?")
        reply = _client(server).chat(confidence_messages(messages, "unknown")).text
    assert parse_confidence(reply) is None


def test_code_reply_is_graded_by_the_real_grader() -> None:
    model = C2FakeModel(code={"add two": "a, b = map(int, input().split())\nprint(a + b)"})
    tests = CodeTests(inputs=("1 2\n",), outputs=("3\n",))
    with FakeOpenAIServer(handler=model) as server:
        client = _client(server)
        good = client.chat(generation_messages("code", "creative", "Read and add two integers.")).text
        echo = client.chat(generation_messages("code", "standard", "Print the input.")).text
    assert grade_code_sample(good, tests).passed
    assert grade_code_sample(echo, tests).result == "wrong_answer"


def test_rater_request_gets_strict_json_after_one_repair() -> None:
    model = C2FakeModel(malformed_ratings=1)
    with FakeOpenAIServer(handler=model) as server:
        client = _client(server)
        story = client.chat(generation_messages("story", "standard", "A dragon opens a bakery.")).text
        messages = build_rater_messages("A dragon opens a bakery.", story)
        first = client.chat(messages).text
        with pytest.raises(MalformedReply) as problem:
            parse_rating(first)
        repaired = client.chat(repair_messages(messages, first, str(problem.value))).text
    rating = parse_rating(repaired)
    assert all(0 <= score <= 5 for score in rating.as_tuple())
    assert model.kinds == {"generation": 1, "rating": 2}
