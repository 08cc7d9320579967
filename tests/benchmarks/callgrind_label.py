"""Instructions per combined label in the site's own WSGI application under callgrind (issue 30): a count,
not a timing, of what a gunicorn worker runs for ``POST /annotate/api/assignments/<token>/submit?next=1``
(everything from the WSGI call to the last byte of the body; gunicorn's own parsing and the socket are
``wsgi_floor``'s part).

``seed`` makes a template database (``<db>_tpl``) with ``bench_annotation_load``'s seeding: 20 annotators
with sessions and one k = 3 campaign. ``run`` copies it to ``<db>`` (so every run starts from the same
rows), warms the process with ``--warm`` labels, then counts ``--labels`` combined labels, the annotators
taking turns as 20 people labelling at once would; callgrind's counters are zeroed just before the first
counted label and dumped after the last (client requests, as ``callgrind_tig``). ``--profile`` runs the
same under cProfile instead and prints the top functions. ``--floor`` counts, in place of the labels, as
many requests to :mod:`tests.benchmarks.framework_floor`'s view (every middleware, the session and its user,
DRF, CSRF, the JSON body parsed, ``{}`` answered, no other statement): the framework's share of a label.

Run: ``.venv/bin/python -m tests.benchmarks.callgrind_label seed --db NAME``, then
``valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p .venv/bin/python -m tests.benchmarks.callgrind_label
run --db NAME --out /tmp/cg.%p``; ``callgrind_annotate --inclusive=yes /tmp/cg.<pid>.1`` for the parts.

PostgreSQL's side of the same labels: seed with ``--dashboard-labels 5000`` (the planner then has a used
database's statistics), run a private server under ``valgrind --tool=callgrind --dump-before=pg_backend_pid
--callgrind-out-file=DIR/cg.%p`` (valgrind follows its forks: every backend is counted) and point
``BENCH_DATABASE_URL`` at it; ``run --backend`` calls ``pg_backend_pid()`` just before the first counted
label and just after the last, so the backend's dump ``DIR/cg.<backend pid>.2`` holds exactly their
instructions (the pid is printed).
"""

from __future__ import annotations

import argparse
import glob
import io
import json
import os
import secrets
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tests.benchmarks.bench_annotation_load import _admin_url, _with_db, bench_env
from tests.benchmarks.callgrind_tig import _marks

STATE = Path(tempfile.gettempdir()) / "callgrind_label_{db}.json"
ANNOTATORS = 20


def _environ(path: str, query: str, body: bytes, cookie: str, csrf: str) -> dict:
    """A WSGI environ as gunicorn's sync worker builds it for the labelling page's request."""
    return {
        "REQUEST_METHOD": "POST", "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": query,
        "RAW_URI": path + ("?" + query if query else ""), "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "18300", "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "50000",
        "HTTP_HOST": "127.0.0.1:18300", "HTTP_COOKIE": cookie, "HTTP_X_CSRFTOKEN": csrf,
        "HTTP_ACCEPT": "application/json", "HTTP_REFERER": "http://127.0.0.1:18300/",
        "HTTP_ACCEPT_ENCODING": "identity", "HTTP_CONNECTION": "close",
        "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http", "wsgi.multithread": False, "wsgi.multiprocess": True,
        "wsgi.run_once": False, "wsgi.file_wrapper": None, "SERVER_SOFTWARE": "gunicorn",
    }


class Annotator:
    def __init__(self, app, session: str):
        self.app = app
        self.csrf = secrets.token_hex(16)
        self.cookie = f"sessionid={session}; csrftoken={self.csrf}"
        self.token: str | None = None

    def post(self, path: str, query: str, payload: dict) -> tuple[str, dict]:
        body = json.dumps(payload).encode()
        answered = {}

        def start_response(status, headers, exc_info=None):
            answered["status"] = status

        result = self.app(_environ(path, query, body, self.cookie, self.csrf), start_response)
        try:
            content = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()
        return answered["status"], json.loads(content)

    def nothing(self, campaign: int) -> dict:
        """One request to the framework floor's view, with a label's body (``--floor``)."""
        answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 1000}
        status, body = self.post("/annotate/api/nothing", "", answer)
        if not status.startswith("200") or body != {}:
            raise RuntimeError(f"the floor's view answered {status}: {body}")
        return body

    def label(self, campaign: int) -> dict:
        if self.token is None:
            status, body = self.post(f"/annotate/api/campaigns/{campaign}/next", "", {"progress": False})
            self.token = body["assignment"]["token"]
        answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 1000}
        status, body = self.post(f"/annotate/api/assignments/{self.token}/submit", "next=1", answer)
        if not status.startswith("201") or not body.get("assignment"):
            raise RuntimeError(f"combined submit answered {status}: {body}")
        self.token = body["assignment"]["token"]
        return body


def _postgres(db: str):
    import psycopg

    return psycopg.connect(_with_db(_admin_url(), "postgres").replace("postgres://", "postgresql://", 1),
                           autocommit=True)


def seed(db: str, items: int, dashboard_labels: int = 30) -> None:
    from tests.benchmarks.bench_annotation_load import _seed, _setup_django

    template = f"{db}_tpl"
    with _postgres(db) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{template}"')
    env = bench_env(_admin_url(), tempfile.mkdtemp(prefix="callgrind-label-"), template)
    env["ATELIER_CACHE_URL"] = os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/0")  # as the workers
    _setup_django(env)
    seeded = _seed(ANNOTATORS, {"label": items}, dashboard_labels, 1)
    from django.db import connection, connections

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    connections.close_all()
    env["DATABASE_URL"] = _with_db(_admin_url(), db)
    STATE.with_name(STATE.name.format(db=db)).write_text(json.dumps(
        {"env": env, "campaign": seeded["load"]["label"], "sessions": seeded["sessions"]}))
    print(f"seeded {template}: campaign {seeded['load']['label']}, {seeded['items']['label']} items")


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def run(db: str, warm: int, labels: int, out: str | None, profile: int, backend: bool = False,
        floor: bool = False) -> None:
    state = json.loads(STATE.with_name(STATE.name.format(db=db)).read_text())
    with _postgres(db) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}" TEMPLATE "{db}_tpl"')
    os.environ.update(state["env"])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    from evalsite.wsgi import application

    annotators = [Annotator(application, session) for _, session in sorted(state["sessions"].items())]
    campaign = state["campaign"]
    if floor:
        from django.test.utils import override_settings

        override_settings(ROOT_URLCONF="tests.benchmarks.framework_floor").enable()
    act = Annotator.nothing if floor else Annotator.label
    n = 0
    for _ in range(warm):
        act(annotators[n % len(annotators)], campaign)
        n += 1
    with tempfile.TemporaryDirectory(prefix="callgrind-label-") as tmp:
        marks = _marks(tmp) if out else None
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile(time.process_time)
            profiler.enable()
        if marks is not None:
            marks.marks_zero()
        if backend:  # the server dumps its counts at each call of pg_backend_pid(): the first counted label's start
            pid = _backend_pid()
        for _ in range(labels):
            act(annotators[n % len(annotators)], campaign)
            n += 1
        if marks is not None:
            marks.marks_dump()
        if backend:  # and the last one's end: the backend's second dump holds the counted labels
            if _backend_pid() != pid:
                raise RuntimeError("the database connection changed during the counted labels")
            print(f"backend {pid}: the counted labels are its callgrind dump 2")
        if profile:
            profiler.disable()
            stats = pstats.Stats(profiler)
            stats.sort_stats("tottime").print_stats(profile)
            stats.sort_stats("cumulative").print_stats(profile)
    from django.db import connections

    connections.close_all()
    print(f"{labels} {'floor requests' if floor else 'combined labels'} counted after {warm} warm ones")
    if out:
        for dump in sorted(glob.glob(out.replace("%p", str(os.getpid())) + ".*")):
            with open(dump) as f:
                for line in f:
                    if line.startswith(("summary:", "totals:")):
                        total = int(line.split()[1])
                        print(f"{dump}: {total:,} instructions, {total / labels / 1e6:.3f} M a label")
                        break


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["seed", "run"])
    parser.add_argument("--db", default=os.environ.get("CALLGRIND_LABEL_DB", "atelier_callgrind_label"))
    parser.add_argument("--items", type=int, default=2000, help="seed: items of the campaign (k = 3)")
    parser.add_argument("--dashboard-labels", type=int, default=30,
                        help="seed: labels of the dashboard campaign (5,000 gives the statistics of a used database)")
    parser.add_argument("--warm", type=int, default=60)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--out", default=None, help="valgrind's --callgrind-out-file, %%p for the pid")
    parser.add_argument("--backend", action="store_true",
                        help="run: call pg_backend_pid() just before the first counted label and just after the "
                             "last, for a server run under valgrind --tool=callgrind --dump-before=pg_backend_pid")
    parser.add_argument("--profile", type=int, default=0, help="run under cProfile and print this many functions")
    parser.add_argument("--floor", action="store_true",
                        help="run: count requests to tests/benchmarks/framework_floor.py's view instead of labels")
    args = parser.parse_args(argv)
    if args.action == "seed":
        seed(args.db, args.items, args.dashboard_labels)
    else:
        run(args.db, args.warm, args.labels, args.out, args.profile, args.backend, args.floor)


if __name__ == "__main__":
    main()
