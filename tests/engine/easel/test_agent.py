"""The MLLM agent protocol (engine/easel/agent.py) against the fake OpenAI server, through the real client."""

import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from engine.easel.agent import MLLMAgent, build_messages, image_data_url, parse_action
from engine.easel.episode import Environment
from engine.easel.references import generate_suite
from engine.easel.render import InvalidAction
from engine.easel.semantic import semantic_tasks
from engine.providers.client import OpenAICompatibleClient, ProviderConfig
from tests.fakes.easel_agent import EaselAgentHandler, image_parts
from tests.fakes.openai_server import FakeOpenAIServer

MODEL_NAMES = ("gpt", "claude", "gemini", "qwen", "llama", "glm", "kimi", "internvl", "secret-model-x")


@pytest.fixture(scope="module")
def task():
    return generate_suite(1, per_category={"programmatic": 1})[0]


def prompt_text(messages):
    return json.dumps([m if isinstance(m["content"], str) else
                       {"content": [p for p in m["content"] if p["type"] == "text"]} for m in messages]).lower()


def decode(url):
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def test_reconstruction_prompt_shows_reference_and_canvas_as_png_data_urls(task):
    env = Environment(task)
    messages = build_messages(env.observation())
    urls = [p["image_url"]["url"] for m in messages if isinstance(m["content"], list) for p in m["content"]
            if p["type"] == "image_url"]
    assert len(urls) == 2 and all(u.startswith("data:image/png;base64,") for u in urls)
    np.testing.assert_array_equal(decode(urls[0]), np.round(task.reference * 255).astype(np.uint8))
    assert "alpha_s" in prompt_text(messages)


def test_semantic_prompt_keeps_three_turns_and_collision_feedback():
    maze = semantic_tasks(0)[3]
    env = Environment(maze)
    wall_hit = json.dumps({"action": "brush_stroke", "xs": 0.0, "ys": 0.5, "xc": 0.5, "yc": 0.5, "xe": 1.0, "ye": 0.5})
    for _ in range(4):
        env.step(wall_hit)
    messages = build_messages(env.observation())
    assert sum(1 for m in messages if m["role"] == "assistant") == 3
    assert "collision" in prompt_text(messages)


def test_prompt_never_contains_a_model_name(task):
    agent_messages = []
    agent = MLLMAgent(lambda messages: agent_messages.append(messages) or "{}", model_label="secret-model-x")
    env = Environment(task, budget=2)
    env.run(agent)
    maze_env = Environment(semantic_tasks(0)[3], budget=2)
    maze_env.run(agent)
    assert agent.name == "secret-model-x"
    for messages in agent_messages:
        text = prompt_text(messages)
        assert not any(name in text for name in MODEL_NAMES)


def test_unparseable_answers_are_invalid_actions_keeping_the_raw_text():
    parsed = parse_action("I'd rather not paint today.", task_kind="reconstruction")
    assert isinstance(parsed, InvalidAction) and parsed.raw == "I'd rather not paint today."
    out_of_range = parse_action('{"action": "brush_stroke", "xs": 2}', task_kind="semantic")
    assert isinstance(out_of_range, InvalidAction)


def test_a_valid_answer_parses_to_its_action():
    text = '```json\n{"action": "submit"}\n```'
    assert parse_action(text, task_kind="semantic") == {"action": "submit"}


def test_episode_end_to_end_against_the_fake_server(task):
    handler = EaselAgentHandler(invalid_every=3, fenced_every=2)
    with FakeOpenAIServer(handler=handler) as server:
        client = OpenAICompatibleClient(ProviderConfig(base_url=server.base_url, model="fake-vision", max_retries=0))
        agent = MLLMAgent(lambda messages: client.chat(messages).text, model_label="fake-vision")
        env = Environment(task, budget=6)
        outcomes = env.run(agent)
        requests = server.chat_requests
    assert len(requests) == 6
    assert all(len(image_parts(r.body)) == 2 for r in requests)
    assert [o.valid for o in outcomes] == [True, True, False, True, True, False]
    assert outcomes[2].raw == handler.answers[2]  # stored verbatim
    assert outcomes[1].raw.startswith("Here is my next stroke")  # fenced JSON was found
    assert env.similarity.s != Environment(task).similarity.s  # the strokes changed the canvas


def test_semantic_episode_against_the_fake_server_submits():
    circle = semantic_tasks(0)[0]
    with FakeOpenAIServer(handler=EaselAgentHandler(submit_after=3)) as server:
        client = OpenAICompatibleClient(ProviderConfig(base_url=server.base_url, model="fake-vision", max_retries=0))
        env = Environment(circle)
        env.run(MLLMAgent(lambda messages: client.chat(messages).text, model_label="fake-vision"))
    assert env.submitted_at == 4 and env.done
    assert 0.0 <= env.final_score().value <= 1.0


def test_image_data_url_round_trips_an_8_bit_image(task):
    np.testing.assert_array_equal(decode(image_data_url(task.reference)) / np.float32(255), task.reference)


def test_a_huge_past_answer_comes_back_in_the_history_cut_short():
    # Each of a semantic agent's last three answers is sent back verbatim: a 1 MB answer (a provider ignoring
    # max_tokens) rode along in the next three prompts, which a real endpoint refuses as too long (a 400, so
    # the run failed, and again on every resume with the same cached answer).
    env = Environment(semantic_tasks(0)[0])
    stroke = json.dumps({"action": "brush_stroke", "xs": 0.1, "ys": 0.1, "xc": 0.5, "yc": 0.5, "xe": 0.9, "ye": 0.9})
    env.step("Let me think. " * 80_000 + stroke)
    env.step(stroke)
    assistant = [m["content"] for m in build_messages(env.observation()) if m["role"] == "assistant"]
    assert len(assistant) == 2 and assistant[1] == stroke  # an ordinary answer exactly as it was
    assert len(assistant[0]) < 5_000 and assistant[0].startswith("Let me think.") and "1,120," in assistant[0]
