"""Fake-server handlers for the task-construction screen (engine.task_construction.keep.ModelScreen).

``screen_handler(reject=("music",))`` answers each screening request with a strict JSON verdict: not
renderable when the fenced brief contains one of ``reject``, else all true. ``malformed_first`` answers
the first request for each brief with prose (so the screen must send its repair turn).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.fakes.obedient_model import text_in_frame


def _brief(request: dict[str, Any]) -> str:
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    try:
        return text_in_frame(user, "BRIEF").split("\nConstraints:")[0]
    except KeyError:
        return ""


def screen_handler(*, reject: Sequence[str] = (), malformed_first: bool = False):
    seen: set[str] = set()

    def handler(request: dict[str, Any]) -> str:
        brief = _brief(request)
        if malformed_first and brief not in seen:
            seen.add(brief)
            return "Looks fine to me!"
        bad = [word for word in reject if word in brief]
        return json.dumps({"renderable": not bad, "unambiguous": True, "safe": True,
                           "reason": f"mentions {bad[0]}" if bad else "a single clear image"})

    return handler
