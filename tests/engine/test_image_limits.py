"""The pixel budget (engine/image_limits.py): refused from the header, whatever Pillow's own guard says."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from engine.image_limits import PIXEL_BUDGET, ImageTooLarge, image_size_checked
from tests.hostile_images import huge_png


def test_the_budget_is_4096_by_4096():
    assert PIXEL_BUDGET == 16_777_216


def test_an_image_within_the_budget_gives_its_size():
    buffer = io.BytesIO()
    Image.new("RGB", (300, 200)).save(buffer, format="PNG")
    assert image_size_checked(buffer.getvalue()) == (300, 200)


def test_an_image_over_the_budget_is_refused_naming_its_size(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 89_478_485)  # Pillow's default: the header check alone
    with pytest.raises(ImageTooLarge, match="8000×8000 = 64,000,000 pixels, over the budget of 16,777,216 pixels"):
        image_size_checked(huge_png())


def test_pillow_s_own_refusal_at_open_is_reported_as_over_the_budget(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", PIXEL_BUDGET)  # as the site sets it (annotation.apps)
    with pytest.raises(ImageTooLarge, match="64,000,000 pixels, over the budget"):
        image_size_checked(huge_png())


def test_a_smaller_budget_can_be_asked_for():
    with pytest.raises(ImageTooLarge):
        image_size_checked(huge_png(100, 100), budget=9_999)
