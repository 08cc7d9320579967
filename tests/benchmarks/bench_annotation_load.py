"""Load benchmark of the annotation queue on loopback: gunicorn + PostgreSQL, bounded.

50 simulated annotators (threads with their own session) each fetch and submit 40 text pairwise
items through the JSON API the way the labelling page does (after a saved submission it asks for the
next item with ``{"progress": false}``, since the submission's answer carried the progress), 5% of
submissions re-sent (a lost response). Three scenarios, each on its own campaign, in this order:

* ``serial`` — the baseline measured in the same run: one annotator alone, no think time, so its
  latency is the cost of one request with nothing competing for the CPUs;
* ``stress`` — the issue's load with zero think time: a closed loop of 50 clients on a machine with
  few cores, where latency ≈ clients / throughput (printed beside it) — a throughput test;
* ``paced`` — the same 50 annotators with a think time per item drawn uniformly from
  ``--think-ms`` (default 3–10 s, the issue's human pace);
* ``stress20`` — the closed loop with 20 of the annotators: throughput at 50 clients must be no lower
  than at 20 (issue 16).

Before the load, ``per request`` measures one next-item and one submit in this process through Django's
test client on the same database (its own campaign): the SQL statements each sends (transaction control
not counted) and the CPU each costs, with a breakdown by part (middleware, session and user, the
request's facts, the slot take, the item load, the blinded payload, the writes, JSON) from a profile —
the figures that do not depend on what else the machine is doing.

A fourth scenario, ``growth`` (issue 16), shows how the costs grow with a campaign: one annotator's
serial next-item + submit cycles, and the dashboard with its human-vs-judge join, on campaigns of 500,
5,000 and 50,000 labels (``--growth-sizes``) beside each other on one task set, sizes interleaved, each
figure printed as a ratio to the smallest size; goals: next-item and submit at 50,000 within x1.5 of
500, the dashboard <= 300 ms at 50,000 (printed right after a submission, when it is recomputed, and
cached). The gunicorn workers share the dashboards' cache through Redis (``BENCH_CACHE_URL``, default
redis://127.0.0.1:6379/0, under a key prefix of the run's own).

Reports p50/p95 latency of next-item and submit per scenario (ratios to the goal and to the serial
baseline), the dashboard render time at 5,000 labels, where the CPU time went (load generator,
gunicorn workers, the PostgreSQL backends of the benchmark database, the whole machine), and checks
that no label was lost or duplicated and no item over-assigned.
Goals (issue 4): p95 ≤ 150 ms for next-item and submit; dashboard ≤ 300 ms; zero lost/duplicated.

Run: ``.venv/bin/python -m tests.benchmarks.bench_annotation_load`` (``--help`` for the knobs).
Needs PostgreSQL (``BENCH_DATABASE_URL``, else ``DATABASE_URL`` if it is PostgreSQL, else
postgres://postgres@127.0.0.1:5432/postgres); skips with a message when it is not there. It creates
and drops its own database ``atelier_bench_annotation`` (``BENCH_ANNOTATION_DB`` names another).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parents[2]
#: The benchmark's own database (created and dropped); BENCH_ANNOTATION_DB names another, so that two
#: runs on one PostgreSQL do not drop each other's.
BENCH_DB = os.environ.get("BENCH_ANNOTATION_DB") or "atelier_bench_annotation"
GOAL_P95_MS = 150.0
#: Issue 16: the 50-client closed loop's p95, the paced scenario's p95, the worker CPU and the queries
#: of one next-item or submit.
GOAL_STRESS_P95_MS = 200.0
GOAL_PACED_P95_MS = 30.0
GOAL_CPU_MS = 5.0
GOAL_QUERIES = 6
#: Clients of the smaller closed loop whose throughput the 50-client loop must not fall below.
STRESS_SMALL_CLIENTS = 20
GOAL_DASHBOARD_MS = 300.0
DASHBOARD_LABELS = 5_000


def _admin_url() -> str:
    url = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        url = "postgres://postgres@127.0.0.1:5432/postgres"
    return url


def _with_db(url: str, name: str) -> str:
    parts = urlparse(url)
    return urlunparse(parts._replace(path=f"/{name}"))


def _postgres_reachable(url: str) -> str | None:
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed"
    try:
        with psycopg.connect(
            _with_db(url, "postgres").replace("postgres://", "postgresql://", 1), connect_timeout=3
        ):
            return None
    except Exception as exc:  # noqa: BLE001 — any failure means "not available here"
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


def bench_database(url: str, name: str, *, drop_only: bool = False) -> None:
    """Drop a benchmark's own database ``name`` on the server of ``url`` and, unless ``drop_only``, create
    it afresh (every PostgreSQL benchmark makes and drops its own)."""
    import psycopg

    with psycopg.connect(
        _with_db(url, "postgres").replace("postgres://", "postgresql://", 1), autocommit=True
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{name}"')


def close_django_connections() -> None:
    """Close this process's database connections before the benchmark drops its database."""
    try:
        from django.db import connections

        connections.close_all()
    except Exception as exc:  # noqa: BLE001 — Django may not be set up when a benchmark skips early
        print(f"(closing connections: {exc})", file=sys.stderr)


def _free_port() -> int:
    """A free loopback port, or ``BENCH_PORT`` when it is set (a machine whose users each have their own ports)."""
    if os.environ.get("BENCH_PORT"):
        return int(os.environ["BENCH_PORT"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100.0 * (len(ordered) - 1))))
    return ordered[index]


# ---------------------------------------------------------------------------------------------------
# Seeding (in this process, through Django)
# ---------------------------------------------------------------------------------------------------


def _setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _session_for(user) -> str:
    """A logged-in session for ``user`` (nobody logs in with a password here)."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]  # the password backend
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return store.session_key


def _seed(n_annotators: int, items_needed: dict[str, int], dashboard_labels: int, seed: int) -> dict:
    """Catalogue, annotators with sessions, one load campaign per scenario (``items_needed`` = scenario
    -> items; ``serial`` is open to the first annotator only) and a 5,000-label dashboard campaign."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import transaction
    from django.utils import timezone

    from annotation import item_creation, services
    from annotation.choices import CampaignKind
    from annotation.label_models import PairwiseLabel
    from annotation.models import Assignment, Campaign, Item, ItemSlot
    from engine.visual_plan import compose_two_field_text
    from leaderboard.models import Benchmark, Response, SubjectModel, Task, TaskSet
    from leaderboard.services.catalogue import role_groups_ensure, sha256_text

    call_command("migrate", verbosity=0, interactive=False)
    role_groups_ensure()
    from django.contrib.auth.models import Group

    rng = random.Random(seed)
    User = get_user_model()
    password = make_password(secrets.token_urlsafe(12))  # nobody logs in with it: sessions are minted
    annotator_group, researcher_group = (
        Group.objects.get(name="annotator"),
        Group.objects.get(name="researcher"),
    )
    users = User.objects.bulk_create(
        [User(username=f"bench-annotator-{i:02d}", password=password) for i in range(n_annotators)]
    )
    annotator_group.user_set.add(*users)
    raters = User.objects.bulk_create(
        [User(username=f"bench-rater-{i}", password=password) for i in range(3)]
    )
    annotator_group.user_set.add(*raters)
    researcher = User.objects.create(username="bench-researcher", password=password)
    researcher_group.user_set.add(researcher)

    session_for = _session_for

    benchmark, _ = Benchmark.objects.get_or_create(kind="ekphrasis", defaults={"name": "Ekphrasis"})
    task_set = TaskSet.objects.create(benchmark=benchmark, name="bench-annotation", version="1")
    models = SubjectModel.objects.bulk_create(
        [SubjectModel(display_name=f"bench-model-{m}") for m in range(8)]
    )
    pairs_per_task = 28  # every pair of 8 models
    n_tasks = -(-max(*items_needed.values(), dashboard_labels // 3 + 1) // pairs_per_task)
    tasks = Task.objects.bulk_create(
        [
            Task(
                task_set=task_set,
                external_id=f"bench-{t:03d}",
                family="abstraction",
                brief=f"Benchmark brief {t}.",
                position=t,
            )
            for t in range(n_tasks)
        ]
    )
    responses = []
    for task in tasks:
        for j, model in enumerate(models):
            core = f"Idea {task.position}-{j}: " + " ".join(
                rng.choice(["lantern", "river", "fold", "salt", "clock", "glass"]) for _ in range(12)
            )
            visual = f"Scene {task.position}-{j}: " + " ".join(
                rng.choice(["amber", "crease", "stair", "mist", "copper"]) for _ in range(40)
            )
            raw = compose_two_field_text(core, visual)
            responses.append(
                Response(
                    task=task,
                    subject_model=model,
                    sample=1,
                    is_primary=True,
                    core_idea=core,
                    visual_description=visual,
                    raw_text=raw,
                    raw_sha256=sha256_text(raw),
                    normalisation_method=Response.Normalisation.FIELDS,
                )
            )
    Response.objects.bulk_create(responses)
    by_task: dict[int, list[Response]] = {}
    for response in Response.objects.filter(task__task_set=task_set).order_by("task_id", "subject_model_id"):
        by_task.setdefault(response.task_id, []).append(response)

    def specs(limit: int) -> list[item_creation.ItemSpec]:
        out = []
        for task in tasks:
            group = by_task[task.pk]
            for a in range(len(group)):
                for b in range(a + 1, len(group)):
                    if len(out) < limit:
                        out.append(
                            item_creation.ItemSpec(
                                task=task,
                                dimension="novelty",
                                response_a=group[a],
                                response_b=group[b],
                                payload={"checklist": ["Which response avoids common lantern imagery?"]},
                            )
                        )
        return out

    loads = {}
    for scenario, n_items in items_needed.items():
        load = services.campaign_create(
            name=f"bench · load · {scenario}",
            kind=CampaignKind.TEXT_PAIRWISE,
            task_set=task_set,
            k=3,
            annotators=users[:1] if scenario == "serial" else users,
            gold_rate=0.0,
            status=Campaign.Status.DRAFT,
        )
        item_creation.items_create(campaign=load, specs=specs(n_items), rng=rng)
        services.campaign_status_set(campaign=load, status=Campaign.Status.OPEN)
        loads[scenario] = load

    # The dashboard campaign: 5,000 current labels written directly (valid rows, not through HTTP).
    dash = services.campaign_create(
        name="bench · dashboard",
        kind=CampaignKind.TEXT_PAIRWISE,
        task_set=task_set,
        k=3,
        annotators=raters,
        gold_rate=0.0,
        status=Campaign.Status.DRAFT,
    )
    n_items = -(-dashboard_labels // 3)
    item_creation.items_create(campaign=dash, specs=specs(n_items), rng=rng)
    now = timezone.now()
    slots = list(
        ItemSlot.objects.filter(item__campaign=dash).select_related("item").order_by("item_id", "index")
    )
    with transaction.atomic():
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    campaign=dash,
                    item=slot.item,
                    slot=slot,
                    annotator=raters[slot.index],
                    token=secrets.token_urlsafe(24),
                    swapped=slot.index % 2 == 1,
                    status=Assignment.Status.SUBMITTED,
                    content_hash=slot.item.content_hash,
                    task_set_version="1",
                    created_at=now,
                    expires_at=now + timedelta(minutes=30),
                    finished_at=now,
                )
                for slot in slots[:dashboard_labels]
            ]
        )
        labels = []
        for assignment in assignments:
            shown = rng.choices(["A", "B", "tie"], weights=[0.45, 0.4, 0.15])[0]
            choice = shown if not assignment.swapped or shown == "tie" else {"A": "B", "B": "A"}[shown]
            labels.append(
                PairwiseLabel(
                    assignment=assignment,
                    campaign=dash,
                    item=assignment.item,
                    annotator=assignment.annotator,
                    idempotency_key=uuid.uuid4(),
                    content_hash=assignment.content_hash,
                    task_set_version="1",
                    created_at=now,
                    time_on_item_ms=rng.randint(3000, 60000),
                    shown_choice=shown,
                    choice=choice,
                    swapped=assignment.swapped,
                )
            )
        PairwiseLabel.objects.bulk_create(labels)
        _written_around_services(dash.pk)
    return {
        "load": {scenario: load.pk for scenario, load in loads.items()},
        "dashboard": dash.pk,
        "items": {scenario: Item.objects.filter(campaign=load).count() for scenario, load in loads.items()},
        "dashboard_labels": PairwiseLabel.objects.filter(campaign=dash).count(),
        "sessions": {u.username: session_for(u) for u in users},
        "researcher": session_for(researcher),
    }


def _written_around_services(campaign_pk: int) -> None:
    """Labels bulk-written here (not through the services): set the free-slot flags and the progress
    counters from the rows, as the data migration does."""
    from django.db.models import Exists, OuterRef

    from annotation.models import Assignment, ItemSlot
    from annotation.progress import campaign_progress_recount

    live = Assignment.objects.filter(slot=OuterRef("pk"), status__in=Assignment.LIVE)
    ItemSlot.objects.filter(campaign_id=campaign_pk).update(is_free=~Exists(live))
    campaign_progress_recount(campaign_id=campaign_pk)


# ---------------------------------------------------------------------------------------------------
# Growth: the same requests on campaigns of 500, 5,000 and 50,000 labels (issue 16)
# ---------------------------------------------------------------------------------------------------

GROWTH_SIZES = (500, 5_000, 50_000)
GROWTH_CYCLES = 40  # next-item + submit cycles measured per size (one annotator, no think time)


def _seed_growth(sizes: tuple[int, ...], cycles: int, seed: int) -> dict:
    """One campaign per size with that many current labels (three raters, written directly) plus
    ``cycles`` free items for the measuring annotator, all on one task set (so that every campaign
    also stands beside the others), and a finished simulated judge run whose primary Novelty verdicts
    cover every item's pair (the dashboard's human-vs-judge join)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import transaction
    from django.utils import timezone

    from annotation import item_creation, services
    from annotation.choices import CampaignKind
    from annotation.label_models import PairwiseLabel
    from annotation.models import Assignment, Campaign, ItemSlot
    from engine.visual_plan import compose_two_field_text
    from leaderboard.ekphrasis.models import Comparison, JudgeRun, LeaderboardSnapshot
    from leaderboard.models import Benchmark, Response, SubjectModel, Task, TaskSet
    from leaderboard.services.catalogue import sha256_text

    rng = random.Random(seed)
    User = get_user_model()
    annotator_group = Group.objects.get(name="annotator")
    raters = User.objects.bulk_create([User(username=f"growth-rater-{i}", password="!") for i in range(3)])
    measurer = User.objects.create(username="growth-annotator", password="!")
    annotator_group.user_set.add(*raters, measurer)
    benchmark, _ = Benchmark.objects.get_or_create(kind="ekphrasis", defaults={"name": "Ekphrasis"})
    task_set = TaskSet.objects.create(benchmark=benchmark, name="bench-growth", version="1")
    models = SubjectModel.objects.bulk_create([SubjectModel(display_name=f"growth-model-{m}") for m in range(8)])
    largest = -(-max(sizes) // 3) + cycles
    n_tasks = -(-largest // 28)
    tasks = Task.objects.bulk_create([
        Task(task_set=task_set, external_id=f"growth-{t:04d}", family="abstraction", brief=f"Brief {t}.", position=t)
        for t in range(n_tasks)
    ])
    responses = []
    for task in tasks:
        for j, model in enumerate(models):
            core = f"Idea {task.position}-{j}: " + " ".join(rng.choice(["lantern", "river", "fold", "salt"]) for _ in range(12))
            visual = f"Scene {task.position}-{j}: " + " ".join(rng.choice(["amber", "crease", "mist"]) for _ in range(40))
            raw = compose_two_field_text(core, visual)
            responses.append(Response(task=task, subject_model=model, sample=1, is_primary=True, core_idea=core,
                                      visual_description=visual, raw_text=raw, raw_sha256=sha256_text(raw),
                                      normalisation_method=Response.Normalisation.FIELDS))
    Response.objects.bulk_create(responses, batch_size=2000)
    by_task: dict[int, list] = {}
    for response in Response.objects.filter(task__task_set=task_set).order_by("task_id", "subject_model_id"):
        by_task.setdefault(response.task_id, []).append(response)
    pairs = [(task, group[a], group[b]) for task in tasks for group in [by_task[task.pk]]
             for a in range(len(group)) for b in range(a + 1, len(group))][:largest]

    now = timezone.now()
    campaigns = {}
    for size in sizes:
        campaign = services.campaign_create(
            name=f"bench · growth · {size}", kind=CampaignKind.TEXT_PAIRWISE, task_set=task_set, k=3,
            annotators=[*raters, measurer], gold_rate=0.0,
        )
        n_items = -(-size // 3) + cycles
        item_creation.items_create(campaign=campaign, rng=rng, specs=[
            item_creation.ItemSpec(task=t, dimension="novelty", response_a=a, response_b=b,
                              payload={"checklist": ["Which response avoids common lantern imagery?"]})
            for t, a, b in pairs[:n_items]
        ])
        slots = list(ItemSlot.objects.filter(campaign=campaign).select_related("item").order_by("position", "item_id", "index"))
        with transaction.atomic():
            assignments = Assignment.objects.bulk_create([
                Assignment(campaign=campaign, item=slot.item, slot=slot, annotator=raters[slot.index],
                           token=secrets.token_urlsafe(24), swapped=slot.index % 2 == 1,
                           status=Assignment.Status.SUBMITTED, content_hash=slot.item.content_hash,
                           task_set_version="1", created_at=now, expires_at=now + timedelta(minutes=30), finished_at=now)
                for slot in slots[:size]
            ], batch_size=2000)
            labels = []
            for assignment in assignments:
                shown = rng.choices(["A", "B", "tie"], weights=[0.45, 0.4, 0.15])[0]
                choice = shown if not assignment.swapped or shown == "tie" else {"A": "B", "B": "A"}[shown]
                labels.append(PairwiseLabel(
                    assignment=assignment, campaign=campaign, item=assignment.item, annotator=assignment.annotator,
                    idempotency_key=uuid.uuid4(), content_hash=assignment.content_hash, task_set_version="1",
                    created_at=now, time_on_item_ms=rng.randint(3000, 60000), shown_choice=shown, choice=choice,
                    swapped=assignment.swapped,
                ))
            PairwiseLabel.objects.bulk_create(labels, batch_size=2000)
            _written_around_services(campaign.pk)
        services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
        campaigns[size] = campaign.pk

    run = JudgeRun.objects.create(task_set=task_set, judge_name="simulated", is_simulated=True, dimensions="N",
                                  status=JudgeRun.Status.DONE, finished_at=now, config={"simulated": {}})
    theta = sorted((rng.gauss(0, 1) for _ in models), reverse=True)
    Comparison.objects.bulk_create([
        Comparison(run=run, task=t, dimension="N", model_x_id=min(a.subject_model_id, b.subject_model_id),
                   model_y_id=max(a.subject_model_id, b.subject_model_id), kind=Comparison.Kind.PRIMARY, repeat=0,
                   judge_name="simulated", sequence=n, shown_a=a, shown_b=b, status=Comparison.Status.OK,
                   winner=rng.choice(["A", "B", "tie"]), confidence=0.7, judged_at=now)
        for n, (t, a, b) in enumerate(pairs)
    ], batch_size=2000)
    LeaderboardSnapshot.objects.create(
        run=run, task_set_version="1", judge_name="simulated", budget_per_task=50, seed=1, is_simulated=True,
        payload={"model_ids": [m.pk for m in models], "per_dimension": {"N": {"theta": theta}}},
    )
    return {"campaigns": campaigns, "measurer": measurer.pk, "comparisons": len(pairs)}


def _growth(port: int, seeded: dict, sessions: dict[str, str], cycles: int, dashboard_runs: int) -> bool:
    """One annotator's serial next-item + submit cycles on every size in turn (interleaved, so that the
    load others put on the machine weighs on every size alike), then per size the dashboard loaded
    right after a submission (its cache invalidated: a full recompute) and once more (cached).
    Prints p50s and the ratios to the smallest size."""
    client = Client(port, sessions["measurer"], 60.0)
    researcher = Client(port, sessions["researcher"], 120.0)
    sizes = sorted(seeded["campaigns"])
    kinds = ("next", "submit", "dashboard after a submission", "dashboard")
    times: dict[int, dict[str, list[float]]] = {size: {k: [] for k in kinds} for size in sizes}
    ok = True

    def cycle(size: int, with_dashboard: bool) -> bool:
        campaign = seeded["campaigns"][size]
        status, body, ms = client.request("POST", f"/annotate/api/campaigns/{campaign}/next", {"progress": False})
        if status != 200 or not body or body["assignment"] is None:
            print(f"  growth {size}: next {status} {body}")
            return False
        times[size]["next"].append(ms)
        answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 1000}
        status, _, ms = client.request("POST", f"/annotate/api/assignments/{body['assignment']['token']}/submit", answer)
        times[size]["submit"].append(ms)
        good = status == 201
        if with_dashboard:
            for label in ("dashboard after a submission", "dashboard"):
                dstatus, _, dms = researcher.request("GET", f"/annotate/campaigns/{campaign}/")
                good = good and dstatus == 200
                times[size][label].append(dms)
        return good

    for n in range(cycles):
        for size in sizes:
            ok = cycle(size, with_dashboard=n < dashboard_runs) and ok
    figures = {size: {k: statistics.median(v[1:] if len(v) > 2 else v) for k, v in row.items() if v}
               for size, row in times.items()}
    smallest = sizes[0]
    print(f"\n[growth] one annotator, no think time, {cycles} cycles per size (sizes interleaved); dashboard with the "
          f"human-vs-judge join ({seeded['comparisons']} judge verdicts on the task set); p50 ms, first request of "
          f"each kind dropped; (x ratio to {smallest} labels, same run)")
    print(f"  {'labels':>7} " + " ".join(f"{k:>29}" for k in figures[smallest]))
    for size in sizes:
        row = figures[size]
        print(f"  {size:>7} " + " ".join(f"{row[k]:>21.1f} (x{row[k] / figures[smallest][k]:4.2f})" for k in row))
    largest = sizes[-1]
    for kind, goal in (("next", 1.5), ("submit", 1.5)):
        ratio = figures[largest][kind] / figures[smallest][kind]
        print(f"  {kind} at {largest} labels / at {smallest}: x{ratio:.2f} (goal <= x{goal}: {'met' if ratio <= goal else 'NOT met'})")
    for size in sizes:  # the dashboard at every size against its goal, and what a change costs it
        after, cached = figures[size]["dashboard after a submission"], figures[size]["dashboard"]
        print(f"  dashboard at {size:>6} labels: after a submission {after:6.0f} ms (goal <= {GOAL_DASHBOARD_MS:.0f} ms: "
              f"ratio {after / GOAL_DASHBOARD_MS:.2f}), cached {cached:5.0f} ms (ratio {cached / GOAL_DASHBOARD_MS:.2f}); "
              f"after a submission / cached x{after / cached:.1f}")
    print(f"  1-min load average after the growth scenario {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
          "(anything else running on the machine weighs on every figure)")
    return ok


# ---------------------------------------------------------------------------------------------------
# Per request: statements and CPU of one next-item and one submit, in this process (issue 16)
# ---------------------------------------------------------------------------------------------------

#: Where a request's CPU goes: (part, [(file suffix, function name)]) whose cumulative profile times
#: are summed (the parts are disjoint; "middleware and DRF" is the request minus the view's parts).
PROFILE_PARTS = (
    ("whole request", [("django/core/handlers/base.py", "get_response")]),
    ("session and user (auth middleware)", [("django/contrib/auth/middleware.py", "get_user")]),
    ("request facts (access, lock, counters)", [("annotation/request_facts.py", "next_item_facts"),
                                                ("annotation/request_facts.py", "assignment_submit_if_active"),
                                                ("annotation/request_facts.py", "assignment_facts")]),
    ("slot take (with the taken item's read)", [("annotation/slot_queue.py", "active_or_free_slot_take")]),
    ("item load (submit, held item, gold)", [("annotation/services.py", "_item_load")]),
    ("blinded payload", [("annotation/annotator_reads.py", "assignment_present")]),
    ("answer validation", [("annotation/kinds/base.py", "validate")]),
    ("content digest check", [("annotation/services.py", "_content_unchanged_check")]),
    ("assignment INSERT", [("django/db/models/query.py", "create"), ("evalsite/precompiled.py", "row_create")]),
    ("progress counters (with the label's INSERT)", [("annotation/progress.py", "submission_counted")]),
    ("JSON body parse", [("evalsite/json_body.py", "parse")]),
    ("JSON render", [("rest_framework/response.py", "rendered_content")]),
)


def _per_request(campaign: int, session: str, cycles: int) -> dict:
    """One annotator's next-item + submit cycles through Django's test client (CSRF enforced, the same
    middleware and settings as gunicorn's workers) on the benchmark database: statements per request
    (BEGIN/COMMIT/SAVEPOINT not counted), CPU per request (process time: the PostgreSQL backend's own
    CPU is another process), and a profile's breakdown by part."""
    import cProfile
    import pstats

    from django.db import connection
    from django.test import Client as DjangoClient
    from django.test.utils import CaptureQueriesContext

    client = DjangoClient(enforce_csrf_checks=True, HTTP_HOST="127.0.0.1")
    csrf = secrets.token_hex(16)
    client.cookies["sessionid"], client.cookies["csrftoken"] = session, csrf
    cpu = {"next": [], "submit": []}

    def cycle() -> None:
        started = time.process_time()
        response = client.post(f"/annotate/api/campaigns/{campaign}/next", {"progress": False},
                               content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
        middle = time.process_time()
        assignment = response.json()["assignment"]
        answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 1000}
        response = client.post(f"/annotate/api/assignments/{assignment['token']}/submit", answer,
                               content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
        if response.status_code != 201:
            raise RuntimeError(f"per-request submit answered {response.status_code}: {response.content[:200]!r}")
        cpu["next"].append(middle - started)
        cpu["submit"].append(time.process_time() - middle)

    def statements(captured) -> list[str]:
        control = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")
        return [q["sql"] for q in captured.captured_queries if not q["sql"].lstrip().upper().startswith(control)]

    for _ in range(10):  # warm: imports, the compiled statements
        cycle()
    with CaptureQueriesContext(connection) as fetched:
        response = client.post(f"/annotate/api/campaigns/{campaign}/next", {"progress": False},
                               content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    token = response.json()["assignment"]["token"]
    with CaptureQueriesContext(connection) as submitted:
        client.post(f"/annotate/api/assignments/{token}/submit",
                    {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}, content_type="application/json",
                    HTTP_X_CSRFTOKEN=csrf)
    queries = {"next": statements(fetched), "submit": statements(submitted)}
    cpu = {"next": [], "submit": []}
    load_before = os.getloadavg()[0]
    measured = cycles * 2 // 3
    for _ in range(measured):
        cycle()
    profiler = cProfile.Profile(time.process_time)
    profiled = cycles - measured
    profiler.enable()
    for _ in range(profiled):
        cycle()
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # (file, line, function) -> (calls, primitive, own, cumulative, callers)
    parts = {}
    for part, functions in PROFILE_PARTS:
        parts[part] = sum(ct for (path, _, fn), (_, _, _, ct, _) in stats.items()
                          if any(path.endswith(suffix) and fn == name for suffix, name in functions))
    parts = {part: 1000 * seconds / (2 * profiled) for part, seconds in parts.items()}
    cpu["combined"] = _combined_cpu(client, csrf, campaign, measured)
    cpu["floor"] = _floor_cpu(client, csrf, measured)
    return {"queries": queries, "cpu_ms": {k: 1000 * statistics.median(v) for k, v in cpu.items()},
            "cpu_mean_ms": {k: 1000 * statistics.fmean(v) for k, v in cpu.items()}, "parts": parts,
            "cycles": measured, "load": (load_before, os.getloadavg()[0])}


def _combined_cpu(client, csrf: str, campaign: int, cycles: int) -> list[float]:
    """CPU of one label the way the labelling page sends it: ``submit?next=1`` (save, and hand the next)."""
    response = client.post(f"/annotate/api/campaigns/{campaign}/next", {"progress": False},
                           content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    token = response.json()["assignment"]["token"]
    times = []
    for _ in range(cycles):
        answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 1000}
        started = time.process_time()
        response = client.post(f"/annotate/api/assignments/{token}/submit?next=1", answer,
                               content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
        times.append(time.process_time() - started)
        if response.status_code != 201 or not response.json().get("assignment"):
            raise RuntimeError(f"combined submit answered {response.status_code}: {response.content[:200]!r}")
        token = response.json()["assignment"]["token"]
    return times


def _floor_cpu(client, csrf: str, cycles: int) -> list[float]:
    """CPU of a request to a view shaped like the annotator endpoints that does nothing
    (:mod:`tests.benchmarks.framework_floor`): the framework's own share, the same session and user."""
    from django.test import override_settings

    times = []
    with override_settings(ROOT_URLCONF="tests.benchmarks.framework_floor"):
        for _ in range(cycles + 10):
            started = time.process_time()
            response = client.post("/annotate/api/nothing", {"answer": {"choice": "A"}}, content_type="application/json",
                                   HTTP_X_CSRFTOKEN=csrf)
            times.append(time.process_time() - started)
            if response.status_code != 200:
                raise RuntimeError(f"the empty view answered {response.status_code}: {response.content[:200]!r}")
    return times[10:]


def _print_per_request(figures: dict) -> None:
    load = figures["load"]
    print(f"\n[per request] one annotator's next-item + submit through Django's test client in this process "
          f"({figures['cycles']} cycles; 1-min load average {load[0]:.2f} before / {load[1]:.2f} after)")
    combined, floor = figures["cpu_ms"]["combined"], figures["cpu_ms"]["floor"]
    two = figures["cpu_ms"]["next"] + figures["cpu_ms"]["submit"]
    print(f"  one label, this process's CPU p50: combined submit?next=1 {combined:.2f} ms, next-item + submit {two:.2f} ms "
          f"(ratio {combined / two:.2f}); the framework's floor (an empty view behind the same middleware, session, "
          f"user and DRF: tests/benchmarks/framework_floor.py) {floor:.2f} ms a request = {floor / combined:.0%} of a "
          f"combined label")
    for kind, label in (("next", "next-item"), ("submit", "submit   ")):
        n = len(figures["queries"][kind])
        cpu = figures["cpu_ms"][kind]
        print(f"  {label}  {n} SQL statements (goal <= {GOAL_QUERIES}: {'met' if n <= GOAL_QUERIES else 'NOT met'}), "
              f"CPU p50 {cpu:.2f} ms / mean {figures['cpu_mean_ms'][kind]:.2f} ms "
              f"(goal <= {GOAL_CPU_MS:.0f} ms: ratio {cpu / GOAL_CPU_MS:.2f})")
        for sql in figures["queries"][kind]:
            print(f"      {' '.join(sql.split())[:110]}")
    parts = figures["parts"]
    whole = parts["whole request"] or float("nan")
    print("  where a request's CPU goes (profiled, so inflated; shares of the whole request):")
    named = sum(v for k, v in parts.items() if k != "whole request")
    for part, ms in parts.items():
        print(f"      {part:<46} {ms:6.2f} ms  {100 * ms / whole:5.1f} %")
    print(f"      {'the rest (middleware, DRF, routing, ORM)':<46} {whole - named:6.2f} ms  {100 * (whole - named) / whole:5.1f} %")


def _print_summary(summary: dict, per_request: dict | None, clients: int) -> None:
    """The issue-16 figures side by side, as ratios to their goals (the lead re-runs on a quiet machine)."""
    print("\n[summary] issue 16, annotation per request (ratios <= 1.00 meet the goal)")
    if per_request is not None:
        for kind in ("next", "submit"):
            print(f"  {kind:<6} in-process CPU {per_request['cpu_ms'][kind]:.2f} ms (ratio {per_request['cpu_ms'][kind] / GOAL_CPU_MS:.2f}), "
                  f"{len(per_request['queries'][kind])} statements (ratio {len(per_request['queries'][kind]) / GOAL_QUERIES:.2f})")
    for name, row in summary.items():
        print(f"  {name:<8} worker CPU per request {row['worker_cpu_ms']:.1f} ms (ratio {row['worker_cpu_ms'] / GOAL_CPU_MS:.2f}); "
              f"{row['throughput']:.1f} requests/s; p95 next {row.get('next', float('nan')):.0f} ms, submit "
              f"{row.get('submit', float('nan')):.0f} ms; load average {row['load'][0]:.2f} / {row['load'][1]:.2f}")
    if "stress" in summary:
        p95 = max(summary["stress"]["next"], summary["stress"]["submit"])
        print(f"  {clients} clients, no think time: p95 {p95:.0f} ms (goal <= {GOAL_STRESS_P95_MS:.0f}: ratio {p95 / GOAL_STRESS_P95_MS:.2f})")
    if "stress" in summary and "stress20" in summary:
        ratio = summary["stress"]["throughput"] / summary["stress20"]["throughput"]
        print(f"  throughput {clients} / {STRESS_SMALL_CLIENTS} clients: x{ratio:.2f} (goal >= x1.00: {'met' if ratio >= 1 else 'NOT met'})")
    if "paced" in summary:
        p95 = max(summary["paced"]["next"], summary["paced"]["submit"])
        print(f"  paced (think time): p95 {p95:.0f} ms (goal <= {GOAL_PACED_P95_MS:.0f}: ratio {p95 / GOAL_PACED_P95_MS:.2f})")


def _verify(load_pk: int, saved_tokens: set[str], k: int) -> dict:
    from django.db import connection
    from django.db.models import Count

    from annotation.label_models import PairwiseLabel

    connection.close()
    labels = PairwiseLabel.objects.filter(campaign_id=load_pk)
    stored = set(labels.values_list("assignment__token", flat=True))
    per_item = labels.values("item_id").annotate(n=Count("pk"))
    per_pair = labels.values("item_id", "annotator_id").annotate(n=Count("pk")).filter(n__gt=1)
    return {
        "stored": len(stored),
        "lost": len(saved_tokens - stored),
        "unexpected": len(stored - saved_tokens),
        "duplicated": per_pair.count(),
        "over_assigned": sum(1 for row in per_item if row["n"] > k),
    }


# ---------------------------------------------------------------------------------------------------
# The load (HTTP clients)
# ---------------------------------------------------------------------------------------------------


class Client:
    """One annotator's browser: a session cookie, a CSRF cookie and header, a new connection per
    request (gunicorn's sync workers close after each response)."""

    def __init__(self, port: int, session: str, timeout: float):
        self.port, self.timeout = port, timeout
        self.csrf = secrets.token_hex(16)  # 32 characters: Django accepts the unmasked secret
        self.cookie = f"sessionid={session}; csrftoken={self.csrf}"

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None, float]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        headers = {
            "Cookie": self.cookie,
            "X-CSRFToken": self.csrf,
            "Accept": "application/json",
            "Referer": f"http://127.0.0.1:{self.port}/",
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            elapsed = (time.perf_counter() - started) * 1000.0
            try:
                parsed = (
                    json.loads(payload)
                    if payload and "json" in (response.getheader("Content-Type") or "")
                    else None
                )
            except ValueError:
                parsed = None
            return response.status, parsed, elapsed
        finally:
            conn.close()


def _annotator(
    client: Client,
    campaign: int,
    n_items: int,
    think: tuple[float, float],
    resend_rate: float,
    deadline: float,
    results: dict,
    lock: threading.Lock,
    rng: random.Random,
    start: threading.Barrier,
    ramp: float,
    combined: bool = False,
    until_deadline: bool = False,
) -> None:
    """``combined``: submit with ``?next=1`` and take the next item from its answer, as annotate.js
    does since issue 30 (one request per label; the submits' times are then those of submit + next).
    ``until_deadline``: a closed loop for a bounded time, whose end is no error."""
    next_ms, submit_ms, saved, errors, replays = [], [], [], [], 0
    start.wait()
    time.sleep(rng.uniform(0.0, ramp))  # people do not all arrive in the same millisecond
    ask: dict = {}  # the page's first request asks for the progress bar; after a save it does not
    handed: dict | None = None  # the next item a combined submit's answer carried
    for _ in range(n_items):
        if time.monotonic() > deadline:
            if not until_deadline:
                errors.append("deadline")
            break
        try:
            if handed is None:
                status, body, ms = client.request("POST", f"/annotate/api/campaigns/{campaign}/next", ask)
                next_ms.append(ms)
                if status != 200 or body is None:
                    errors.append(f"next {status}")
                    continue
            else:
                body = handed
            handed = None
            assignment = body["assignment"]
            if assignment is None:
                break
            if think[1] > 0:
                time.sleep(rng.uniform(*think))
            token, key = assignment["token"], str(uuid.uuid4())
            submission = {
                "idempotency_key": key,
                "answer": {"choice": rng.choice(["A", "B", "tie"])},
                "time_on_item_ms": int(think[1] * 1000),
            }
            submit_path = f"/annotate/api/assignments/{token}/submit" + ("?next=1" if combined else "")
            for attempt in range(4):
                status, body, ms = client.request("POST", submit_path, submission)
                submit_ms.append(ms)
                if status in (200, 201):
                    saved.append(token)
                    ask = {"progress": False}  # annotate.js: loadNext(false) after a saved submission
                    if combined and body is not None and "assignment" in body:
                        handed = body
                    break
                if status < 500:
                    errors.append(f"submit {status} {body}")
                    break
                time.sleep(0.2 * (attempt + 1))  # the page's retry
            if rng.random() < resend_rate:  # the response was "lost": the page sends it again
                status, body, ms = client.request("POST", submit_path, submission)
                submit_ms.append(ms)
                if status == 200 and body and body.get("replayed"):
                    replays += 1
                    if combined and handed is not None and body.get("assignment") != handed["assignment"]:
                        errors.append("resend handed another next item")
                else:
                    errors.append(f"resend {status} {body}")
        except OSError as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    with lock:
        results["next"].extend(next_ms)
        results["submit"].extend(submit_ms)
        results["saved"].extend(saved)
        results["errors"].extend(errors)
        results["replays"] += replays


def _server_times(path: Path, start: int = 0, end: int | None = None) -> dict[str, list[float]]:
    """Request times from gunicorn's access log, between byte offsets ``start`` and ``end``."""
    times: dict[str, list[float]] = {"next": [], "submit": []}
    if not path.exists():
        return times
    with path.open("rb") as handle:
        handle.seek(start)
        text = handle.read(None if end is None else max(0, end - start)).decode("utf-8", "replace")
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        _, url, _, micros = parts
        kind = "next" if url.endswith("/next") else "submit" if url.endswith("/submit") else None
        if kind:
            times[kind].append(int(micros) / 1000.0)
    return times


def _warm_workers(port: int, workers: int, gunicorn_pid: int | None = None) -> None:
    """Load the URLconf (and what it imports) in every worker before measuring: a sync worker does
    that on its first request. Concurrent requests spread over the workers. With ``gunicorn_pid``, first
    and last wait until all ``workers`` have booted and gone idle (:func:`_workers_settled`): a worker still
    loading the site when the meter starts would charge its start-up to the first scenario."""
    if gunicorn_pid is not None:
        _workers_settled(gunicorn_pid, workers)

    def hit() -> None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/annotate/")  # resolves the URLconf; the redirect to login is fine
            conn.getresponse().read()
            conn.close()
        except OSError:
            pass

    threads = [threading.Thread(target=hit) for _ in range(4 * workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if gunicorn_pid is not None:
        _workers_settled(gunicorn_pid, workers)


def _workers_settled(gunicorn_pid: int, workers: int, timeout_s: float = 60.0) -> None:
    """Wait until the master has ``workers`` children and their CPU time stops growing (two readings
    0.3 s apart alike), or ``timeout_s`` passes: the workers have booted and nothing is running in them."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        pids = _children(gunicorn_pid)
        cpu = sum(_proc_cpu_seconds(pid) for pid in pids)
        if len(pids) >= workers and last is not None and cpu == last:
            return
        last = cpu if len(pids) >= workers else None
        time.sleep(0.3)


def _log_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


# ---------------------------------------------------------------------------------------------------
# Where the CPU time goes (Linux /proc; figures are None elsewhere)
# ---------------------------------------------------------------------------------------------------


def _proc_cpu_seconds(pid: int) -> float:
    """utime + stime of one process, in seconds (0 when it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _machine_busy_seconds() -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine so far, summed over CPUs (/proc/stat)."""
    try:
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(values) - idle) / tick, sum(values) / tick


def _bench_backends() -> list[int]:
    """PIDs of the PostgreSQL backends connected to the benchmark database (same host only)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                       [connection.settings_dict["NAME"]])  # the benchmark's database (BENCH_DB, or another's)
        return [row[0] for row in cursor.fetchall()]


def analyze_as_autovacuum_would() -> None:
    """ANALYZE the benchmark database between scenarios, outside their meters, when this server's autovacuum
    is off (as on this workplace's machines): without it every connection's prepared statements keep the
    plans made from the statistics taken after seeding, when the load campaigns had no assignments, and a
    later scenario pays sequential scans of the rows the earlier ones wrote (the combined mode, measured after
    the two requests, read 3,288 assignment rows a label by sequential scan where the two requests read
    1,601). On a live database autovacuum re-analyzes a table after 10 % of its rows changed."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        if cursor.fetchone()[0] != "on":
            cursor.execute("ANALYZE")


class CpuMeter:
    """CPU seconds spent during one scenario by the load generator (this process), the gunicorn
    workers, the benchmark database's PostgreSQL backends, and the whole machine (which includes
    anything else running on it)."""

    def __init__(self, gunicorn_pid: int, conn_max_age: float):
        self.gunicorn_pid, self.conn_max_age = gunicorn_pid, conn_max_age

    def _snapshot(self) -> dict:
        times = os.times()
        backends = {pid: _proc_cpu_seconds(pid) for pid in _bench_backends()}
        return {
            "client": times.user + times.system,
            "workers": sum(_proc_cpu_seconds(pid) for pid in _children(self.gunicorn_pid)),
            "backends": backends,
            "machine": _machine_busy_seconds(),
            "wall": time.perf_counter(),
        }

    def start(self) -> None:
        self.before = self._snapshot()

    def stop(self) -> dict:
        after = self._snapshot()
        before = self.before
        # Backends opened during the scenario started from zero; CONN_MAX_AGE keeps them open.
        postgres = sum(cpu - before["backends"].get(pid, 0.0) for pid, cpu in after["backends"].items())
        machine = None
        if before["machine"] and after["machine"]:
            machine = (after["machine"][0] - before["machine"][0], after["machine"][1] - before["machine"][1])
        wall = after["wall"] - before["wall"]
        return {
            "client": after["client"] - before["client"],
            "workers": after["workers"] - before["workers"],
            "postgres": postgres,
            # A worker reconnects once its connection is older than CONN_MAX_AGE; a backend that
            # ended during the scenario is no longer there to be read, so the figure is a floor.
            "postgres_floor": wall > self.conn_max_age or bool(set(before["backends"]) - set(after["backends"])),
            "machine": machine,
            "wall": wall,
        }


# ---------------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------------


def _run_load(
    *, port: int, sessions: dict[str, str], campaign: int, n_items: int, think_s: tuple[float, float],
    resend_rate: float, time_limit: float, ramp_s: float, seed: int, combined: bool = False,
    until_deadline: bool = False,
) -> tuple[dict, float]:
    """Every annotator in ``sessions`` works through ``n_items`` items of ``campaign``; the results
    and the wall time."""
    results = {"next": [], "submit": [], "saved": [], "errors": [], "replays": 0}
    lock = threading.Lock()
    barrier = threading.Barrier(len(sessions))
    deadline = time.monotonic() + time_limit
    threads = [
        threading.Thread(
            target=_annotator,
            args=(
                Client(port, sessions[name], 15.0),
                campaign,
                n_items,
                think_s,
                resend_rate,
                deadline,
                results,
                lock,
                random.Random(seed * 1000 + i),
                barrier,
                ramp_s,
                combined,
                until_deadline,
            ),
            daemon=True,
        )
        for i, name in enumerate(sorted(sessions))
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(1.0, deadline - time.monotonic() + 20))
    return results, time.perf_counter() - started


def _fmt_cpu(cpu: dict, n_cpus: int) -> str:
    wall = cpu["wall"]
    machine = cpu["machine"]
    machine_text = (
        f"whole machine {machine[0]:.1f} s busy of {machine[1]:.1f} s ({100 * machine[0] / machine[1]:.0f}% of {n_cpus} CPUs; "
        f"includes anything else running)" if machine and machine[1] > 0 else "whole machine: n/a"
    )
    return (
        f"CPU in {wall:.1f} s wall: load generator {cpu['client']:.1f} s, gunicorn workers {cpu['workers']:.1f} s, "
        f"PostgreSQL backends {'>= ' if cpu['postgres_floor'] else ''}{cpu['postgres']:.1f} s; {machine_text}"
    )


def _wait_for(port: int, proc: subprocess.Popen, timeout: float, path: str = "/healthz", server: str = "gunicorn") -> None:
    """Wait until the server ``proc`` answers 200 on ``path``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{server} exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{server} did not answer {path} in time")


def bench_env(admin_url: str, var_dir: str, db: str = BENCH_DB) -> dict[str, str]:
    """The environment of the benchmark's Django (this process and the gunicorn workers)."""
    env = {
        "DATABASE_URL": _with_db(admin_url, db),
        "ATELIER_VAR_DIR": var_dir,
        "DEBUG": "false",
        "ATELIER_DEV": "true",
        "SECRET_KEY": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_CONN_MAX_AGE": "60",
        "LOG_LEVEL": "ERROR",
        "SECURE_HSTS_SECONDS": "0",
        # the gunicorn workers share the dashboards' cache (a prefix of this run's own on a shared Redis)
        "ATELIER_CACHE_URL": os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/0"),
        "ATELIER_CACHE_PREFIX": f"atelier-bench-{secrets.token_hex(4)}",
    }
    return env


def gunicorn_start(env: dict[str, str], port: int, workers: int, access_log: Path,
                   app: str = "evalsite.wsgi") -> subprocess.Popen:
    """gunicorn on loopback with ``workers`` sync workers serving ``app``, in a process group of its own."""
    return subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            app,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--worker-class",
            "sync",
            "--timeout",
            "60",
            "--log-level",
            "warning",
            "--access-logfile",
            str(access_log),
            "--access-logformat",
            "%(m)s %(U)s %(s)s %(D)s",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def gunicorn_stop(gunicorn: subprocess.Popen | None) -> None:
    if gunicorn is not None and gunicorn.poll() is None:
        os.killpg(gunicorn.pid, signal.SIGTERM)  # the process group this script started
        try:
            gunicorn.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(gunicorn.pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--items", type=int, default=40, help="items each annotator fetches and submits")
    parser.add_argument(
        "--think-ms",
        type=float,
        nargs=2,
        default=(3000.0, 10000.0),
        metavar=("MIN", "MAX"),
        help="time on item between fetching and submitting, uniform (default 3000 10000: the issue's human pace)",
    )
    parser.add_argument(
        "--workers", type=int, default=2 * (os.cpu_count() or 1),
        help="gunicorn sync workers (default: two per CPU, so a worker waiting on PostgreSQL leaves the CPU to "
        "another; on 2 CPUs the 4 that `make serve` starts)",
    )
    parser.add_argument(
        "--ramp-s", type=float, default=5.0, help="annotators arrive uniformly over this many seconds"
    )
    parser.add_argument("--resend-rate", type=float, default=0.05)
    parser.add_argument("--time-limit", type=float, default=420.0, help="seconds for each scenario's load phase")
    parser.add_argument("--per-request", type=int, default=300,
                        help="next-item + submit cycles measured in-process (0: skip the per-request figures)")
    parser.add_argument("--dashboard-runs", type=int, default=10)
    parser.add_argument(
        "--scenarios", default="serial,stress20,stress,paced,growth",
        help="comma-separated subset of serial,stress20,stress,paced,growth (serial, the baseline, always runs first)",
    )
    parser.add_argument("--growth-sizes", type=int, nargs="+", default=list(GROWTH_SIZES),
                        help="labels of the growth campaigns (default 500 5000 50000)")
    parser.add_argument("--growth-cycles", type=int, default=GROWTH_CYCLES)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--combined", action="store_true",
                        help="the load's clients label as annotate.js does since issue 30: submit?next=1, one request "
                        "per label (default: next-item, then submit)")
    args = parser.parse_args(argv)

    admin_url = _admin_url()
    problem = _postgres_reachable(admin_url)
    if problem:
        print(
            f"SKIPPED bench_annotation_load: PostgreSQL is not available at {urlparse(admin_url).hostname}:"
            f"{urlparse(admin_url).port or 5432} ({problem}). Start PostgreSQL or set BENCH_DATABASE_URL."
        )
        return 0
    bench_database(admin_url, BENCH_DB)
    var_dir = tempfile.mkdtemp(prefix="atelier-bench-")
    env = bench_env(admin_url, var_dir)
    gunicorn = None
    try:
        t0 = time.perf_counter()
        _setup_django(env)
        shared = -(-args.annotators * args.items // 3) + 20
        small = -(-min(args.annotators, STRESS_SMALL_CLIENTS) * args.items // 3) + 20
        items_needed = {"serial": args.items + 5, "stress20": small, "stress": shared, "paced": shared,
                        "per_request": 2 * args.per_request + 40}  # one annotator, each item once (two requests, then combined)
        seeded = _seed(args.annotators, items_needed, DASHBOARD_LABELS, args.seed)
        print(
            f"seeded in {time.perf_counter() - t0:.1f} s: items (k = 3) per scenario {seeded['items']} for "
            f"{args.annotators} annotators; dashboard campaign with {seeded['dashboard_labels']} labels"
        )
        growth = None
        if "growth" in args.scenarios.split(","):
            from django.contrib.auth import get_user_model

            t0 = time.perf_counter()
            growth = _seed_growth(tuple(args.growth_sizes), args.growth_cycles, args.seed)
            growth_sessions = {"measurer": _session_for(get_user_model().objects.get(pk=growth["measurer"])),
                               "researcher": seeded["researcher"]}
            print(f"seeded the growth campaigns ({', '.join(map(str, args.growth_sizes))} labels) in "
                  f"{time.perf_counter() - t0:.1f} s")
        from django.db import connection, connections

        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # what autovacuum would have done on a live database
            cursor.execute("SHOW autovacuum")
            autovacuum = cursor.fetchone()[0]
        print(f"statistics: ANALYZE after seeding; autovacuum on this server: {autovacuum}"
              + ("" if autovacuum == "on" else " (so ANALYZE again before each scenario, outside its meter)"))
        per_request = None
        if args.per_request > 0:
            per_request = _per_request(seeded["load"]["per_request"], seeded["sessions"][sorted(seeded["sessions"])[0]],
                                       args.per_request)
        connections.close_all()
        port = _free_port()
        access_log = Path(var_dir) / "access.log"
        gunicorn = gunicorn_start(env, port, args.workers, access_log)
        _wait_for(port, gunicorn, 120)  # a loaded machine starts four workers slowly
        _warm_workers(port, args.workers, gunicorn.pid)

        n_cpus = os.cpu_count() or 1
        meter = CpuMeter(gunicorn.pid, float(env["DATABASE_CONN_MAX_AGE"]))
        think_paced = (args.think_ms[0] / 1000.0, args.think_ms[1] / 1000.0)
        first = sorted(seeded["sessions"])[0]
        scenarios = [
            ("serial", {first: seeded["sessions"][first]}, (0.0, 0.0), 0.0,
             "baseline: 1 annotator, no think time, nothing else competing"),
            ("stress20", dict(sorted(seeded["sessions"].items())[:STRESS_SMALL_CLIENTS]), (0.0, 0.0), args.ramp_s,
             f"{min(args.annotators, STRESS_SMALL_CLIENTS)} annotators, zero think time (the throughput the "
             f"{args.annotators}-client loop must not fall below)"),
            ("stress", seeded["sessions"], (0.0, 0.0), args.ramp_s,
             f"{args.annotators} annotators, zero think time (closed loop: latency ~ clients / throughput)"),
            ("paced", seeded["sessions"], think_paced, args.ramp_s,
             f"{args.annotators} annotators, think time uniform {args.think_ms[0]:.0f}-{args.think_ms[1]:.0f} ms per item"),
        ]
        if per_request is not None:
            _print_per_request(per_request)
        print(
            f"gunicorn: {args.workers} sync workers; PostgreSQL; {n_cpus} CPUs shared by gunicorn, PostgreSQL and "
            f"the load generator; items per annotator {args.items}, arriving over {args.ramp_s:.0f} s, "
            f"{args.resend_rate:.0%} of submissions re-sent"
        )
        wanted = {"serial"} | set(args.scenarios.split(",")) - {"growth"}
        ok = True
        baseline: dict[str, float] = {}
        summary: dict[str, dict] = {}
        for name, sessions, think_s, ramp_s, description in scenarios:
            if name not in wanted:
                continue
            analyze_as_autovacuum_would()
            log_start = _log_size(access_log)
            load_before = os.getloadavg()
            meter.start()
            results, wall = _run_load(
                port=port, sessions=sessions, campaign=seeded["load"][name], n_items=args.items, think_s=think_s,
                resend_rate=args.resend_rate, time_limit=args.time_limit, ramp_s=ramp_s, seed=args.seed,
                combined=args.combined,
            )
            cpu = meter.stop()
            check = _verify(seeded["load"][name], set(results["saved"]), 3)
            requests = len(results["next"]) + len(results["submit"])
            print(f"\n[{name}] {description}")
            print(
                f"  {requests} requests in {wall:.1f} s wall = {requests / wall:.1f} requests/s; "
                f"1-min load average {load_before[0]:.2f} before / {os.getloadavg()[0]:.2f} after"
            )
            goal = {"stress": GOAL_STRESS_P95_MS, "paced": GOAL_PACED_P95_MS}.get(name, GOAL_P95_MS)
            for kind, label in (("next", "next-item"), ("submit", "submit   ")):
                values = results[kind]
                p50, p95 = _percentile(values, 50), _percentile(values, 95)
                if name == "serial":
                    baseline[kind] = p50
                    versus = "this p50 is the baseline"
                else:
                    versus = f"p95 x{p95 / baseline[kind]:.1f} the serial p50"
                print(
                    f"  {label}  n={len(values):5d}  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  "
                    f"(goal p95 <= {goal:.0f} ms: ratio {p95 / goal:.2f}; {versus})"
                )
                summary.setdefault(name, {})[kind] = p95
            summary.setdefault(name, {}).update(
                throughput=requests / wall, load=(load_before[0], os.getloadavg()[0]),
                worker_cpu_ms=1000 * cpu["workers"] / requests if requests else float("nan"))
            if name.startswith("stress") and requests:
                mean = statistics.fmean(results["next"] + results["submit"])
                print(
                    f"  closed loop: {len(sessions)} clients / {requests / wall:.1f} requests/s = "
                    f"{1000 * len(sessions) / (requests / wall):.0f} ms predicted mean latency; measured mean {mean:.0f} ms"
                )
            server = _server_times(access_log, log_start, _log_size(access_log))
            print(
                f"  server-side (gunicorn request time, excludes the client and the listen queue): "
                f"next-item p50 {_percentile(server['next'], 50):.1f} / p95 {_percentile(server['next'], 95):.1f} ms, "
                f"submit p50 {_percentile(server['submit'], 50):.1f} / p95 {_percentile(server['submit'], 95):.1f} ms"
            )
            print(f"  {_fmt_cpu(cpu, n_cpus)}")
            if requests:
                print(
                    f"  CPU per request: gunicorn worker {1000 * cpu['workers'] / requests:.1f} ms, PostgreSQL "
                    f"{'>= ' if cpu['postgres_floor'] else ''}{1000 * cpu['postgres'] / requests:.1f} ms"
                    f"{' (backends that reconnected during the scenario are not counted)' if cpu['postgres_floor'] else ''}, "
                    f"load generator {1000 * cpu['client'] / requests:.1f} ms"
                )
            labels = len(set(results["saved"]))
            if labels:
                print(
                    f"  CPU per label ({'submit?next=1' if args.combined else 'next-item + submit'}): gunicorn workers "
                    f"{1000 * cpu['workers'] / labels:.2f} ms + PostgreSQL {1000 * cpu['postgres'] / labels:.2f} ms = "
                    f"{1000 * (cpu['workers'] + cpu['postgres']) / labels:.2f} ms; {labels / wall:.1f} labels/s"
                )
            print(
                f"  labels: saved by clients {len(set(results['saved']))}, stored {check['stored']}, lost {check['lost']}, "
                f"duplicated {check['duplicated']}, unexpected {check['unexpected']}, over-assigned items {check['over_assigned']}, "
                f"re-sent submissions replayed {results['replays']}"
            )
            if results["errors"]:
                print(f"  errors ({len(results['errors'])}): {sorted(set(results['errors']))[:5]}")
            ok = ok and not (
                check["lost"]
                or check["duplicated"]
                or check["over_assigned"]
                or check["unexpected"]
                or results["errors"]
            )

        _print_summary(summary, per_request, args.annotators)
        researcher = Client(port, seeded["researcher"], 60.0)
        dashboard_ms = []
        for _ in range(args.dashboard_runs + 1):
            status, _, ms = researcher.request("GET", f"/annotate/campaigns/{seeded['dashboard']}/")
            if status != 200:
                ok = False
                print(f"dashboard {status}")
            dashboard_ms.append(ms)
        # The baseline: the same researcher's campaign list page, which only counts labels.
        list_ms = [researcher.request("GET", "/annotate/campaigns/")[2] for _ in range(args.dashboard_runs + 1)][1:]
        dashboard_ms = dashboard_ms[1:]  # the first load warms the worker
        p50d, p95d = statistics.median(dashboard_ms), _percentile(dashboard_ms, 95)
        print(
            f"\ndashboard  n={len(dashboard_ms):5d}  p50 {p50d:7.1f} ms  p95 {p95d:7.1f} ms  at {seeded['dashboard_labels']} labels, "
            f"cached after its first load (goal <= {GOAL_DASHBOARD_MS:.0f} ms: ratio {p50d / GOAL_DASHBOARD_MS:.2f} at p50, "
            f"{p95d / GOAL_DASHBOARD_MS:.2f} at p95; x{p50d / statistics.median(list_ms):.1f} the campaign list page's "
            f"p50 {statistics.median(list_ms):.1f} ms)"
        )
        if growth is not None:
            ok = _growth(port, growth, growth_sessions, args.growth_cycles, min(args.dashboard_runs, args.growth_cycles)) and ok
        print("integrity: OK" if ok else "integrity: FAILED")
        return 0 if ok else 1
    finally:
        gunicorn_stop(gunicorn)
        close_django_connections()
        if not args.keep_db:
            bench_database(admin_url, BENCH_DB, drop_only=True)
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
