"""engine/schematic_render.py: placeholders draw shapes and the PLACEHOLDER banner, never plan text
(the image-preference study is text-blind)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from engine.schematic_render import schematic_png

CORE_IDEA = "Lantern zebras whisper beneath marmalade cathedrals during thunderous violet harvests."


def _ocr_words(png: bytes, tmp_path) -> set[str]:
    path = tmp_path / "render.png"
    path.write_bytes(png)
    text = subprocess.run(["tesseract", str(path), "-", "--psm", "11"], capture_output=True, text=True, check=True).stdout
    return {w.lower() for w in re.findall(r"[A-Za-z]{5,}", text)}


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs /usr/bin/tesseract")
def test_a_placeholder_shows_no_word_of_the_plan(tmp_path):
    png = schematic_png(core_idea=CORE_IDEA, visual_description="Marmalade cathedrals under violet skies.")
    words = _ocr_words(png, tmp_path)
    plan = {w.lower() for w in re.findall(r"[A-Za-z]{5,}", CORE_IDEA + " marmalade cathedrals violet skies")}
    assert not words & plan
    assert "placeholder" in words  # the banner stays: nobody may mistake it for a real render


def test_the_placeholder_is_deterministic_and_differs_between_plans():
    first = schematic_png(core_idea=CORE_IDEA, visual_description="a")
    assert first == schematic_png(core_idea=CORE_IDEA, visual_description="a")
    assert first != schematic_png(core_idea="Another plan entirely.", visual_description="b")
