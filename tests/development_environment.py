"""pytest plugin (``-p tests.development_environment`` in pyproject.toml's addopts): a test run is a
development environment, and says so explicitly — before pytest-django imports the settings, which
refuse to start without SECRET_KEY unless DEBUG or ATELIER_DEV is true (evalsite/settings.py).
Subprocesses the tests start (Celery workers, manage.py) inherit it."""

import os

os.environ.setdefault("ATELIER_DEV", "true")
