import hashlib
import json

from engine.bundle.manifest import BundleWriter
from engine.bundle.restatements import restatement_checks


def _ekphrasis(tmp_path, **changes):
    writer = BundleWriter(tmp_path / "b")
    writer.jsonl("records/tasks.jsonl", [{"id": "t1"}])
    manifest = {
        "kind": "ekphrasis", "board_code_version": "abc",
        "task_set": {"version": "1", "content_sha256": writer.files["records/tasks.jsonl"]["sha256"]},
        "configuration": {"seed": 42, "n_boot": 1000, "models": ["alpha", "beta"]},
        "seeds": {"run": 42, "bootstrap": 42, "rank_draws": 42},
        "judge": {"name": "j", "simulated": False, "budget_per_task": 50, "config": {"n_boot": 1000}},
        "board_facts": {"seed": 42, "budget_per_task": 50, "judge": "j", "simulated": False, "task_set_version": "1",
                        "code_version": "abc"},
        "models": [{"display_name": "alpha"}, {"display_name": "beta"}],
    }
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = manifest
        for part in parents:
            target = target[part]
        target[last] = value
    return writer.root, manifest


def _differing(root, manifest):
    return [c.describe() for c in restatement_checks(root, manifest) if not c.identical]


def test_a_manifest_restating_what_the_fit_read_has_no_difference(tmp_path):
    assert _differing(*_ekphrasis(tmp_path)) == []


def test_a_forged_bootstrap_seed_is_named_against_the_seed_the_fit_read(tmp_path):
    assert _differing(*_ekphrasis(tmp_path, seeds__bootstrap=7)) == [
        "manifest.seeds.bootstrap (restates configuration.seed: the seed the fit read): stored 7, recomputed 42"]


def test_a_printed_budget_other_than_the_judges_is_named(tmp_path):
    assert _differing(*_ekphrasis(tmp_path, board_facts__budget_per_task=500)) == [
        "manifest.board_facts.budget_per_task (restates judge.budget_per_task: the budget the CSV prints): "
        "stored 500, recomputed 50"]


def test_models_reordered_against_the_configuration_are_named(tmp_path):
    root, manifest = _ekphrasis(tmp_path)
    manifest["models"].reverse()
    assert [c.path for c in restatement_checks(root, manifest) if not c.identical] == [
        "manifest.models[].display_name (restates configuration.models, in order: the models the numbers belong to)"]


def test_a_task_digest_that_is_not_the_tasks_files_is_named(tmp_path):
    root, manifest = _ekphrasis(tmp_path, task_set__content_sha256="0" * 64)
    actual = hashlib.sha256((root / "records/tasks.jsonl").read_bytes()).hexdigest()
    assert _differing(root, manifest) == [
        f"manifest.task_set.content_sha256 (the SHA-256 of records/tasks.jsonl): stored {json.dumps('0' * 64)}, "
        f"recomputed {json.dumps(actual)}"]


def test_a_c2_threshold_restated_other_than_scored_is_named(tmp_path):
    writer = BundleWriter(tmp_path / "c")
    writer.jsonl("records/tasks.jsonl", [])
    settings = {"tau": 0.9, "embedder": "minilm", "rerate_share": 0.1, "rubric_version": "v3"}
    manifest = {"kind": "c2", "board_code_version": "abc", "source": {"run": 1},
                "task_set": {"content_sha256": writer.files["records/tasks.jsonl"]["sha256"]},
                "configuration": {"seed": 42, "rater": "r", "second_rater": "", "settings": settings, "models": ["m"]},
                "seeds": {"run": 42, "bootstrap": 42},
                "engine_components": {"tau": 0.5, "embedder": "minilm", "versions": {"rubric_version": "v3"}},
                "rater": {"name": "r", "second": "", "rerate_share": 0.1}, "board_facts": {"run": 1, "code_version": "abc"},
                "models": [{"display_name": "m"}]}
    assert _differing(writer.root, manifest) == [
        "manifest.engine_components.tau (restates configuration.settings.tau: the Originality threshold scored with): "
        "stored 0.5, recomputed 0.9"]


def test_an_easel_agent_renamed_in_the_manifest_only_is_named_against_its_run(tmp_path):
    writer = BundleWriter(tmp_path / "e")
    writer.jsonl("records/tasks.jsonl", [])
    run = {"id": 4, "agent_name": "painter", "agent_kind": "painter", "is_simulated": False, "budget_setting": "aligned",
           "config": {}, "seed": 0, "on_board": True, "board_position": 0}
    writer.jsonl("records/runs.jsonl", [run])
    task_set = {"id": 3, "name": "s", "version": "1"}
    manifest = {"kind": "easel", "task_set": {**task_set, "content_sha256": writer.files["records/tasks.jsonl"]["sha256"]},
                "configuration": {"task_set": task_set}, "seeds": {"runs": {"4": 0}}, "source": {"runs": [4]},
                "agents": [{"run": 4, "name": "GPT-9 painter", "kind": "painter", "simulated": False, "budget": "aligned",
                            "config": {}}]}
    assert _differing(writer.root, manifest) == [
        'manifest.agents[0].name (restates records/runs.jsonl run 4.agent_name): stored "GPT-9 painter", '
        'recomputed "painter"']
