"""WhiteNoise warns about a missing STATIC_ROOT only where one is expected (a deployment)."""

import warnings

from django.test import override_settings

from evalsite.static_files import StaticFilesMiddleware


def middleware_warnings(tmp_path, *, use_finders):
    with override_settings(STATIC_ROOT=tmp_path / "never-collected", WHITENOISE_USE_FINDERS=use_finders,
                           WHITENOISE_AUTOREFRESH=False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            StaticFilesMiddleware(lambda request: None)
    return [str(w.message) for w in caught if "No directory at" in str(w.message)]


def test_a_development_machine_starts_without_the_no_directory_warning(tmp_path):
    assert middleware_warnings(tmp_path, use_finders=True) == []


def test_a_deployment_without_collected_static_files_is_still_warned(tmp_path):
    assert len(middleware_warnings(tmp_path, use_finders=False)) == 1


def test_collected_static_files_are_served_from_static_root(tmp_path):
    root = tmp_path / "collected"
    (root / "only-collected").mkdir(parents=True)
    (root / "only-collected" / "x.txt").write_text("collected")
    with override_settings(STATIC_ROOT=root, WHITENOISE_USE_FINDERS=True, WHITENOISE_AUTOREFRESH=False):
        middleware = StaticFilesMiddleware(lambda request: None)
    assert "/static/only-collected/x.txt" in middleware.files
