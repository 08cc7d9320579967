"""A hostile corpus from the demo bundles: every declared field of every record file of each protocol given
every JSON type it may not hold, with the manifest's hashes brought in line (a consistent forger); verify
must refuse each naming the file, line and field, never end in a bare TypeError or ValueError."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from engine.bundle.manifest import json_text, record_line
from engine.bundle.record_types import (
    CONFIGURATION_TYPES,
    HUMAN_LABELS,
    RECORD_TYPES,
    _parts,
    record_type_problems,
)
from engine.bundle.verify import verify_bundle
from tests.engine.bundle.tampering import manifest_hash_updated
from tests.leaderboard.bundles.demo_bundles import demo_bundles_once

#: One value of each JSON type, put where the field's declared types do not allow it.
WRONG = {"string": "x", "number": 7, "array": [1], "object": {"x": 1}, "boolean": True, "null": None}


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> dict[str, Path]:
    """Each demo bundle as a directory (the EASEL one is a .tar.gz)."""
    out = {}
    for kind, bundle in demo_bundles_once().items():
        if bundle.is_dir():
            out[kind] = bundle
        else:
            target = tmp_path_factory.mktemp(kind)
            with tarfile.open(bundle) as archive:
                archive.extractall(target, filter="data")
            (out[kind],) = target.iterdir()
    return out


def _set(record, parts: list[str], value) -> bool:
    """Put ``value`` at the first place ``parts`` reaches in ``record``; whether there was one."""
    head, rest = parts[0], parts[1:]
    if head == "[]":
        if not isinstance(record, list) or not record:
            return False
        if not rest:
            record[0] = value
            return True
        return _set(record[0], rest, value)
    if not isinstance(record, dict) or head not in record:
        return False
    if not rest:
        record[head] = value
        return True
    return _set(record[head], rest, value)


def _first_path(declared: str) -> str:
    return declared.replace("[]", "[0]")


def _related(one: str, other: str) -> bool:
    """Whether one field path holds the other (putting a wrong type at one would hide the other)."""
    return one.startswith(other) or other.startswith(one)


def _corpus(kind: str, root: Path) -> list[tuple[str, str, dict[str, tuple[str, ...]]]]:
    """(file, wrong type, its declared fields) of each hostile case: :func:`_forged` gives every field of the
    file that may not hold that type such a value."""
    files = dict(RECORD_TYPES[kind])
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("human_labels", {}).get("used"):
        files[manifest["human_labels"]["labels"]] = HUMAN_LABELS
    return [(name, wrong, fields) for name, fields in files.items() for wrong in WRONG]


def _forged(root: Path, copy: Path, name: str, fields: dict, wrong: str) -> list[str]:
    """A copy of ``root`` at ``copy`` with a ``wrong`` value put at every field of ``fields`` that may not hold
    it (each in one record of ``name``) and the file's hash updated in the manifest; the places changed."""
    lines = (root / name).read_text(encoding="utf-8").split("\n")
    records = {k: json.loads(line) for k, line in enumerate(lines) if line.strip()}
    changed: dict[int, list[str]] = {}
    places = []
    for declared, types in fields.items():
        if wrong in types:
            continue
        for k, record in records.items():
            if any(_related(declared, other) for other in changed.get(k, ())):
                continue
            if _set(record, _parts(declared), WRONG[wrong]):
                changed.setdefault(k, []).append(declared)
                places.append(f"{name}, line {k + 1}, field {_first_path(declared)}: expected ")
                break
    shutil.copytree(root, copy, copy_function=os.link)  # linked, not copied: the EASEL bundle's media are large
    for written in (name, "manifest.json"):  # written anew, so that the honest bundle's file stays as it is
        data = (copy / written).read_bytes()
        (copy / written).unlink()
        (copy / written).write_bytes(data)
    for k, record in records.items():
        lines[k] = record_line(record)
    (copy / name).write_text("\n".join(lines), encoding="utf-8")
    manifest_hash_updated(copy, name)
    return places


@pytest.mark.parametrize("kind", ["ekphrasis", "easel", "c2"])
def test_every_record_field_of_a_wrong_json_type_is_refused_naming_its_file_line_and_field(honest, tmp_path, kind):
    tried, unnamed = 0, []
    for k, (name, wrong, fields) in enumerate(_corpus(kind, honest[kind])):
        copy = tmp_path / str(k)
        places = _forged(honest[kind], copy, name, fields, wrong)
        if not places:
            continue
        tried += len(places)
        report = verify_bundle(copy)
        named = record_type_problems(copy, json.loads((copy / "manifest.json").read_text(encoding="utf-8")))
        if report.ok or not report.error.startswith(f"{len(named)} record field(s) of the wrong type") \
                or named[0] not in report.error:
            unnamed.append(f"{name} <- {wrong}: {report.error[:300] or 'verified'}")
        unnamed += [f"{place}... got {wrong}: not named" for place in places
                    if not any(problem.startswith(place) and problem.endswith(f"got {wrong}") for problem in named)]
        shutil.rmtree(copy)
    assert tried > 150  # every field of every record file, in each wrong type (bar the fields no demo record holds)
    assert unnamed == [], "\n".join(unnamed[:20])


@pytest.mark.parametrize("kind", ["ekphrasis", "easel", "c2"])
def test_every_configuration_field_of_a_wrong_json_type_is_refused_naming_the_field(honest, tmp_path, kind):
    unnamed = []
    for wrong, value in WRONG.items():
        copy = tmp_path / wrong
        shutil.copytree(honest[kind], copy, copy_function=os.link)
        manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
        places, changed = [], []
        for declared, types in CONFIGURATION_TYPES[kind].items():
            if wrong not in types and not any(_related(declared, other) for other in changed) \
                    and _set(manifest["configuration"], _parts(declared), value):
                changed.append(declared)
                places.append(f"manifest.json, field configuration.{_first_path(declared)}: expected ")
        (copy / "manifest.json").unlink()  # written anew: the honest bundle's manifest stays as it is
        (copy / "manifest.json").write_text(json_text(manifest), encoding="utf-8")
        report = verify_bundle(copy)
        named = record_type_problems(copy, manifest)
        if report.ok or not named or named[0] not in report.error:
            unnamed.append(f"configuration <- {wrong}: {report.error[:300] or 'verified'}")
        unnamed += [f"{place}... got {wrong}: not named" for place in places
                    if not any(problem.startswith(place) and problem.endswith(f"got {wrong}") for problem in named)]
        shutil.rmtree(copy)
    assert unnamed == [], "\n".join(unnamed[:20])
