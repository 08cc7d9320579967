"""Images reach annotators re-encoded from their pixels: hostile JPEG, PNG, GIF and WebP files that
carry identities in every metadata place and after their end marker serve none of them."""

from __future__ import annotations

import hashlib
import io
import struct
import uuid
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.files.base import ContentFile
from PIL import Image, ImageDraw

from annotation import item_creation, media
from annotation.choices import CampaignKind
from annotation.media import PAGE_BACKGROUND, ImageUnreadable, image_pixels_only
from tests.annotation.factories import Catalogue, RenderFactory, campaign_for
from tests.factories import PASSWORD, UserFactory
from tests.hostile_images import huge_png

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


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def transparent_text_png() -> bytes:
    """White where visible; the word drawn in black in pixels of alpha 0 (invisible on the page, shown
    by anyone who drops the alpha channel)."""
    image = Image.new("RGBA", (120, 30), (255, 255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"  # no anti-aliasing: every pixel of the word has alpha 0, none is half-visible
    draw.text((4, 8), "ZEPHYR", fill=(0, 0, 0, 0))
    return _png(image)


def test_the_transparent_text_image_really_hides_text_in_its_colour_channels():
    with Image.open(io.BytesIO(transparent_text_png())) as image:
        rgba = image.convert("RGBA")
    hidden = [colour for _, colour in rgba.getcolors() if colour[3] == 0]
    assert hidden and all(p[:3] == (0, 0, 0) for p in hidden)
    assert Image.open(io.BytesIO(transparent_text_png())).convert("RGB").getextrema() == ((0, 255),) * 3


def test_fully_transparent_pixels_are_served_as_the_page_background():
    with Image.open(io.BytesIO(transparent_text_png())) as stored:
        alpha = stored.convert("RGBA").getchannel("A")
    with Image.open(io.BytesIO(image_pixels_only(transparent_text_png()))) as served:
        assert served.mode == "RGB"  # no alpha channel left to drop
        colours = served.getcolors()
    assert colours == [(120 * 30, PAGE_BACKGROUND)], "the hidden word must not survive into the served pixels"
    assert alpha.getextrema() == (0, 255)


def test_half_transparent_pixels_are_composited_onto_the_background():
    served = image_pixels_only(_png(Image.new("RGBA", (2, 2), (0, 0, 0, 128))))
    with Image.open(io.BytesIO(served)) as image:
        assert image.getpixel((0, 0)) == (127, 127, 127)


def test_a_palette_image_with_a_transparent_index_is_flattened_too():
    image = Image.new("P", (4, 4), 1)
    image.putpalette([255, 255, 255, 0, 0, 0] + [0] * 762)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", transparency=1)  # index 1, black, is fully transparent
    with Image.open(io.BytesIO(image_pixels_only(buffer.getvalue()))) as served:
        assert served.mode == "RGB" and served.getpixel((2, 2)) == PAGE_BACKGROUND


def test_an_image_over_the_pixel_budget_is_refused_from_its_header_without_decoding(monkeypatch):
    data = huge_png()
    assert len(data) < 300_000
    decoded = []
    monkeypatch.setattr(Image.Image, "load", lambda self, *a, **k: decoded.append(self.size))
    with pytest.raises(ImageUnreadable, match="64,000,000 pixels, over the budget of 16,777,216"):
        image_pixels_only(data)
    assert decoded == []


def test_an_image_at_the_pixel_budget_is_served():
    with Image.open(io.BytesIO(image_pixels_only(huge_png(4096, 4096)))) as served:
        assert served.size == (4096, 4096)


def test_a_served_image_is_encoded_once_then_read_from_the_cache(settings, monkeypatch):
    calls = []
    encode = media.image_pixels_only
    monkeypatch.setattr(media, "image_pixels_only", lambda data: calls.append(1) or encode(data))
    first, _ = media.served_image(transparent_text_png())
    second, _ = media.served_image(transparent_text_png())
    assert first == second and len(calls) == 1
    assert len(list(settings.ATELIER_MEDIA_CACHE_DIR.glob("*/*.png"))) == 1


def test_concurrent_first_fetches_of_one_image_encode_it_once(monkeypatch):
    calls = []
    encode = media.image_pixels_only
    monkeypatch.setattr(media, "image_pixels_only", lambda data: calls.append(1) or encode(data))
    data = _png(_pixels((300, 300)))
    with ThreadPoolExecutor(8) as pool:
        bodies = list(pool.map(lambda _: media.served_image(data)[0], range(8)))
    assert len(set(bodies)) == 1 and len(calls) == 1


def test_an_unwritable_cache_still_serves_the_image(settings, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    settings.ATELIER_MEDIA_CACHE_DIR = blocker / "cache"
    body, content_type = media.served_image(transparent_text_png())
    assert content_type == "image/png" and body == image_pixels_only(transparent_text_png())


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


@pytest.fixture
def served_render(client, media_root):
    """(client logged in as alice, the media URL of her faithfulness item, the render): the render's file
    is replaced by ``served_render_bytes`` before the item is created."""

    def make(data: bytes):
        alice = UserFactory(username="alice", role="annotator")
        catalogue = Catalogue(n_tasks=1)
        render = RenderFactory(response=next(iter(catalogue.responses.values())))
        render.image.save(f"{uuid.uuid4().hex}.png", ContentFile(data), save=False)
        render.image_sha256 = hashlib.sha256(data).hexdigest()
        render.save()
        campaign = campaign_for(CampaignKind.FAITHFULNESS, catalogue, annotators=[alice])
        item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(task=render.response.task, render_a=render)])
        assert client.login(username="alice", password=PASSWORD)
        content = client.post(f"/annotate/api/campaigns/{campaign.pk}/next",
                              content_type="application/json").json()["assignment"]["content"]
        return content["image"]

    return make


@pytest.mark.django_db
def test_the_media_url_refuses_an_image_over_the_pixel_budget_with_a_409(client, served_render):
    served = client.get(served_render(huge_png()))
    assert served.status_code == 409 and b"cannot be shown" in served.content


@pytest.mark.django_db
def test_the_media_url_serves_the_transparent_text_image_flattened_and_fetches_twice_from_the_cache(
        client, served_render, monkeypatch):
    url = served_render(transparent_text_png())
    calls = []
    encode = media.image_pixels_only
    monkeypatch.setattr(media, "image_pixels_only", lambda data: calls.append(1) or encode(data))
    first, second = client.get(url), client.get(url)
    assert first.status_code == second.status_code == 200 and first.content == second.content
    assert len(calls) == 1
    with Image.open(io.BytesIO(first.content)) as image:
        assert image.mode == "RGB" and image.getcolors() == [(120 * 30, PAGE_BACKGROUND)]
