"""Reproducibility bundles walked with real objects behind them: a bundle of each protocol (an Ekphrasis snapshot
and a C² run of task sets named by an attacker, an EASEL suite) exported, then imported here as a board, plus a
tampered one imported labelled NOT VERIFIED.

The site-wide walk (tests/evalsite/test_url_walk.py) meets no imported board, so ``/bundles/imported/<id>/`` only
ever answered it 404. Here the download pages and API operations, the imported boards' pages and the published key
are sent hostile ids and kinds, a query no view reads, odd ``Accept``/``Range`` headers and other methods, as
anonymous, an annotator, a crowd participant and an admin: no answer is a 5xx, a refusal shows no traceback, SQL or
path, and an annotator or participant is refused every bundle and imported board. The upload path — the
``import_bundle`` command, which is how a bundle comes in — is given malformed, truncated, oversized, bomb-like and
path-traversing archives of each protocol's real bundle: each is refused naming the problem (a CommandError, never
a traceback), nothing is imported and nothing is written outside the bundle's temporary folder."""

from __future__ import annotations

import io
import json
import re
import tarfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from engine.bundle.manifest import MANIFEST
from leaderboard.bundles.export import bundle_export
from leaderboard.bundles.imports import bundle_import
from leaderboard.bundles.models import ImportedBoard
from leaderboard.c2.services import runs as c2_runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.easel import services as easel_services
from leaderboard.ekphrasis import judge_runs
from tests.annotation.helpers import signed_in_participant
from tests.conftest import kept_for_the_module
from tests.engine.bundle.tampering import forge_a_number, manifest_hash_updated
from tests.evalsite.test_url_walk import send_walked
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db

#: The task sets' (and so the Ekphrasis models') names: a formula, LaTeX commands and markup.
HOSTILE = '=1+@SUM(1)<img src=x onerror=alert(1)>\\input{x}模型'
INTERNALS = re.compile(r"Traceback|File \"|\b(?:[A-Z]\w*Error|Exception)\b|\bSELECT\b|\bINSERT\b|psycopg|sqlite3|"
                       r"django\.db|/usr/|/tmp/|/site-packages/|" + re.escape(str(settings.BASE_DIR)))
HOSTILE_IDS = ["0", "99999999999999999999", "9223372036854775808", "%D9%A1", "-1", "%00"]
HOSTILE_KINDS = ["EKPHRASIS", "x" * 300, "%00", "..%2Fc2", "c2%00", "%E2%80%8Bc2", "imported"]
ODD_HEADERS = [
    {"HTTP_RANGE": "bytes=99999999999999999999-,5-1,-0"}, {"HTTP_RANGE": "bytes=0-10"}, {"HTTP_IF_RANGE": "garbage"},
    {"HTTP_IF_NONE_MATCH": 'W/"x", *, "'}, {"HTTP_IF_MODIFIED_SINCE": "Mon, 99 Foo 99999 99:99:99 GMT"},
    {"HTTP_ACCEPT": "text/csv;q=NaN, application/json;q=0, */*;q=abc"}, {"HTTP_ACCEPT": "application/xml"},
    {"HTTP_ACCEPT": "application/json"}, {"HTTP_ACCEPT_ENCODING": "gzip;q=NaN, br"},
]
OTHER_METHODS = ["POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]
#: A query none of these views reads, at hostile values.
JUNK_QUERY = "?kind=%ff&pk=99999999999999999999&page=-1&format=%00&q=" + "x" * 3000


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bundle-walk")


@pytest.fixture(autouse=True)
def _isolated_caches(settings, folder):
    settings.ATELIER_PROVIDER_CACHE_DIR = folder / "provider-cache"
    settings.ATELIER_BUNDLE_SIGNING_KEY = folder / "site-key" / "bundle-signing-key.pem"


def _c2_run():
    trivia = {"Data": [{"Question": f"Question {k}? {HOSTILE}", "QuestionId": f"=q{k}",
                        "Answer": {"Value": "yes", "NormalizedAliases": ["yes"]}} for k in range(2)]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="C² " + HOSTILE, version="1")
    c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=f"[ WP ] A door in the sea. {HOSTILE}\n".encode(),
                    task_set_name="C² " + HOSTILE, version="1")
    run = c2_runs.c2_run_create(task_set=task_set, model_names=["simulated-one", "simulated-two"], n_samples=1,
                                template="standard", rater_name="simulated", rerate_share=0.5)
    return c2_runs.c2_run_execute_inline(run=run)


def _boards() -> dict[str, int]:
    """The id each kind of bundle is exported from: a snapshot, an EASEL suite, a finished C² run."""
    task_set, models = population(n_models=3, n_tasks=2, name=HOSTILE)
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6, dimensions="UE"))
    suite, _ = easel_services.easel_suite_create(seed=0, per_category={"programmatic": 1, "spatial_geometry": 0,
                                                                       "abstract_cartoon": 0, "natural": 0},
                                                 name="EASEL " + HOSTILE)
    easel_services.easel_run_execute_inline(run=easel_services.easel_run_create(task_set=suite, agent="simulated"))
    return {"ekphrasis": snapshot.pk, "easel": suite.pk, "c2": _c2_run().pk}


@dataclass
class BundleWorld:
    ids: dict[str, int]  # what each kind's bundle is exported from: a snapshot, an EASEL suite, a C² run
    bundles: dict[str, Path]  # each kind's bundle as a .tar.gz (what a reviewer is sent)
    imported: dict[str, ImportedBoard]  # each imported (verified), and a forged C² one imported NOT VERIFIED


def _bundle_world(folder: Path) -> BundleWorld:
    ids = _boards()
    bundles = {kind: bundle_export(kind, pk, folder / f"{kind}.tar.gz").path for kind, pk in ids.items()}
    boards = {kind: bundle_import(path)[0] for kind, path in bundles.items()}
    assert all(board.verified for board in boards.values())
    with tarfile.open(bundles["c2"]) as archive:
        archive.extractall(folder / "forged", filter="data")
    root = next((folder / "forged").iterdir())
    forge_a_number(root / "board" / "board.json")
    manifest_hash_updated(root, "board/board.json")
    boards["forged"], _ = bundle_import(root, allow_unverified=True)
    assert not boards["forged"].verified
    return BundleWorld(ids, bundles, boards)


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, folder):
    with override_settings(ATELIER_BUNDLE_SIGNING_KEY=folder / "site-key" / "bundle-signing-key.pem"), \
            kept_for_the_module(django_db_blocker, folder, lambda: _bundle_world(folder)) as built:
        yield built


def bundle_addresses(world: BundleWorld) -> list[str]:
    """Every bundle page and operation at ids that answer a researcher."""
    return ["/bundles/imported/", "/bundles/signing-key.pem",
            *[f"/bundles/imported/{board.pk}/" for board in world.imported.values()],
            *[f"/bundles/{kind}/{pk}.tar.gz" for kind, pk in world.ids.items()],
            *[f"/api/v1/bundles/{kind}/{pk}" for kind, pk in world.ids.items()]]


def hostile_requests(world) -> list[tuple[str, str, dict]]:
    """(method, url, headers): at each address a junk query, odd headers and other methods; each id and kind of it
    hostile in turn; and each kind's download at the other kinds' ids (a snapshot's id as a C² run's)."""
    addresses = bundle_addresses(world)
    sent = []
    for url in addresses:
        sent += [("GET", url, {}), ("GET", url + JUNK_QUERY, {})]
        # a download is built afresh for each request (an export): the headers a download reads, on those
        sent += [("GET", url, headers) for headers in (ODD_HEADERS[:4] if url.endswith(".tar.gz") else ODD_HEADERS)]
        sent += [(method, url, {}) for method in OTHER_METHODS]
        number = re.search(r"\d+(?=(?:/|\.tar\.gz)?$)", url)
        if number:
            sent += [("GET", url[:number.start()] + value + url[number.end():], {}) for value in HOSTILE_IDS]
    downloads = [url for url in addresses if url.endswith(".tar.gz")]
    for url in downloads:
        pk = re.search(r"(\d+)\.tar\.gz$", url)[1]
        sent += [("GET", f"/bundles/{kind}/{pk}.tar.gz", {}) for kind in HOSTILE_KINDS]
        sent += [("GET", f"/bundles/{kind}/{pk}.tar.gz", {}) for kind in ("ekphrasis", "easel", "c2")]
        sent += [("GET", f"/api/v1/bundles/{kind}/{pk}", {}) for kind in ("ekphrasis", "easel", "c2")]
    return sent


def _client(walker: str, alice, adam) -> Client:
    if walker == "participant":
        return signed_in_participant()
    client = Client()
    if walker in ("annotator", "admin"):
        client.force_login({"annotator": alice, "admin": adam}[walker])
    return client


def test_every_url_pattern_of_the_bundles_is_walked(world):
    """A bundle address added later (read from the resolver) fails here until bundle_addresses walks it."""
    from leaderboard.bundles.export import KINDS
    from tests.evalsite.test_url_walk import site_routes

    patterns = {route.template.replace("{kind}", kind) for route in site_routes() if "/bundles/" in route.template
                for kind in KINDS}
    walked = {re.sub(r"/\d+(?=/|\.tar\.gz|$)", "/{pk}", url) for url in bundle_addresses(world)}
    assert len(patterns) >= 9 and patterns <= walked, sorted(patterns - walked)


@pytest.mark.parametrize("walker", ["anonymous", "annotator", "participant", "admin"])
def test_no_bundle_page_answers_a_hostile_request_with_a_server_error_or_internals(world, alice, adam, walker):
    client = _client(walker, alice, adam)
    requests = hostile_requests(world)
    problems = []
    for method, url, headers in requests:
        response, body = send_walked(client, method, url, headers)
        if response is None:
            problems.append(body)
            continue
        where = f"{method} {url[:160]} {headers} as {walker}: {response.status_code}"
        text = body.decode("utf-8", "replace") if not url.endswith(".tar.gz") or response.status_code >= 400 else ""
        if response.status_code >= 500:
            problems.append(f"{where}: {text[:200]}")
        elif response.status_code >= 400 and INTERNALS.search(text):
            problems.append(f"{where} shows {INTERNALS.search(text)[0]!r}: {text[:300]}")
    assert len(requests) > 250
    assert not problems, f"{len(problems)} of {len(requests)}:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("walker", ["annotator", "participant"])
def test_an_annotator_or_crowd_participant_is_refused_every_bundle_and_imported_board(world, alice, adam, walker):
    client = _client(walker, alice, adam)
    problems = []
    requests = [(method, url, headers) for url in bundle_addresses(world)
                for method, headers in [*[(m, {}) for m in ["GET", *OTHER_METHODS]], ("GET", {"HTTP_ACCEPT": "*/*"}),
                                        ("GET", {"HTTP_RANGE": "bytes=0-100"})]]
    for method, url, headers in requests:
        response, body = send_walked(client, method, url, headers)
        if response is None:
            problems.append(body)
            continue
        where = f"{method} {url[:120]} {headers} as {walker}: {response.status_code}"
        if url.startswith("/bundles/signing-key.pem"):  # public: a reviewer may have no account
            continue
        if response.status_code not in (302, 400, 401, 403, 404, 405, 406):
            problems.append(f"{where}: not refused")
        if response.status_code == 302 and not response["Location"].startswith("/accounts/login/"):
            problems.append(f"{where}: sent to {response['Location']}")
        for name in ("onerror", "SUM(1)", "simulated-one", "模型"):
            if name.encode() in body:
                problems.append(f"{where}: shows {name!r}")
    assert not problems, "\n".join(problems[:40])


class _Handlers(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found += [f"<{tag} {name}>" for name, _ in attrs if name.startswith("on")]
        if tag in ("img", "script", "svg") and tag != "script" or (tag == "script" and not dict(attrs).get("src")):
            self.found.append(f"<{tag}>")


def test_an_imported_board_of_each_protocol_shows_its_hostile_names_as_inert_text(world, adam):
    client = _client("admin", None, adam)
    for kind, board in world.imported.items():
        response = client.get(f"/bundles/imported/{board.pk}/")
        assert response.status_code == 200, (kind, response.content[:300])
        page = response.content.decode()
        parser = _Handlers()
        parser.feed(page)
        inline = [tag for tag in parser.found if tag not in ("<script>",)]
        assert not inline, (kind, inline)
        assert "&lt;img src=x onerror=alert(1)&gt;" in page or kind == "easel", kind
        assert ("NOT VERIFIED" in page) == (kind == "forged"), kind


# ------------------------------------------------------------------------------------------ the upload path


def _members(path: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    with tarfile.open(path) as archive:
        return [(m, archive.extractfile(m).read() if m.isfile() else None) for m in archive.getmembers()]


def _tar(path: Path, members, *, mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _info(name: str, data: bytes = b"", **fields) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for field, value in fields.items():
        setattr(info, field, value)
    return info, data


def _with_file(members, name: str, data: bytes):
    """The members with the one whose name ends in ``name`` replaced by ``data`` (its manifest hash left stale)."""
    out = []
    for info, old in members:
        if info.name.endswith("/" + name):
            info = tarfile.TarInfo(info.name)
            info.size = len(data)
            old = data
        out.append((info, old))
    return out


def malformed_archives(bundle: Path, tmp: Path, canary: Path) -> dict[str, tuple[Path, str]]:
    """(archive, what the refusal says) for each way an uploaded bundle can be malformed, made from ``bundle``."""
    data = bundle.read_bytes()
    members = _members(bundle)
    top = members[0][0].name.split("/")[0]
    made: dict[str, tuple[Path, str]] = {}

    def write(name: str, raw: bytes, says: str):
        (tmp / name).write_bytes(raw)
        made[name] = (tmp / name, says)

    def archive(name: str, entries, says: str, mode: str = "w:gz"):
        made[name] = (_tar(tmp / name, entries, mode=mode), says)

    write("empty.tar.gz", b"", "not a readable .tar.gz")
    write("truncated-half.tar.gz", data[: len(data) // 2], "not a readable .tar.gz")
    write("truncated-header.tar.gz", data[:12], "not a readable .tar.gz")
    write("not-gzip.tar.gz", b"PK\x03\x04 this is a zip, not a tar\n" * 20, "not a readable .tar.gz")
    write("flipped-bytes.tar.gz", data[:200] + bytes(b ^ 0xFF for b in data[200:400]) + data[400:],
          "not a readable .tar.gz")
    archive("traversal.tar.gz", [*members, _info(f"{top}/../../{canary.name}", b"owned")], "not a plain file inside")
    archive("absolute.tar.gz", [*members, _info(str(canary), b"owned")], "not a plain file inside")
    archive("symlink.tar.gz", [*members, _info(f"{top}/board/link.json", type=tarfile.SYMTYPE, linkname=str(canary))],
            "not a plain file inside")
    archive("hardlink.tar.gz", [*members, _info(f"{top}/board/hard.json", type=tarfile.LNKTYPE,
                                                linkname=f"{top}/{MANIFEST}")], "not a plain file inside")
    archive("device.tar.gz", [*members, _info(f"{top}/board/dev", type=tarfile.CHRTYPE)], "not a plain file inside")
    archive("twice.tar.gz", [*members, _info(f"{top}/{MANIFEST}", b"{}")], "appears twice")
    # a bomb: a member whose header says it unpacks past the per-file cap (its bytes are never there)
    bomb = tarfile.TarInfo(f"{top}/records/zeros.jsonl")
    bomb.size = 600 * 2**20
    with tarfile.open(tmp / "bomb.tar.gz", "w:gz") as out:
        out.addfile(bomb)  # header only: tarfile writes no data without a file object
    made["bomb.tar.gz"] = (tmp / "bomb.tar.gz", "no file of a bundle is read past")
    archive("no-manifest.tar.gz", [(i, d) for i, d in members if not i.name.endswith("/" + MANIFEST)], "no manifest.json")
    archive("manifest-not-json.tar.gz", _with_file(members, MANIFEST, b"\xff\xfe{not json"), "manifest.json")
    archive("manifest-deep.tar.gz", _with_file(members, MANIFEST, b"[" * 100_000 + b"]" * 100_000), "manifest.json")
    archive("manifest-list.tar.gz", _with_file(members, MANIFEST, b"[1, 2]"), "manifest.json")
    archive("manifest-nul.tar.gz", _with_file(members, MANIFEST, b'{"kind": "c2\\u0000", "title": "a\\u0000"}'),
            "manifest.json")
    return made


@pytest.mark.parametrize("kind", ["ekphrasis", "easel", "c2"])
def test_import_bundle_refuses_each_malformed_archive_naming_the_problem_and_imports_nothing(world, tmp_path, kind):
    canary = tmp_path / "canary-owned"
    folder = tmp_path / "malformed"
    folder.mkdir()
    problems = []
    before = ImportedBoard.objects.count()
    for name, (path, says) in malformed_archives(world.bundles[kind], folder, canary).items():
        for allow in ([], ["--allow-unverified"]):
            try:
                call_command("import_bundle", str(path), *allow, stdout=io.StringIO(), stderr=io.StringIO())
                problems.append(f"{name} {allow}: imported")
            except CommandError as exc:
                if says not in str(exc):
                    problems.append(f"{name} {allow}: refused without saying {says!r}: {str(exc)[:300]}")
            except Exception as exc:  # a traceback for the admin who ran it
                problems.append(f"{name} {allow}: {type(exc).__name__}: {str(exc)[:300]}")
    assert not problems, "\n".join(problems)
    assert ImportedBoard.objects.count() == before
    assert not canary.exists() and not (tmp_path.parent / canary.name).exists()


def test_import_bundle_refuses_a_path_that_is_no_bundle_naming_it(world, tmp_path):
    before = ImportedBoard.objects.count()
    (tmp_path / "empty-folder").mkdir()
    for path in (tmp_path / "missing.tar.gz", tmp_path / "empty-folder", tmp_path / "模型 \u202e.tar.gz", "/dev/null"):
        with pytest.raises(CommandError, match="no such bundle|no manifest.json|not a readable"):
            call_command("import_bundle", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    assert ImportedBoard.objects.count() == before
