"""LiveCodeBench's private tests: base64 → zlib → pickle (of a JSON string), read without ``pickle.loads``.

``lcb_runner/benchmarks/code_generation.py`` (HEAD 28fef95) decodes ``private_test_cases`` with
``json.loads(pickle.loads(zlib.decompress(base64.b64decode(...))))``; unpickling imported data can run
any code, so :func:`decode_private_tests` reads the pickle with an unpickler that resolves no global at
all, and the JSON inside it with the strict reader every import uses.
"""

from __future__ import annotations

import base64
import binascii
import io
import pickle
import zlib
from collections.abc import Sequence
from typing import Any

from engine.strict_json import JSONProblem, json_decode

__all__ = ["MAX_PRIVATE_TESTS_BYTES", "UnsafePickleError", "PickledJSONError", "decode_private_tests"]

#: The most bytes one task's private tests may decompress to. zlib expands up to about 1,000 : 1, so a
#: 20 MB upload could otherwise ask for 20 GB (a "zip bomb"); LiveCodeBench's largest tasks are far below.
MAX_PRIVATE_TESTS_BYTES = 512 * 2**20


class UnsafePickleError(ValueError):
    """The pickle asks for a global (a class or function) — refused; only plain data is admitted."""


class PickledJSONError(ValueError):
    """The pickled text is JSON that the strict reader refuses (:func:`engine.strict_json.json_decode`:
    a duplicate key, NaN/Infinity, …); ``problems`` name each field by its path in that JSON."""

    def __init__(self, problems: Sequence[JSONProblem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(f"{p.field}: {p.message}" if p.field else p.message for p in self.problems))


class _PlainDataUnpickler(pickle.Unpickler):
    """An unpickler that resolves no global at all: a pickle of str/bytes/numbers/bool/None and
    list/tuple/dict/set/frozenset needs none, anything else (os.system, builtins.eval, a class) does."""

    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(f"pickle refers to the global {module}.{name}; only plain data is allowed")

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("pickle uses a persistent id; only plain data is allowed")


_PLAIN = (str, bytes, int, float, bool, type(None))


def _check_plain(value: Any, depth: int = 0) -> None:
    if depth > 100:
        raise UnsafePickleError("pickle nests deeper than 100 levels")
    if isinstance(value, _PLAIN):
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _check_plain(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, depth + 1)
            _check_plain(item, depth + 1)
        return
    raise UnsafePickleError(f"pickle holds a {type(value).__name__}; only plain data is allowed")


def decode_private_tests(text: str) -> list[Any]:
    """LiveCodeBench ``private_test_cases``: base64 → zlib → pickle → (a JSON string) → list.

    The pickle is read by an unpickler whose ``find_class`` refuses every global, so nothing but plain
    containers, strings and numbers can come out (never ``pickle.loads``). Raises
    :class:`UnsafePickleError` for any global, :class:`PickledJSONError` when the pickled text is JSON
    the strict reader refuses, ``ValueError`` for anything that is not this encoding.
    """
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(base64.b64decode(text.encode("utf-8"), validate=False), MAX_PRIVATE_TESTS_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError(f"they decompress to more than {MAX_PRIVATE_TESTS_BYTES} bytes (the limit per task; "
                             f"a zip bomb?)")
        raw += inflater.flush()
        if not inflater.eof:
            raise zlib.error("incomplete or truncated stream")
    except (binascii.Error, zlib.error, UnicodeError) as exc:
        raise ValueError(f"not base64 of zlib data: {exc}") from exc
    try:
        value = _PlainDataUnpickler(io.BytesIO(raw)).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # a malformed pickle raises many types (UnpicklingError, EOFError, ...)
        raise ValueError(f"not a readable pickle: {exc}") from exc
    _check_plain(value)
    if isinstance(value, (str, bytes)):
        # upstream: json.loads(pickle.loads(...)); read strictly, as every JSON the site imports
        try:
            text = value.decode("utf-8") if isinstance(value, bytes) else value
        except UnicodeDecodeError as exc:
            raise ValueError(f"the pickled text is not UTF-8: {exc}") from exc
        value, problems = json_decode(text)
        if value is None and problems:
            raise ValueError(f"the pickled text is not JSON: {problems[0].message}")
        if problems:
            raise PickledJSONError(problems)
    if not isinstance(value, list):
        raise ValueError(f"expected a list of test cases, got {type(value).__name__}")
    return value
