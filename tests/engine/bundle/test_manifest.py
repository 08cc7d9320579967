import re

import pytest

from engine.bundle.manifest import BundleWriter, check_files, read_json, read_jsonl


def _bundle(tmp_path):
    writer = BundleWriter(tmp_path / "b")
    writer.jsonl("records/r.jsonl", [{"id": 1, "task": "t1", "v": 0.5}, {"id": 2, "task": "t2", "v": 0.25}])
    writer.json("board/board.json", {"x": [1.5, 2.5]})
    digest = writer.media(b"\x89PNG fake")
    return writer.root, writer.manifest({"kind": "c2"}), digest


def test_an_untouched_bundle_has_no_file_problem(tmp_path):
    root, manifest, _ = _bundle(tmp_path)
    assert check_files(root, manifest) == []
    assert read_json(root, "board/board.json") == {"x": [1.5, 2.5]}


def test_a_changed_record_is_named_by_its_line_and_identifying_fields(tmp_path):
    root, manifest, _ = _bundle(tmp_path)
    path = root / "records/r.jsonl"
    path.write_text(path.read_text().replace('"v":0.25', '"v":0.75'))
    (problem,) = check_files(root, manifest)
    assert (problem.path, problem.what, problem.lines) == ("records/r.jsonl", "changed", (2,))
    assert problem.records == ("line 2: id=2 task=t2",)


def test_a_removed_record_is_named_as_removed(tmp_path):
    root, manifest, _ = _bundle(tmp_path)
    path = root / "records/r.jsonl"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    (problem,) = check_files(root, manifest)
    assert problem.lines == (2,) and problem.records == ("line 2: (removed)",)


def test_missing_unlisted_and_misnamed_files_are_each_reported(tmp_path):
    root, manifest, digest = _bundle(tmp_path)
    (root / "board/board.json").unlink()
    (root / "extra.txt").write_text("hello")
    (root / "media" / f"{digest}.png").write_bytes(b"other bytes")
    found = {(p.path, p.what) for p in check_files(root, manifest)}
    assert found == {("board/board.json", "missing"), ("extra.txt", "unlisted"),
                     (f"media/{digest}.png", "changed"), (f"media/{digest}.png", "misnamed")}


def test_a_line_that_is_not_json_is_refused_with_file_and_line(tmp_path):
    root, _, _ = _bundle(tmp_path)
    (root / "records/r.jsonl").write_text('{"id": 1}\n{oops\n')
    try:
        read_jsonl(root, "records/r.jsonl")
    except ValueError as exc:
        assert "records/r.jsonl, line 2" in str(exc)
    else:
        raise AssertionError("no error")


def test_a_duplicate_key_is_refused_with_file_and_line(tmp_path):
    # Python keeps the last of two equal keys, other readers the first: a forged value first and the true
    # one last verified while another reader showed the forged one
    root, _, _ = _bundle(tmp_path)
    (root / "board/board.json").write_text('{"x": [9.9], "x": [1.5, 2.5]}')
    (root / "records/r.jsonl").write_text('{"id": 1}\n{"id": 2, "v": 9, "v": 1}\n')
    for read, name, where in ((read_json, "board/board.json", "board/board.json"),
                              (read_jsonl, "records/r.jsonl", "records/r.jsonl, line 2")):
        try:
            read(root, name)
        except ValueError as exc:
            assert where in str(exc) and "duplicate key" in str(exc)
        else:
            raise AssertionError(f"{name}: no error")


def test_a_record_whose_text_holds_a_line_separator_is_read_back_whole(tmp_path):
    writer = BundleWriter(tmp_path / "b")
    records = [{"id": 1, "text": "one\u2028two\x85three"}, {"id": 2, "text": "four"}]
    writer.jsonl("records/r.jsonl", records)
    manifest = writer.manifest({"kind": "c2"})
    assert check_files(writer.root, manifest) == []
    assert read_jsonl(writer.root, "records/r.jsonl") == records


@pytest.mark.parametrize(("text", "field", "message"), [
    ('{"x": [NaN]}', "field x[0]", "must be a finite number, got NaN"),
    ('{"x": [1e400]}', "field x[0]", "must be a finite number, got 1e400"),
    ('{"x": [1.5], "x": [9.9]}', "field x", "duplicate key in one object"),
    ('{"x": "a\\u0000b"}', "field x", "contains a NUL character"),
    ('{"x": "\\ud800"}', "field x", "contains a lone surrogate (U+D800)"),
])
def test_a_json_file_holding_what_readers_disagree_on_is_refused_naming_file_and_field(tmp_path, text, field, message):
    # Python reads NaN and 1e400 (as inf) and keeps the last of two equal keys; other languages' readers
    # refuse them or keep the first, and neither database stores NUL or a lone surrogate
    root, _, _ = _bundle(tmp_path)
    (root / "board/board.json").write_text(text)
    with pytest.raises(ValueError) as refused:
        read_json(root, "board/board.json")
    assert str(refused.value) == f"board/board.json, {field}: {message}"


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": 2, "v": NaN}', "records/r.jsonl, line 2, field v: must be a finite number, got NaN"),
    ('{"id": 2, "v": "\\u0000"}', "records/r.jsonl, line 2, field v: contains a NUL character"),
])
def test_a_record_holding_what_readers_disagree_on_is_refused_naming_file_line_and_field(tmp_path, line, message):
    root, _, _ = _bundle(tmp_path)
    (root / "records/r.jsonl").write_text('{"id": 1}\n' + line + "\n")
    with pytest.raises(ValueError, match=re.escape(message)):
        read_jsonl(root, "records/r.jsonl")


def test_a_json_file_that_is_not_json_is_refused_naming_file_and_line(tmp_path):
    root, _, _ = _bundle(tmp_path)
    (root / "board/board.json").write_text('{\n  "x": [1.5,\n  ]\n}\n')
    with pytest.raises(ValueError, match=r"^board/board\.json, line 3: not valid JSON \("):
        read_json(root, "board/board.json")


def test_a_json_file_that_is_not_utf8_is_refused_naming_file_and_field(tmp_path):
    root, _, _ = _bundle(tmp_path)
    (root / "board/board.json").write_bytes(b'{"x": "caf\xe9"}')
    with pytest.raises(ValueError, match=r"^board/board\.json, field x: is not valid UTF-8$"):
        read_json(root, "board/board.json")


def test_a_json_file_nested_past_the_limit_is_refused_not_a_recursion_error(tmp_path):
    root, _, _ = _bundle(tmp_path)
    (root / "board/board.json").write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ValueError, match=r"^board/board\.json, line 1, field x: nested deeper than 40 levels$"):
        read_json(root, "board/board.json")


def test_a_file_with_several_problems_names_the_first_and_counts_the_rest(tmp_path):
    root, _, _ = _bundle(tmp_path)
    (root / "board/board.json").write_text('{"x": [NaN, Infinity, -Infinity]}')
    with pytest.raises(ValueError, match=re.escape("board/board.json, field x[0]: must be a finite number, got NaN "
                                                   "(and 2 more problems)")):
        read_json(root, "board/board.json")


def test_a_field_a_check_needs_and_a_record_lacks_is_named_with_file_line_and_field(tmp_path):
    writer = BundleWriter(tmp_path)
    writer.jsonl("records/c.jsonl", [{"id": 1, "fit": {"len_a": 3}}, {"id": 2, "fit": {}}])
    rows = read_jsonl(tmp_path, "records/c.jsonl")
    assert rows[0]["fit"]["len_a"] == 3
    with pytest.raises(KeyError) as caught:
        rows[1]["fit"]["len_a"]
    assert str(caught.value) == "records/c.jsonl, line 2, field fit.len_a: absent"


def test_a_field_the_manifest_lacks_is_named_with_the_file(tmp_path):
    writer = BundleWriter(tmp_path)
    writer.manifest({"kind": "c2"})
    with pytest.raises(KeyError) as caught:
        read_json(tmp_path, "manifest.json")["configuration"]
    assert str(caught.value) == "manifest.json, field configuration: absent"


def test_records_read_once_hands_out_one_parse_per_file_and_parses_a_changed_file_again(tmp_path):
    from engine.bundle.manifest import numbered_records, records_read_once

    path = tmp_path / "records/r.jsonl"
    path.parent.mkdir()
    path.write_text('{"id": 1}\n{"id": 2}\n')
    with records_read_once():
        first, again = numbered_records(tmp_path, "records/r.jsonl"), numbered_records(tmp_path, "records/r.jsonl")
        assert first == again and first[0][1] is again[0][1]  # the same records, not a second parse
        path.write_text('{"id": 1}\n{"id": 2}\n{"id": 3}\n')  # another size: not the file that was parsed
        assert [r["id"] for _, r in numbered_records(tmp_path, "records/r.jsonl")] == [1, 2, 3]
    outside = numbered_records(tmp_path, "records/r.jsonl")
    assert outside[0][1] is not numbered_records(tmp_path, "records/r.jsonl")[0][1]  # no block: parsed each time
