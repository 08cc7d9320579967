"""Hostile images shared by the tests of every path that takes or serves one."""

from __future__ import annotations

import struct
import zlib


def huge_png(width: int = 8000, height: int = 8000) -> bytes:
    """A valid PNG of ``width``×``height`` black pixels, built without ever holding them decoded: a
    few kilobytes of zlib stream (each row: filter byte 0 and zeros)."""
    row = b"\0" * (width * 3 + 1)
    compressor = zlib.compressobj(9)
    stream = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")
