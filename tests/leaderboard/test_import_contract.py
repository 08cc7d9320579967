"""The import contract: a corpus of malformed files, one case per class of defect, run against every
importer (tasks, responses, render manifests, campaign items). Each file must be rejected whole, with
an error naming file, line and field, and leave every table as it was. The corpus runs on whichever
database the test run uses: SQLite by default, PostgreSQL with DATABASE_URL=postgres://… (as in CI)."""

from __future__ import annotations

import html
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.apps import apps

from annotation import item_creation
from annotation.choices import CampaignKind
from annotation.errors import ItemsInvalid
from annotation.item_records import CHECKLIST_ENTRY_MAX_CHARS, CHECKLIST_MAX_ENTRIES, META_MAX_CHARS
from engine.strict_json import MAX_JSON_DEPTH
from leaderboard.ekphrasis.renders import renders_import_manifest
from leaderboard.import_contract import JSON_FIELD_MAX_CHARS, ImportFailed
from leaderboard.records import BRIEF_MAX_CHARS
from leaderboard.services.catalogue import responses_import, tasks_import
from tests.annotation.factories import campaign_for
from tests.conftest import require_service
from tests.factories import PASSWORD, ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory
from tests.fakes import deterministic_png

pytestmark = pytest.mark.django_db

TASK = {"id": "t1", "family": "abstraction", "brief": "Express time passing."}
RESPONSE = {"task_id": "t1", "model": "m1", "sample": 2, "text": "Core Idea: a map.\nVisual Description: lines."}
RENDER = {"task_id": "t1", "model": "m1", "sample": 1, "image": "img.png", "renderer": "flux", "seed": 7}
ITEM = {"task_id": "t1", "dimension": "novelty", "a": {"model": "m1"}, "b": {"model": "m2"}}
TASKS_CSV_HEADER = b"id,family,brief\n"


def jl(*records) -> bytes:
    """JSONL; a bytes record is written as it is (for text json.dumps would not produce)."""
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records)


def nested(depth: int) -> str:
    return '{"k":' * depth + "1" + "}" * depth


@dataclass(frozen=True)
class Case:
    id: str
    importer: str  # tasks | responses | renders | items
    name: str
    raw: bytes
    line: int
    field: str
    fragment: str


CORPUS = [
    # nesting, NUL, surrogates, non-finite numbers
    Case("deep-nesting", "tasks", "tasks.jsonl",
         jl(TASK, f'{{"id":"t2","family":"abstraction","brief":"b","constraints":{nested(5000)}}}'.encode()),
         2, "constraints", f"deeper than {MAX_JSON_DEPTH}"),
    Case("deep-nesting-item", "items", "items.jsonl",
         jl(ITEM, f'{{"task_id":"t1","gold":{nested(MAX_JSON_DEPTH + 1)}}}'.encode()), 2, "gold", "deeper than"),
    Case("nul-escaped", "tasks", "tasks.jsonl", jl({**TASK, "brief": "a\x00b"}), 1, "brief", "NUL"),
    Case("nul-raw", "tasks", "tasks.jsonl", jl(b'{"id":"t1","family":"abstraction","brief":"a\x00b"}'), 1, "brief", "NUL"),
    Case("nul-csv", "tasks", "tasks.csv", TASKS_CSV_HEADER + b"t1,abstraction,a\x00b\n", 2, "brief", "NUL"),
    Case("nul-item-reference", "items", "items.jsonl", jl({**ITEM, "a": {"model": "m\x001"}}), 1, "a.model", "NUL"),
    Case("lone-surrogate", "tasks", "tasks.jsonl", jl(b'{"id":"t1","family":"abstraction","brief":"x\\ud800"}'),
         1, "brief", "surrogate"),
    Case("lone-surrogate-item", "items", "items.jsonl", jl(b'{"task_id":"t1","checklist_text":"\\udfff"}'),
         1, "checklist_text", "surrogate"),
    Case("nan", "tasks", "tasks.jsonl", jl(b'{"id":"t1","family":"abstraction","brief":"b","constraints":{"x":NaN}}'),
         1, "constraints.x", "finite"),
    Case("infinity", "responses", "responses.jsonl", jl(b'{"task_id":"t1","model":"m1","sample":Infinity}'),
         1, "sample", "finite"),
    Case("float-overflow", "tasks", "tasks.jsonl",
         jl(b'{"id":"t1","family":"abstraction","brief":"b","source":{"weight":1e400}}'), 1, "source.weight", "finite"),
    # strings longer than their column, integers outside their column's range
    Case("id-too-long", "tasks", "tasks.jsonl", jl({**TASK, "id": "x" * 101}), 1, "id", "limit of 100"),
    Case("subtype-too-long", "tasks", "tasks.jsonl", jl({**TASK, "subtype": "s" * 101}), 1, "subtype", "limit of 100"),
    Case("model-too-long", "responses", "responses.jsonl", jl({**RESPONSE, "model": "m" * 101}), 1, "model", "limit of 100"),
    Case("renderer-too-long", "renders", "manifest.jsonl", jl({**RENDER, "renderer": "r" * 101}), 1, "renderer", "limit of 100"),
    Case("stratum-too-long", "items", "items.jsonl", jl({**ITEM, "stratum": "s" * 41}), 1, "stratum", "limit of 40"),
    Case("sample-40000", "responses", "responses.jsonl", jl({**RESPONSE, "sample": 40000}), 1, "sample", "between 0 and 32767"),
    Case("sample-40000-csv", "responses", "responses.csv", b"task_id,model,sample,text\nt1,m1,40000,x\n",
         2, "sample", "between 0 and 32767"),
    Case("sample-2**70", "responses", "responses.jsonl", jl({**RESPONSE, "sample": 2**70}), 1, "sample", "between"),
    Case("seed-2**70", "renders", "manifest.jsonl", jl({**RENDER, "seed": 2**70}), 1, "seed", "between"),
    Case("item-sample-40000", "items", "items.jsonl", jl({**ITEM, "b": {"model": "m2", "sample": 40000}}),
         1, "b.sample", "between"),
    Case("integer-of-5000-digits", "responses", "responses.jsonl",
         jl(b'{"task_id":"t1","model":"m1","sample":1' + b"0" * 5000 + b"}"), 1, "", "digits"),
    # identifiers, briefs and model names: empty, only whitespace, or padded
    Case("id-empty", "tasks", "tasks.jsonl", jl({**TASK, "id": ""}), 1, "id", "empty"),
    Case("id-whitespace", "tasks", "tasks.jsonl", jl({**TASK, "id": "   "}), 1, "id", "empty or only whitespace"),
    Case("id-padded", "tasks", "tasks.jsonl", jl({**TASK, "id": " t1"}), 1, "id", "whitespace"),
    Case("brief-whitespace", "tasks", "tasks.jsonl", jl({**TASK, "brief": " \t "}), 1, "brief", "only whitespace"),
    Case("brief-padded", "tasks", "tasks.jsonl", jl({**TASK, "brief": "Express time. "}), 1, "brief", "whitespace"),
    Case("model-padded", "responses", "responses.jsonl", jl({**RESPONSE, "model": "m1 "}), 1, "model", "whitespace"),
    Case("item-task-id-padded", "items", "items.jsonl", jl({**ITEM, "task_id": "t1\t"}), 1, "task_id", "whitespace"),
    Case("id-whitespace-csv", "tasks", "tasks.csv", TASKS_CSV_HEADER + b"  ,abstraction,b\n", 2, "id", "whitespace"),
    # identifiers holding a character a reader cannot see: "m1\u200b" was a second model shown as "m1"
    Case("model-zero-width-space", "responses", "responses.jsonl", jl({**RESPONSE, "model": "m1\u200b"}),
         1, "model", "invisible character (U+200B ZERO WIDTH SPACE)"),
    Case("id-soft-hyphen-csv", "tasks", "tasks.csv", TASKS_CSV_HEADER + "t\u00ad1,abstraction,b\n".encode(),
         2, "id", "invisible character (U+00AD SOFT HYPHEN)"),
    Case("id-line-break-inside", "tasks", "tasks.jsonl", jl({**TASK, "id": "t\n1"}), 1, "id", "invisible character"),
    Case("renderer-direction-override", "renders", "manifest.jsonl", jl({**RENDER, "renderer": "fl\u202eux"}),
         1, "renderer", "invisible character (U+202E RIGHT-TO-LEFT OVERRIDE)"),
    Case("item-model-word-joiner", "items", "items.jsonl", jl({**ITEM, "b": {"model": "m\u20602"}}),
         1, "b.model", "invisible character (U+2060 WORD JOINER)"),
    Case("item-key-zero-width-joiner", "items", "items.jsonl", jl({**ITEM, "key": "k\u200d1"}),
         1, "key", "invisible character"),
    # duplicate keys
    Case("duplicate-key", "tasks", "tasks.jsonl", jl(b'{"id":"t1","family":"abstraction","brief":"b","id":"t2"}'),
         1, "id", "duplicate key"),
    Case("duplicate-nested-key", "items", "items.jsonl",
         jl(b'{"task_id":"t1","dimension":"novelty","a":{"model":"m1","model":"m2"},"b":{"model":"m2"}}'),
         1, "a.model", "duplicate key"),
    # CSV structure
    Case("csv-unterminated-quote", "tasks", "tasks.csv",
         TASKS_CSV_HEADER + b't1,abstraction,ok\nt2,abstraction,"never closed\nt3,abstraction,swallowed\n',
         3, "", "never closed"),
    Case("csv-more-cells-than-header", "tasks", "tasks.csv", TASKS_CSV_HEADER + b"t1,abstraction,b,extra\n",
         2, "", "header has 3 columns"),
    Case("csv-multi-line-record", "tasks", "tasks.csv",
         b'id,brief,family\nt1,ok,abstraction\nt2,"first\nsecond\nthird",nofamily\n', 3, "family", "unknown family"),
    Case("csv-unknown-column", "tasks", "tasks.csv", b"id,family,brief,colour\nt1,abstraction,b,red\n",
         1, "colour", "unknown column"),
    # sizes
    Case("brief-over-limit", "tasks", "tasks.jsonl", jl({**TASK, "brief": "b" * (BRIEF_MAX_CHARS + 1)}),
         1, "brief", f"limit of {BRIEF_MAX_CHARS:,}"),
    Case("brief-10-mb", "tasks", "tasks.jsonl", jl({**TASK, "brief": "b" * 10_000_000}), 1, "brief", "over the limit"),
    Case("constraints-over-limit", "tasks", "tasks.jsonl",
         jl({**TASK, "constraints": {"avoid": ["x" * JSON_FIELD_MAX_CHARS]}}), 1, "constraints", "over the limit"),
    # a campaign item's payload fields without a column: checklist cues and TIG identifiers were uncapped
    Case("checklist-entry-over-limit", "items", "items.jsonl",
         jl(ITEM, {**ITEM, "checklist": ["Avoids clocks?", "c" * (CHECKLIST_ENTRY_MAX_CHARS + 1)]}),
         2, "checklist[1]", f"limit of {CHECKLIST_ENTRY_MAX_CHARS:,}"),
    Case("checklist-entry-5-mb", "items", "items.jsonl", jl({**ITEM, "checklist": ["c" * 5_000_000]}),
         1, "checklist[0]", "5,000,000 characters long, over the limit"),
    Case("checklist-too-many-entries", "items", "items.jsonl",
         jl({**ITEM, "checklist": [f"cue {i}" for i in range(CHECKLIST_MAX_ENTRIES + 1)]}),
         1, "checklist", f"{CHECKLIST_MAX_ENTRIES + 1} entries, over the limit of {CHECKLIST_MAX_ENTRIES}"),
    Case("checklist-not-a-list", "items", "items.jsonl", jl({**ITEM, "checklist": "Avoids clocks?"}),
         1, "checklist", "must be a list of strings"),
    Case("checklist-entry-not-a-string", "items", "items.jsonl", jl({**ITEM, "checklist": ["ok", {"cue": 1}]}),
         1, "checklist[1]", "must be a string"),
    Case("tig-id-over-limit", "items", "items.jsonl", jl({**ITEM, "comparison_key": "k" * (META_MAX_CHARS + 1)}),
         1, "comparison_key", f"limit of {META_MAX_CHARS}"),
    Case("tig-id-megabytes", "items", "items.jsonl", jl({**ITEM, "cluster_id": "c" * 2_000_000}),
         1, "cluster_id", "over the limit"),
    Case("tig-id-an-object", "items", "items.jsonl", jl({**ITEM, "source": {"blob": "x" * 1000}}),
         1, "source", "must be a string or an integer"),
    Case("tig-rank-2**70", "items", "items.jsonl", jl({**ITEM, "rank": 2**70}), 1, "rank", "between"),
    # decoding errors name the line, and the field when the bad byte is inside a value
    Case("bad-utf8-in-value", "tasks", "tasks.jsonl", jl(TASK, b'{"id":"t2","family":"abstraction","brief":"caf\xe9"}'),
         2, "brief", "not valid UTF-8"),
    Case("bad-utf8-structural", "tasks", "tasks.jsonl", jl(TASK, b'{"id":"t2",\xff"family":"abstraction"}'),
         2, "", "not valid UTF-8"),
    Case("bad-utf8-csv", "tasks", "tasks.csv", TASKS_CSV_HEADER + b"t1,abstraction,caf\xe9\n", 2, "brief", "not valid UTF-8"),
    Case("bad-utf8-item", "items", "items.jsonl", jl(b'{"task_id":"t1","cluster_summary":"\xc3"}'),
         1, "cluster_summary", "not valid UTF-8"),
    Case("invalid-json", "tasks", "tasks.jsonl", jl(TASK, b'{"id": "t2",'), 2, "", "not valid JSON"),
    Case("invalid-json-item", "items", "items.jsonl", jl(ITEM, b"{task_id: t1}"), 2, "", "not valid JSON"),
    Case("array-not-object", "tasks", "tasks.jsonl", jl([TASK]), 1, "", "must be a JSON object"),
    Case("array-not-object-item", "items", "items.jsonl", jl([ITEM]), 1, "", "must be a JSON object"),
    # json_decode gives None both for "null" and for text that is not JSON: a null line was skipped
    Case("null-not-object", "tasks", "tasks.jsonl", jl(TASK, b"null"), 2, "", "must be a JSON object, got null"),
    Case("null-not-object-responses", "responses", "responses.jsonl", jl(RESPONSE, b" null\r"), 2, "",
         "must be a JSON object, got null"),
    Case("csv-json-cell-invalid", "tasks", "tasks.csv", b'id,family,brief,constraints\nt1,abstraction,b,"{nope"\n',
         2, "constraints", "not valid JSON"),
    # UTF-16 (a spreadsheet's "Unicode text"), with or without a byte-order mark: read as UTF-8 it gave
    # NUL and CSV errors that never said the file was not UTF-8
    Case("csv-utf16-bom", "tasks", "tasks.csv", (TASKS_CSV_HEADER + b"t1,abstraction,b\n").decode().encode("utf-16"),
         0, "", "not UTF-8: it is UTF-16 (little-endian), with a byte-order mark"),
    Case("csv-utf16le-no-bom", "responses", "responses.csv", "task_id,model,sample,text\nt1,m1,2,x\n".encode("utf-16-le"),
         0, "", "not UTF-8: it is UTF-16 (little-endian), without a byte-order mark"),
    Case("csv-utf16be-no-bom", "tasks", "tasks.csv", (TASKS_CSV_HEADER + b"t1,abstraction,b\r\n").decode().encode("utf-16-be"),
         0, "", "not UTF-8: it is UTF-16 (big-endian)"),
    Case("csv-utf16be-bom", "renders", "manifest.csv",
         "\ufefftask_id,model,sample,image,renderer,seed\nt1,m1,1,img.png,flux,7\n".encode("utf-16-be"),
         0, "", "UTF-16 (big-endian), with a byte-order mark"),
    Case("jsonl-utf16-bom", "items", "items.jsonl", jl(ITEM).decode().encode("utf-16"), 0, "", "not UTF-8: it is UTF-16"),
    # empty files
    Case("empty", "tasks", "tasks.jsonl", b"", 0, "", "empty"),
    Case("only-blank-lines", "responses", "responses.jsonl", b"\n  \n\r\n", 0, "", "empty"),
    Case("only-a-bom", "items", "items.jsonl", b"\xef\xbb\xbf", 0, "", "empty"),
    Case("csv-header-only", "tasks", "tasks.csv", TASKS_CSV_HEADER, 0, "", "header line but no records"),
    Case("csv-header-only-renders", "renders", "manifest.csv", b"task_id,model,sample,image,renderer,seed\n",
         0, "", "header line but no records"),
]


class World:
    def __init__(self, tmp_path: Path):
        self.task_set = TaskSetFactory(name="contract")
        task = TaskFactory(task_set=self.task_set, external_id="t1")
        self.models = [SubjectModelFactory(display_name=name) for name in ("m1", "m2")]
        for model in self.models:
            ResponseFactory(task=task, subject_model=model, sample=1)
        self.campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, self)
        self.base_dir = tmp_path
        (tmp_path / "img.png").write_bytes(deterministic_png("contract", 7))

    def run(self, importer: str, name: str, raw: bytes):
        if importer == "tasks":
            return tasks_import(name=name, raw=raw, task_set_name="imported", version="1")
        if importer == "responses":
            return responses_import(name=name, raw=raw, task_set=self.task_set)
        if importer == "renders":
            return renders_import_manifest(name=name, raw=raw, task_set=self.task_set, base_dir=self.base_dir)
        return item_creation.items_import_jsonl(campaign=self.campaign, name=name, raw=raw)


@pytest.fixture
def world(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return World(tmp_path)


def database_rows() -> dict[str, int]:
    return {
        model._meta.label: model.objects.count()
        for app in ("leaderboard", "annotation") for model in apps.get_app_config(app).get_models()
    }


def rejection(call) -> tuple[list[tuple[str, int, str, str]], str]:
    """(file, line, field, message) of every error, and the text a user is shown."""
    with pytest.raises((ImportFailed, ItemsInvalid)) as info:
        call()
    exc = info.value
    if isinstance(exc, ImportFailed):
        return [(e.file, e.line, e.field, e.message) for e in exc.errors], str(exc)
    return [(exc.file, line, field, message) for line, field, message in exc.errors], exc.message


def where(case: Case) -> str:
    place = f"{case.name}:{case.line}" if case.line else case.name
    return f"{place}: field '{case.field}'" if case.field else place


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_a_malformed_file_is_rejected_whole_naming_file_line_and_field(world, case):
    before = database_rows()
    errors, shown = rejection(lambda: world.run(case.importer, case.name, case.raw))
    assert database_rows() == before
    matching = [e for e in errors if e[:3] == (case.name, case.line, case.field)]
    assert matching, f"no error at {where(case)}: {shown[:2000]}"
    assert case.fragment in matching[0][3], matching
    assert where(case) in shown


def test_a_decoding_problem_does_not_hide_the_other_problems_of_its_line(world):
    raw = jl(b'{"id":"t1 ","family":"abstraction","brief":"a\\u0000b","constraints":{"x":NaN}}')
    errors, _ = rejection(lambda: world.run("tasks", "tasks.jsonl", raw))
    assert {(line, field) for _, line, field, _ in errors} == {(1, "id"), (1, "brief"), (1, "constraints.x")}


@pytest.mark.postgres
def test_the_whole_corpus_is_rejected_alike_on_postgresql(world):
    """The corpus once more, in one test that only PostgreSQL runs (``-m postgres``; CI sets DATABASE_URL):
    PostgreSQL refuses NUL, lone surrogates and overlong strings at INSERT, so nothing may reach it."""
    require_service("postgres")
    from django.db import connection

    assert connection.vendor == "postgresql"
    before = database_rows()
    for case in CORPUS:
        errors, shown = rejection(lambda case=case: world.run(case.importer, case.name, case.raw))
        assert any(e[:3] == (case.name, case.line, case.field) for e in errors), (case.id, shown[:500])
    assert database_rows() == before


def test_every_problem_of_a_line_is_reported(world):
    raw = jl({"id": " t9", "family": "abstraction", "brief": "b" * (BRIEF_MAX_CHARS + 1), "subtype": 5})
    errors, _ = rejection(lambda: world.run("tasks", "tasks.jsonl", raw))
    assert {(line, field) for _, line, field, _ in errors} == {(1, "id"), (1, "brief"), (1, "subtype")}


BOM = b"\xef\xbb\xbf"
ACCEPTED_WITH_BOM = [
    ("tasks", "tasks.jsonl", jl({**TASK, "id": "t7"})),
    ("tasks", "tasks.csv", TASKS_CSV_HEADER + b"t7,abstraction,Express time.\n"),
    ("responses", "responses.jsonl", jl(RESPONSE)),
    ("responses", "responses.csv", b"task_id,model,sample,text\nt1,m1,2,Core Idea: a.\n"),
    ("renders", "manifest.jsonl", jl(RENDER)),
    ("items", "items.jsonl", jl(ITEM)),
]


@pytest.mark.parametrize("importer,name,raw", ACCEPTED_WITH_BOM, ids=[f"{i}-{n}" for i, n, _ in ACCEPTED_WITH_BOM])
def test_a_utf8_byte_order_mark_is_dropped_by_every_importer(world, importer, name, raw):
    before = database_rows()
    world.run(importer, name, BOM + raw)
    assert database_rows() != before


ADMIN_CASES = [c for c in CORPUS if c.importer in ("tasks", "items")]


@pytest.mark.parametrize("case", ADMIN_CASES, ids=[c.id for c in ADMIN_CASES])
def test_the_admin_upload_shows_the_same_messages_and_writes_nothing(client, adam, world, case):
    assert client.login(username=adam.username, password=PASSWORD)
    upload = io.BytesIO(case.raw)
    upload.name = case.name
    before = database_rows()
    if case.importer == "tasks":
        response = client.post("/admin/leaderboard/taskset/import/", {
            "kind": "tasks", "tasks-file": upload, "tasks-task_set": "imported", "tasks-version": "1",
            "tasks-benchmark": "ekphrasis",
        })
    else:
        response = client.post(f"/admin/annotation/campaign/{world.campaign.pk}/import-items/", {"file": upload})
    assert response.status_code == 200
    assert database_rows() == before
    assert where(case) in html.unescape(response.content.decode())


def test_a_checklist_and_tig_identifiers_at_their_limits_are_accepted(world):
    checklist = ["c" * CHECKLIST_ENTRY_MAX_CHARS] + [f"cue {i}" for i in range(CHECKLIST_MAX_ENTRIES - 1)]
    (item,), _ = world.run("items", "items.jsonl", jl({**ITEM, "checklist": checklist}))
    assert item.payload["checklist"] == checklist
    tig = campaign_for(CampaignKind.TIG_AUDIT, world)
    identifiers = {"comparison_key": "k" * META_MAX_CHARS, "rank": 3, "checklist_item_id": 42}
    (item,), _ = item_creation.items_import_jsonl(campaign=tig, name="tig.jsonl", raw=jl(
        {"task_id": "t1", "checklist_text": "Avoids clocks?", "cluster_summary": "clocks", **identifiers}))
    assert item.payload["meta"] == identifiers


#: (kind, a record the kind accepts, a record with one field the kind does not read, that field)
UNKNOWN_ITEM_FIELDS = [
    # a misspelt gold answer made an ordinary item
    (CampaignKind.TEXT_PAIRWISE, {**ITEM, "dimension": "usefulness"}, {**ITEM, "Gold": "A"}, "Gold"),
    (CampaignKind.TEXT_PAIRWISE, {**ITEM, "dimension": "usefulness"}, {**ITEM, "checklists": ["Avoids clocks?"]},
     "checklists"),
    (CampaignKind.TEXT_PAIRWISE, {**ITEM, "dimension": "usefulness"}, {**ITEM, "comparison_key": "k1"},
     "comparison_key"),  # a TIG field
    (CampaignKind.TIG_AUDIT, {"task_id": "t1", "checklist_text": "Avoids rain?", "cluster_summary": "rain"},
     {"task_id": "t1", "checklist_text": "Avoids clocks?", "is_gold": True}, "is_gold"),
    (CampaignKind.STRATEGY, {"task_id": "t1", "response": {"model": "m2"}},
     {"task_id": "t1", "response": {"model": "m1"}, "stratum": "x"}, "stratum"),
]


@pytest.mark.parametrize("kind,good,record,field", UNKNOWN_ITEM_FIELDS,
                         ids=[f"{k}-{f}" for k, _, _, f in UNKNOWN_ITEM_FIELDS])
def test_an_item_field_its_campaign_kind_does_not_read_is_refused(world, kind, good, record, field):
    campaign = campaign_for(kind, world)
    before = database_rows()
    with pytest.raises(ItemsInvalid) as info:
        item_creation.items_import_jsonl(campaign=campaign, name="items.jsonl", raw=jl(good, record))
    assert [(line, f) for line, f, _ in info.value.errors] == [(2, field)]
    assert f"unknown field for a {kind} campaign" in info.value.errors[0][2]
    assert database_rows() == before
    created, _ = item_creation.items_import_jsonl(campaign=campaign, name="items.jsonl", raw=jl(good))
    assert len(created) == 1  # the accepted record alone imports


def test_a_tig_record_as_export_tig_items_writes_it_is_accepted(world):
    campaign = campaign_for(CampaignKind.TIG_AUDIT, world)
    record = {"checklist_item_id": 7, "task_id": "t1", "version": 1, "checklist_text": "Avoids clocks?",
              "cluster_id": "c3", "cluster_summary": "clocks and hourglasses", "cluster_type": "object", "score": 0.8,
              "n_models": 3, "n_samples": 5, "population_models": 4, "population_samples": 12,
              "population_version": "p1"}
    (item,), _ = item_creation.items_import_jsonl(campaign=campaign, name="tig.jsonl", raw=jl(record))
    assert item.payload["provenance"] == {"models_sharing": 3, "models_in_population": 4, "responses_sharing": 5,
                                          "responses_in_population": 12}


CR_ONLY = [
    ("tasks", "tasks.csv", TASKS_CSV_HEADER + b"t7,abstraction,Express time.\n"),
    ("tasks", "tasks.jsonl", jl({**TASK, "id": "t7"}, {**TASK, "id": "t8"})),
    ("responses", "responses.csv", b"task_id,model,sample,text\nt1,m1,2,Core Idea: a.\nt1,m2,2,Core Idea: b.\n"),
    ("renders", "manifest.csv", b"task_id,model,sample,image,renderer,seed\nt1,m1,1,img.png,flux,7\n"),
    ("items", "items.jsonl", jl(ITEM, {**ITEM, "dimension": "usefulness"})),
]


@pytest.mark.parametrize("importer,name,raw", CR_ONLY, ids=[f"{i}-{n}" for i, n, _ in CR_ONLY])
def test_a_file_whose_lines_end_in_cr_alone_imports_as_with_lf(world, importer, name, raw):
    """A classic Mac spreadsheet's "CSV (Macintosh)" ends its lines in CR alone: once read as one line."""
    before = database_rows()
    world.run(importer, name, raw.replace(b"\n", b"\r"))
    with_cr = database_rows()
    assert with_cr != before
    world.run(importer, name, raw)  # the same records with LF: nothing new, nothing different
    assert database_rows() == with_cr


def test_an_error_in_a_cr_only_file_names_its_line():
    raw = TASKS_CSV_HEADER + b"t1,abstraction,ok\rt2,nofamily,ok\r"
    errors, _ = rejection(lambda: tasks_import(name="tasks.csv", raw=raw.replace(b"\n", b"\r"),
                                               task_set_name="imported", version="1"))
    assert [(line, field) for _, line, field, _ in errors] == [(3, "family")]
