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


def test_private_tests_that_decompress_past_the_limit_are_refused_before_they_are_held(monkeypatch) -> None:
    import engine.c2.lcb_private_tests as private_tests

    monkeypatch.setattr(private_tests, "MAX_PRIVATE_TESTS_BYTES", 2**20)
    tests = json.dumps([{"input": "0" * 2**19, "output": "0"}])
    fits = base64.b64encode(zlib.compress(pickle.dumps(tests))).decode()
    assert decode_private_tests(fits)[0]["output"] == "0"
    bomb = base64.b64encode(zlib.compress(b"\0" * (2**20 + 1))).decode()  # 1 KB that inflates past the limit
    with pytest.raises(ValueError, match=f"more than {2**20} bytes"):
        decode_private_tests(bomb)


def test_a_truncated_zlib_stream_is_not_base64_of_zlib_data() -> None:
    whole = zlib.compress(pickle.dumps(json.dumps([{"input": "1", "output": "1"}])))
    with pytest.raises(ValueError, match="not base64 of zlib data"):
        decode_private_tests(base64.b64encode(whole[:-6]).decode())
