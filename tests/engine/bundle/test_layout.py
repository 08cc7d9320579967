"""engine/bundle/layout.py: a required file gone with its manifest entry is named as missing, and a file
under board/ that verify does not read is named as not accounted for."""

from __future__ import annotations

import json

import pytest

from engine.bundle.layout import layout_problems, required_files
from engine.bundle.manifest import BundleWriter, check_files, sha256_bytes

KINDS = ("ekphrasis", "easel", "c2")
LABELLED = {"used": True, "labels": "records/human_labels.jsonl",
            "campaigns": [{"campaign": 3, "board": "board/calibration-3.json"}]}


def _bundle(tmp_path, kind: str, **fields):
    """Every file the layout requires, each an empty record list or object, listed in the manifest."""
    manifest = {"kind": kind, "board": "board/board.json", **fields}
    writer = BundleWriter(tmp_path / kind)
    for name in required_files(manifest):
        if name.endswith(".jsonl"):
            writer.jsonl(name, [])
        else:
            writer.json(name, {})
    return writer.root, writer.manifest(manifest)


def _drop(root, manifest, name):
    """The file removed together with its manifest entry (the manifest check then has nothing to miss)."""
    (root / name).unlink()
    del manifest["files"][name]
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("kind", KINDS)
def test_a_complete_bundle_has_no_layout_problem(tmp_path, kind):
    root, manifest = _bundle(tmp_path, kind)
    assert layout_problems(root, manifest) == [] and check_files(root, manifest) == []


@pytest.mark.parametrize("name", ["records/per_instance.jsonl", "records/requests.jsonl"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_required_file_removed_with_its_manifest_entry_is_named_as_missing(tmp_path, kind, name):
    root, manifest = _bundle(tmp_path, kind)
    _drop(root, manifest, name)
    assert check_files(root, manifest) == []  # nothing to compare it with: the manifest check passes
    (problem,) = layout_problems(root, manifest)
    assert (problem.path, problem.what) == (name, "missing") and f"every {kind} bundle holds it" in problem.detail


def test_a_listed_file_that_is_missing_is_left_to_the_manifest_check(tmp_path):
    root, manifest = _bundle(tmp_path, "c2")
    (root / "records/requests.jsonl").unlink()
    assert layout_problems(root, manifest) == []
    assert [(p.path, p.what) for p in check_files(root, manifest)] == [("records/requests.jsonl", "missing")]


def test_the_labels_and_calibrated_boards_human_labels_names_are_required(tmp_path):
    root, manifest = _bundle(tmp_path, "ekphrasis", human_labels=LABELLED)
    assert layout_problems(root, manifest) == []
    _drop(root, manifest, "board/calibration-3.json")
    assert [(p.path, p.what) for p in layout_problems(root, manifest)] == [("board/calibration-3.json", "missing")]


@pytest.mark.parametrize("listed", [True, False])
def test_a_calibration_board_human_labels_does_not_name_is_not_accounted_for(tmp_path, listed):
    root, manifest = _bundle(tmp_path, "ekphrasis", human_labels=LABELLED)
    data = b'{"models": ["a"]}\n'
    (root / "board/calibration-4.json").write_bytes(data)
    if listed:  # with its hash in the manifest, as a consistent forger would add it
        manifest["files"]["board/calibration-4.json"] = {"sha256": sha256_bytes(data), "bytes": len(data)}
        assert check_files(root, manifest) == []
    (problem,) = layout_problems(root, manifest)
    assert (problem.path, problem.what) == ("board/calibration-4.json", "not accounted for")
    assert "human_labels names it" in problem.detail


def test_without_human_labels_every_calibration_board_is_not_accounted_for(tmp_path):
    root, manifest = _bundle(tmp_path, "ekphrasis", human_labels={"used": False})
    (root / "board/calibration-3.json").write_text("{}", encoding="utf-8")
    assert [(p.path, p.what) for p in layout_problems(root, manifest)] == [("board/calibration-3.json", "not accounted for")]
