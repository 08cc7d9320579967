"""One small run of each protocol, made the way its service makes it, and how to tell its results are
present: the lifecycle's rules are tested once per protocol, parametrised over these."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from rest_framework.test import APIClient

from leaderboard.api_tokens.services import api_token_create
from leaderboard.runs.models import RunJob


@dataclass(frozen=True)
class ProtocolCase:
    name: str
    api: str  #: the run's path under /api/v1/
    make_run: Callable[[], RunJob]
    results_present: Callable[[RunJob], bool]


def _judge_run() -> RunJob:
    from tests.leaderboard.judging_factories import population, simulated_run

    task_set, models = population(n_models=3, n_tasks=2, name="lifecycle")
    return simulated_run(task_set, models, budget=3)


def _easel_run() -> RunJob:
    from leaderboard.easel import services

    suite, _ = services.easel_suite_create(
        seed=0, per_category={"programmatic": 2, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 0},
        name="easel-lifecycle")
    return services.easel_run_create(task_set=suite, agent="simulated", skill=0.5)


def _c2_run() -> RunJob:
    from leaderboard.c2.services import runs
    from leaderboard.c2.services.imports import c2_tasks_import

    trivia = {"Data": [{"Question": "Which planet is red?", "QuestionId": "q1",
                        "Answer": {"Value": "Mars", "NormalizedAliases": ["mars"]}}]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="c2-lifecycle", version="1")
    return runs.c2_run_create(task_set=task_set, model_names=["simulated-a", "simulated-b"], n_samples=2)


def _judge_results(run) -> bool:
    # one snapshot, with a leaderboard row for each of the run's three models
    from engine.leaderboard_exports import model_rows

    (snapshot,) = run.snapshots.all()
    return len(model_rows(snapshot.payload)) == 3


def _easel_results(run) -> bool:
    # every episode finished with its score (S for a reconstruction, the semantic score otherwise)
    return (run.episodes.filter(status="done").exclude(final_s=None, semantic_score=None).count()
            == run.episodes_done == run.episodes_total > 0)


def _c2_results(run) -> bool:
    # stored results with a score row for each of the run's two models
    return run.results is not None and sorted(run.results["scores"]) == ["simulated-a", "simulated-b"]


CASES = {
    "judge": ProtocolCase("judge", "judge-runs", _judge_run, _judge_results),
    "easel": ProtocolCase("easel", "easel/runs", _easel_run, _easel_results),
    "c2": ProtocolCase("c2", "c2/runs", _c2_run, _c2_results),
}


@pytest.fixture(params=sorted(CASES))
def protocol(request, settings, tmp_path) -> ProtocolCase:
    settings.ATELIER_EMBED_CACHE_DIR = tmp_path / "embed-cache"
    return CASES[request.param]


@pytest.fixture
def api(rita) -> APIClient:
    _, secret = api_token_create(user=rita, name="lifecycle")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client
