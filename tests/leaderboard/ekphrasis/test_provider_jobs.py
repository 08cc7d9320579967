"""Provider-backed jobs against a fake OpenAI-compatible server on loopback: a judge run, generation
and the LLM splitter, configured by database rows and an environment variable alone."""

from __future__ import annotations

import json
import re

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import ChecklistItem, Comparison
from leaderboard.ekphrasis.provider_jobs import responses_generate, responses_split_with_llm
from leaderboard.models import Response, SubjectModel
from tests.factories import TaskFactory, TaskSetFactory
from tests.fakes.openai_server import FakeOpenAIServer
from tests.leaderboard.judging_factories import population

pytestmark = pytest.mark.django_db
SECRET = "sk-test-not-a-real-key-123"


@pytest.fixture(autouse=True)
def provider_environment(settings, tmp_path, monkeypatch):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "cache"
    monkeypatch.setenv("FAKE_PROVIDER_KEY", SECRET)


def endpoint_model(server, name, role=SubjectModel.Role.SUBJECT) -> SubjectModel:
    return SubjectModel.objects.create(
        display_name=name, role=role, provider_id=f"fake/{name}", base_url=server.base_url,
        api_key_env="FAKE_PROVIDER_KEY",
    )


def judge_reply(request: dict) -> str:
    """Checklist prompts get three items; pairwise prompts prefer the longer response."""
    prompt = request["messages"][-1]["content"]
    if "Response A" not in prompt:
        from engine.checklists import SLOTS, Dimension

        dimension = next(d for d in Dimension if f'"{d.value}"' in prompt)
        return json.dumps({"dimension": dimension.value, "items": [
            {"slot": slot, "item": f"Judge-written item about {slot.replace('_', ' ')}?"} for slot in SLOTS[dimension]
        ]})
    dimension = re.search(r'"dimension":\s*"(\w+)"', prompt)
    a = prompt.split("Response A", 1)[1].split("Response B", 1)[0]
    b = prompt.split("Response B", 1)[1]
    winner = "A" if len(a) >= len(b) else "B"
    items = [
        {"item_index": i, "item": f"item {i}", "winner": winner, "confidence": 0.8,
         "evidence_a": "quote a", "evidence_b": "quote b", "rationale": "clearer"}
        for i in (1, 2, 3)
    ]
    return json.dumps({
        "dimension": dimension.group(1) if dimension else "usefulness", "winner": winner, "confidence": 0.8,
        "overall_rationale": "one is more specific", "per_item_outcomes": items,
    })


def test_a_judge_run_reaches_any_openai_compatible_endpoint_by_configuration(settings):
    task_set, models = population(n_models=4, n_tasks=2)
    with FakeOpenAIServer(handler=judge_reply) as server:
        endpoint_model(server, "fake-judge", role=SubjectModel.Role.JUDGE)
        run = judge_runs.judge_run_create(task_set=task_set, judge_name="fake-judge", dimensions="U",
                                          budget_per_task=6, config={"n_boot": 50})
        snapshot = judge_runs.judge_run_execute_inline(run=run)
        requests = server.chat_requests
    assert not run.is_simulated and snapshot.judge_name == "fake-judge"
    items = ChecklistItem.objects.filter(task__task_set=task_set, dimension="U")
    assert items.count() == 2 * 3 and set(items.values_list("source", flat=True)) == {"judge"}
    assert Comparison.objects.filter(run=run, status="ok", kind="primary").count() == 2 * 6
    assert requests and all(r.headers.get("Authorization") == f"Bearer {SECRET}" for r in requests)
    assert all(r.body["model"] == "fake/fake-judge" for r in requests)
    for m in models:  # blind: no model name in any judge prompt
        assert not any(m.display_name in json.dumps(r.body) for r in requests)
    run.refresh_from_db()
    assert run.usage["calls"] >= 12 and SECRET not in json.dumps(run.usage)


def test_generation_imports_three_samples_with_sample_one_primary_and_resends_nothing_on_rerun():
    task_set = TaskSetFactory()
    for k in range(2):
        TaskFactory(task_set=task_set, external_id=f"g{k}")
    answer = "**Core Idea:** A kite made of receipts.\n\n**Visual Description:** A receipt kite over a beach."
    with FakeOpenAIServer(handler=lambda request: answer) as server:
        model = endpoint_model(server, "generator")
        first = responses_generate(task_set=task_set, model=model)
        sent = len(server.chat_requests)
        again = responses_generate(task_set=task_set, model=model)
        assert len(server.chat_requests) == sent == 6
    assert first.imported.created == 6 and again.imported.unchanged == 6
    assert set(Response.objects.filter(is_primary=True).values_list("sample", flat=True)) == {1}
    temperatures = {r["temperature"] for r in (req.body for req in server.chat_requests)}
    assert temperatures == {0.7}


def test_llm_splitter_splits_what_the_parser_could_not():
    task_set, _ = population(n_models=2, n_tasks=1)
    pending = Response.objects.first()
    Response.objects.filter(pk=pending.pk).update(
        normalisation_method=Response.Normalisation.PENDING, core_idea="", visual_description="",
        raw_text="I'd paint a kite of receipts over a grey beach, strings tangled in the foreground.",
    )
    reply = json.dumps({"idea": "I'd paint a kite of receipts", "visual_description": "over a grey beach, strings tangled in the foreground."})
    with FakeOpenAIServer(handler=lambda request: reply) as server:
        splitter = endpoint_model(server, "splitter")
        split, still = responses_split_with_llm(task_set=task_set, splitter=splitter)
    pending.refresh_from_db()
    assert (split, still) == (1, 0)
    assert pending.normalisation_method == "llm" and pending.core_idea == "I'd paint a kite of receipts"
    assert pending.normalisation_model == "fake/splitter" and pending.normalisation_attempts == 1


@pytest.mark.django_db
@pytest.mark.parametrize(("option", "value", "message"), [("--samples", "0", "samples must be at least 1"),
                                                          ("--temperature", "2.5", r"temperature must lie in \[0, 2\]")])
def test_generate_responses_refuses_a_bad_value_before_any_response(option, value, message):
    import io

    from django.core.management import CommandError, call_command

    task_set = TaskSetFactory()
    TaskFactory(task_set=task_set)
    model = option == "--temperature" and SubjectModel.objects.create(display_name="m", base_url="http://127.0.0.1:9/v1")
    name = model.display_name if model else "simulated-x"
    with pytest.raises(CommandError, match=message):
        call_command("generate_responses", "--task-set", task_set.name, "--model", name, option, value,
                     stdout=io.StringIO())
    assert not Response.objects.exists()
