"""Celery application. Broker from CELERY_BROKER_URL; eager in-process when unset."""

import os

from celery import Celery
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The two modules that hold tasks, named rather than looked up per app: the campaigns' sweep and the one task
# pair of every resumable job (leaderboard/runs is a plain package, not an app, and no other app has tasks).
app.autodiscover_tasks(["annotation", "leaderboard.runs"])

# Periodic tasks (run by `celery -A evalsite beat`; with no broker nothing runs them, and
# assignment_next still expires overdue assignments itself when it needs their slots).
app.conf.beat_schedule = {
    "annotation.expire_assignments": {
        "task": "annotation.expire_assignments",
        "schedule": float(settings.ATELIER_ASSIGNMENT_SWEEP_SECONDS),
    },
}
