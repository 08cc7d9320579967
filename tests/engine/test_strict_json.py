"""Strict JSON decoding: every problem is found with the field it is in, and no input raises."""

from __future__ import annotations

import json

import pytest

from engine.strict_json import MAX_JSON_DEPTH, json_decode


def problems(text: str, **kwargs) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in json_decode(text, **kwargs)[1]]


def test_a_clean_object_decodes_to_itself_without_problems():
    assert json_decode('{"a": [1, 2.5, "x", {"b": null}], "c": true}') == (
        {"a": [1, 2.5, "x", {"b": None}], "c": True}, [])


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 5000, 100_000])
def test_nesting_past_the_limit_is_a_problem_under_its_top_level_key_not_a_recursion_error(depth):
    text = '{"id": "x", "deep": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    assert problems(text) == [("deep", f"nested deeper than {MAX_JSON_DEPTH} levels")]


def test_nesting_at_the_limit_is_accepted():
    text = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert problems(text) == []


def test_brackets_inside_strings_do_not_count_as_nesting():
    assert problems('{"a": "' + "[" * 100 + '"}') == []


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_a_non_finite_number_is_named_by_its_path(number):
    assert problems(f'{{"a": {{"b": [0, {number}]}}}}') == [("a.b[1]", f"must be a finite number, got {number}")]


def test_a_duplicate_key_is_named_even_inside_a_nested_object():
    assert problems('{"a": {"k": 1, "k": 2}, "b": 1, "b": 2}') == [
        ("b", "duplicate key in one object"), ("a.k", "duplicate key in one object")]


@pytest.mark.parametrize("text", ['{"a": "x\\u0000y"}', '{"a": "x\x00y"}'])
def test_a_nul_escaped_or_raw_is_named_by_its_field(text):
    assert problems(text) == [("a", "contains a NUL character")]


def test_a_lone_surrogate_is_named_by_its_field():
    assert problems('{"a": ["\\ud83d"]}') == [("a[0]", "contains a lone surrogate (U+D83D)")]


def test_a_paired_surrogate_escape_is_an_ordinary_character():
    assert json_decode('{"a": "\\ud83d\\ude00"}') == ({"a": "\U0001F600"}, [])


def test_an_undecodable_byte_is_named_by_its_field_when_it_is_inside_a_value():
    text = b'{"a": "caf\xe9"}'.decode("utf-8", errors="surrogateescape")
    assert problems(text, undecodable=True) == [("a", "is not valid UTF-8")]


@pytest.mark.parametrize("text", ["{", '{"a": }', "1" + "0" * 5000, ""])
def test_text_that_is_not_json_is_one_problem_of_the_whole_document(text):
    value, found = json_decode(text)
    assert value is None and len(found) == 1 and found[0].field == "" and "not valid JSON" in found[0].message


def test_a_text_that_cannot_be_decoded_says_on_which_line_it_stops():
    # a one-document file (a C² dataset) is many lines: its reader names the line
    assert json_decode('{\n  "a": 1,\n  "b": \n}')[1][0].line == 4
    deep = '{\n "a": 1,\n "b": ' + "[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5) + "\n}"
    (problem,) = json_decode(deep)[1]
    assert (problem.field, problem.line) == ("b", 3)
    assert json_decode('{"a": {"k": 1, "k": 2}}')[1][0].line == 0  # decoded: the field names it


_PIECES = ['"a"', '"b"', '"é"', '"\\u0000"', '"\\ud800"', '"\\ud83d\\ude00"', '"x\\"y"', '"\x00"', '"\ud800"',
           '"\\u00e9"', "1", "-2.5", "1e400", "NaN", "-Infinity", "true", "null", "12345678901234567890"]


def _random_json(rng, depth=0):
    """A JSON-like text from pieces that are clean, or hostile in one of the ways the walk reports."""
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice(_PIECES)
    if roll < 0.7:
        return "[" + ", ".join(_random_json(rng, depth + 1) for _ in range(rng.randrange(4))) + "]"
    keys = [rng.choice(['"k"', '"l"', '"m"', '"\\u0000"', '"\ud800"', '"n"']) for _ in range(rng.randrange(4))]
    return "{" + ", ".join(f"{k}: {_random_json(rng, depth + 1)}" for k in keys) + "}"


def _mutated(rng, text):
    """Now and then a text that is not JSON at all (cut short, or with a stray character)."""
    roll = rng.random()
    if roll < 0.1 and len(text) > 1:
        return text[: rng.randrange(1, len(text))]
    if roll < 0.15:
        return text + rng.choice(["}", ",", " x"])
    return text


def _types(value):
    if isinstance(value, dict):
        return (type(value), [(k, _types(v)) for k, v in value.items()])
    if isinstance(value, list):
        return (list, [_types(v) for v in value])
    return type(value)


def test_the_fast_path_decodes_every_text_exactly_as_the_full_walk_does():
    # json_decode skips the walk when the text can hold nothing it reports; 4,000 random texts, clean
    # and hostile, must give the same value (plain dicts included) and the same problems either way
    import random

    from engine.strict_json import _decode_and_walk

    rng = random.Random(20261205)
    clean = 0
    for _ in range(4000):
        text = _mutated(rng, _random_json(rng))
        for undecodable in (False, True):
            fast = json_decode(text, undecodable=undecodable)
            full = _decode_and_walk(text, 20, undecodable)
            assert fast == full, text
            assert _types(fast[0]) == _types(full[0]), text  # plain dicts and lists all the way down
        clean += not full[1]
    assert 500 < clean < 3500  # both paths were exercised


def test_a_cr_only_document_that_is_not_json_is_named_at_its_own_line_and_column():
    # json counts LF only: the position of a CR-only file's error was line 1 at a column past the first line
    _, problems = json_decode('{"a": 1,\r "b": }\r')
    assert problems[0].line == 2 and "at column 7" in problems[0].message


# ---------------------------------------------------------------- the fast path's decoder, made once

_FAST_PATH_TEXTS = [
    '{"winner": "A", "confidence": 0.75, "items": [{"i": 1, "w": "tie"}, {"i": 2, "w": "B"}]}',
    '{"a": 1, "a": 2}',  # a duplicate key: the fast path gives up, the full path names it
    '{"x": NaN}', '{"x": 1e400}', '{"x": -Infinity}',  # non-finite numbers
    "\ufeff{\"a\": 1}",  # a BOM, which json.loads refuses before decoding
    '{"a": 1} trailing', "", "[1, 2", '"just a string"', "12.5", '{"deep": ' * 3 + "1" + "}" * 3,
]


def _reference_decode(text: str):
    """json_decode as it was: json.loads with the fast path's hooks on every call, else the full path."""
    from engine import strict_json as sj

    if sj._too_deep(text, sj.MAX_JSON_DEPTH) is None and "\\u" not in text and "\x00" not in text \
            and not sj._SURROGATE.search(text):
        try:
            return json.loads(text, object_pairs_hook=sj._plain_pairs, parse_float=sj._finite_float,
                              parse_constant=sj._give_up), []
        except (sj._GiveUp, ValueError, RecursionError):
            pass
    return sj._decode_and_walk(text, sj.MAX_JSON_DEPTH, False)


@pytest.mark.parametrize("text", _FAST_PATH_TEXTS)
def test_the_reused_decoder_decodes_every_text_as_loads_with_the_hooks_did(text):
    value, problems = json_decode(text)
    expected_value, expected_problems = _reference_decode(text)
    assert repr(value) == repr(expected_value) and type(value) is type(expected_value)
    assert problems == expected_problems


def test_the_fast_path_builds_no_decoder_a_call(monkeypatch):
    made = []
    original = json.JSONDecoder.__init__

    def counting(self, *args, **kwargs):
        made.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(json.JSONDecoder, "__init__", counting)
    for k in range(50):
        assert json_decode(f'{{"k": {k}, "v": [1.5, "x"]}}') == ({"k": k, "v": [1.5, "x"]}, [])
    assert made == []


def test_storable_text_finds_a_surrogate_exactly_where_the_surrogate_pattern_does():
    """storable_text looks for surrogates by encoding as UTF-8, not with the pattern's search: the same answer
    as the pattern (with the escape and NUL tests before it) on every surrogate's edges and on texts around them."""
    import random

    from engine.strict_json import _SURROGATE, storable_text

    def by_pattern(text: str) -> bool:
        return "\\u" not in text and "\x00" not in text and (text.isascii() or not _SURROGATE.search(text))

    edges = [0x7F, 0x80, 0xFF, 0x100, 0x2014, 0xD7FF, 0xD800, 0xDB7F, 0xDBFF, 0xDC00, 0xDC80, 0xDFFF, 0xE000, 0xFFFF,
             0x10000, 0x1F3A8, 0x10FFFF]
    texts = ['{"a": "plain"}', '{"a": "\\u00e9"}', "nul \x00", "é", "“curly” — dash", "🎨"]
    texts += [f"{prefix}{chr(code)}{suffix}" for code in edges for prefix in ("", "ab “", "é")
              for suffix in ("", " tail", "—")]
    rng = random.Random(3)
    texts += ["".join(chr(rng.choice(edges + [0x41, 0x20, 0x5C, 0x75])) for _ in range(rng.randrange(1, 12)))
              for _ in range(3000)]
    found = [storable_text(text) for text in texts]
    assert found == [by_pattern(text) for text in texts]
    assert True in found and False in found
