"""Images reach annotators re-encoded from their pixels: hostile JPEG, PNG, GIF and WebP files that
carry identities in every metadata place and after their end marker serve none of them."""

from __future__ import annotations

import io
import struct
import uuid
import zlib

import pytest
from django.core.files.base import ContentFile
from PIL import Image

from annotation import item_creation
from annotation.media import ImageUnreadable, image_pixels_only
from annotation.models import CampaignKind
from tests.annotation.factories import Catalogue, RenderFactory, campaign_for
from tests.factories import PASSWORD, UserFactory

#: Identities planted in the hostile files, in mixed case: the check below is case-insensitive.
IDENTITIES = ("Zephyr-Secret-Alpha", "provider/quasar-hidden-beta", "NIMBUS-COVERT-GAMMA", "Orion Masked Delta")


def _pixels(size=(24, 16)) -> Image.Image:
    image = Image.new("RGB", size)
    image.putdata([((x * 10) % 256, (y * 15) % 256, 90) for y in range(size[1]) for x in range(size[0])])
    return image


def _identity_blob() -> bytes:
    return " | ".join(IDENTITIES).encode()


def _jpeg_segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def hostile_jpeg() -> bytes:
    """A progressive JPEG with identities in EXIF, XMP, ICC, a comment, a comment between two scans
    and after the end-of-image marker."""
    exif = Image.Exif()
    exif[0x0131] = IDENTITIES[0]  # Software
    exif[0x010E] = IDENTITIES[1]  # ImageDescription
    buffer = io.BytesIO()
    _pixels().save(buffer, format="JPEG", progressive=True, exif=exif.tobytes(), comment=IDENTITIES[2],
                   icc_profile=b"ICC " + _identity_blob())
    data = buffer.getvalue()
    xmp = _jpeg_segment(0xE1, b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta>" + _identity_blob() + b"</x:xmpmeta>")
    data = data[:2] + xmp + data[2:]
    second_scan = data.index(b"\xff\xda", data.index(b"\xff\xda") + 2)
    data = data[:second_scan] + _jpeg_segment(0xFE, _identity_blob()) + data[second_scan:]
    return data + _identity_blob()


def _exif_tiff() -> bytes:
    exif = Image.Exif()
    exif[0x0131] = IDENTITIES[3]  # Software
    return exif.tobytes().removeprefix(b"Exif\x00\x00")


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def hostile_png() -> bytes:
    """A PNG with identities in tEXt, zTXt, iTXt, eXIf, a bKGD carrying text, a private chunk, a
    chunk after IEND and raw bytes after that."""
    buffer = io.BytesIO()
    _pixels().save(buffer, format="PNG")
    data = buffer.getvalue()
    first_idat = data.index(b"IDAT") - 4
    extra = b"".join([
        _png_chunk(b"tEXt", b"Software\x00" + _identity_blob()),
        _png_chunk(b"zTXt", b"Comment\x00\x00" + zlib.compress(_identity_blob())),
        _png_chunk(b"iTXt", b"Description\x00\x00\x00\x00\x00" + _identity_blob()),
        _png_chunk(b"eXIf", _exif_tiff()),
        _png_chunk(b"bKGD", b"\x00\x10\x00\x20\x00\x30" + _identity_blob()),
        _png_chunk(b"prVt", _identity_blob()),
    ])
    data = data[:first_idat] + extra + data[first_idat:]
    return data + _png_chunk(b"tEXt", b"After\x00" + _identity_blob()) + _identity_blob()


def hostile_gif() -> bytes:
    """An animated GIF (red, then blue) with a comment extension, an XMP application extension and
    bytes after the trailer."""
    red, blue = Image.new("RGB", (12, 12), (255, 0, 0)), Image.new("RGB", (12, 12), (0, 0, 255))
    buffer = io.BytesIO()
    red.save(buffer, format="GIF", save_all=True, append_images=[blue], duration=100, loop=0, comment=_identity_blob())
    data = buffer.getvalue()
    packed = data[10]
    table_end = 13 + (3 * 2 ** ((packed & 7) + 1) if packed & 0x80 else 0)
    blob = _identity_blob()
    xmp = b"\x21\xff\x0bXMP DataXMP" + bytes([len(blob)]) + blob + b"\x00"
    return data[:table_end] + xmp + data[table_end:] + blob


def hostile_webp() -> bytes:
    """A WebP with identities in its EXIF and XMP chunks and after the RIFF container."""
    exif = Image.Exif()
    exif[0x0131] = IDENTITIES[0]
    buffer = io.BytesIO()
    _pixels().save(buffer, format="WEBP", lossless=True, exif=exif.tobytes(),
                   xmp=b"<x:xmpmeta>" + _identity_blob() + b"</x:xmpmeta>")
    return buffer.getvalue() + _identity_blob()


HOSTILE = {"jpeg": hostile_jpeg, "png": hostile_png, "gif": hostile_gif, "webp": hostile_webp}


def assert_no_identity(body: bytes) -> None:
    lowered = body.lower()
    for identity in IDENTITIES:
        assert identity.lower().encode() not in lowered, f"served bytes carry {identity!r}"


def png_chunk_types(data: bytes) -> list[bytes]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    types, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        types.append(data[pos + 4:pos + 8])
        pos += 12 + length
    return types


@pytest.mark.parametrize("fmt", sorted(HOSTILE))
def test_the_hostile_file_really_carries_the_identities_it_is_meant_to(fmt):
    raw = HOSTILE[fmt]().lower()
    assert all(identity.lower().encode() in raw for identity in IDENTITIES[:2])
    with Image.open(io.BytesIO(HOSTILE[fmt]())) as image:
        image.load()  # still a decodable image


@pytest.mark.parametrize("fmt", sorted(HOSTILE))
def test_a_hostile_image_is_served_with_no_identity_in_any_byte(fmt):
    assert_no_identity(image_pixels_only(HOSTILE[fmt]()))


@pytest.mark.parametrize("fmt", sorted(HOSTILE))
def test_the_served_image_holds_only_the_critical_png_chunks(fmt):
    assert set(png_chunk_types(image_pixels_only(HOSTILE[fmt]()))) <= {b"IHDR", b"PLTE", b"IDAT", b"IEND"}


@pytest.mark.parametrize("fmt", ["png", "webp"])
def test_lossless_formats_keep_their_pixels_exactly(fmt):
    with Image.open(io.BytesIO(image_pixels_only(HOSTILE[fmt]()))) as served:
        assert served.convert("RGB").tobytes() == _pixels().tobytes()


def test_an_animated_gif_is_served_as_its_first_frame():
    with Image.open(io.BytesIO(image_pixels_only(hostile_gif()))) as served:
        assert getattr(served, "n_frames", 1) == 1
        assert served.convert("RGB").getpixel((5, 5)) == (255, 0, 0)


def test_transparency_survives_the_re_encoding():
    buffer = io.BytesIO()
    Image.new("RGBA", (4, 4), (10, 20, 30, 0)).save(buffer, format="PNG")
    with Image.open(io.BytesIO(image_pixels_only(buffer.getvalue()))) as served:
        assert served.mode == "RGBA" and served.getpixel((1, 1))[3] == 0


def test_bytes_that_are_not_an_image_are_refused_with_a_clear_error():
    with pytest.raises(ImageUnreadable, match="cannot be decoded"):
        image_pixels_only(b"GIF89a but not really" + _identity_blob())


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", sorted(HOSTILE))
def test_the_media_url_serves_a_hostile_render_without_its_identities(client, media_root, fmt):
    alice = UserFactory(username="alice", role="annotator")
    catalogue = Catalogue(n_tasks=1)
    render = RenderFactory(response=next(iter(catalogue.responses.values())))
    render.image.save(f"{uuid.uuid4().hex}.{fmt}", ContentFile(HOSTILE[fmt]()), save=True)
    campaign = campaign_for(CampaignKind.FAITHFULNESS, catalogue, annotators=[alice])
    item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(task=render.response.task, render_a=render)])
    assert client.login(username="alice", password=PASSWORD)
    content = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json").json()["assignment"]["content"]
    served = client.get(content["image"])
    assert served.status_code == 200 and served["Content-Type"] == "image/png"
    assert_no_identity(served.content)
