"""Typed Idea Graphs in the site: lazily materialised leave-two-models-out Novelty items, the generic
ablation, audit outcomes flowing back, and the researcher-only viewer."""

from __future__ import annotations

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import ChecklistItem, Comparison
from leaderboard.ekphrasis.tig import novelty_context_items, task_population_index, tig_audit_apply
from leaderboard.runs.errors import RunConfigurationError
from tests.factories import PASSWORD, ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory

pytestmark = pytest.mark.django_db

CLICHE = [
    "An hourglass whose sand drains away as the day passes.",
    "A giant hourglass with sand slipping through its narrow waist.",
    "Sand pouring through an hourglass on a quiet table.",
]
UNIQUE = {
    "a": ["A subway map whose stations collapse into missed deadlines.",
          "A tailor's measuring tape unspooling into a river delta.",
          "A library card stamped with the dates of every season."],
    "b": ["A violin bow worn down into a pencil stub.",
          "A staircase of stacked calendars sinking into moss.",
          "Footprints in fresh snow that fade towards the horizon."],
}


@pytest.fixture
def planted():
    """Models c and d always use the hourglass cliché; a and b never do."""
    task_set = TaskSetFactory()
    task = TaskFactory(task_set=task_set)
    models = {name: SubjectModelFactory(display_name=f"tig-{name}") for name in "abcd"}
    for name, model in models.items():
        ideas = CLICHE if name in "cd" else UNIQUE[name]
        for sample, idea in enumerate(ideas, start=1):
            ResponseFactory(task=task, subject_model=model, sample=sample, is_primary=sample == 1, core_idea=idea)
    return task_set, task, models


def context_text(task, x, y) -> str:
    rows = novelty_context_items(task=task, model_x_id=x.pk, model_y_id=y.pk, index=task_population_index(task))
    return rows[0].text if rows else ""


def test_the_pair_that_avoids_the_cliche_is_judged_against_it(planted):
    _, task, m = planted
    assert "hourglass" in context_text(task, m["a"], m["b"]) or "sand" in context_text(task, m["a"], m["b"])


def test_a_motif_used_only_by_the_two_candidates_never_reaches_their_context(planted):
    _, task, m = planted
    text = context_text(task, m["c"], m["d"])
    assert "hourglass" not in text and "sand" not in text


def test_context_items_are_stored_once_per_pair_and_population_version(planted):
    _, task, m = planted
    context_text(task, m["a"], m["b"])
    context_text(task, m["a"], m["b"])
    assert ChecklistItem.objects.filter(task=task, source="tig").count() == 1


def test_novelty_judge_sees_the_tig_item_in_slot_one(planted):
    task_set, _, m = planted
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N",
                                      budget_per_task=20, config={"n_boot": 50})
    judge_runs.judge_run_execute_inline(run=run)
    ab = Comparison.objects.filter(run=run, model_x=min(m["a"].pk, m["b"].pk), model_y=max(m["a"].pk, m["b"].pk)).first()
    assert ab is not None and ab.checklist[0]["source"] == "tig"
    cd = Comparison.objects.filter(run=run, model_x=min(m["c"].pk, m["d"].pk), model_y=max(m["c"].pk, m["d"].pk))
    assert cd.exists()  # the warm start covers every model, and the active rounds reach this pair too
    for row in cd:  # the candidates' own cliché never anchors their comparison
        assert "hourglass" not in row.checklist[0]["text"] and "sand" not in row.checklist[0]["text"]


def test_generic_anchor_runs_use_no_population_items(planted):
    task_set, _, _ = planted
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N",
                                      budget_per_task=6, novelty_anchor="generic", config={"n_boot": 50})
    judge_runs.judge_run_execute_inline(run=run)
    sources = {c["source"] for row in Comparison.objects.filter(run=run, kind="primary") for c in row.checklist}
    assert sources == {"template"}


def test_an_excluded_item_is_not_used_again_and_a_revision_replaces_the_wording(planted):
    _, task, m = planted
    index = task_population_index(task)
    item = novelty_context_items(task=task, model_x_id=m["a"].pk, model_y_id=m["b"].pk, index=index)[0]
    revised = tig_audit_apply(item_id=item.pk, action="revise", revision="Which response avoids the hourglass?")
    assert novelty_context_items(task=task, model_x_id=m["a"].pk, model_y_id=m["b"].pk, index=index)[0].pk == revised.pk
    tig_audit_apply(item_id=revised.pk, action="exclude", note="leaks a candidate's motif")
    assert novelty_context_items(task=task, model_x_id=m["a"].pk, model_y_id=m["b"].pk, index=index) == []


def test_contexts_made_in_one_insert_are_stored_as_returned_and_read_back_the_same(planted):
    # a round's missing contexts go in one statement (one JSON document on PostgreSQL): every returned row
    # must be the stored row, id included, and the next read of the task's contexts must give the same items
    from itertools import combinations

    from leaderboard.ekphrasis.tig import novelty_contexts_create, stored_novelty_contexts, tig_context_key

    _, task, m = planted
    index = task_population_index(task)
    pairs = [(x.pk, y.pk) for x, y in combinations(m.values(), 2)]
    made = novelty_contexts_create(task=task, pairs=[*pairs, pairs[0]], index=index)
    assert list(made) == pairs
    stored = ChecklistItem.objects.filter(task=task, source="tig")
    assert stored.count() == len(pairs)
    by_key = {row.context_key: row for row in stored}
    fields = ("task_id", "dimension", "slot", "context_key", "text", "inspects", "source", "version", "active",
              "provenance", "created_at")
    for (x, y), rows in made.items():
        row = by_key[tig_context_key(x, y, index.version)]
        assert all(r.pk == row.pk for r in rows)
        assert [(r.pk, *(getattr(r, f) for f in fields)) for r in rows] == \
            ([(row.pk, *(getattr(row, f) for f in fields))] if row.active else [])
    again = stored_novelty_contexts(task=task, version=index.version)
    assert {key: [r.pk for r in rows] for key, rows in again.items()} == \
        {tig_context_key(x, y, index.version): [r.pk for r in rows] for (x, y), rows in made.items()}
    assert any(rows for rows in made.values()) and any(not rows for rows in made.values())


def test_a_run_makes_and_reads_its_novelty_contexts_as_plain_records_not_model_instances(planted, monkeypatch):
    # a paper-scale run makes ~19,000 context items: as ChecklistItem instances their construction cost more
    # than their insert. On PostgreSQL none is made (elsewhere bulk_create needs them); none is read back.
    from itertools import combinations

    from django.db import connection

    from leaderboard.ekphrasis.tig import (
        ContextItem,
        novelty_contexts_create,
        stored_novelty_contexts,
        tig_context_key,
    )

    _, task, m = planted
    index = task_population_index(task)
    pairs = [(x.pk, y.pk) for x, y in combinations(m.values(), 2)]
    constructed = []
    real_init = ChecklistItem.__init__

    def counted(self, *args, **kwargs):
        constructed.append(1)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(ChecklistItem, "__init__", counted)
    made = novelty_contexts_create(task=task, pairs=pairs, index=index)
    assert len(constructed) == (0 if connection.vendor == "postgresql" else len(pairs))
    constructed.clear()
    again = stored_novelty_contexts(task=task, version=index.version)
    assert constructed == []
    items = [item for rows in [*made.values(), *again.values()] for item in rows]
    assert items and all(type(item) is ContextItem for item in items)
    # read back exactly as made, every field
    assert again == {tig_context_key(x, y, index.version): rows for (x, y), rows in made.items()}


def test_contexts_are_made_in_one_statement_on_postgresql_with_no_transaction_around_it(planted):
    from itertools import combinations

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from leaderboard.ekphrasis.tig import novelty_contexts_create

    if connection.vendor != "postgresql":
        pytest.skip("one statement on PostgreSQL; bulk_create in a transaction elsewhere")
    _, task, m = planted
    index = task_population_index(task)
    pairs = [(x.pk, y.pk) for x, y in combinations(m.values(), 2)]
    with CaptureQueriesContext(connection) as queries:
        made = novelty_contexts_create(task=task, pairs=pairs, index=index)
    # a savepoint here is a BEGIN and a COMMIT outside the test's transaction: two round trips for nothing
    assert [q["sql"].split()[0] for q in queries] == ["INSERT"]
    assert len(made) == len(pairs)


def test_viewer_is_for_researchers_only(client, rita, alice, planted):
    task_set, task, _ = planted
    url = f"/task-sets/{task_set.pk}/tig/{task.pk}/"
    client.login(username=alice.username, password=PASSWORD)
    assert client.get(url).status_code == 403
    client.login(username=rita.username, password=PASSWORD)
    body = client.get(url).content.decode()
    assert "<svg" in body and "ClicheScore" in body


def test_viewer_cites_app_g3_for_the_cliche_score_formula(client, rita, planted):
    """The ClicheScore formula (0.45 ModelCov + 0.35 Cent + 0.20 Conv) is stated in Ekphrasis App. G.3; G.4 is the
    clustering. The viewer's caption cited G.4."""
    task_set, task, _ = planted
    client.login(username=rita.username, password=PASSWORD)
    body = client.get(f"/task-sets/{task_set.pk}/tig/{task.pk}/").content.decode()
    assert "ClicheScore = 0.45·ModelCov + 0.35·Cent + 0.20·Conv (App. G.3)." in body


def test_viewer_takes_a_build_query_of_non_ascii_digits_for_no_build_not_a_500(client, rita, planted):
    # "²" passes str.isdigit() but int() refuses it
    task_set, task, _ = planted
    client.login(username=rita.username, password=PASSWORD)
    response = client.get(f"/task-sets/{task_set.pk}/tig/{task.pk}/?build=%C2%B2")
    assert response.status_code == 200 and "no finished TIG build" in response.content.decode()


@pytest.mark.parametrize("pair", ["999998,999999", "same"])
def test_viewer_refuses_a_pair_that_is_not_two_models_of_the_task_set_instead_of_showing_everyone(
        client, rita, planted, pair):
    # a pair of unknown models left nobody out, so the whole population was shown as "that pair's" context
    task_set, task, _ = planted
    if pair == "same":
        model = task_set.tasks.first().responses.first().subject_model_id
        pair = f"{model},{model}"
    client.login(username=rita.username, password=PASSWORD)
    response = client.get(f"/task-sets/{task_set.pk}/tig/{task.pk}/?pair={pair}")
    body = response.content.decode()
    assert response.status_code == 200
    assert f"pair {pair} is not two different subject models of this task set" in body
    assert response.context["pair"] is None


# -- builds: chosen extractor and embedder, live status, resumption ----------------------------------


def is_extraction(text: str) -> bool:
    """Whether a message (or a request's JSON) is the extraction prompt's user turn, not a grouping one."""
    return "Core Idea (data, not instructions)" in text


def offline_atoms_reply(request: dict) -> str:
    """A provider extractor that answers like a model would: the typed atoms of the framed Core Idea."""
    import json

    from engine.tig.atoms import IdeaRecord
    from engine.tig.offline import OfflineExtractor
    from tests.fakes.obedient_model import text_in_frame

    content = next(m["content"] for m in request["messages"] if is_extraction(m["content"]))
    idea = text_in_frame(content, "IDEA")
    extracted = OfflineExtractor().extract(IdeaRecord("m", 1, idea))
    atoms = [{"id": k, "type": a.type, "text": a.label} for k, a in enumerate(extracted.atoms, start=1)]
    return json.dumps({"atoms": atoms, "relations": []})


@pytest.fixture
def provider_components(settings, tmp_path):
    """A judge-role extractor and an embedder-role model served by the fake OpenAI-compatible server."""
    from tests.fakes import FakeOpenAIServer

    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"
    settings.ATELIER_EMBED_CACHE_DIR = tmp_path / "embed-cache"
    with FakeOpenAIServer(handler=offline_atoms_reply) as server:
        SubjectModelFactory(display_name="fake-extractor", role="judge", base_url=server.base_url, provider_id="fake/x")
        SubjectModelFactory(display_name="fake-embed", role="embedder", base_url=server.base_url, provider_id="fake/e")
        yield server


def test_a_build_names_the_known_components_when_one_is_unknown(planted):
    from leaderboard.ekphrasis.tig import TIGConfigurationError, tig_build_create

    task_set, _, _ = planted
    with pytest.raises(TIGConfigurationError, match="no judge-role model named 'gpt-x'.*'offline'"):
        tig_build_create(task_set=task_set, extractor="gpt-x")
    with pytest.raises(TIGConfigurationError, match="embedder-role"):
        tig_build_create(task_set=task_set, embedder="tig-a")  # a subject model is not an embedder
    with pytest.raises(TIGConfigurationError, match="choose a provider extractor"):
        tig_build_create(task_set=task_set, canonicaliser="llm")


def test_an_offline_build_extracts_every_response_once_and_a_second_execution_is_a_no_op(planted):
    from engine.tig.offline import OFFLINE_EXTRACTOR_NAME
    from leaderboard.ekphrasis.models import AtomExtraction, TIGBuild
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute

    task_set, _, _ = planted
    build = tig_build_execute(build_id=tig_build_create(task_set=task_set).pk)
    assert (build.status, build.tasks_done, build.tasks_total) == (TIGBuild.Status.DONE, 1, 1)
    assert build.responses_extracted == build.responses_total == 12
    assert AtomExtraction.objects.filter(extractor=OFFLINE_EXTRACTOR_NAME).count() == 12
    finished = build.finished_at
    assert tig_build_execute(build_id=build.pk).finished_at == finished


def test_a_provider_build_extracts_through_the_model_and_embeds_through_the_endpoint(planted, provider_components):
    from engine.tig.llm import EXTRACTION_PROMPT_VERSION
    from leaderboard.ekphrasis.models import AtomExtraction
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute

    task_set, _, _ = planted
    server = provider_components
    build = tig_build_execute(
        build_id=tig_build_create(task_set=task_set, extractor="fake-extractor", embedder="fake-embed").pk
    )
    assert build.status == "done"
    first_turns = [r for r in server.chat_requests if len(r.body["messages"]) == 2]  # repairs add turns
    # c and d share their three Core Ideas word for word: the request cache asks about each text once
    assert len(first_turns) == 9 and {r.body["model"] for r in server.chat_requests} == {"fake/x"}
    assert server.embedding_requests and {r.body["model"] for r in server.embedding_requests} == {"fake/e"}
    assert AtomExtraction.objects.filter(extractor=f"llm:fake/x@{EXTRACTION_PROMPT_VERSION}").count() == 12


def test_a_failed_build_resumes_without_extracting_again(planted, provider_components):
    from leaderboard.ekphrasis.models import TIGBuild
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute
    from tests.fakes import Fault

    task_set, _, _ = planted
    server = provider_components
    server.embedding_handler = lambda request: Fault.http(500)
    build = tig_build_create(task_set=task_set, extractor="fake-extractor", embedder="fake-embed")
    with pytest.raises(Exception):
        tig_build_execute(build_id=build.pk)
    build.refresh_from_db()
    assert build.status == TIGBuild.Status.FAILED and "500" in build.error
    assert build.responses_extracted == 12  # extraction was stored before embedding failed
    calls = len(server.chat_requests)
    server.embedding_handler = None
    assert tig_build_execute(build_id=build.pk).status == TIGBuild.Status.DONE
    assert len(server.chat_requests) == calls


def test_a_new_run_judges_novelty_with_the_latest_build_components(planted, provider_components):
    from leaderboard.ekphrasis.tig import (
        TIGComponents,
        task_population_index,
        tig_build_create,
        tig_build_execute,
        tig_context_key,
    )

    task_set, task, m = planted
    tig_build_execute(build_id=tig_build_create(task_set=task_set, extractor="fake-extractor", embedder="fake-embed").pk)
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N", budget_per_task=12)
    assert run.config["tig"] == {"extractor": "fake-extractor", "embedder": "fake-embed", "canonicaliser": "embedding"}
    calls = len(provider_components.chat_requests)
    judge_runs.judge_run_execute_inline(run=run)
    assert len(provider_components.chat_requests) == calls  # every response's atoms came from the build
    provider = task_population_index(task, components=TIGComponents("fake-extractor", "fake-embed")).version
    offline = task_population_index(task).version
    keys = set(ChecklistItem.objects.filter(task=task, source="tig").values_list("context_key", flat=True))
    assert keys and all(k.endswith(f"@{provider}") for k in keys) and provider != offline
    assert tig_context_key(m["a"].pk, m["b"].pk, provider) in keys


def test_a_run_can_ask_for_other_components_than_the_latest_build(planted, provider_components):
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute

    task_set, _, _ = planted
    tig_build_execute(build_id=tig_build_create(task_set=task_set, extractor="fake-extractor").pk)
    run = judge_runs.judge_run_create(
        task_set=task_set, judge_name="simulated", config={"tig": {"extractor": "offline", "embedder": ""}}
    )
    assert run.config["tig"] == {"extractor": "offline", "embedder": "minilm", "canonicaliser": "embedding"}
    with pytest.raises(RunConfigurationError, match="no embedder-role model named 'nope'"):
        judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", config={"tig": {"embedder": "nope"}})


def test_the_build_page_starts_a_build_and_reports_its_status(
    client, rita, alice, planted, django_capture_on_commit_callbacks
):
    from leaderboard.ekphrasis.models import TIGBuild

    task_set, _, _ = planted
    client.login(username=alice.username, password=PASSWORD)
    assert client.post(f"/task-sets/{task_set.pk}/tig-builds/new/", {"extractor": "offline", "embedder": "minilm"}).status_code == 403
    assert not TIGBuild.objects.exists()
    client.login(username=rita.username, password=PASSWORD)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(f"/task-sets/{task_set.pk}/tig-builds/new/", {"extractor": "offline", "embedder": "minilm"})
    build = TIGBuild.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/task-sets/{task_set.pk}/tig-builds/{build.pk}/"
    page = client.get(answer["Location"]).content.decode()
    assert "offline fallback extractor" in page and "status.json" in page
    status = client.get(f"/task-sets/{task_set.pk}/tig-builds/{build.pk}/status.json").json()
    # Without a broker Celery runs in-process, so the build has finished by the time the page loads.
    assert status["status"] == "done" and status["tasks_done"] == status["tasks_total"] == 1
    assert status["responses_extracted"] == 12 and status["share"] == 1.0
    viewer = client.get(f"/task-sets/{task_set.pk}/tig/{planted[1].pk}/?build={build.pk}").content.decode()
    assert f"from TIG build #{build.pk}" in viewer


def test_the_task_set_page_lists_builds_and_offers_provider_components(client, rita, planted, provider_components):
    task_set, _, _ = planted
    client.login(username=rita.username, password=PASSWORD)
    page = client.get(f"/task-sets/{task_set.pk}/").content.decode()
    assert "<option>fake-extractor</option>" in page and "<option>fake-embed</option>" in page
    assert "No build yet" in page


def test_a_failed_build_is_resumed_from_its_page(client, rita, planted, django_capture_on_commit_callbacks):
    from leaderboard.ekphrasis.models import TIGBuild
    from leaderboard.ekphrasis.tig import tig_build_create

    task_set, _, _ = planted
    build = tig_build_create(task_set=task_set)
    TIGBuild.objects.filter(pk=build.pk).update(status=TIGBuild.Status.FAILED, error="worker lost")
    client.login(username=rita.username, password=PASSWORD)
    assert "Resume the build" in client.get(f"/task-sets/{task_set.pk}/tig-builds/{build.pk}/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/task-sets/{task_set.pk}/tig-builds/{build.pk}/resume")
    build.refresh_from_db()
    assert build.status == TIGBuild.Status.DONE and build.error == ""


def test_build_tig_command_rejects_an_unknown_extractor_and_resumes_a_build(planted):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from leaderboard.ekphrasis.models import TIGBuild
    from leaderboard.ekphrasis.tig import tig_build_create

    task_set, _, _ = planted
    with pytest.raises(CommandError, match="no judge-role model named 'nope'"):
        call_command("build_tig", "--task-set", task_set.name, "--extractor", "nope")
    build = tig_build_create(task_set=task_set)
    call_command("build_tig", "--resume", str(build.pk))
    build.refresh_from_db()
    assert build.status == TIGBuild.Status.DONE


# -- the prompts a build was made with (leaderboard.runs.lifecycle) ----------------------------------------


def test_a_provider_build_records_its_prompt_versions_and_an_offline_build_none(planted, provider_components):
    from engine.tig.llm import CANONICALISATION_PROMPT_VERSION, EXTRACTION_PROMPT_VERSION
    from leaderboard.ekphrasis.tig import tig_build_create

    task_set, _, _ = planted
    assert tig_build_create(task_set=task_set).config == {}  # the offline rules read no prompt
    build = tig_build_create(task_set=task_set, extractor="fake-extractor", embedder="fake-embed", canonicaliser="llm")
    assert build.config == {"tig_extraction_prompt_version": EXTRACTION_PROMPT_VERSION,
                            "tig_canonicalisation_prompt_version": CANONICALISATION_PROMPT_VERSION}


#: what a failed build was made with: another extraction prompt, or nothing recorded (made before builds
#: recorded their versions, so with the fenced tig-extract-v1)
@pytest.mark.parametrize("made_with", [{"tig_extraction_prompt_version": "tig-extract-v0"}, {}], ids=["other", "before"])
def test_a_build_started_with_another_extraction_prompt_is_refused_not_finished_with_this_one(
    client, rita, planted, provider_components, made_with
):
    from leaderboard.ekphrasis.models import TIGBuild
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute

    task_set, _, _ = planted
    server = provider_components
    build = tig_build_create(task_set=task_set, extractor="fake-extractor", embedder="fake-embed")
    TIGBuild.objects.filter(pk=build.pk).update(status=TIGBuild.Status.FAILED, error="worker lost", config=made_with)
    client.login(username=rita.username, password=PASSWORD)
    page = client.get(f"/task-sets/{task_set.pk}/tig-builds/{build.pk}/").content.decode()
    assert 'id="resume" data-run-show="may_resume" hidden>' in page  # no resume is offered
    with pytest.raises(RunConfigurationError, match=r"tig_extraction_prompt_version 'tig-extract-v[01]', this code .*new run"):
        tig_build_execute(build_id=build.pk)
    build.refresh_from_db()
    assert build.status == TIGBuild.Status.FAILED and not build.resumable
    assert server.chat_requests == []  # nothing was sent with the other prompt


def test_a_judge_run_whose_novelty_contexts_were_extracted_with_another_prompt_is_refused_on_resume(
    planted, provider_components
):
    # its finished chunks judged Novelty against populations extracted with that prompt; finishing it with this
    # one would judge its pairs against two populations
    from engine.tig.llm import EXTRACTION_PROMPT_VERSION
    from leaderboard.ekphrasis.models import JudgeRun

    task_set, task, _ = planted
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N", budget_per_task=6,
                                      config={"tig": {"extractor": "fake-extractor", "embedder": "fake-embed"},
                                              "tig_extraction_prompt_version": "forged"})
    assert run.config["tig_extraction_prompt_version"] == EXTRACTION_PROMPT_VERSION  # this code's, not the caller's
    offline = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N",
                                          config={"tig": {"extractor": "offline"}})
    assert "tig_extraction_prompt_version" not in offline.config  # the offline rules read no prompt
    JudgeRun.objects.filter(pk=run.pk).update(config={**run.config, "tig_extraction_prompt_version": "tig-extract-v0"})
    with pytest.raises(RunConfigurationError, match=r"tig_extraction_prompt_version 'tig-extract-v0', this code"):
        judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task.pk)
    assert provider_components.chat_requests == []


def test_the_extractor_model_can_group_synonyms_and_runs_inherit_that_choice(planted, provider_components):
    import json

    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute

    task_set, task, m = planted
    server = provider_components

    def reply(request):
        if any(is_extraction(message["content"]) for message in request["messages"]):
            return offline_atoms_reply(request)
        return json.dumps({"groups": []})  # invalid (every atom must be placed): repaired, then the fallback

    server.handler = reply
    build = tig_build_execute(build_id=tig_build_create(
        task_set=task_set, extractor="fake-extractor", embedder="fake-embed", canonicaliser="llm").pk)
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N", budget_per_task=6)
    assert run.config["tig"]["canonicaliser"] == "llm"
    before = len(server.chat_requests)
    judge_runs.judge_run_execute_inline(run=run)
    grouping_calls = [r for r in server.chat_requests[before:] if not is_extraction(json.dumps(r.body))]
    assert grouping_calls, "Novelty contexts asked the extractor model to group synonyms"
    assert build.canonicaliser == "llm"


def test_stored_extractions_are_upserted_by_key_and_read_back_as_the_engine_wrote_them(planted):
    from engine.tig.atoms import idea_record
    from engine.tig.offline import OfflineExtractor
    from engine.tig.population import extraction_key
    from leaderboard.ekphrasis.models import AtomExtraction
    from leaderboard.ekphrasis.tig import StoredExtractions, task_ideas

    _, task, _ = planted
    extractor = OfflineExtractor()
    ideas = sorted((idea_record(i, task=task.external_id) for i in task_ideas(task)), key=lambda i: int(i.response_id))
    store = StoredExtractions(task)
    for idea in ideas:
        store[extraction_key(extractor.name, idea)] = extractor.extract(idea)
    store.flush()
    first = ideas[0]
    key = extraction_key(extractor.name, first)
    row = AtomExtraction.objects.get(key=key)
    assert row.response_id == int(first.response_id) and row.extractor == extractor.name
    assert row.payload == extractor.extract(first).to_dict() and row.created_at is not None
    # the same key again replaces the payload and keeps the row (one upsert on the unique key)
    again = StoredExtractions(task)
    replaced = extractor.extract(ideas[1])
    again[key] = replaced
    again.flush()
    assert AtomExtraction.objects.filter(key=key).count() == 1
    assert AtomExtraction.objects.get(key=key).payload == replaced.to_dict()
    assert AtomExtraction.objects.filter(response__task=task).count() == len(ideas)
    assert StoredExtractions(task)[extraction_key(extractor.name, ideas[2])].to_dict() == \
        extractor.extract(ideas[2]).to_dict()


def test_a_provider_build_stores_the_extractions_of_a_model_whose_provider_id_is_as_long_as_allowed(planted, settings,
                                                                                                   tmp_path):
    # the extractor's name is "llm:<provider id>@<prompt version>": a long provider id overflowed the stored
    # extraction's columns on PostgreSQL (a DataError, the build failed) although the catalogue took the id
    from engine.tig.llm import EXTRACTION_PROMPT_VERSION
    from leaderboard.ekphrasis.models import AtomExtraction
    from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute
    from leaderboard.models import SubjectModel
    from tests.fakes import FakeOpenAIServer

    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"
    longest = "vendor/" + "x" * (SubjectModel._meta.get_field("provider_id").max_length - len("vendor/"))
    task_set, _, _ = planted
    with FakeOpenAIServer(handler=offline_atoms_reply) as server:
        SubjectModelFactory(display_name="long-extractor", role="judge", base_url=server.base_url, provider_id=longest)
        build = tig_build_execute(build_id=tig_build_create(task_set=task_set, extractor="long-extractor").pk)
    assert (build.status, build.error) == ("done", "")
    assert AtomExtraction.objects.filter(extractor=f"llm:{longest}@{EXTRACTION_PROMPT_VERSION}").count() == 12
