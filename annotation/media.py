"""Serving images to annotators: pixels only, never a byte of the stored file, each image encoded once.

Files imported from text-to-image systems may carry identities anywhere outside the pixels: PNG
text, private or misused colour chunks (a ``bKGD`` that holds a model name), EXIF, XMP and ICC
profiles, JPEG comment segments between progressive scans, GIF comment and application
extensions, WebP EXIF/XMP chunks, and bytes after the format's end marker. Filtering those
structures chunk by chunk left holes, so there is one mechanism for every format instead: the
stored file is decoded, the first frame's pixels are copied into a new image that has no
metadata at all, and that image is encoded afresh as PNG with nothing but the critical chunks.
No byte of the stored file except decoded pixel values can reach the annotator.

Two more things could hide in the pixels themselves or cost a worker dearly:

* **Transparency.** Text drawn in fully transparent pixels is invisible on the page and shows as
  soon as anyone drops the alpha channel. Every image is flattened onto the background it is shown
  on (:data:`PAGE_BACKGROUND`) and served without alpha: what the file holds is what the page shows.
* **Size.** An image over :data:`engine.image_limits.PIXEL_BUDGET` is refused from its header,
  before any pixel is decoded. The re-encoded image is kept on disk (:func:`served_image`) under a
  key made of the stored bytes' SHA-256 and this pipeline's settings, so each image is decoded once,
  not on every request; concurrent first requests for one image wait on one lock and one of them
  encodes, and the file appears by an atomic rename, so no request ever reads half an image.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import logging
import os
import tempfile
import warnings
from pathlib import Path

from django.conf import settings
from PIL import Image, ImageOps, UnidentifiedImageError

from engine.image_limits import PIXEL_BUDGET, ImageTooLarge, image_size_checked

logger = logging.getLogger(__name__)

#: The one content type served to annotators.
SERVED_CONTENT_TYPE = "image/png"
#: zlib level of the served PNG (each image is encoded once, then served from the cache).
PNG_COMPRESS_LEVEL = 1
#: The colour behind every image on the labelling pages: ``--card`` (#fff) of static/css/atelier.css,
#: the panel (``.side``, static/annotation/annotate.css) each image sits in.
PAGE_BACKGROUND = (255, 255, 255)
#: Part of every cache key: a change to how images are cleaned must not serve an old result.
PIPELINE_VERSION = f"pixels-only-2:bg={PAGE_BACKGROUND}:budget={PIXEL_BUDGET}:z={PNG_COMPRESS_LEVEL}"


class ImageUnreadable(ValueError):
    """The stored file is not an image Pillow can decode, or is over the pixel budget."""


def _has_alpha(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA", "La", "RGBa") or "transparency" in image.info


def _flattened(image: Image.Image) -> Image.Image:
    """RGB pixels of ``image`` as shown on :data:`PAGE_BACKGROUND`: each pixel composited by its alpha,
    so a fully transparent pixel becomes the background whatever colour it stored."""
    if not _has_alpha(image):
        return image.convert("RGB")
    rgba = image.convert("RGBA")
    background = Image.new("RGBA", rgba.size, (*PAGE_BACKGROUND, 255))
    return Image.alpha_composite(background, rgba).convert("RGB")


def image_pixels_only(data: bytes) -> bytes:
    """PNG bytes re-encoded from the decoded pixels of ``data`` (JPEG, PNG, GIF, WebP, …; animated
    images give their first frame), flattened onto :data:`PAGE_BACKGROUND`. The result carries no
    alpha, text, EXIF, XMP, ICC or private chunk. Over the pixel budget: :class:`ImageUnreadable`,
    from the header, before any pixel is decoded.

    The EXIF orientation is applied to the pixels first, so the image looks as the stored one is
    displayed once its metadata is gone.
    """
    try:
        image_size_checked(data)
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as opened:
                opened.seek(0)  # animated formats: the first frame
                upright = ImageOps.exif_transpose(opened)
                pixels = _flattened(upright)
                # A new image built from the raw pixel buffer: nothing of ``info`` (text, ICC, EXIF,
                # XMP, dpi, comments, background colour) survives into it.
                clean = Image.frombytes(pixels.mode, pixels.size, pixels.tobytes())
    except ImageTooLarge as exc:
        raise ImageUnreadable(str(exc)) from exc
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError,
            Image.DecompressionBombWarning, ValueError) as exc:
        raise ImageUnreadable(f"the stored image cannot be decoded ({exc.__class__.__name__})") from exc
    buffer = io.BytesIO()
    clean.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def _cache_key(sha256: str) -> str:
    return hashlib.sha256(f"{PIPELINE_VERSION}:{sha256}".encode()).hexdigest()


def served_image(data: bytes, *, sha256: str | None = None) -> tuple[bytes, str]:
    """(bytes to send, content type) for the stored image ``data``: :func:`image_pixels_only`, encoded
    once and kept under ``ATELIER_MEDIA_CACHE_DIR`` (a re-fetch reads the file). ``sha256`` is the
    stored bytes' hash when the caller has it already.

    Concurrency: the first requests for one image take one lock file (256 of them, by the key's first
    byte); the one that holds it encodes and renames a finished temporary file into place, the others
    then find the file. A refused image (unreadable, over budget) is not cached: it is refused from its
    header each time, which costs no decoding. A cache that cannot be written (disk full, read-only)
    still serves the encoded image, uncached, and logs why.
    """
    key = _cache_key(sha256 or hashlib.sha256(data).hexdigest())
    root = Path(settings.ATELIER_MEDIA_CACHE_DIR)
    path = root / key[:2] / f"{key}.png"
    if (cached := _cache_read(path)) is not None:
        return cached, SERVED_CONTENT_TYPE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        (root / "locks").mkdir(exist_ok=True)
        lock = open(root / "locks" / f"{key[:2]}.lock", "a+b")  # noqa: SIM115 - held across the encoding below
    except OSError as exc:
        logger.warning("media cache %s not writable (%s): serving uncached", root, exc)
        return image_pixels_only(data), SERVED_CONTENT_TYPE
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the race: eight first fetches of one image decoding it eight times
        if (cached := _cache_read(path)) is not None:
            return cached, SERVED_CONTENT_TYPE  # another request encoded it while we waited
        body = image_pixels_only(data)
        _cache_write(path, body)
    return body, SERVED_CONTENT_TYPE


def _cache_read(path: Path) -> bytes | None:
    """The cached encoding at ``path``; None when there is none (or the cache cannot be read)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("media cache read %s failed (%s)", path, exc)
        return None


def _cache_write(path: Path, body: bytes) -> None:
    """``body`` at ``path`` by an atomic rename of a finished temporary file; a failure is logged, not raised."""
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(body)
        os.replace(temporary, path)  # atomic: a reader sees no file or the whole file
    except OSError as exc:
        logger.warning("media cache write %s failed (%s): served uncached", path, exc)
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
