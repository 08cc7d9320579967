"""The demo's three boards (Ekphrasis snapshot, EASEL suite, C² run) exported, verified offline without a
database, tampered with, scanned for secrets and imported into a fresh site (issue 29's "Done when")."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import tarfile
from collections import Counter

import pytest

from engine.bundle.manifest import json_text, record_line, sha256_bytes
from engine.bundle.verify import verify_bundle
from engine.calibration_views import CALIBRATION_METHOD_VERSION
from leaderboard.bundles.imports import BundleImportError, bundle_import
from leaderboard.bundles.models import ImportedBoard
from tests.engine.bundle.tampering import derived_files_rebuilt, forge_a_number, manifest_hash_updated
from tests.leaderboard.bundles.demo_bundles import FAKE_KEY, FAKE_SECRET_KEY, NOWHERE_DATABASE, ROOT, manage


def _copy(bundle, tmp_path):
    """A writable directory copy of a bundle (a .tar.gz is unpacked)."""
    target = tmp_path / "copy"
    if bundle.is_dir():
        shutil.copytree(bundle, target)
        return target
    with tarfile.open(bundle) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (root,) = (tmp_path / "unpacked").iterdir()
    return root


def _rewrite_line(root, name, index, change):
    path = root / name
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[index])
    change(row)
    lines[index] = record_line(row)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return row


def _first(root, name, wanted):
    for k, line in enumerate((root / name).read_text(encoding="utf-8").splitlines()):
        if wanted(json.loads(line)):
            return k
    raise AssertionError(f"no record of {name} matches")


@pytest.mark.parametrize("kind", ["ekphrasis", "easel", "c2"])
def test_verify_bundle_without_a_database_reports_every_number_identical(demo_bundles, kind):
    result = manage("verify_bundle", str(demo_bundles[kind]), database_url=NOWHERE_DATABASE, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert "0 differing; 0 file problem(s) — " in last and last.endswith(" — VERIFIED")
    # what no record recomputes is listed and counted, not covered by the verdict silently
    listed = [line for line in result.stdout.splitlines() if line.startswith("reported, not recomputed: ")]
    assert listed and f"{len(listed)} reported value(s) not recomputed (listed above)" in last
    assert int(last.split(" of ")[1].split()[0]) > 100  # every number of the board, not a handful


VERIFY_WITHOUT_DJANGO = """
import sys
from engine.bundle.verify import verify_bundle
from engine.calibration_views import CALIBRATION_METHOD_VERSION
report = verify_bundle(sys.argv[1])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("django", "leaderboard", "annotation", "evalsite"))
print("LOADED", loaded, "OK", report.ok, "NUMBERS", len(report.checks))
"""


@pytest.mark.parametrize("kind", ["ekphrasis", "easel", "c2"])
def test_the_verifier_runs_from_the_engine_alone_with_django_never_imported(demo_bundles, kind):
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    result = subprocess.run([sys.executable, "-c", VERIFY_WITHOUT_DJANGO, str(demo_bundles[kind])], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("LOADED"))
    assert line.startswith("LOADED [] OK True NUMBERS "), line


@pytest.mark.django_db
def test_a_number_forged_in_the_viewer_data_with_its_hash_is_not_imported(demo_bundles, tmp_path):
    # data.js is the board an imported site shows
    root = _copy(demo_bundles["c2"], tmp_path)
    forge_a_number(root / "data.js")
    manifest_hash_updated(root, "data.js")
    with pytest.raises(BundleImportError, match="does not verify.*FILE NOT AS REBUILT: data.js"):
        bundle_import(root)


def test_flipping_one_verdict_names_the_comparison_and_the_numbers_it_moved(demo_bundles, tmp_path):
    root = _copy(demo_bundles["ekphrasis"], tmp_path)
    name = "records/comparisons.jsonl"
    index = _first(root, name, lambda r: r["status"] == "ok" and r["kind"] == "primary" and r["winner"] == "A")
    row = _rewrite_line(root, name, index, lambda r: r.update(winner="B"))
    result = manage("verify_bundle", str(root), database_url=NOWHERE_DATABASE, check=False)
    assert result.returncode == 1
    out = result.stdout
    assert f"FILE CHANGED: {name} (lines {index + 1})" in out
    assert f"changed record line {index + 1}: id={row['id']} task={row['task']} dimension={row['dimension']}" in out
    assert f"DIFFERS   per_dimension.{row['dimension']}.wins[" in out  # the numbers of the flipped dimension
    other = next(d for d in "UEN" if d != row["dimension"])
    assert f"per_dimension.{other}.wins[" not in out  # and no number the verdict cannot move


def test_a_verdict_flipped_with_its_hash_updated_is_named_by_the_board_numbers(demo_bundles, tmp_path):
    root = _copy(demo_bundles["ekphrasis"], tmp_path)
    name = "records/comparisons.jsonl"
    index = _first(root, name, lambda r: r["status"] == "ok" and r["kind"] == "primary" and r["winner"] == "B")
    _rewrite_line(root, name, index, lambda r: r.update(winner="A"))
    manifest_hash_updated(root, name)
    derived_files_rebuilt(root)  # data.js shows the verdict too
    report = verify_bundle(root)
    assert report.file_problems == []
    assert not report.ok and report.differing
    assert any(c.path.startswith("per_dimension.") and ".winrate[" in c.path for c in report.differing)


def test_one_byte_of_a_canvas_names_the_step_whose_canvas_changed(demo_bundles, tmp_path):
    root = _copy(demo_bundles["easel"], tmp_path)
    steps = [json.loads(line) for line in (root / "records/steps.jsonl").read_text().splitlines()]
    step = next(s for s in steps if s["canvas"] and sum(1 for t in steps if t["canvas"] == s["canvas"]) == 1)
    path = root / "media" / f"{step['canvas']}.png"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    result = manage("verify_bundle", str(root), database_url=NOWHERE_DATABASE, check=False)
    assert result.returncode == 1
    assert f"FILE CHANGED: media/{step['canvas']}.png" in result.stdout
    differing = [line for line in result.stdout.splitlines() if line.startswith("DIFFERS")]
    assert differing and all(f"step {step['index']}.canvas" in line for line in differing), differing


def test_a_canvas_replaced_consistently_is_caught_by_the_replay(demo_bundles, tmp_path):
    from PIL import Image

    root = _copy(demo_bundles["easel"], tmp_path)
    step_index = _first(root, "records/steps.jsonl", lambda s: bool(s["canvas"]))
    old = json.loads((root / "records/steps.jsonl").read_text().splitlines()[step_index])["canvas"]
    with Image.open(root / "media" / f"{old}.png") as image:
        pixels = image.convert("RGB")
        pixels.putpixel((5, 5), tuple(255 - v for v in pixels.getpixel((5, 5))))
        pixels.save(tmp_path / "new.png")
    new = sha256_bytes((tmp_path / "new.png").read_bytes())
    shutil.copy(tmp_path / "new.png", root / "media" / f"{new}.png")
    row = _rewrite_line(root, "records/steps.jsonl", step_index, lambda s: s.update(canvas=new))
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"][f"media/{new}.png"] = {"sha256": new, "bytes": (root / "media" / f"{new}.png").stat().st_size}
    (root / "manifest.json").write_text(json_text(manifest))
    manifest_hash_updated(root, "records/steps.jsonl")
    report = verify_bundle(root)
    assert report.file_problems == []
    (check,) = report.differing
    assert check.path.endswith(f"step {row['index']}.canvas") and check.stored == "1 pixels differ from the replay"


def test_one_rating_changed_names_the_prompt_scores_it_moved(demo_bundles, tmp_path):
    root = _copy(demo_bundles["c2"], tmp_path)
    name = "records/ratings.jsonl"
    index = _first(root, name, lambda r: r["status"] == "ok" and r["repeat"] == 0 and r["u"] < 5)
    _rewrite_line(root, name, index, lambda r: r.update(u=r["u"] + 1))
    report = verify_bundle(root)
    assert [p.path for p in report.file_problems] == [name] and report.file_problems[0].lines == (index + 1,)
    assert any(c.path.startswith("prompts.") and c.path.endswith(".u") for c in report.differing)
    assert any(c.path.startswith("scores.") and ".usefulness." in c.path for c in report.differing)


def _all_bytes(path):
    if path.is_dir():
        for file in sorted(path.rglob("*")):
            if file.is_file():
                yield file.as_posix(), file.read_bytes()
        return
    yield path.as_posix(), path.read_bytes()
    yield path.as_posix() + " (gunzipped)", gzip.decompress(path.read_bytes())


def test_no_api_key_or_secret_appears_in_any_bundle_byte(demo_bundles):
    needles = [FAKE_KEY.encode(), FAKE_SECRET_KEY.encode(), b"Bearer "]
    for bundle in demo_bundles.values():
        for name, data in _all_bytes(bundle):
            for needle in needles:
                assert needle not in data, f"{needle!r} in {name}"
    manifest = json.loads((demo_bundles["ekphrasis"] / "manifest.json").read_text())
    # the variable's *name* is recorded (a reviewer must know which key a model needs), never its value
    assert {m["api_key_env"] for m in manifest["models"]} == {"ATELIER_TEST_FAKE_PROVIDER_KEY"}
    assert manifest["judge"]["config"]["api_key"] == "[redacted]"


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["ekphrasis", "easel", "c2"])
def test_import_bundle_into_a_fresh_site_shows_the_same_board(demo_bundles, kind, client, rita):
    from django.core.management import call_command

    assert not ImportedBoard.objects.exists()
    call_command("import_bundle", str(demo_bundles[kind]))
    board = ImportedBoard.objects.get()
    root = demo_bundles[kind]
    if root.is_dir():
        stored = json.loads((root / "board/board.json").read_text())
    else:
        with tarfile.open(root) as archive:
            member = next(m for m in archive.getmembers() if m.name.endswith("board/board.json"))
            stored = json.load(archive.extractfile(member))
    assert board.board == stored and board.verified and board.kind == kind and board.is_demo
    client.force_login(rita)
    page = client.get(f"/bundles/imported/{board.pk}/").content.decode()
    assert "imported — read-only" in page and "demo data" in page and "simulated" in page
    for row in board.viewer["board"]["rows"]:
        assert all(v in page for v in row if isinstance(v, str))  # every board row's model or agent
        assert str(next(v for v in row if isinstance(v, float))) in page  # and its first number


@pytest.mark.django_db
def test_a_tampered_bundle_is_refused_on_import_unless_allowed_and_then_labelled(demo_bundles, tmp_path):
    root = _copy(demo_bundles["c2"], tmp_path)
    _rewrite_line(root, "records/samples.jsonl", 0, lambda s: s.update(cluster=(s["cluster"] or 0) + 7))
    with pytest.raises(BundleImportError, match="does not verify"):
        bundle_import(root)
    board, created = bundle_import(root, allow_unverified=True)
    # the changed samples file, and the viewer whose drill-down still shows the recorded cluster
    assert created and not board.verified and board.verification["file_problems"] == 2


def test_the_demo_snapshot_bundle_carries_its_calibrated_views_and_their_labels_blinded(demo_bundles):
    root = demo_bundles["ekphrasis"]
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    spec = manifest["human_labels"]
    assert spec["used"] is True and spec["campaigns"], spec
    labels = [json.loads(line) for line in (root / spec["labels"]).read_text(encoding="utf-8").splitlines()]
    assert len(labels) == sum(c["n_labels"] for c in spec["campaigns"])
    for campaign in spec["campaigns"]:
        assert campaign["label_version"] >= 1 and (root / campaign["board"]).is_file()
    annotators = {row["annotator"] for row in labels}
    assert 2 <= len(annotators) <= 10 and all(len(a) == 16 for a in annotators)
    every_byte = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
    assert b"simulated-annotator" not in every_byte  # the demo annotators' usernames
    report = verify_bundle(root)
    calibrated = [c for c in report.checks if c.path.startswith("calibration[")]
    assert report.ok and len(calibrated) > 100, report.lines()[-5:]
    assert any(".calibrated." in c.path and c.path.endswith(".score") for c in calibrated)


def test_a_calibrated_board_dropped_from_human_labels_is_named_not_skipped(demo_bundles, tmp_path):
    # a forger who takes a campaign out of human_labels would have its board's numbers go unchecked
    root = _copy(demo_bundles["ekphrasis"], tmp_path)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    dropped = manifest["human_labels"]["campaigns"].pop()
    (root / "manifest.json").write_text(json_text(manifest), encoding="utf-8")
    report = verify_bundle(root)
    assert not report.ok and (dropped["board"], "not accounted for") in [(p.path, p.what) for p in report.file_problems]


def _used_human_label(root, label: str) -> tuple[str, int]:
    """The labels file and the index of a label ``label`` the calibrated views used: a non-gold item with all
    its k labels, both models in the pool."""
    spec = json.loads((root / "manifest.json").read_text(encoding="utf-8"))["human_labels"]
    name = spec["labels"]
    k = {c["campaign"]: c["k"] for c in spec["campaigns"]}
    rows = [json.loads(line) for line in (root / name).read_text(encoding="utf-8").splitlines()]
    per_item = Counter(r["item"] for r in rows)
    index = next(i for i, r in enumerate(rows) if r["label"] == label and not r["is_gold"] and r["model_a"]
                 and r["model_b"] and per_item[r["item"]] == k[r["campaign"]])
    return name, index


def test_flipping_one_human_label_names_its_line_and_the_calibrated_numbers_it_moved(demo_bundles, tmp_path):
    root = _copy(demo_bundles["ekphrasis"], tmp_path)
    name, index = _used_human_label(root, "A")
    row = _rewrite_line(root, name, index, lambda r: r.update(label="B"))
    report = verify_bundle(root)
    assert not report.ok
    (problem,) = report.file_problems
    assert problem.path == name and problem.lines == (index + 1,)
    assert f"item={row['item']}" in problem.records[0] and f"annotator={row['annotator']}" in problem.records[0]
    moved = report.differing
    assert moved and all(c.path.startswith(f"calibration[campaign {row['campaign']}].") for c in moved)
    assert any(".people_only." in c.path and c.path.endswith(".score") for c in moved), [c.path for c in moved][:10]
    # other dimensions' boards do not move
    assert all(f".dimensions.{row['dimension']}." in c.path for c in moved if ".dimensions." in c.path)
    result = manage("verify_bundle", str(root), database_url=NOWHERE_DATABASE, check=False)
    assert result.returncode != 0 and f"{name} (lines {index + 1})" in result.stdout


def test_a_human_label_flipped_with_its_hash_updated_is_named_by_the_calibrated_numbers(demo_bundles, tmp_path):
    root = _copy(demo_bundles["ekphrasis"], tmp_path)
    name, index = _used_human_label(root, "B")
    row = _rewrite_line(root, name, index, lambda r: r.update(label="A"))
    manifest_hash_updated(root, name)
    result = manage("verify_bundle", str(root), database_url=NOWHERE_DATABASE, check=False)
    assert result.returncode == 1 and "FILE " not in result.stdout
    differing = [line for line in result.stdout.splitlines() if line.startswith("DIFFERS")]
    assert differing and all(f"calibration[campaign {row['campaign']}]." in line for line in differing), differing[:5]
    assert any(".people_only." in line for line in differing), differing[:10]


def _sample_rows(root):
    return [json.loads(line) for line in (root / "records/samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_one_grader_verdict_flipped_names_the_sample_and_the_scores_it_moved(demo_bundles, tmp_path):
    root = _copy(demo_bundles["c2"], tmp_path)
    name = "records/samples.jsonl"
    index = _first(root, name, lambda s: s["task_type"] == "qa" and s["status"] == "done" and s["correct"] is True)
    row = _rewrite_line(root, name, index, lambda s: s.update(correct=False))
    result = manage("verify_bundle", str(root), database_url=NOWHERE_DATABASE, check=False)
    assert result.returncode == 1
    assert f"FILE CHANGED: {name} (lines {index + 1})" in result.stdout
    assert f"changed record line {index + 1}: task={row['task']} model={row['model']} key={row['key']}" in result.stdout
    assert f"DIFFERS   records.sample {row['key']} ({row['model']}, {row['task']} #{row['sample_index']}).correct: " \
           "stored false, recomputed true" in result.stdout


def test_a_grade_rewritten_consistently_with_its_hash_is_caught_by_the_regrade_and_the_board(demo_bundles, tmp_path):
    root = _copy(demo_bundles["c2"], tmp_path)
    name = "records/samples.jsonl"
    index = _first(root, name, lambda s: s["task_type"] == "qa" and s["status"] == "done" and s["correct"] is True)
    row = _rewrite_line(root, name, index, lambda s: s.update(correct=False, verdict="incorrect", usefulness=0.0))
    manifest_hash_updated(root, name)
    derived_files_rebuilt(root)  # data.js shows the verdict too
    report = verify_bundle(root)
    assert report.file_problems == [] and not report.ok
    where = f"records.sample {row['key']} ({row['model']}, {row['task']} #{row['sample_index']})"
    regraded = {c.path for c in report.differing if c.path.startswith("records.sample")}
    assert regraded == {f"{where}.correct", f"{where}.verdict", f"{where}.usefulness"}
    # the prompt's per-instance scores and the board recomputed from the edited grade are not the stored ones
    assert any(c.path.startswith(f"records.per_instance[{row['model']} {row['task']}].u") for c in report.differing)
    assert any(c.path.startswith(f"scores.{row['model']}.qa.usefulness.") for c in report.differing), \
        [c.path for c in report.differing][:10]


def test_a_rating_changed_with_its_hash_updated_is_named_by_the_scores_it_moved(demo_bundles, tmp_path):
    root = _copy(demo_bundles["c2"], tmp_path)
    name = "records/ratings.jsonl"
    index = _first(root, name, lambda r: r["status"] == "ok" and r["repeat"] == 0 and r["o"] < 5)
    _rewrite_line(root, name, index, lambda r: r.update(o=r["o"] + 1))
    manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert report.file_problems == [] and not report.ok
    assert any(c.path.startswith("scores.") and ".originality." in c.path for c in report.differing), \
        [c.path for c in report.differing][:10]


def test_a_step_score_changed_with_its_hash_updated_is_named_at_its_step_by_the_replay(demo_bundles, tmp_path):
    root = _copy(demo_bundles["easel"], tmp_path)
    name = "records/steps.jsonl"
    index = _first(root, name, lambda s: s["s"] is not None and s["index"] > 1)
    row = _rewrite_line(root, name, index, lambda s: s.update(s=s["s"] + 0.01))
    manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert report.file_problems == [] and not report.ok
    (check,) = report.differing
    assert check.path.endswith(f"step {row['index']}.s") and check.stored == row["s"]


def test_human_labels_pointing_at_another_runs_responses_are_named_at_their_line(demo_bundles, tmp_path):
    # one item's labels moved to responses this run does not hold (as another run's labels would be)
    root = _copy(demo_bundles["ekphrasis"], tmp_path)
    name = "records/human_labels.jsonl"
    rows = [json.loads(line) for line in (root / name).read_text(encoding="utf-8").splitlines()]
    item = rows[0]["item"]
    for index, row in enumerate(rows):
        if row["item"] == item:
            _rewrite_line(root, name, index, lambda r: r.update(response_a=r["response_a"] + 100_000))
    manifest_hash_updated(root, name)
    report = verify_bundle(root)
    assert not report.file_problems
    assert f"{name} line 1 (item {item}).response_a {rows[0]['response_a'] + 100_000}: model and task" in [
        c.path for c in report.differing]


def test_a_calibrated_bundle_records_its_method_version_and_one_of_another_version_whose_numbers_differ_is_refused(
        demo_bundles, tmp_path):
    root = _copy(demo_bundles["ekphrasis"], tmp_path)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    campaigns = manifest["human_labels"]["campaigns"]
    assert campaigns and all(c["method_version"] == CALIBRATION_METHOD_VERSION for c in campaigns)
    # a board computed by other formulas (its labels moved it as another version's formulas would)
    name, index = _used_human_label(root, "A")
    row = _rewrite_line(root, name, index, lambda r: r.update(label="B"))
    manifest_hash_updated(root, name)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    for campaign in manifest["human_labels"]["campaigns"]:
        campaign["method_version"] = CALIBRATION_METHOD_VERSION + 1
    (root / "manifest.json").write_text(json_text(manifest), encoding="utf-8")
    report = verify_bundle(root)
    assert not report.ok
    prefix = f"calibration[campaign {row['campaign']}]"
    (refusal,) = [c for c in report.differing if c.path.startswith(f"{prefix}.method_version")]
    assert (refusal.stored, refusal.recomputed) == (CALIBRATION_METHOD_VERSION + 1, CALIBRATION_METHOD_VERSION)
    assert f"{prefix}: recomputed with calibration method version {CALIBRATION_METHOD_VERSION}; the bundle's board was " \
           f"computed with version {CALIBRATION_METHOD_VERSION + 1}" in report.notes
