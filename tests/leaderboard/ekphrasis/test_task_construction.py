"""Source-pool imports, task-set builds (Algorithm 1) and overrides of rejected candidates."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from engine.task_construction.grid import TABLE5_GRID, grid_with_quotas
from leaderboard.ekphrasis import task_construction as construction
from leaderboard.ekphrasis.models import RejectedCandidate, SourcePool, TaskSetBuild
from leaderboard.import_contract import ImportFailed
from leaderboard.models import SubjectModel, TaskSet
from tests.concurrency import run_at_once
from tests.conftest import require_service
from tests.engine.task_construction.conftest import HashEmbedder
from tests.fakes import FakeOpenAIServer
from tests.fakes.task_screen import screen_handler

pytestmark = pytest.mark.django_db

ONE_CELL = grid_with_quotas({c.cell_id: 0 for c in TABLE5_GRID.cells} | {"abstraction/perceptual/qualia": 2},
                            name="one-cell")
SMALL = grid_with_quotas({c.cell_id: 1 for c in TABLE5_GRID.cells}, name="small")


def _jsonl(*records):
    return "".join(json.dumps(r) + "\n" for r in records).encode()


# equal Zipf norms put all three inside their subtype's frequency belt
POOL = _jsonl({"concept": "music", "type": "abstract", "subtype": "perceptual/qualia", "norms": {"zipf": 4.0}},
              {"concept": "brightness", "type": "abstract", "subtype": "perceptual/qualia", "norms": {"zipf": 4.0}},
              {"concept": "silence", "type": "abstract", "subtype": "perceptual/qualia", "concreteness": 2.1,
               "norms": {"zipf": 4.0}})


def test_a_pool_import_stores_validated_records_with_their_hash():
    pool, summary = construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    assert pool.n_records == 3 and len(pool.sha256) == 64 and summary.created == 3


def test_importing_the_same_pool_again_changes_nothing():
    construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    _, summary = construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    assert summary.created == 0 and summary.unchanged == 3
    assert SourcePool.objects.count() == 1


def test_other_records_under_an_existing_name_are_refused():
    construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    with pytest.raises(ImportFailed, match="immutable"):
        construction.source_pool_import(name="qualia", raw=_jsonl({"concept": "owl", "type": "concrete"}),
                                        file_name="other.jsonl")


def test_pool_errors_name_file_line_and_field_and_write_nothing():
    raw = _jsonl({"concept": "owl", "type": "concrete"}, {"concept": "grief", "type": "feeling"})
    with pytest.raises(ImportFailed) as caught:
        construction.source_pool_import(name="bad", raw=raw, file_name="bad.jsonl")
    assert [str(e) for e in caught.value.errors] == [
        "bad.jsonl:2: field 'type': must be one of abstract, concrete, condition, situation, got 'feeling'"]
    assert not SourcePool.objects.exists()


def test_a_csv_pool_reads_norms_from_a_json_cell():
    raw = b'concept,type,concreteness,norms\nowl,concrete,4.9,"{""zipf"": 3.5}"\n'
    pool, _ = construction.source_pool_import(name="objects", raw=raw, file_name="objects.csv")
    assert pool.records == [{"concept": "owl", "type": "concrete", "concreteness": 4.9, "norms": {"zipf": 3.5}}]


def _build(pools, grid=SMALL, **kwargs):
    build = construction.task_set_build_create(name="built", version="1", pools=pools, grid=grid, **kwargs)
    return construction.task_set_build_execute(build_id=build.pk, embedder=HashEmbedder())


def test_a_build_writes_a_frozen_task_set_with_its_construction_record():
    build = _build([construction.demo_source_pool_ensure()])
    assert build.status == TaskSetBuild.Status.DONE
    assert build.task_set.frozen and build.task_set.is_demo
    assert build.task_set.tasks.count() == SMALL.total == build.tasks_kept
    assert build.record["pools"][0]["sha256"] == SourcePool.objects.get().sha256
    assert build.record["seed"] == 0 and build.record["screen"] == "offline"


def test_executing_a_finished_build_again_changes_nothing():
    build = _build([construction.demo_source_pool_ensure()])
    again = construction.task_set_build_execute(build_id=build.pk, embedder=HashEmbedder())
    assert again.task_set_id == build.task_set_id and TaskSet.objects.count() == 1


def test_rejected_candidates_are_stored_with_their_reasons():
    pool, _ = construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    build = _build([pool], grid=ONE_CELL)
    rejected = list(build.rejected.all())
    assert [(r.source["concept"], r.rule) for r in rejected] == [("music", "screen")]
    assert "not renderable" in rejected[0].reason


def test_an_override_keeps_the_candidate_in_a_new_frozen_version():
    pool, _ = construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    build = _build([pool], grid=ONE_CELL)
    candidate = build.rejected.get()
    task_set = construction.rejected_candidate_override(candidate=candidate, reason="the admin wants sound-as-image")
    assert task_set.frozen and task_set.version == "1+override1"
    assert task_set.tasks.filter(external_id=candidate.external_id).exists()
    assert build.task_set.tasks.count() == 2  # the built version itself is unchanged
    candidate.refresh_from_db()
    assert candidate.override_task_set == task_set


def test_an_override_needs_a_reason():
    pool, _ = construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    build = _build([pool], grid=ONE_CELL)
    with pytest.raises(construction.BuildConfigurationError, match="reason"):
        construction.rejected_candidate_override(candidate=build.rejected.get(), reason=" ")


def test_a_build_refuses_an_existing_version():
    pool = construction.demo_source_pool_ensure()
    _build([pool])
    with pytest.raises(construction.BuildConfigurationError, match="exists already"):
        construction.task_set_build_create(name="built", version="1", pools=[pool])


def test_an_unknown_screen_model_is_refused_with_the_choices():
    with pytest.raises(construction.BuildConfigurationError, match="offline"):
        construction.task_set_build_create(name="b", version="1", pools=[construction.demo_source_pool_ensure()],
                                           screen="nobody")


def test_a_model_screen_goes_through_the_provider_client(settings, tmp_path):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path
    pool, _ = construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
    with FakeOpenAIServer(handler=screen_handler(reject=("silence", "music"))) as server:
        SubjectModel.objects.create(display_name="screener", role="judge", base_url=server.base_url, provider_id="fake")
        build = _build([pool], grid=ONE_CELL, screen="screener")
        assert server.chat_requests
    assert build.record["screen"] == "screener" and build.record["screen_prompt_version"] == "ekphrasis-screen-v2"
    reasons = {r.source["concept"]: r.reason for r in build.rejected.all()}
    assert set(reasons) == {"silence", "music"}
    assert all(reason.startswith("screener: not renderable") for reason in reasons.values())


def test_the_command_builds_from_a_pool_file(tmp_path):
    path = tmp_path / "qualia.jsonl"
    path.write_bytes(POOL)
    out = io.StringIO()
    call_command("build_task_set", "--pools", str(path), "--grid", "table5", "--seed", "0", stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    build = TaskSetBuild.objects.get()
    assert f"{build.tasks_kept} tasks kept in frozen ekphrasis-built vseed0-table5" in text
    assert build.task_set.tasks.count() == build.tasks_kept > 0
    assert "short of quota" in text  # three nouns cannot fill Table 5
    assert RejectedCandidate.objects.filter(source__concept="music").exists()


def test_a_built_task_set_is_judged_offline_with_simulated_subjects():
    """Algorithm 1 → labelled simulated subjects → the simulated judge: a built set can be judged from a
    clean checkout without a provider (README: task construction)."""
    build = _build([construction.demo_source_pool_ensure()], grid=ONE_CELL)
    name, version = build.task_set.name, build.task_set.version
    out = io.StringIO()
    for model in ("simulated-a", "simulated-b", "simulated-c"):
        call_command("generate_responses", "--task-set", name, "--version", version, "--model", model, "--samples", "1",
                     stdout=out)
    assert "SIMULATED subject" in out.getvalue()
    assert SubjectModel.objects.filter(display_name__startswith="simulated-", is_simulated=True).count() == 3
    call_command("run_judge", "--task-set", name, "--version", version, "--judge", "simulated", "--dimensions", "U",
                 "--budget", "6", stdout=out, stderr=io.StringIO())
    run = build.task_set.judge_runs.get()
    assert run.status == "done" and run.is_simulated
    assert run.snapshots.exists()


def test_the_command_builds_the_version_named_by_version(tmp_path):
    path = tmp_path / "qualia.jsonl"
    path.write_bytes(POOL)
    call_command("build_task_set", "--pools", str(path), "--version", "v2", stdout=io.StringIO(), stderr=io.StringIO())
    assert TaskSetBuild.objects.get().task_set.version == "v2"


def test_the_command_takes_task_set_version_as_an_alias(tmp_path):
    path = tmp_path / "qualia.jsonl"
    path.write_bytes(POOL)
    call_command("build_task_set", "--pools", str(path), "--task-set-version", "v3", stdout=io.StringIO(),
                 stderr=io.StringIO())
    assert TaskSetBuild.objects.get().task_set.version == "v3"


def test_a_refused_build_imports_no_pool_file_first(tmp_path):
    path = tmp_path / "qualia.jsonl"
    path.write_bytes(POOL)
    with pytest.raises(CommandError, match="no judge-role model with an endpoint named 'nobody'"):
        call_command("build_task_set", "--pools", str(path), "--screen", "nobody", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no pool or file named 'missing'"):
        call_command("build_task_set", "--pools", str(path), "missing", stdout=io.StringIO())
    assert not SourcePool.objects.exists() and not TaskSetBuild.objects.exists()


def test_build_progress_off_a_terminal_is_plain_lines(tmp_path, capsys):
    path = tmp_path / "qualia.jsonl"
    path.write_bytes(POOL)
    call_command("build_task_set", "--pools", str(path), stdout=io.StringIO())
    progress = capsys.readouterr().err
    assert "\r" not in progress and "task construction" in progress


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(2))
def test_the_same_pool_imported_twice_at_once_is_stored_once(attempt):
    require_service("postgres")
    outcomes = run_at_once([lambda: construction.source_pool_import(name="qualia", raw=POOL, file_name="qualia.jsonl")
                         for _ in range(2)])
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert sorted((s.created, s.unchanged) for _, s in outcomes) == [(0, 3), (3, 0)]
    assert SourcePool.objects.filter(name="qualia").count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_pools_under_one_name_at_once_store_one_and_refuse_the_other():
    require_service("postgres")
    other = _jsonl({"concept": "owl", "type": "concrete"})
    outcomes = run_at_once([lambda raw=raw: construction.source_pool_import(name="qualia", raw=raw, file_name="p.jsonl")
                         for raw in (POOL, other)])
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(refused) == 1 and isinstance(refused[0], ImportFailed), outcomes
    assert "exists with other records" in str(refused[0])
    assert SourcePool.objects.filter(name="qualia").count() == 1
