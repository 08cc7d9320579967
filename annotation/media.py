"""Serving images to annotators without leaking anything but pixels.

Files imported from text-to-image systems may carry metadata (PNG text chunks with the prompt or
the tool, EXIF with a software name, a JPEG comment). Blinding covers everything an annotator can
load, so images are sent with every metadata chunk removed; nothing else about the bytes changes
(PNG and JPEG are passed through chunk by chunk; other formats are re-encoded as PNG).
"""

from __future__ import annotations

import io
import struct

from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: PNG chunks kept: the critical ones and colour information without free text.
PNG_KEEP = {b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"gAMA", b"cHRM", b"sRGB", b"sBIT", b"pHYs", b"bKGD"}


def _png_strip(data: bytes) -> bytes:
    out, pos = [PNG_SIGNATURE], len(PNG_SIGNATURE)
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        chunk_type = data[pos + 4:pos + 8]
        end = pos + 12 + length
        if chunk_type in PNG_KEEP:
            out.append(data[pos:end])
        pos = end
        if chunk_type == b"IEND":
            break
    return b"".join(out)


def _jpeg_strip(data: bytes) -> bytes:
    """Drop APP1–APP15 (EXIF, XMP, ICC names…) and COM segments; keep APP0 (JFIF) and image data."""
    out, pos = [data[:2]], 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return _reencode(data)
        marker = data[pos + 1]
        if marker == 0xDA:  # start of scan: the rest is entropy-coded image data
            out.append(data[pos:])
            return b"".join(out)
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        segment = data[pos:pos + 2 + length]
        if not (0xE1 <= marker <= 0xEF or marker == 0xFE):
            out.append(segment)
        pos += 2 + length
    return b"".join(out)


def _reencode(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        buffer = io.BytesIO()
        image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB").save(buffer, format="PNG")
        return buffer.getvalue()


def image_without_metadata(data: bytes) -> tuple[bytes, str]:
    """(bytes to send, content type) with all metadata removed."""
    if data.startswith(PNG_SIGNATURE):
        return _png_strip(data), "image/png"
    if data[:2] == b"\xff\xd8":
        return _jpeg_strip(data), "image/jpeg"
    return _reencode(data), "image/png"
