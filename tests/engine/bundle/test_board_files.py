"""engine/bundle/board_files.py: a bundle's board.csv, board.tex and viewer written from board.json and the
records, and a forged number in any of them named with its file and first differing line — with the engine
alone, on small bundles of each protocol (the site's exports are tested in tests/leaderboard/bundles)."""

from __future__ import annotations

import json

import pytest

from engine.bundle.board_files import board_files, rebuild_problems
from engine.bundle.manifest import BOARD_CSV, BOARD_TEX, BundleWriter, json_text
from engine.bundle.viewer import VIEWER_DATA, VIEWER_PAGE
from engine.easel.leaderboard import EPISODE_FIELDS, BoardRun, easel_board
from engine.leaderboard import JudgedComparison, build_leaderboard
from engine.reliability import ComparisonRecord
from tests.engine.bundle.tampering import forge_a_number

HEADER = {"title": "a small board", "protocol": "a protocol", "task_set": {"name": "ts", "version": "1"},
          "simulated": True, "demo": False, "board": "board/board.json"}
KINDS = ("ekphrasis", "easel", "c2")
FILES = (BOARD_CSV, BOARD_TEX, VIEWER_DATA)


def _ekphrasis(writer: BundleWriter) -> dict:
    names = ["alpha", "beta", "gamma"]
    comparisons = [{"id": k, "task": f"t{t}", "dimension": d, "kind": "primary", "shown_a": 10 + a, "shown_b": 10 + b,
                    "status": "ok", "winner": "A", "confidence": 0.8, "rationale": "the first is clearer"}
                   for k, (t, d, a, b) in enumerate((t, d, a, b) for t in range(3) for d in "UE"
                                                    for a in range(3) for b in range(a + 1, 3))]
    judged = [JudgedComparison(record=ComparisonRecord(task=c["task"], dimension=c["dimension"], model_a=c["shown_a"] - 10,
                                                       model_b=c["shown_b"] - 10, winner="A"), confidence=0.8, family="f")
              for c in comparisons]
    writer.json("board/board.json", build_leaderboard(judged, names, dimensions=("U", "E"), n_boot=50, seed=5))
    writer.jsonl("records/responses.jsonl", [{"id": 10 + m, "model": name} for m, name in enumerate(names)])
    writer.jsonl("records/comparisons.jsonl", comparisons)
    return {"judge": "simulated", "simulated": True, "demo": False, "budget_per_task": 6, "seed": 5,
            "task_set_version": "1", "code_version": "abc"}


def _easel(writer: BundleWriter) -> dict:
    runs = [BoardRun(1, "simulated", "keen", "native", 0, True), BoardRun(2, "anchor", "blank_fill", "native", 0, False)]
    episodes = []
    for run, score in zip(runs, (0.6, 0.4), strict=True):
        for k in range(2):
            episode = dict.fromkeys(EPISODE_FIELDS)
            episode.update(task_id=f"t{k}", kind="reconstruction", category="programmatic", budget=10, steps_done=10,
                           final_s=score + 0.01 * k, final_edge_iou=0.3, at_50=score / 2, auc=score / 2, best=score,
                           fb_gap=0.0, repeat_rate=0.1, invalid_rate=0.0, undo_count=0, progress_curve=[0.1, score])
            episodes.append((run.id, episode))
    by_run = {run.id: [e for r, e in episodes if r == run.id] for run in runs}
    writer.json("board/board.json", easel_board(task_set={"name": "ts", "version": "1"}, demo=False, runs=runs,
                                                episodes=by_run))
    writer.jsonl("records/runs.jsonl", [{"id": run.id, "agent_name": run.agent_name} for run in runs])
    writer.jsonl("records/tasks.jsonl", [{"id": f"t{k}", "image": f"{k}" * 64} for k in range(2)])
    writer.jsonl("records/episodes.jsonl", [{**e, "id": n, "run": r, "task": e["task_id"], "status": "done",
                                             "initial_s": 0.1, "semantic_score": None, "final_canvas": None}
                                            for n, (r, e) in enumerate(episodes)])
    return {}


def _c2(writer: BundleWriter) -> dict:
    def scores(value: float) -> dict:
        return {"n_prompts": 1, **{m: {"value": value, "low": value - 3, "high": value + 3}
                                   for m in ("usefulness", "originality", "surprise", "creativity")}}

    writer.json("board/board.json", {
        "models": ["m1", "m2"], "task_types": ["qa", "story"], "tables": {"text": ["qa", "story"], "vision": []},
        "scores": {"m1": {"qa": scores(40.0), "story": scores(60.0)}, "m2": {"qa": scores(70.0), "story": scores(30.0)}},
        "combined": {"m1": {"text": 50.0, "vision": None}, "m2": {"text": 50.5, "vision": None}},
        "is_simulated": True, "is_demo": False})
    writer.jsonl("records/samples.jsonl", [
        {"model": m, "task": t, "task_type": t.rstrip("0123456789"), "sample_index": 0, "status": "done", "verdict": "",
         "correct": None, "confidence": None, "cluster": 0, "text": f"a reply of {m} to {t}"}
        for m in ("m1", "m2") for t in ("qa1", "story1")])
    return {"run": 3, "template": "standard", "n_samples": 1, "rater": "simulated", "seed": 1,
            "surprise_policy": "zero", "tau": 0.8, "code_version": "abc"}


RECORDS = {"ekphrasis": _ekphrasis, "easel": _easel, "c2": _c2}


def _bundle(tmp_path, kind: str):
    """A bundle of ``kind`` with its board, the records its derived files read, and the derived files written
    as the exporter writes them (from the files just written)."""
    writer = BundleWriter(tmp_path / kind)
    facts = RECORDS[kind](writer)
    fields = {**HEADER, "kind": kind, "board_facts": facts}
    for name, text in board_files(writer.root, writer.as_read(fields)).items():
        writer.text(name, text)
    writer.manifest(fields)
    return writer.root, json.loads((writer.root / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", KINDS)
def test_an_honest_bundle_rebuilds_to_its_own_bytes(tmp_path, kind):
    root, manifest = _bundle(tmp_path, kind)
    assert rebuild_problems(root, manifest) == []
    assert set(board_files(root, manifest)) == {BOARD_CSV, BOARD_TEX, VIEWER_PAGE, VIEWER_DATA}


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_forged_number_is_named_with_its_file_and_first_differing_line(tmp_path, kind, name):
    root, manifest = _bundle(tmp_path, kind)
    line = forge_a_number(root / name)
    (problem,) = rebuild_problems(root, manifest)
    assert (problem.path, problem.what, problem.lines) == (name, "not as rebuilt", (line,))
    assert problem.detail.startswith(f"line {line} is ") and "where the rebuild from board/board.json and the records has" in problem.detail


def test_a_forged_viewer_number_is_named_by_its_place_in_the_data(tmp_path):
    root, manifest = _bundle(tmp_path, "c2")
    path = root / VIEWER_DATA
    data = json.loads(path.read_text(encoding="utf-8").removeprefix("window.BUNDLE = ").removesuffix(";\n"))
    data["board"]["rows"][0][1] = 99.0  # m1's qa creativity
    path.write_text(f"window.BUNDLE = {json.dumps(data, sort_keys=True)};\n", encoding="utf-8")
    (problem,) = rebuild_problems(root, manifest)
    assert problem.detail.endswith("first differing value BUNDLE.board.rows[0][1]: stored 99.0, rebuilt 40.0")


def test_a_value_added_to_the_viewer_data_is_named_absent_from_the_rebuild_and_cut_short(tmp_path):
    root, manifest = _bundle(tmp_path, "c2")
    path = root / VIEWER_DATA
    data = json.loads(path.read_text(encoding="utf-8").removeprefix("window.BUNDLE = ").removesuffix(";\n"))
    data["forged"] = "x" * 5000
    path.write_text(f"window.BUNDLE = {json.dumps(data, sort_keys=True)};\n", encoding="utf-8")
    (problem,) = rebuild_problems(root, manifest)
    assert problem.detail.endswith('first differing value BUNDLE.forged: stored "' + "x" * 79 + "…, rebuilt (absent)")


def test_the_index_page_is_rebuilt_too(tmp_path):
    root, manifest = _bundle(tmp_path, "easel")
    page = root / VIEWER_PAGE
    page.write_text(page.read_text(encoding="utf-8").replace("value.toFixed(4)", "(value + 0.1).toFixed(4)"))
    (problem,) = rebuild_problems(root, manifest)
    assert problem.path == VIEWER_PAGE and problem.what == "not as rebuilt"


def test_a_fact_changed_with_the_latex_that_prints_it_still_rebuilds_but_the_board_facts_are_checked(tmp_path):
    # the facts are the manifest's: the rebuild follows them (engine.bundle.c2.fact_checks ties them to the
    # configuration the results were scored with); here only the rebuild's side is shown
    root, manifest = _bundle(tmp_path, "c2")
    manifest["board_facts"]["tau"] = 0.5
    (problem,) = [p for p in rebuild_problems(root, manifest) if p.path == BOARD_TEX]
    assert "tau 0.8" in problem.detail and "tau 0.5" in problem.detail


def test_a_bundle_without_board_facts_is_named_as_not_rebuilt_not_a_traceback(tmp_path):
    root, manifest = _bundle(tmp_path, "ekphrasis")
    del manifest["board_facts"]
    problems = rebuild_problems(root, manifest)
    assert {p.path for p in problems} == {BOARD_CSV, BOARD_TEX, VIEWER_PAGE, VIEWER_DATA}
    assert all(p.what == "not rebuilt" and "KeyError: 'board_facts'" in p.detail for p in problems)


def test_the_exporters_writer_and_the_rebuild_agree_on_redacted_text(tmp_path):
    # the exporter redacts every file it writes and hands the rebuild the manifest as it will be read
    writer = BundleWriter(tmp_path / "b", redact=lambda text: text.replace("sk-secret", "[redacted]"))
    facts = _c2(writer)
    fields = {**HEADER, "title": "board of sk-secret", "kind": "c2", "board_facts": facts}
    for name, text in board_files(writer.root, writer.as_read(fields)).items():
        writer.text(name, text)
    writer.manifest(fields)
    manifest = json.loads((writer.root / "manifest.json").read_text(encoding="utf-8"))
    assert rebuild_problems(writer.root, manifest) == []
    assert "sk-secret" not in json_text(manifest) + (writer.root / VIEWER_DATA).read_text(encoding="utf-8")
