"""A model run end to end against the fake OpenAI-compatible server, configured only by a SubjectModel row
and an environment variable: images go as PNG data URLs, no prompt names a model, a killed run resumes
to the identical episode."""

from __future__ import annotations

import json
import threading

import pytest

from leaderboard.easel import agents, services
from leaderboard.easel.models import EaselRun, EaselStep
from leaderboard.models import SubjectModel
from leaderboard.runs.errors import RunConfigurationError
from tests.fakes.easel_agent import EaselAgentHandler, image_parts
from tests.fakes.openai_server import FakeOpenAIServer, Fault

pytestmark = pytest.mark.django_db

KEY_ENV = "EASEL_TEST_PROVIDER_KEY"


@pytest.fixture
def provider_env(monkeypatch, settings, tmp_path):
    monkeypatch.setenv(KEY_ENV, "sk-easel-test")
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "cache-first"
    return settings


def vision_model(server: FakeOpenAIServer) -> SubjectModel:
    return SubjectModel.objects.create(display_name="Painter-Model-X", provider_id="vendor/painter-x-vision",
                                       role=SubjectModel.Role.SUBJECT, base_url=server.base_url, api_key_env=KEY_ENV)


def request_text(body: dict) -> str:
    return json.dumps(body.get("messages", []))


def test_a_model_run_goes_end_to_end_through_the_provider_client(suite, provider_env):
    with FakeOpenAIServer(handler=EaselAgentHandler(invalid_every=5, submit_after=4)) as server:
        model = vision_model(server)
        run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent=model.display_name))
    assert run.status == EaselRun.Status.DONE and run.agent_kind == EaselRun.AgentKind.MODEL and not run.is_simulated
    requests = server.chat_requests
    assert len(requests) == EaselStep.objects.filter(episode__run=run).count()
    assert all(r.headers.get("Authorization") == "Bearer sk-easel-test" for r in requests)
    for request in requests:
        urls = image_parts(request.body)
        assert urls and all(url.startswith("data:image/png;base64,") for url in urls)
        text = request_text(request.body)
        assert "Painter-Model-X" not in text and "painter-x-vision" not in text
    unparseable = EaselStep.objects.filter(episode__run=run, kind="invalid", raw__startswith="I think")
    assert unparseable.exists() and all(not s.valid and s.action is None for s in unparseable)
    assert run.usage["calls"] == len(requests) and run.episodes.filter(status="done").count() == 7


def test_the_handwriting_task_is_scored_by_a_named_recogniser(suite, provider_env):
    with FakeOpenAIServer(handler=EaselAgentHandler(submit_after=3)) as server:
        model = vision_model(server)
        run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent=model.display_name))
    hello = run.episodes.get(task__external_id="handwriting_hello")
    assert hello.recogniser.startswith("tesseract") and 0.0 <= hello.semantic_score <= 1.0


class AnswersThenDies:
    """The EASEL handler for ``calls`` requests, then a 400 (the client does not retry it): a worker dying."""

    def __init__(self, calls: int) -> None:
        self.inner = EaselAgentHandler(invalid_every=5)
        self.left = calls
        self.lock = threading.Lock()

    def __call__(self, request):
        with self.lock:
            self.left -= 1
            dead = self.left < 0
        return Fault.http(400) if dead else self.inner(request)


def fingerprint(run):
    return list(EaselStep.objects.filter(episode__run=run).order_by("episode__position", "index").values_list(
        "episode__task__external_id", "index", "raw", "valid", "kind", "s", "canvas_png"))


def test_a_killed_model_run_resumes_at_the_next_unstored_step_to_the_identical_episode(suite, provider_env, tmp_path):
    suite.tasks.filter(subtype="semantic").delete()
    with FakeOpenAIServer(handler=EaselAgentHandler(invalid_every=5)) as server:
        model = vision_model(server)
        uninterrupted = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent=model.display_name))
    provider_env.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "cache-second"  # the second run must really ask again
    with FakeOpenAIServer(handler=AnswersThenDies(40)) as dying:
        SubjectModel.objects.filter(pk=model.pk).update(base_url=dying.base_url)
        killed = services.easel_run_create(task_set=suite, agent=model.display_name)
        with pytest.raises(Exception, match="400"):
            services.easel_run_execute_inline(run=killed)
    killed.refresh_from_db()
    assert killed.steps_done == 40 and killed.status == EaselRun.Status.RUNNING
    with FakeOpenAIServer(handler=EaselAgentHandler(invalid_every=5)) as revived:
        SubjectModel.objects.filter(pk=model.pk).update(base_url=revived.base_url)
        resumed = services.easel_run_execute_inline(run=killed)
    assert len(revived.chat_requests) == resumed.steps_planned - 40  # resumed at step 41, nothing re-asked
    assert [row[1:] for row in fingerprint(resumed)] == [row[1:] for row in fingerprint(uninterrupted)]


def test_a_subject_model_without_an_endpoint_is_refused(suite):
    SubjectModel.objects.create(display_name="offline-model", role=SubjectModel.Role.SUBJECT)
    with pytest.raises(RunConfigurationError, match="no base URL"):
        services.easel_run_create(task_set=suite, agent="offline-model")


def test_the_agent_choices_list_only_models_with_an_endpoint(db):
    SubjectModel.objects.create(display_name="reachable", role=SubjectModel.Role.SUBJECT, base_url="http://127.0.0.1:9/v1")
    SubjectModel.objects.create(display_name="unreachable", role=SubjectModel.Role.SUBJECT)
    SubjectModel.objects.create(display_name="a-judge", role=SubjectModel.Role.JUDGE, base_url="http://127.0.0.1:9/v1")
    assert agents.agent_choices() == ["simulated", "painter", *agents.ANCHORS, "reachable"]


class HostileAgent:
    """Cycles through hostile replies, every third one a valid stroke: a huge integer where a number goes, a
    100,000-character string, a score claim, a JSON array of strokes."""

    STROKE = {"action": "brush_stroke", "xs": 0.1, "ys": 0.2, "xc": 0.5, "yc": 0.5, "xe": 0.9, "ye": 0.8, "rs": 0.3,
              "alpha_s": 1.0, "re": 0.3, "alpha_e": 1.0, "cr": 0.2, "cg": 0.4, "cb": 0.6}
    HOSTILE = [json.dumps({**STROKE, "rs": 10**400}), json.dumps({**STROKE, "cr": "red " * 25_000}),
               json.dumps({**STROKE, "score": 1.0, "done": True}), json.dumps([STROKE] * 1000)]

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, request):
        with self.lock:
            n = self.calls
            self.calls += 1
        return json.dumps(self.STROKE) if n % 3 == 2 else self.HOSTILE[(n // 3 * 2 + n % 3) % len(self.HOSTILE)]


def test_a_hostile_agents_malformed_replies_are_counted_invalid_and_the_run_finishes(suite, provider_env):
    # A reply holding an integer too large for a float (1 then 400 zeros) raised OverflowError in the action
    # check: the episode and the run failed, and again on every resume (the cached reply came back the same).
    suite.tasks.exclude(external_id=suite.tasks.filter(subtype="reconstruction").first().external_id).delete()
    with FakeOpenAIServer(handler=HostileAgent()) as server:
        model = vision_model(server)
        run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent=model.display_name))
    assert run.status == EaselRun.Status.DONE
    episode = run.episodes.get()
    steps = list(EaselStep.objects.filter(episode=episode).order_by("index"))
    assert len(steps) == episode.budget == 32
    assert [s.valid for s in steps] == [k % 3 == 2 for k in range(32)]
    assert episode.invalid_rate == pytest.approx(sum(k % 3 != 2 for k in range(32)) / 32)
    assert any("rs=" in s.error for s in steps) and all(len(s.error) < 600 for s in steps)
    assert all(s.action is None for s in steps if not s.valid) and all(s.s is not None for s in steps)


def test_a_model_run_records_its_prompt_versions_and_a_callers_config_cannot_name_others(suite):
    from engine.easel.agent import AGENT_PROMPT_VERSION

    with FakeOpenAIServer(handler=EaselAgentHandler()) as server:
        model = vision_model(server)
        run = services.easel_run_create(task_set=suite, agent=model.display_name,
                                        config={"agent_prompt_version": "forged"})
    simulated = services.easel_run_create(task_set=suite, agent="simulated", skill=0.5)
    assert run.config["agent_prompt_version"] == AGENT_PROMPT_VERSION
    assert "agent_prompt_version" not in simulated.config  # the simulated agent reads no prompt


def test_a_model_run_made_with_another_agent_prompt_is_refused_before_a_step_is_asked(suite, provider_env):
    with FakeOpenAIServer(handler=EaselAgentHandler()) as server:
        model = vision_model(server)
        run = services.easel_run_create(task_set=suite, agent=model.display_name)
        EaselRun.objects.filter(pk=run.pk).update(config={**run.config, "agent_prompt_version": "easel-agent-v0"})
        episode = run.episodes.order_by("position").first()
        with pytest.raises(RunConfigurationError, match=r"agent_prompt_version 'easel-agent-v0', this code "
                                                        r"'easel-agent-v1'.*start a new run"):
            services.easel_episode_execute(run_id=run.pk, episode_id=episode.pk)
    assert server.chat_requests == [] and not EaselStep.objects.filter(episode__run=run).exists()
