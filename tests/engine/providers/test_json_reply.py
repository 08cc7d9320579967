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
