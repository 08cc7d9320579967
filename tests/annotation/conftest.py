import pytest


@pytest.fixture
def media_root(settings, tmp_path):
    """Renders are written under a temporary MEDIA_ROOT, not var/media."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT
