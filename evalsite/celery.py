"""Celery application. Broker from CELERY_BROKER_URL; eager in-process when unset."""

import logging
import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The modules that hold tasks, named rather than looked up per app: the campaigns' sweep, the one task pair of
# every resumable job (leaderboard/runs is a plain package, not an app) and the warm-up of a new Ekphrasis snapshot.
app.autodiscover_tasks(["annotation", "leaderboard.runs", "leaderboard.ekphrasis"])


class _EagerProducerNotice(logging.Filter):
    """Without a broker tasks run eagerly, yet Celery (5.7) still borrows a producer of its default connection to
    serialise an eager task's arguments, and kombu then logs "No hostname was supplied. Reverting to default
    'localhost'": a stray line after every finished judge run of a command, and in `make demo`'s output. No
    connection is opened, so without a broker the notice says nothing and is dropped (a worker, which needs
    CELERY_BROKER_URL, is unaffected)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("No hostname was supplied")


if not settings.CELERY_BROKER_URL:
    logging.getLogger("kombu.connection").addFilter(_EagerProducerNotice())

# Periodic tasks (run by `celery -A evalsite beat`; with no broker nothing runs them, and
# assignment_next still expires overdue assignments itself when it needs their slots).
app.conf.beat_schedule = {
    "annotation.expire_assignments": {
        "task": "annotation.expire_assignments",
        "schedule": float(settings.ATELIER_ASSIGNMENT_SWEEP_SECONDS),
    },
    # Models written around the services move the catalogue revision here; items checked against older
    # names are checked again (every write through the services sends the same task at once).
    "annotation.recheck_blinding": {
        "task": "annotation.recheck_blinding",
        "schedule": float(settings.ATELIER_BLINDING_SWEEP_SECONDS),
    },
    # Jobs started while the broker was away wait for it (leaderboard.runs.queue).
    "runs.send_waiting": {
        "task": "runs.send_waiting",
        "schedule": float(settings.ATELIER_QUEUE_SWEEP_SECONDS),
    },
}


@worker_process_init.connect
def _connect_to_the_broker(**kwargs) -> None:
    """A worker's process opens its broker connection and declares its queue when it starts, not on its first
    send: a process's pools are emptied when it is forked, so the first message it sent paid ~15 Redis round
    trips and ~7k Python calls of connecting (PING, HELLO, SELECT, the queue's declaration). That first send
    is a judge run's dispatch, before the run's first unit message — the serial start of a run on two
    processes (issue 30). A broker that cannot be reached now is connected to on the first send, as before."""
    if app.conf.task_always_eager:
        return
    from kombu.common import maybe_declare

    try:
        with app.producer_or_acquire() as producer:
            maybe_declare(app.amqp.queues[app.conf.task_default_queue], producer.channel)
    except Exception as exc:  # noqa: BLE001 - the first send connects and reports
        logging.getLogger(__name__).warning("the worker process could not connect to the broker yet: %r", exc)


@worker_ready.connect
def _send_waiting_runs_at_start(sender=None, **kwargs) -> None:
    """A worker that starts (the broker is back, or the first worker arrives) sends the waiting runs."""
    sender.app.send_task("runs.send_waiting")
