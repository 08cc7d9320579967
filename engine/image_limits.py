"""The pixel budget of every image the site stores or shows, checked from the header before decoding.

A PNG of 8000×8000 pixels compresses to a few kilobytes and decodes to ~256 MB (RGBA, 4 bytes a
pixel), ~830 MB once converted and re-encoded; Pillow's own guard only warns from 89 M pixels. The
budget here, :data:`PIXEL_BUDGET` = 4096 × 4096 = 16.7 M pixels (64 MiB as RGBA), is four times the
largest render size the OpenAI images API returns (1792 × 1024 ≈ 1.8 M pixels) and sixteen times the
1024 × 1024 renders and C² images the site works with, so no real image comes near it, while the
worst case one request can make a worker decode stays bounded.

:func:`image_size_checked` opens the bytes with Pillow, which reads only the header (width and
height) until something asks for pixels, and refuses an image over the budget before any pixel is
decoded.
"""

from __future__ import annotations

import io
import re
import warnings
from typing import BinaryIO

from PIL import Image

__all__ = ["IMAGE_FILE_BYTES", "PIXEL_BUDGET", "ImageTooLarge", "image_size_checked"]

#: Most pixels (width × height) of an image the site imports, stores or shows: 4096 × 4096.
PIXEL_BUDGET = 4096 * 4096
#: Most bytes of an image file read whole (EASEL's ``easel_suite --images``), checked from the file's size
#: before reading: an image within :data:`PIXEL_BUDGET` stored uncompressed at 16 bits per channel with
#: alpha (8 bytes a pixel: 128 MiB), plus 1 MiB of headers and metadata. No encoding of an image within
#: the pixel budget needs more, so a larger file is refused without being read.
IMAGE_FILE_BYTES = 8 * PIXEL_BUDGET + 2**20


class ImageTooLarge(ValueError):
    """An image whose header declares more pixels than :data:`PIXEL_BUDGET`; the message reads after
    "the image is" ("8000×8000 = 64,000,000 pixels, over the budget of …")."""


def image_size_checked(data: bytes | BinaryIO, *, budget: int = PIXEL_BUDGET) -> tuple[int, int]:
    """(width, height) from the header of the image ``data`` (its bytes, or a binary file open at its
    start, of which only the header is read), decoding no pixel; :class:`ImageTooLarge` above ``budget``
    pixels. Bytes that are not an image raise Pillow's ``UnidentifiedImageError``."""
    try:
        with warnings.catch_warnings():
            # Pillow warns (over its MAX_IMAGE_PIXELS) or refuses (over twice that) at open; both are
            # this check's business, answered below with the image's size.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            # a file Pillow is given is not closed by it: the caller's ``with`` keeps it
            with Image.open(io.BytesIO(data) if isinstance(data, bytes | bytearray) else data) as image:
                width, height = image.size
    except Image.DecompressionBombError as exc:
        # Raised by Image.open itself when MAX_IMAGE_PIXELS is set to the budget (annotation.apps) and the
        # header declares over twice that; its message carries the pixel count.
        declared = re.search(r"\((\d+) pixels\)", str(exc))
        size = f"{int(declared.group(1)):,} pixels" if declared else "more than twice that many pixels"
        raise ImageTooLarge(f"{size}, over the budget of {budget:,} pixels") from exc
    if width * height > budget:
        raise ImageTooLarge(f"{width}×{height} = {width * height:,} pixels, over the budget of {budget:,} pixels")
    return width, height
