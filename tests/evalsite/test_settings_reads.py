"""Settings read as dictionary lookups once read (evalsite/settings_reads.py): the same values as Django's own
lookup, every change still seen."""

from __future__ import annotations

from django.conf import LazySettings, settings
from django.test import override_settings
from django.utils.functional import LazyObject

from evalsite.settings_reads import CachedReadsSettings


def test_the_sites_settings_object_reads_through_the_cache():
    assert type(settings) is CachedReadsSettings
    assert isinstance(settings, LazySettings)


def test_a_setting_read_again_does_not_go_through_lazyobjects_lookup(monkeypatch):
    settings.DEBUG  # noqa: B018 — read once: kept
    through = []
    lookup = LazyObject.__getattribute__
    monkeypatch.setattr(LazyObject, "__getattribute__", lambda self, name: through.append(name) or lookup(self, name))
    settings.DEBUG  # noqa: B018
    settings.DEBUG  # noqa: B018
    assert through == []


def test_every_setting_reads_as_djangos_own_lookup_gives_it():
    names = [name for name in dir(settings._wrapped) if name.isupper()]
    assert len(names) > 100
    for name in names:
        first = getattr(settings, name)  # not kept yet: Django's own __getattr__ reads and keeps it
        # Django's own lookup of a kept setting (LazyObject.__getattribute__ and its _mask_wrapped test)
        assert LazySettings.__getattribute__(settings, name) is first, name
        assert getattr(settings, name) is first, name  # from the cache


def test_override_settings_is_seen_and_undone():
    before = settings.ATELIER_ASSIGNMENT_TTL_SECONDS
    with override_settings(ATELIER_ASSIGNMENT_TTL_SECONDS=before + 7):
        assert settings.ATELIER_ASSIGNMENT_TTL_SECONDS == before + 7
        with override_settings(ATELIER_ASSIGNMENT_TTL_SECONDS=before + 9):
            assert settings.ATELIER_ASSIGNMENT_TTL_SECONDS == before + 9
        assert settings.ATELIER_ASSIGNMENT_TTL_SECONDS == before + 7
    assert settings.ATELIER_ASSIGNMENT_TTL_SECONDS == before


def test_the_pytest_settings_fixture_is_seen(settings):
    settings.ATELIER_DB_PREPARED_STATEMENTS = False
    from django.conf import settings as site_settings

    assert site_settings.ATELIER_DB_PREPARED_STATEMENTS is False
    del settings.ATELIER_DB_PREPARED_STATEMENTS
