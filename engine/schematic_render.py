"""An offline schematic renderer for demos: draws a clearly labelled PLACEHOLDER image from a
visual plan's Core Idea (Ekphrasis App. I.1 builds the rendering prompt from the Core Idea and the
Visual Description only; this stand-in draws a few shapes seeded by the plan, and never the plan's text:
the image-preference study is text-blind, so a placeholder must not let an annotator read the plan).

It is not a text-to-image model and its images say so in the picture itself. Pure Python + Pillow,
no I/O: returns PNG bytes, deterministic for the same inputs, with no metadata chunks (nothing but
pixels — no model, task or response identity).
"""

from __future__ import annotations

import hashlib
import io
import random

from PIL import Image, ImageDraw, ImageFont

from engine.render_prompt import rendering_prompt

__all__ = ["PLACEHOLDER_BANNER", "schematic_png", "schematic_prompt"]

PLACEHOLDER_BANNER = "PLACEHOLDER — schematic demo render"
#: Default canvas size in pixels (width, height).
SIZE = (512, 384)
_PALETTES = (
    ((238, 232, 220), (70, 90, 140), (200, 120, 60), (90, 140, 110)),
    ((226, 236, 240), (40, 70, 90), (220, 170, 60), (160, 80, 110)),
    ((240, 230, 236), (110, 60, 90), (60, 130, 150), (230, 140, 100)),
    ((232, 238, 226), (60, 90, 60), (170, 90, 150), (80, 120, 190)),
)


def schematic_prompt(*, core_idea: str, visual_description: str) -> str:
    """The rendering prompt: Core Idea and Visual Description only, no identity, no score (App. I.1).

    The same wording every renderer gets (:func:`engine.render_prompt.rendering_prompt`)."""
    return rendering_prompt(core_idea, visual_description)


def _font(size: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has only the fixed bitmap font
        return ImageFont.load_default()


def schematic_png(
    *, core_idea: str, visual_description: str, seed: int = 0, size: tuple[int, int] = SIZE
) -> bytes:
    """PNG bytes of a labelled placeholder picture of the plan (deterministic in its inputs)."""
    digest = hashlib.sha256(
        f"{seed}\n{schematic_prompt(core_idea=core_idea, visual_description=visual_description)}".encode()
    ).digest()
    rng = random.Random(digest)
    background, ink, accent, accent2 = _PALETTES[digest[0] % len(_PALETTES)]
    width, height = size
    image = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(image)
    # a few shapes standing in for the plan's objects (no text of the plan: the study is text-blind)
    for _ in range(3 + digest[1] % 4):
        colour = rng.choice((accent, accent2, ink))
        x0, y0 = rng.randint(20, width - 140), rng.randint(60, height - 120)
        x1, y1 = x0 + rng.randint(50, 140), y0 + rng.randint(40, 110)
        shape = rng.choice(("ellipse", "rectangle", "triangle"))
        if shape == "ellipse":
            draw.ellipse((x0, y0, x1, y1), outline=colour, width=4)
        elif shape == "rectangle":
            draw.rectangle((x0, y0, x1, y1), outline=colour, width=4)
        else:
            draw.polygon(((x0, y1), ((x0 + x1) // 2, y0), (x1, y1)), outline=colour, width=4)
    # the label that makes it impossible to mistake for a real render
    banner = _font(18)
    draw.rectangle((0, 0, width, 34), fill=(150, 20, 30))
    # ASCII hyphen: the bundled font has no em dash
    draw.text((12, 7), PLACEHOLDER_BANNER.replace("—", "-"), fill=(255, 255, 255), font=banner)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()
