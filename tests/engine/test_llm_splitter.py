"""The App. C.3 LLM splitter against the fake server."""

from __future__ import annotations

import hashlib
import json

from engine.llm_splitter import SPLITTER_INSTRUCTIONS, split_many, split_with_llm, splitter_messages
from engine.providers.client import OpenAICompatibleClient, ProviderConfig
from tests.fakes import FakeOpenAIServer, Script

RAW = (
    "**Idea** — A subway map whose lines branch into deadlines.\n\n"
    "Scene: a wall-sized transit map in matte white enamel, red lines splitting at each station..."
)
IDEA = "A subway map whose lines branch into deadlines."
VISUAL = "a wall-sized transit map in matte white enamel, red lines splitting at each station..."


def make_client(server) -> OpenAICompatibleClient:
    config = ProviderConfig(
        base_url=server.base_url, model="fake/splitter", backoff_base_s=0.01, max_retries=0
    )
    return OpenAICompatibleClient(config)


def split_reply(idea, visual) -> str:
    return json.dumps({"idea": idea, "visual_description": visual})


def test_split_returns_both_fields_with_provenance():
    with FakeOpenAIServer(handler=lambda request: split_reply(IDEA, VISUAL)) as server:
        record = split_with_llm(make_client(server), RAW)
    assert record.ok
    assert (record.idea, record.visual_description) == (IDEA, VISUAL)
    assert record.extraction_model == "fake/splitter"
    assert record.attempts == 1
    assert record.raw_output_sha256 == hashlib.sha256(RAW.encode("utf-8")).hexdigest()
    assert record.extracted_at.tzinfo is not None
    assert record.verbatim is True


def test_prompt_asks_for_faithful_copying_strict_json_and_null_for_missing():
    assert "Copy the wording faithfully" in SPLITTER_INSTRUCTIONS
    assert "set it to null" in SPLITTER_INSTRUCTIONS
    assert RAW in splitter_messages(RAW)[1]["content"]


def test_splitter_asks_at_temperature_zero():
    with FakeOpenAIServer(handler=lambda request: split_reply(IDEA, VISUAL)) as server:
        split_with_llm(make_client(server), RAW)
        body = server.chat_requests[0].body
    assert body["temperature"] == 0.0


def test_a_missing_field_comes_back_as_none():
    with FakeOpenAIServer(handler=lambda request: split_reply(IDEA, None)) as server:
        record = split_with_llm(make_client(server), RAW)
    assert record.ok
    assert record.visual_description is None


def test_an_invalid_reply_is_answered_with_a_repair_turn():
    with FakeOpenAIServer(handler=Script("Sure! Idea: ...", split_reply(IDEA, VISUAL))) as server:
        record = split_with_llm(make_client(server), RAW)
        second = server.chat_requests[1].body["messages"]
    assert record.ok and record.attempts == 2
    assert second[-2] == {"role": "assistant", "content": "Sure! Idea: ..."}
    assert "invalid" in second[-1]["content"]


def test_extra_keys_make_a_reply_invalid():
    extra = json.dumps({"idea": IDEA, "visual_description": VISUAL, "notes": "x"})
    with FakeOpenAIServer(handler=lambda request: extra) as server:
        record = split_with_llm(make_client(server), RAW, max_attempts=1)
    assert not record.ok
    assert "keys" in record.error


def test_it_gives_up_after_max_attempts_with_a_failed_record():
    with FakeOpenAIServer(handler=lambda request: "no json here") as server:
        record = split_with_llm(make_client(server), RAW, max_attempts=3)
        sent = len(server.chat_requests)
    assert (record.ok, record.attempts, sent) == (False, 3, 3)
    assert record.idea is None and record.error


def test_a_paraphrase_is_flagged_as_not_verbatim():
    with FakeOpenAIServer(handler=lambda request: split_reply("Deadlines as a metro map.", VISUAL)) as server:
        record = split_with_llm(make_client(server), RAW)
    assert record.ok and record.verbatim is False


def test_split_many_keeps_input_order():
    def answer(request):
        content = request["messages"][1]["content"]
        number = content.split("answer number ")[1].split()[0]
        return split_reply(f"idea {number}", f"visual {number}")

    raws = [f"answer number {n} text" for n in range(6)]
    with FakeOpenAIServer(handler=answer) as server:
        records = split_many(make_client(server), raws)
    assert [r.idea for r in records] == [f"idea {n}" for n in range(6)]
