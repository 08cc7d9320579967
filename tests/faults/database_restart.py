"""Fault: PostgreSQL restarts while simulated annotators submit labels (issue 28).

In a process of its own (Django configured for a throwaway PostgreSQL cluster on a free port): seed one
text pairwise campaign (k = 3) for N annotators, serve the site with gunicorn, and let the annotators
(threads, each with its own session) fetch and submit items through the page's JSON API the way the
labelling page does: a submission answered 503 or not answered at all is re-sent with the same
idempotency key until it is stored. Once a third of the labels are in, PostgreSQL is stopped for
``--outage-s`` seconds and started again. Meanwhile ``/readyz`` is polled every 50 ms.

Prints one JSON object: the status codes answered during the outage (and overall), labels lost
(answered 200/201 but not stored), duplicated (one annotator twice on one item), over-assigned (an item
with more than k labels), unexpected (stored but never answered as saved), the recovery time (database
back -> first stored submission) and /readyz's time to 503 after the stop and back to 200 after the start.

Run: ``python -m tests.faults.database_restart --annotators 20 --items-each 12 --outage-s 5``; the suite's
``tests/faults/test_database_restart.py`` runs it small, ``tests/benchmarks/bench_faults.py`` long.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter

from tests.faults.servers import Gunicorn, ThrowawayPostgres

K = 3


def site_env(database_url: str, var_dir: str, **extra: str) -> dict[str, str]:
    """The environment of a throwaway site: its database and var folder, development key, quiet logs."""
    return {"DATABASE_URL": database_url, "ATELIER_VAR_DIR": var_dir, "ATELIER_DEV": "true", "DEBUG": "false",
            "SECRET_KEY": secrets.token_urlsafe(40), "LOG_LEVEL": "CRITICAL", "SECURE_HSTS_SECONDS": "0",
            "DATABASE_CONNECT_TIMEOUT": "2", "ALLOWED_HOSTS": "127.0.0.1,localhost", **extra}


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    import django

    django.setup()


def seed_campaign(n_annotators: int, n_items: int, seed: int = 7) -> dict:
    """Migrate, then one open text pairwise campaign of ``n_items`` items (k = 3) for ``n_annotators``."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from annotation import item_creation, services
    from annotation.choices import CampaignKind
    from annotation.models import Campaign
    from engine.visual_plan import compose_two_field_text
    from leaderboard.models import Benchmark, Response, SubjectModel, Task, TaskSet
    from leaderboard.services.catalogue import role_groups_ensure, sha256_text
    from tests.benchmarks.bench_annotation_load import _session_for

    call_command("migrate", verbosity=0, interactive=False)
    role_groups_ensure()
    rng = random.Random(seed)
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"fault-annotator-{i:02d}", password="!") for i in range(n_annotators)])
    Group.objects.get(name="annotator").user_set.add(*users)
    benchmark, _ = Benchmark.objects.get_or_create(kind="ekphrasis", defaults={"name": "Ekphrasis"})
    task_set = TaskSet.objects.create(benchmark=benchmark, name="fault-annotation", version="1")
    models = SubjectModel.objects.bulk_create([SubjectModel(display_name=f"fault-model-{m}") for m in range(8)])
    n_tasks = -(-n_items // 28)  # 28 pairs of 8 models per task
    specs = []
    for t in range(n_tasks):
        task = Task.objects.create(task_set=task_set, external_id=f"fault-{t:03d}", family="abstraction",
                                   brief=f"Brief {t}.", position=t)
        responses = []
        for j, model in enumerate(models):
            core = f"Idea {t}-{j}: " + " ".join(rng.choice(["lantern", "river", "fold", "salt"]) for _ in range(8))
            visual = f"Scene {t}-{j}: " + " ".join(rng.choice(["amber", "crease", "stair", "mist"]) for _ in range(20))
            raw = compose_two_field_text(core, visual)
            responses.append(Response.objects.create(
                task=task, subject_model=model, sample=1, is_primary=True, core_idea=core, visual_description=visual,
                raw_text=raw, raw_sha256=sha256_text(raw), normalisation_method=Response.Normalisation.FIELDS))
        for a in range(8):
            for b in range(a + 1, 8):
                if len(specs) < n_items:
                    specs.append(item_creation.ItemSpec(task=task, dimension="novelty", response_a=responses[a],
                                                   response_b=responses[b], payload={"checklist": ["Which is newer?"]}))
    campaign = services.campaign_create(name="fault · database restart", kind=CampaignKind.TEXT_PAIRWISE,
                                        task_set=task_set, k=K, annotators=users, gold_rate=0.0,
                                        status=Campaign.Status.DRAFT)
    item_creation.items_create(campaign=campaign, specs=specs, rng=rng)
    services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
    return {"campaign": campaign.pk, "sessions": [_session_for(u) for u in users]}


def label_figures(campaign: int, saved: set[str]) -> dict:
    """Lost / duplicated / over-assigned / unexpected labels of ``campaign`` against the tokens saved."""
    from django.db import connections
    from django.db.models import Count

    from annotation.label_models import PairwiseLabel

    connections.close_all()
    labels = PairwiseLabel.objects.filter(campaign_id=campaign)
    stored = list(labels.values_list("assignment__token", flat=True))
    return {
        "stored": len(stored),
        "lost": len(saved - set(stored)),
        "duplicated": labels.values("item_id", "annotator_id").annotate(n=Count("pk")).filter(n__gt=1).count(),
        "over_assigned": labels.values("item_id").annotate(n=Count("pk")).filter(n__gt=K).count(),
        "unexpected": len(set(stored) - saved),
    }


class Timeline:
    """Every answer the clients got, with its time, so the outage's share can be told afterwards."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # (sent, answered: monotonic times; what; status, 0 = no answer)
        self.events: list[tuple[float, float, str, int]] = []
        self.no_answer: list[str] = []
        self.no_answer_at: list[float] = []

    def add(self, sent: float, what: str, status: int) -> None:
        with self.lock:
            self.events.append((sent, time.monotonic(), what, status))

    def statuses(self, start: float = 0.0, end: float = float("inf"), what: str | None = None) -> dict[str, int]:
        """Status counts of the requests sent between ``start`` and ``end``."""
        with self.lock:
            counts = Counter(str(s) for t, _, w, s in self.events if start <= t <= end and (what is None or w == what))
        return dict(sorted(counts.items()))

    def first(self, after: float, what: str, statuses: tuple[int, ...]) -> float | None:
        """Seconds from ``after`` to the first such answer to a request sent after it."""
        with self.lock:
            times = [answered for sent, answered, w, s in self.events if sent >= after and w == what and s in statuses]
        return min(times) - after if times else None


def request(client, timeline: Timeline, what: str, method: str, path: str, body: dict | None = None):
    sent = time.monotonic()
    try:
        status, data, _ = client.request(method, path, body)
    except OSError as exc:
        status, data = 0, None
        timeline.no_answer.append(f"{what}: {type(exc).__name__}: {exc}")
        timeline.no_answer_at.append(sent)
    timeline.add(sent, what, status)
    return status, data


def annotator(client, campaign: int, timeline: Timeline, saved: list[str], lock: threading.Lock,
              deadline: float, rng: random.Random, problems: list[str]) -> None:
    """One annotator's page: next item, then its answer re-sent with the same key until stored."""
    while time.monotonic() < deadline:
        status, data = request(client, timeline, "next", "POST", f"/annotate/api/campaigns/{campaign}/next", {})
        if status in (0, 503):
            time.sleep(0.2)
            continue
        if status != 200 or data is None:
            problems.append(f"next answered {status}")
            return
        assignment = data["assignment"]
        if assignment is None:
            return  # nothing left for this annotator
        submission = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": rng.choice(["A", "B", "tie"])},
                      "time_on_item_ms": 2000}
        while time.monotonic() < deadline:
            status, data = request(client, timeline, "submit", "POST",
                                   f"/annotate/api/assignments/{assignment['token']}/submit", submission)
            if status in (200, 201):
                with lock:
                    saved.append(assignment["token"])
                break
            if status in (0, 503):
                time.sleep(0.2 + rng.random() * 0.3)  # the page waits (Retry-After) and sends it again
                continue
            problems.append(f"submit answered {status}: {data}")
            return
        time.sleep(rng.uniform(0.0, 0.05))


#: How long the scenario keeps polling /readyz after PostgreSQL is back, when the annotators finished first.
READYZ_RECOVERY_S = 30.0


def poll_readyz(port: int, timeline: Timeline, stop: threading.Event) -> None:
    import http.client

    while not stop.is_set():
        sent = time.monotonic()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
            conn.request("GET", "/readyz")
            status = conn.getresponse().status
            conn.close()
        except OSError:
            status = 0
        timeline.add(sent, "readyz", status)
        stop.wait(0.05)


def run(n_annotators: int, items_each: int, outage_s: float, mode: str, timeout_s: float) -> dict:
    from tests.benchmarks.bench_annotation_load import Client

    postgres = ThrowawayPostgres()
    var_dir = tempfile.mkdtemp(prefix="atelier-fault-var-")
    env = site_env(postgres.url, var_dir)
    gunicorn = None
    try:
        setup_django(env)
        n_items = -(-n_annotators * items_each // K)
        seeded = seed_campaign(n_annotators, n_items)
        from django.db import connections

        connections.close_all()
        gunicorn = Gunicorn(env, workers=3)
        timeline, saved, lock, problems = Timeline(), [], threading.Lock(), []
        stop_polling = threading.Event()
        poller = threading.Thread(target=poll_readyz, args=(gunicorn.port, timeline, stop_polling), daemon=True)
        poller.start()
        deadline = time.monotonic() + timeout_s
        threads = [threading.Thread(target=annotator, args=(Client(gunicorn.port, session, 10.0), seeded["campaign"],
                                                            timeline, saved, lock, deadline, random.Random(i), problems))
                   for i, session in enumerate(seeded["sessions"])]
        for thread in threads:
            thread.start()
        while len(saved) < n_items * K // 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        postgres.stop(mode)
        stopped_at = time.monotonic()  # pg_ctl -w returned: the server is gone
        time.sleep(outage_s)
        postgres.start()
        back_at = time.monotonic()
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        # the annotators may finish before /readyz has been polled after the restart (two annotators on a
        # loaded machine): keep polling until it answers 200 or READYZ_RECOVERY_S have passed
        recovery_deadline = time.monotonic() + READYZ_RECOVERY_S
        while timeline.first(back_at, "readyz", (200,)) is None and time.monotonic() < recovery_deadline:
            time.sleep(0.05)
        stop_polling.set()
        poller.join(5)
        figures = label_figures(seeded["campaign"], set(saved))
        return {
            "annotators": n_annotators, "items": n_items, "k": K, "outage_s": outage_s, "stop_mode": mode,
            "answers_during_outage": {what: timeline.statuses(stopped_at, back_at, what) for what in ("next", "submit")},
            "answers_overall": {what: timeline.statuses(what=what) for what in ("next", "submit")},
            "readyz_during_outage": timeline.statuses(stopped_at, back_at, "readyz"),
            "readyz_to_503_s": timeline.first(stopped_at, "readyz", (503,)),
            "readyz_back_to_200_s": timeline.first(back_at, "readyz", (200,)),
            "recovery_s": timeline.first(back_at, "submit", (200, 201)),
            "saved": len(saved), "all_done": len(saved) == n_items * K, "problems": problems[:5],
            "no_answer_sent_s": [round(t - stopped_at, 2) for t in timeline.no_answer_at[:5]],
            "no_answer": sorted(Counter(timeline.no_answer).items())[:5],
            **figures,
        }
    finally:
        if gunicorn is not None:
            gunicorn.stop()
        postgres.remove()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--items-each", type=int, default=12, help="labels each annotator gives (items = N x this / k)")
    parser.add_argument("--outage-s", type=float, default=5.0)
    parser.add_argument("--mode", choices=["fast", "immediate"], default="fast",
                        help="pg_ctl stop mode: fast (clean shutdown) or immediate (a crash, recovery at start)")
    parser.add_argument("--timeout-s", type=float, default=240.0, help="the whole load's bound")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.annotators, args.items_each, args.outage_s, args.mode, args.timeout_s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
