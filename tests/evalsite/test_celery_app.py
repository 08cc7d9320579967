"""The Celery application without a broker: eager tasks, and no stray kombu notice in a command's output."""

import logging

import pytest
from django.conf import settings

from evalsite.celery import app


@pytest.mark.skipif(bool(settings.CELERY_BROKER_URL), reason="only without a broker (eager tasks)")
def test_an_eager_task_logs_no_hostname_notice(caplog):
    # Celery borrows a producer of its default connection even for an eager task; kombu used to log
    # "No hostname was supplied. Reverting to default 'localhost'" there, after every finished judge run.
    with caplog.at_level(logging.WARNING):
        with app.producer_or_acquire(None):
            pass
    assert not [r for r in caplog.records if "No hostname" in r.getMessage()]
