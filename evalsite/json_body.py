"""The one JSON body parser of every API endpoint (DRF ``DEFAULT_PARSER_CLASSES``).

A body is refused with 400 before the view runs any code that writes, when it is larger than
:data:`MAX_BODY_BYTES`, not UTF-8, not strict JSON (:func:`engine.strict_json.json_decode`:
nesting deeper than :data:`~engine.strict_json.MAX_JSON_DEPTH`, duplicate keys, NaN/Infinity,
NUL characters, lone surrogates), or not a JSON object (every endpoint takes an object).
"""

from __future__ import annotations

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from engine.strict_json import json_decode

__all__ = ["MAX_BODY_BYTES", "StrictJSONParser"]

#: Largest API body accepted: a label with its flag note is well under a kilobyte.
MAX_BODY_BYTES = 64 * 1024


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None) -> dict:
        raw = stream.read(MAX_BODY_BYTES + 1) if stream is not None else b""
        if len(raw) > MAX_BODY_BYTES:
            raise ParseError(f"the body is larger than {MAX_BODY_BYTES // 1024} KiB")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"the body is not valid UTF-8 (byte {exc.start})") from exc
        if not text.strip():
            return {}
        value, problems = json_decode(text)
        if problems:
            raise ParseError("; ".join(f"{p.field}: {p.message}" if p.field else p.message for p in problems[:10]))
        if not isinstance(value, dict):
            raise ParseError(f"the body must be a JSON object, got {type(value).__name__}")
        return value
