"""LiveCodeBench's private-test encoding read without ``pickle.loads`` (``lcb_runner/benchmarks/
code_generation.py``, HEAD 28fef95: ``json.loads(pickle.loads(zlib.decompress(base64.b64decode(...))))``)."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib

import pytest

from engine.c2.lcb_private_tests import UnsafePickleError, decode_private_tests


def _encode(value: object, protocol: int = 4) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(value, protocol=protocol))).decode()


def test_decode_private_tests_reads_livecodebench_encoding() -> None:
    cases = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    assert decode_private_tests(_encode(json.dumps(cases))) == cases


class _Exploit:
    def __reduce__(self):  # noqa: ANN204 — the classic pickle payload
        return (os.system, ("echo pwned",))


def test_decode_private_tests_refuses_os_system() -> None:
    with pytest.raises(UnsafePickleError, match="system"):
        decode_private_tests(_encode(_Exploit()))


@pytest.mark.parametrize("value", [{1, 2}.__class__, complex(1, 2), bytearray(b"x")])
def test_decode_private_tests_refuses_any_global(value: object) -> None:
    with pytest.raises(UnsafePickleError):
        decode_private_tests(_encode(value, protocol=2))


def test_decode_private_tests_rejects_non_base64() -> None:
    with pytest.raises(ValueError):
        decode_private_tests("not base64 at all!")
