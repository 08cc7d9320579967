"""Exports made in-process from small boards of each protocol (so that they run on every database the
suite runs on), the bundle button on each result page, and the /api/v1/ download."""

from __future__ import annotations

import html
import io
import json
import re
import tarfile

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command

from engine.bundle.board_files import board_files
from engine.bundle.exchanges import REQUESTS
from engine.bundle.manifest import BOARD_CSV, BOARD_TEX, json_text, sha256_bytes
from engine.bundle.signature import read_public_keys, write_signature
from engine.bundle.verify import verify_bundle
from engine.bundle.viewer import VIEWER_DATA
from leaderboard.bundles.export import BundleExportError, bundle_export
from leaderboard.bundles.imports import BundleImportError, bundle_import
from leaderboard.bundles.models import ImportedBoard
from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs as c2_runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.easel import services as easel_services
from leaderboard.ekphrasis import judge_runs
from tests.engine.bundle.tampering import forge_a_number, manifest_hash_updated
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _isolated_caches(settings, tmp_path):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"
    settings.ATELIER_BUNDLE_SIGNING_KEY = tmp_path / "site-key" / "bundle-signing-key.pem"


@pytest.fixture
def snapshot():
    task_set, models = population(n_models=4, n_tasks=3, name="bundle-pop")
    run = simulated_run(task_set, models, budget=8, dimensions="UE")
    return judge_runs.judge_run_execute_inline(run=run)


@pytest.fixture
def easel_suite():
    task_set, _ = easel_services.easel_suite_create(seed=0, per_category={"programmatic": 1, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 0}, name="easel-bundle")
    for agent in ("mean_colour_fill", "simulated"):
        run = easel_services.easel_run_create(task_set=task_set, agent=agent)
        easel_services.easel_run_execute_inline(run=run)
    return task_set


@pytest.fixture
def c2_run():
    trivia = {"Data": [{"Question": f"Question {k}?", "QuestionId": f"q{k}",
                        "Answer": {"Value": "yes", "NormalizedAliases": ["yes", "aye"]}} for k in range(3)]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="c2-bundle", version="1")
    c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sea.\n[ WP ] The moon resigns.\n",
                    task_set_name="c2-bundle", version="1")
    run = c2_runs.c2_run_create(task_set=task_set, model_names=["simulated-one", "simulated-two"], n_samples=2,
                                template="standard", rater_name="simulated", rerate_share=0.5)
    return c2_runs.c2_run_execute_inline(run=run)


def test_a_snapshot_exported_as_a_directory_verifies(snapshot, tmp_path):
    result = bundle_export("ekphrasis", snapshot.pk, tmp_path / "b")
    report = verify_bundle(result.path)
    assert report.ok and len(report.checks) > 100, report.lines()[:20]
    manifest = json.loads((result.path / "manifest.json").read_text())
    assert manifest["simulated"] is True and manifest["configuration"]["seed"] == snapshot.seed
    assert {c["role"] for c in manifest["components"]} == {"judge", "subject"}


def test_an_easel_suite_exported_as_a_tar_gz_verifies(easel_suite, tmp_path):
    result = bundle_export("easel", easel_suite.pk, tmp_path / "easel.tar.gz")
    assert tarfile.is_tarfile(result.path)
    report = verify_bundle(result.path)
    assert report.ok, report.lines()[:20]
    assert any(".step 1.canvas" in c.path for c in report.checks)  # the steps were replayed


def test_a_c2_run_exported_verifies(c2_run, tmp_path):
    report = verify_bundle(bundle_export("c2", c2_run.pk, tmp_path / "c2").path)
    assert report.ok and any(c.path.startswith("scores.") for c in report.checks), report.lines()[:20]


BOARDS = {"ekphrasis": "snapshot", "easel": "easel_suite", "c2": "c2_run"}


@pytest.mark.parametrize("kind", list(BOARDS))
def test_verify_parses_each_record_file_once_whatever_number_of_checks_read_it(request, tmp_path, monkeypatch, kind):
    # the type check, the duplicate check, the rebuild, the recomputation and the label checks each read the
    # records: parsing them again for each was most of a paper-scale verify (31.0 s of CPU, 13.2 s parsed once)
    from collections import Counter

    from engine.bundle import manifest

    parsed, parse = Counter(), manifest._parsed_records
    monkeypatch.setattr(manifest, "_parsed_records", lambda path, name: parsed.update([name]) or parse(path, name))
    root = bundle_export(kind, request.getfixturevalue(BOARDS[kind]).pk, tmp_path / "b").path
    parsed.clear()  # the export's own reading (it writes the derived files from the records)
    report = verify_bundle(root)
    assert report.ok, report.lines()[:20]
    assert parsed and set(parsed.values()) == {1}, parsed


@pytest.mark.parametrize("name", [BOARD_CSV, BOARD_TEX, VIEWER_DATA])
@pytest.mark.parametrize("kind", list(BOARDS))
def test_a_number_forged_in_a_derived_file_with_its_hash_updated_is_named_with_its_line(request, tmp_path, kind, name):
    board = request.getfixturevalue(BOARDS[kind])
    root = bundle_export(kind, board.pk, tmp_path / "b").path
    line = forge_a_number(root / name)
    manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert not report.ok and not report.differing and not report.error  # board.json and the records are untouched
    (problem,) = report.file_problems
    assert (problem.path, problem.what, problem.lines) == (name, "not as rebuilt", (line,))
    assert report.lines()[1].startswith(f"FILE NOT AS REBUILT: {name} (lines {line}): line {line} is `")


@pytest.mark.parametrize("kind", ["ekphrasis", "c2"])
def test_a_seed_forged_in_the_board_facts_and_every_file_that_prints_it_is_named(request, tmp_path, kind):
    # a consistent forger: the manifest's fact changed, and the CSV, LaTeX and viewer rewritten from it
    root = bundle_export(kind, request.getfixturevalue(BOARDS[kind]).pk, tmp_path / "b").path
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["board_facts"]["seed"] += 1
    (root / "manifest.json").write_text(json_text(manifest), encoding="utf-8")
    for name, text in board_files(root, manifest).items():
        (root / name).write_text(text, encoding="utf-8", newline="")
        manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert not report.file_problems and [c.path for c in report.differing] == [
        "board_facts.seed (printed in board/board.tex)" if kind == "ekphrasis"
        else "board_facts.seed (printed by board/board.csv or board.tex)"]


@pytest.mark.parametrize("forged", [7, 9])
def test_a_budget_forged_in_both_places_that_state_it_is_named_against_the_calls_of_the_records(snapshot, tmp_path, forged):
    # an unsigned bundle: the forger drops the signature, changes judge.budget_per_task and the board_facts copy
    # the CSV and LaTeX print together (so the restatement check agrees) and rewrites the derived files
    root = bundle_export("ekphrasis", snapshot.pk, tmp_path / "b").path
    (root / "signature.json").unlink()
    assert verify_bundle(root).ok
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["judge"]["budget_per_task"] = manifest["board_facts"]["budget_per_task"] = forged
    _manifest_written(root, manifest)
    for name, text in board_files(root, manifest).items():
        (root / name).write_text(text, encoding="utf-8", newline="")
        manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert not report.ok and not report.file_problems
    assert [c.describe() for c in report.differing] == [
        f"manifest.judge.budget_per_task (the primary judge calls of each task and dimension: a run spends its whole "
        f"budget on every task and dimension with two responses to judge): stored {forged}, recomputed 8"]


def _manifest_written(root, manifest) -> None:
    (root / "manifest.json").write_text(json_text(manifest), encoding="utf-8")


@pytest.mark.parametrize("name", ["records/per_instance.jsonl", REQUESTS])
@pytest.mark.parametrize("kind", list(BOARDS))
def test_a_required_record_removed_with_its_manifest_entry_is_named_as_missing(request, tmp_path, kind, name):
    root = bundle_export(kind, request.getfixturevalue(BOARDS[kind]).pk, tmp_path / "b").path
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    (root / name).unlink()
    del manifest["files"][name]
    _manifest_written(root, manifest)
    report = verify_bundle(root)
    assert not report.ok and [(p.path, p.what) for p in report.file_problems] == [(name, "missing")]
    assert f"FILE MISSING: {name}: every {kind} bundle holds it" in "\n".join(report.lines())


def test_a_calibrated_board_the_manifest_does_not_name_is_not_accounted_for(snapshot, tmp_path):
    root = bundle_export("ekphrasis", snapshot.pk, tmp_path / "b").path
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    data = (root / "board/board.json").read_bytes()  # any numbers: verify reads none of them
    (root / "board/calibration-77.json").write_bytes(data)
    manifest["files"]["board/calibration-77.json"] = {"sha256": sha256_bytes(data), "bytes": len(data)}
    _manifest_written(root, manifest)
    report = verify_bundle(root)
    assert not report.ok and [(p.path, p.what) for p in report.file_problems] == [
        ("board/calibration-77.json", "not accounted for")]


def test_export_refuses_unknown_boards_and_existing_paths_and_writes_nothing(snapshot, tmp_path):
    with pytest.raises(BundleExportError, match="no Ekphrasis leaderboard snapshot with id 999999"):
        bundle_export("ekphrasis", 999999, tmp_path / "x")
    with pytest.raises(BundleExportError, match="KIND must be one of"):
        bundle_export("arena", 1, tmp_path / "x")
    for ident in ("²", "9" * 30):  # isdigit() alone took "²", which int() refuses
        with pytest.raises(BundleExportError, match="ID must be a number"):
            bundle_export("ekphrasis", ident, tmp_path / "x")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("mine")
    with pytest.raises(BundleExportError, match="already exists"):
        bundle_export("ekphrasis", snapshot.pk, tmp_path / "taken")
    assert not (tmp_path / "x").exists() and not list(tmp_path.glob(".bundle-*"))


@pytest.mark.parametrize("output", ["a-file/bundle", "a-file/bundle.tar.gz"])
def test_export_into_a_folder_that_cannot_be_made_names_the_path_instead_of_a_traceback(snapshot, tmp_path, output):
    (tmp_path / "a-file").write_text("mine")
    with pytest.raises(BundleExportError, match=r"a-file.*cannot be written.*give a path in a folder you can write"):
        bundle_export("ekphrasis", snapshot.pk, tmp_path / output)
    assert (tmp_path / "a-file").read_text() == "mine"

def test_an_unfinished_c2_run_has_no_bundle(c2_run, tmp_path):
    C2Run.objects.filter(pk=c2_run.pk).update(status=C2Run.Status.RUNNING)
    with pytest.raises(BundleExportError, match="only a finished run"):
        bundle_export("c2", c2_run.pk, tmp_path / "c2")


def _downloaded(response, tmp_path):
    assert response.status_code == 200 and response["Content-Type"] == "application/gzip"
    path = tmp_path / "downloaded.tar.gz"
    path.write_bytes(b"".join(response.streaming_content))
    return path


def test_each_result_page_has_a_bundle_button_that_downloads_a_verifiable_bundle(
        client, rita, snapshot, easel_suite, c2_run, tmp_path):
    client.force_login(rita)
    for page, href in ((f"/leaderboards/{snapshot.pk}/", f"/bundles/ekphrasis/{snapshot.pk}.tar.gz"),
                       (f"/easel/?task_set={easel_suite.pk}", f"/bundles/easel/{easel_suite.pk}.tar.gz"),
                       (f"/c2/?run={c2_run.pk}", f"/bundles/c2/{c2_run.pk}.tar.gz")):
        html = client.get(page).content.decode()
        assert f'class="bundle-button" href="{href}"' in html, page
    assert verify_bundle(_downloaded(client.get(f"/bundles/c2/{c2_run.pk}.tar.gz"), tmp_path)).ok


def test_the_api_downloads_a_bundle_and_refuses_unknown_ones(client, rita, alice, snapshot, tmp_path):
    client.force_login(alice)
    assert client.get(f"/api/v1/bundles/ekphrasis/{snapshot.pk}").status_code == 403
    client.force_login(rita)
    assert verify_bundle(_downloaded(client.get(f"/api/v1/bundles/ekphrasis/{snapshot.pk}"), tmp_path)).ok
    assert client.get("/api/v1/bundles/ekphrasis/999999").status_code == 404
    assert client.get(f"/api/v1/bundles/c2/{snapshot.pk + 1000}").status_code == 404
    assert client.get(f"/bundles/easel/{snapshot.pk}.tar.gz").status_code == 404


def test_annotators_cannot_download_bundles(client, alice, snapshot):
    client.force_login(alice)
    assert client.get(f"/bundles/ekphrasis/{snapshot.pk}.tar.gz").status_code == 403


def test_the_archive_holds_one_folder_with_the_manifest_and_viewer(snapshot, tmp_path):
    result = bundle_export("ekphrasis", snapshot.pk, tmp_path / "snap.tar.gz")
    with tarfile.open(result.path) as archive:
        names = archive.getnames()
        data_js = archive.extractfile("snap/data.js").read().decode()
    assert {"snap/manifest.json", "snap/index.html", "snap/board/board.json", "snap/board/board.csv",
            "snap/board/board.tex", "snap/records/comparisons.jsonl"} <= set(names)
    assert data_js.startswith("window.BUNDLE = ") and "</script" not in data_js


def test_verify_bundle_names_a_path_that_is_not_a_bundle(tmp_path):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="no such bundle"):
        call_command("verify_bundle", str(tmp_path / "absent.tar.gz"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match="no manifest.json"):
        call_command("verify_bundle", str(tmp_path / "empty"))
    (tmp_path / "bad.tar.gz").write_bytes(b"not an archive")
    with pytest.raises(CommandError, match="not a readable .tar.gz"):
        call_command("verify_bundle", str(tmp_path / "bad.tar.gz"))


PLAIN_KEY_VAR = "ATELIER_TEST_PLAIN_VAR"  # a name the redactor does not treat as a credential
PLANTED_KEY = "sk-bundle-request-9d1c4e7a2b"


def test_a_bundle_lists_every_cached_request_as_sent_with_its_reply_and_no_key(snapshot, settings, monkeypatch, tmp_path):
    from engine.providers.cache import RequestCache
    from engine.providers.client import OpenAICompatibleClient, ProviderConfig
    from tests.fakes import FakeOpenAIServer, Reply

    monkeypatch.setenv(PLAIN_KEY_VAR, PLANTED_KEY)
    manifest_models = json.loads((bundle_export("ekphrasis", snapshot.pk, tmp_path / "before").path / "manifest.json")
                                 .read_text())["models"]
    model = manifest_models[0]["provider_id"] or manifest_models[0]["display_name"]
    cache = RequestCache(settings.ATELIER_PROVIDER_CACHE_DIR / "generation.sqlite3")
    with FakeOpenAIServer(handler=lambda request: Reply("Core Idea: a kite.")) as server:
        client = OpenAICompatibleClient(ProviderConfig(base_url=server.base_url, model=model, api_key_env=PLAIN_KEY_VAR),
                                        cache=cache)
        client.chat([{"role": "user", "content": "Describe one static image."}], temperature=0.7)
        client.chat([{"role": "user", "content": "Describe another."}], sample_index=2)
        client.chat([{"role": "user", "content": "A third."}])
        # a model the board does not name: its exchange stays out of the bundle
        OpenAICompatibleClient(ProviderConfig(base_url=server.base_url, model="someone-else"), cache=cache).chat(
            [{"role": "user", "content": "Elsewhere."}])
        sent_headers = {k.lower(): v for k, v in server.chat_requests[0].headers.items()}
        assert sent_headers["authorization"] == f"Bearer {PLANTED_KEY}"  # the key was sent, in a header
    cache.close()
    result = bundle_export("ekphrasis", snapshot.pk, tmp_path / "b")
    lines = (result.path / "records/requests.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 3 and {r["model"] for r in rows} == {model}
    assert {r["reply"]["text"] for r in rows} == {"Core Idea: a kite."}
    assert any(r["request"]["temperature"] == 0.7 for r in rows) and any(r["sample_index"] == 2 for r in rows)
    every_byte = b"".join(p.read_bytes() for p in result.path.rglob("*") if p.is_file())
    assert PLANTED_KEY.encode() not in every_byte
    report = verify_bundle(result.path)
    assert report.ok and sum("request hashes to its key" in c.path for c in report.checks) == 3
    # an edited prompt no longer hashes to the key its reply was stored under
    rows[1]["request"]["messages"][0]["content"] += " (edited)"
    (result.path / "records/requests.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows))
    report = verify_bundle(result.path)
    (problem,) = report.file_problems
    assert problem.path == "records/requests.jsonl" and problem.lines == (2,)
    assert [c.path for c in report.differing] == [
        f"records/requests.jsonl line 2 (generation cache, model {model}): request hashes to its key"]


@pytest.mark.parametrize("kind", list(BOARDS))
def test_a_simulated_board_relabelled_real_in_its_manifest_and_viewer_is_named_by_its_label(request, tmp_path, kind):
    # the forger clears the SIMULATED label and every component's flag, and rebuilds data.js to match
    root = bundle_export(kind, request.getfixturevalue(BOARDS[kind]).pk, tmp_path / "b").path
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["simulated"] is True
    manifest["simulated"] = False
    for component in manifest["components"]:
        component["simulated"] = False
    _manifest_written(root, manifest)
    for name, text in board_files(root, manifest).items():
        (root / name).write_text(text, encoding="utf-8", newline="")
        manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert not report.file_problems and [c.path for c in report.differing] == [
        "manifest.simulated (the SIMULATED label of the viewer and an imported board; from the components, "
        "configuration and records)"]


def test_a_manifest_claiming_another_protocol_is_named(snapshot, tmp_path):
    root = bundle_export("ekphrasis", snapshot.pk, tmp_path / "b").path
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["protocol"] = "C²-Eval: Usefulness, Originality, Surprise of convergent and divergent tasks (§3.2)"
    _manifest_written(root, manifest)
    for name, text in board_files(root, manifest).items():
        (root / name).write_text(text, encoding="utf-8", newline="")
        manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert [c.path for c in report.differing] == ["manifest.protocol (the protocol of kind ekphrasis)"]


def test_export_and_verify_commands_report_each_stage_on_stderr_as_it_starts(c2_run, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    call_command("export_bundle", "c2", str(c2_run.pk), "-o", str(tmp_path / "c2.tar.gz"), stdout=out, stderr=err)
    stages = [line.split("] ", 1)[1] for line in err.getvalue().splitlines() if line.startswith("[")]
    assert [s.split()[0] for s in stages] == ["writing", "6", "copying", "writing", "signed", "packing"], stages  # 6 files written
    out, err = io.StringIO(), io.StringIO()
    call_command("verify_bundle", str(tmp_path / "c2.tar.gz"), stdout=out, stderr=err)
    stages = [line.split("] ", 1)[1] for line in err.getvalue().splitlines() if line.startswith("[")]
    assert [s.split()[0] for s in stages] == ["unpacking", "checking", "checking", "checking", "rebuilding", "recomputing",
                                              "checking"], stages
    assert stages[1].startswith("checking the signature"), stages
    assert "\r" not in err.getvalue()  # one line per stage, readable when piped


@pytest.mark.parametrize("allow_unverified", [False, True])
def test_an_import_of_an_archive_holding_a_file_past_the_cap_is_refused_naming_it_and_stores_nothing(
        c2_run, tmp_path, monkeypatch, allow_unverified):
    from engine.bundle import verify

    path = bundle_export("c2", c2_run.pk, tmp_path / "c2.tar.gz").path
    with tarfile.open(path) as tar:
        largest = max(tar.getmembers(), key=lambda m: m.size)
    monkeypatch.setattr(verify, "MAX_FILE_BYTES", largest.size - 1)
    args = ["--allow-unverified"] if allow_unverified else []
    with pytest.raises(CommandError, match=rf"archive member '{re.escape(largest.name)}' is {largest.size} bytes; "
                                           rf"no file of a bundle is read past {largest.size - 1} bytes"):
        call_command("import_bundle", str(path), *args)
    assert not ImportedBoard.objects.exists()


def test_an_unverified_import_of_a_board_no_reader_accepts_is_refused_naming_the_field(c2_run, tmp_path):
    root = bundle_export("c2", c2_run.pk, tmp_path / "b").path
    board = root / "board/board.json"
    text = board.read_text(encoding="utf-8")
    number = next(m for m in re.finditer(r"(?<=: )\d+\.\d+", text))
    board.write_text(text[:number.start()] + "Infinity" + text[number.end():], encoding="utf-8")
    manifest_hash_updated(root, "board/board.json")
    with pytest.raises(BundleImportError, match=r"board/board.json, field .*: must be a finite number, got Infinity"):
        bundle_import(root, allow_unverified=True)
    assert not ImportedBoard.objects.exists()


def test_an_unverified_import_of_a_manifest_without_its_board_field_is_refused_naming_it(c2_run, tmp_path):
    root = bundle_export("c2", c2_run.pk, tmp_path / "b").path
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    del manifest["board"]
    _manifest_written(root, manifest)
    with pytest.raises(BundleImportError, match="manifest.json, field board: absent"):
        bundle_import(root, allow_unverified=True)
    assert not ImportedBoard.objects.exists()


#: Viewer data (``data.js``) a page cannot draw as tables (a forged bundle imported with --allow-unverified), and
#: the field the refusal names.
ODD_VIEWERS = [
    ({"board": {"columns": 5, "rows": []}, "instances": []}, "board.columns"),
    ({"board": {"columns": ["a"], "rows": [3]}, "instances": []}, "board.rows[0]"),
    ({"board": {"columns": ["a"], "rows": 7}, "instances": []}, "board.rows"),
    ({"board": {"columns": ["a"], "rows": []}, "instances": 4}, "instances"),
    ({"board": {"columns": ["a"], "rows": []}, "instances": [{"label": "x", "table": {"columns": True, "rows": []}}]},
     "instances[0].table.columns"),
    ({"board": {"columns": [], "rows": []}, "instances": [{"label": "x", "table": {"columns": [], "rows": [1.5]}}]},
     "instances[0].table.rows[0]"),
    ({"board": [], "instances": [7]}, "board"),
    ({"instances": [7]}, "instances[0]"),
    ([1, 2, 3], "(data)"),
]


def test_an_unverified_import_of_a_viewer_no_page_can_draw_is_refused_naming_the_field(c2_run, tmp_path):
    # such a board was stored, and its page (/bundles/imported/<id>/) answered a 500 from then on
    root = bundle_export("c2", c2_run.pk, tmp_path / "b").path
    for viewer, field in ODD_VIEWERS:
        (root / VIEWER_DATA).write_text(f"window.BUNDLE = {json.dumps(viewer)};", encoding="utf-8")
        manifest_hash_updated(root, VIEWER_DATA)
        with pytest.raises(BundleImportError, match=rf"{VIEWER_DATA}, field {re.escape(field)}: expected"):
            bundle_import(root, allow_unverified=True)
    assert not ImportedBoard.objects.exists()


def test_the_bundle_pages_answer_only_get_and_head(c2_run, tmp_path, client, rita):
    # a DELETE of a read-only board answered 200 with the page, and a POST to a download built a whole bundle
    board, _ = bundle_import(bundle_export("c2", c2_run.pk, tmp_path / "b").path)
    client.force_login(rita)
    for url in (f"/bundles/c2/{c2_run.pk}.tar.gz", "/bundles/imported/", f"/bundles/imported/{board.pk}/"):
        assert client.head(url).status_code == 200, url
        for method in (client.post, client.put, client.delete, client.patch):
            assert method(url).status_code == 405, (url, method.__name__)


def test_a_board_stored_before_odd_viewers_were_refused_shows_its_page_naming_the_field_not_a_500(c2_run, tmp_path,
                                                                                                 client, rita):
    board, _ = bundle_import(bundle_export("c2", c2_run.pk, tmp_path / "b").path)
    client.force_login(rita)
    for viewer, field in ODD_VIEWERS:
        ImportedBoard.objects.filter(pk=board.pk).update(viewer=viewer)  # as an import before the check stored it
        response = client.get(f"/bundles/imported/{board.pk}/")
        assert response.status_code == 200, (viewer, response.status_code)
        page = response.content.decode()
        assert 'id="viewer-problem"' in page and f"field {field}" in html.unescape(page), field


def test_an_imported_easel_board_shows_an_image_cell_by_its_alt_text_not_as_a_python_dict(easel_suite, tmp_path,
                                                                                          client, rita):
    # the viewer's image cells ({"image": "media/<sha256>.png", "alt": …}) were printed as their repr
    board, _ = bundle_import(bundle_export("easel", easel_suite.pk, tmp_path / "b").path)
    client.force_login(rita)
    page = client.get(f"/bundles/imported/{board.pk}/").content.decode()
    assert "&#x27;image&#x27;:" not in page and "{&#x27;alt" not in page
    assert re.search(r"<td>image: final canvas of [^<]+ \(<code>media/[0-9a-f]{64}\.png</code> in the bundle\)</td>", page)


def test_an_exported_bundle_is_signed_by_the_key_the_site_publishes(client, snapshot, tmp_path):
    root = bundle_export("ekphrasis", snapshot.pk, tmp_path / "b").path
    published = client.get("/bundles/signing-key.pem")  # no account needed: a reviewer may have none
    assert published.status_code == 200 and published["Content-Type"].startswith("text/plain")
    report = verify_bundle(root, trusted_keys=read_public_keys(published.content))
    assert report.ok and report.signature.status == "trusted", report.lines()[-3:]
    assert client.post("/bundles/signing-key.pem").status_code == 405


def test_verify_bundle_with_the_sites_key_refuses_a_bundle_only_another_key_signed(c2_run, tmp_path):
    root = bundle_export("c2", c2_run.pk, tmp_path / "b").path
    key_file = tmp_path / "site.pem"
    out = io.StringIO()
    call_command("bundle_signing_key", stdout=out, stderr=io.StringIO())
    key_file.write_text(out.getvalue())
    out = io.StringIO()
    call_command("verify_bundle", str(root), "--public-key", str(key_file), stdout=out, stderr=io.StringIO())
    assert "SIGNED by trusted key" in out.getvalue() and out.getvalue().rstrip().endswith("VERIFIED")
    # every number still recomputes: only the signature says the site did not make it
    write_signature(root, Ed25519PrivateKey.generate())
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_code:
        call_command("verify_bundle", str(root), "--public-key", str(key_file), stdout=out, stderr=io.StringIO())
    assert exit_code.value.code == 1
    assert "SIGNED BY AN UNTRUSTED KEY" in out.getvalue() and "NOT VERIFIED" in out.getvalue()
    assert verify_bundle(root).ok  # without a trusted key it says which key signed, and recomputes


def test_verify_bundle_names_a_public_key_file_it_cannot_use(c2_run, tmp_path):
    root = bundle_export("c2", c2_run.pk, tmp_path / "b").path
    (tmp_path / "bad.pem").write_text("not a key")
    with pytest.raises(CommandError, match="bad.pem.*BEGIN PUBLIC KEY"):
        call_command("verify_bundle", str(root), "--public-key", str(tmp_path / "bad.pem"), stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError, match="missing.pem"):
        call_command("verify_bundle", str(root), "--public-key", str(tmp_path / "missing.pem"), stdout=io.StringIO(), stderr=io.StringIO())


def test_no_bundle_leaves_unsigned_when_the_signing_key_cannot_be_read(client, rita, c2_run, settings, tmp_path):
    settings.ATELIER_BUNDLE_SIGNING_KEY.parent.mkdir(parents=True)
    settings.ATELIER_BUNDLE_SIGNING_KEY.write_text("not a key")
    with pytest.raises(BundleExportError, match="ATELIER_BUNDLE_SIGNING_KEY"):
        bundle_export("c2", c2_run.pk, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".bundle-*"))
    client.force_login(rita)
    answer = client.get(f"/bundles/c2/{c2_run.pk}.tar.gz")
    assert answer.status_code == 503 and b"administrator" in answer.content
