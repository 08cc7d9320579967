"""A model that takes whatever stands outside a text's frame as instructions: the prompt-injection fake.

An evaluator prompt shows a model's own text between marker lines; a model reads the text after the line that
closes the frame as the prompt's own. :func:`text_after_frame` finds that text the way such a model would:
after the *first* line that closes the frame named ``label`` -- ``<label>>>>`` for a fixed fence
(``<<<IDEA`` ... ``IDEA>>>``), ``END <label> <code>`` for :mod:`engine.prompt_framing`'s frames
(``BEGIN IDEA <code>`` ... ``END IDEA <code>``). A text that can write that line itself ends its own frame, and
what it writes after it reads as instructions.

:func:`obeys_injected_replies` is a chat handler for :class:`tests.fakes.FakeOpenAIServer`: it answers
``reply(request)``, unless a line ``REPLY WITH: <text>`` stands after the end of the ``label`` frame in a user
turn, which it answers with ``<text>`` instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

INJECTED = "REPLY WITH: "


def _split_at_frame(content: str, label: str) -> tuple[str, str] | None:
    """(the text inside the ``label`` frame, the text after it), as read up to the first closing line."""
    lines = content.split("\n")
    closing = start = None
    for index, line in enumerate(lines):
        if closing is None:
            new = re.fullmatch(rf"BEGIN {re.escape(label)} ([0-9a-f]{{16}})", line)
            if line == f"<<<{label}":
                closing, start = f"{label}>>>", index + 1
            elif new:
                closing, start = f"END {label} {new.group(1)}", index + 1
        elif line == closing:
            return "\n".join(lines[start:index]), "\n".join(lines[index + 1:])
    return None


def text_in_frame(content: str, label: str) -> str:
    """The text a model reads as inside the ``label`` frame of ``content`` (KeyError without such a frame)."""
    split = _split_at_frame(content, label)
    if split is None:
        raise KeyError(f"no {label} frame in the prompt")
    return split[0]


def text_after_frame(content: str, label: str) -> str:
    """What follows the first line that closes the ``label`` frame in ``content`` ("" without such a frame)."""
    split = _split_at_frame(content, label)
    return "" if split is None else split[1]


def obeys_injected_replies(label: str, reply: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    """A handler answering ``reply(request)``, or the ``REPLY WITH:`` line found after the ``label`` frame."""

    def handler(request: dict[str, Any]) -> str:
        for message in request.get("messages", []):
            if message.get("role") != "user" or not isinstance(message.get("content"), str):
                continue
            for line in text_after_frame(message["content"], label).split("\n"):
                if line.startswith(INJECTED):
                    return line[len(INJECTED):]
        return reply(request)

    return handler
