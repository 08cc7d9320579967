"""Reading a strict-JSON reply."""

from __future__ import annotations

import pytest

from engine.providers.json_reply import MalformedReply, parse_json_object


def test_a_bare_object_is_read():
    assert parse_json_object(' {"idea": "a kite"} \n') == {"idea": "a kite"}


def test_one_code_fence_is_allowed():
    assert parse_json_object('```json\n{"idea": null}\n```') == {"idea": None}
    assert parse_json_object('```\n{"idea": 1}\n```') == {"idea": 1}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        None,
        'Here you go: {"idea": "x"}',
        '{"idea": "x"} hope this helps',
        '["idea"]',
        '{"idea": "x",}',
        '{"confidence": NaN}',
        '{"idea": "x"}{"idea": "y"}',
    ],
)
def test_anything_else_is_malformed(text):
    with pytest.raises(MalformedReply):
        parse_json_object(text)


@pytest.mark.parametrize(("text", "problem"), [
    ('{"confidence": 1e400}', "confidence: must be a finite number, got 1e400"),
    ('{"winner": "A", "winner": "B"}', "winner: duplicate key in one object"),
    ('{"idea": "a\\u0000kite"}', "idea: contains a NUL character"),
    ('{"idea": "\\udc00"}', "idea: contains a lone surrogate (U+DC00)"),
])
def test_a_value_readers_disagree_on_is_malformed_naming_its_field(text, problem):
    # what the strict reader refuses in an import file: which of two winners did the model mean, and
    # neither database stores an infinite confidence, a NUL or a lone surrogate
    with pytest.raises(MalformedReply) as refused:
        parse_json_object(text)
    assert str(refused.value) == problem


def test_a_reply_nested_thousands_deep_is_malformed_not_a_recursion_error():
    with pytest.raises(MalformedReply, match="nested deeper than 20 levels"):
        parse_json_object('{"idea": ' + "[" * 100_000 + "]" * 100_000 + "}")


def test_a_reply_that_is_not_json_names_line_and_column():
    with pytest.raises(MalformedReply, match=r"^not valid JSON \(Expecting value at column 13\) on line 2$"):
        parse_json_object('{"idea":\n  "x", "n": }')
