"""schemathesis against the live /api/v1/ schema, as each role (annotator, researcher, admin).

The schema is loaded from the running WSGI application (``/api/v1/schema/``) with each role's token; every
operation gets a bounded number of generated requests (``EXAMPLES_PER_OPERATION``), half of them aimed at
objects that exist. Every response must be no 500 and match the schema (status code, content type,
headers, body), and no annotator response may carry a model name, provider id or a score key (the
blinding crawl of tests/annotation/test_blinding.py, extended to the API).
"""

from __future__ import annotations

import itertools
import json

import pytest
import schemathesis
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis import GenerationMode
from schemathesis import checks as st_checks

from leaderboard.api_tokens.services import api_token_create
from leaderboard.c2.services import runs as c2_runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.easel import services as easel_services
from leaderboard.ekphrasis import judge_runs
from tests.annotation.factories import MODEL_NAMES, Catalogue, pairwise_campaign
from tests.factories import UserFactory
from tests.leaderboard.judging_factories import simulated_run

pytestmark = pytest.mark.django_db

#: Generated requests per operation, role and mode (bounded: the whole test stays under 90 s).
EXAMPLES_PER_OPERATION = 5
#: Valid requests (must be answered as documented) and invalid ones (must be refused as documented, never a 500).
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
_CONFORMANCE = [st_checks.not_a_server_error, st_checks.status_code_conformance,
                st_checks.content_type_conformance, st_checks.response_schema_conformance]
CHECKS = {GenerationMode.POSITIVE: _CONFORMANCE, GenerationMode.NEGATIVE: _CONFORMANCE}
SMALL_SUITE = {"programmatic": 1, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 0}
#: Keys an annotator response must never contain (as in the blinding crawl).
FORBIDDEN_KEYS = {"model", "model_id", "response_id", "render_id", "item_id", "subject_model", "score", "scores",
                  "theta", "gold_answer", "annotator", "labels", "judge", "run_id", "winner", "is_simulated",
                  "filename", "overall", "display_name", "provider_id"}


@pytest.fixture
def wsgi_app():
    """The site's WSGI entry as gunicorn loads it (``evalsite.wsgi.application``, the charset set-aside
    included) on the test database: like Django's test client, keep the connection open between requests
    (the test's transaction holds the data)."""
    from evalsite.wsgi import application

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield application
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ATELIER_API_TOKEN_WRITE_RATE = "100000/minute"
    cache.clear()
    users = {
        "annotator": UserFactory(username="alice", role="annotator"),
        "researcher": UserFactory(username="rita", role="researcher"),
        "admin": UserFactory(username="adam", role="admin"),
    }
    catalogue = Catalogue(n_tasks=2)
    campaign = pairwise_campaign(catalogue, annotators=[users["annotator"]])
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(catalogue.task_set, catalogue.models, budget=4))
    suite, _ = easel_services.easel_suite_create(seed=0, per_category=SMALL_SUITE, name="easel-schemathesis")
    easel_run = easel_services.easel_run_create(task_set=suite, agent="simulated", skill=0.5)
    c2_task_set, _ = c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sea.\n",
                                     task_set_name="c2-schemathesis", version="1")
    c2_run = c2_runs.c2_run_create(task_set=c2_task_set, model_names=["simulated-a"], n_samples=2, rater_name="simulated")
    known = {
        "task-sets": [catalogue.task_set.pk, suite.pk], "subject-models": [m.pk for m in catalogue.models],
        "judge-runs": [snapshot.run_id], "leaderboards": [snapshot.pk], "campaigns": [campaign.pk],
        "easel/runs": [easel_run.pk], "easel/episodes": list(easel_run.episodes.values_list("pk", flat=True)[:2]),
        "c2/runs": [c2_run.pk],
        "task-set-of": {"ekphrasis": catalogue.task_set.pk, "easel": suite.pk, "c2": c2_task_set.pk},
    }
    return users, known, catalogue


def _aim_at_known_object(case, known: dict, index: int) -> None:
    """Every other example targets an object that exists (random ids are nearly always 404s)."""
    if index % 2:
        return
    path = case.operation.path.removeprefix("/api/v1/")
    if isinstance(case.body, dict) and "task_set" in case.body:
        kind = next((k for k in ("easel", "c2") if path.startswith(k)), "ekphrasis")
        case.body["task_set"] = known["task-set-of"][kind]
    if "id" not in (case.path_parameters or {}):
        return
    for prefix, ids in known.items():
        if path.startswith(prefix) or path.startswith(f"annotate/{prefix}"):
            case.path_parameters["id"] = ids[index // 2 % len(ids)]
            return


def _assert_blind(body: bytes, catalogue) -> None:
    text = body.decode("utf-8", "replace")
    for model in catalogue.models:
        assert model.display_name not in text and model.provider_id not in text
    for name in MODEL_NAMES:
        assert name not in text
    try:
        value = json.loads(text)
    except ValueError:
        return
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            assert not (FORBIDDEN_KEYS & set(item)), sorted(FORBIDDEN_KEYS & set(item))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# One test per role, so that a parallel run (make test: pytest -n) spreads the roles over its workers.
@pytest.mark.parametrize("role", ["annotator", "researcher", "admin"])
def test_every_operation_conforms_to_the_schema_for_the_role(world, wsgi_app, role):
    users, known, catalogue = world
    app = wsgi_app
    counts: dict[str, int] = {}
    statuses: dict[int, int] = {}
    user = users[role]
    _, secret = api_token_create(user=user, name=f"schemathesis {role}")
    auth = {"Authorization": f"Bearer {secret}"}
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", app, headers=auth)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 40
    for operation, mode in itertools.product(operations, MODES):
        seen = {"n": 0}

        @given(case=operation.as_strategy(generation_mode=mode))
        @hypothesis_settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                             phases=[Phase.explicit, Phase.generate],
                             suppress_health_check=list(HealthCheck))
        def exercise(case):
            _aim_at_known_object(case, known, seen["n"])
            seen["n"] += 1
            response = case.call(headers=auth)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            case.validate_response(response, headers=auth, checks=CHECKS[mode])
            if role == "annotator":
                _assert_blind(response.content, catalogue)

        exercise()
        counts[(role, mode.value)] = counts.get((role, mode.value), 0) + seen["n"]
    print(f"schemathesis examples as {role}: {counts}; statuses: {dict(sorted(statuses.items()))}")
    assert all(counts[(role, mode.value)] >= len(operations) for mode in MODES)
