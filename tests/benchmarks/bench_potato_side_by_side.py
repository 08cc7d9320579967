"""Side-by-side labelling benchmark (issue 30): Atelier against Potato on the same job, in one run.

The job, for each system: text pairwise items (``--items``, default 2,500: the issue's 5,000 take
twice as long to seed and are never used up in 20 s), k = 3, ``--annotators`` (20) clients in a closed
loop without think time for ``--seconds`` (20) each, after one client alone for ``--serial-seconds`` (8),
everything on loopback. Every client's loop is bounded in count (``--max-labels``) and in time.

* **Atelier**: gunicorn (``--workers`` sync workers, two per CPU as ``make serve``) on PostgreSQL, as
  ``bench_annotation_load`` runs it, in two modes on campaigns of their own: ``two requests`` (next-item,
  then submit: the page before issue 30) and ``combined`` (``POST …/submit?next=1``: submit and give me
  the next, one request per label, what annotate.js sends now).
* **Potato** (potato-annotation 2.12, PyPI) installed into its own virtual environment under
  ``var/bench-potato/`` on first use (skipped with a message when it cannot be installed); its own
  server (``potato start``) with passwordless login, a radio scheme A / B / tie and
  ``max_annotations_per_item: 3``. Next item = ``POST /annotate {"action": "next_instance"}`` (the page
  it renders carries the instance id), submit = ``POST /updateinstance``, as its page does.

Printed per system and mode: labels/s, p50/p95 of next and submit (combined: one request for both),
CPU per label (Atelier: gunicorn workers + the benchmark database's PostgreSQL backends; Potato: its
server process), gunicorn's own cycle (the same workers and clients on a WSGI app without Django:
:mod:`tests.benchmarks.wsgi_floor`) as worker CPU per request, the serial save p50, the ratios to Potato and combined / two requests, the load
average, and the integrity check: no label acknowledged and lost, no item labelled more than k times
(Atelier from its tables, Potato from its users' saved state). Then, as a diagnostic of the serial save
(not how the site runs), Atelier's serial saves again with PostgreSQL's ``synchronous_commit=off``: how
much of a save is the COMMIT waiting for its WAL flush, the durability Potato's unsynchronised file write
does not give.

Run: ``.venv/bin/python -m tests.benchmarks.bench_potato_side_by_side`` (``--help`` for the knobs).
Needs PostgreSQL as ``bench_annotation_load`` does (skips with a message when it is not there).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from tests.benchmarks import bench_annotation_load as load

ROOT = load.ROOT
POTATO_VERSION = "2.12.1"
POTATO_VENV = ROOT / "var" / "bench-potato" / "venv"
BENCH_DB = os.environ.get("BENCH_SIDE_BY_SIDE_DB") or "atelier_bench_side_by_side"
K = 3
#: Suffix of the diagnostic scenarios run with ``synchronous_commit=off`` (COMMIT not waiting for the WAL flush)
NO_WAL_WAIT = ", no WAL wait"


# ---------------------------------------------------------------------------------------------------
# Potato: its own virtual environment, its own server
# ---------------------------------------------------------------------------------------------------


def potato_install(timeout: float) -> tuple[Path | None, str]:
    """The ``potato`` command of a virtual environment of its own (made on first use); (None, why) when
    it cannot be installed."""
    potato = POTATO_VENV / "bin" / "potato"
    if potato.exists():
        return potato, "already installed"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(POTATO_VENV)], check=True, timeout=120,
                       capture_output=True)
        done = subprocess.run([str(POTATO_VENV / "bin" / "pip"), "install", "-q", f"potato-annotation=={POTATO_VERSION}"],
                              timeout=timeout, capture_output=True, text=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if done.returncode != 0 or not potato.exists():
        shutil.rmtree(POTATO_VENV, ignore_errors=True)
        return None, (done.stderr.strip().splitlines() or ["pip failed"])[-1]
    return potato, "installed"


def potato_project(directory: Path, n_items: int, seed: int) -> Path:
    """The job as a Potato project: text pairs, a radio A / B / tie, k = 3, passwordless login."""
    rng = random.Random(seed)
    words = ["lantern", "river", "fold", "salt", "clock", "glass", "amber", "crease", "stair", "mist"]
    (directory / "data").mkdir(parents=True)
    with open(directory / "data" / "items.jsonl", "w") as out:
        for i in range(n_items):
            a, b = (" ".join(rng.choice(words) for _ in range(40)) for _ in range(2))
            out.write(json.dumps({"id": f"item-{i}", "text": f"Response A: {a}\n\nResponse B: {b}"}) + "\n")
    config = directory / "config.yaml"
    config.write_text(
        "annotation_task_name: Atelier side-by-side benchmark\n"
        f"task_dir: {directory}\n"
        f"output_annotation_dir: {directory / 'annotation_output'}\n"
        "output_annotation_format: jsonl\n"
        "data_files: [data/items.jsonl]\n"
        "item_properties: {id_key: id, text_key: text}\n"
        "user_config: {allow_all_users: true, users: []}\n"
        "require_password: false\n"
        f"max_annotations_per_item: {K}\n"
        "assignment_strategy: random\n"
        "annotation_schemes:\n"
        "  - annotation_type: radio\n    name: preference\n    description: Which response is better\n"
        "    labels: [A, B, tie]\n"
    )
    return config


class PotatoClient:
    """One annotator's browser on Potato: its Flask session cookie, a connection per request."""

    INSTANCE = re.compile(r'id="instance_id"[^>]*value="([^"]*)"')

    def __init__(self, port: int, name: str, timeout: float):
        self.port, self.name, self.timeout, self.cookie = port, name, timeout, ""

    def request(self, method: str, path: str, body: bytes | None, content_type: str) -> tuple[int, str, float]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        headers = {"Cookie": self.cookie, "Content-Type": content_type, "Accept": "text/html,application/json"}
        started = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            text = response.read().decode("utf-8", "replace")
            ms = (time.perf_counter() - started) * 1000.0
            for header, value in response.getheaders():
                if header.lower() == "set-cookie" and value.startswith("session="):
                    self.cookie = value.split(";", 1)[0]
            return response.status, text, ms
        finally:
            conn.close()

    def login(self) -> str | None:
        """Log in (Potato makes the user); the first instance id, from the page it redirects to."""
        status, _, _ = self.request("POST", "/auth", urlencode({"email": self.name, "pass": ""}).encode(),
                                    "application/x-www-form-urlencoded")
        status, page, _ = self.request("GET", "/annotate", None, "text/html")
        found = self.INSTANCE.search(page)
        return found.group(1) if status == 200 and found else None

    def submit(self, instance: str, choice: str) -> tuple[bool, float]:
        body = json.dumps({"instance_id": instance, "annotations": {f"preference:::{choice}": choice}}).encode()
        status, text, ms = self.request("POST", "/updateinstance", body, "application/json")
        return status == 200 and '"success"' in text, ms

    def next(self, instance: str) -> tuple[str | None, float]:
        """The next instance id (None when the page has none left or is not an item page)."""
        body = json.dumps({"action": "next_instance", "instance_id": instance}).encode()
        status, page, ms = self.request("POST", "/annotate", body, "application/json")
        found = self.INSTANCE.search(page) if status == 200 else None
        return (found.group(1) if found else None), ms


def _potato_annotator(client: PotatoClient, deadline: float, max_labels: int, results: dict,
                      lock: threading.Lock, rng: random.Random, start: threading.Barrier) -> None:
    next_ms, submit_ms, saved, errors = [], [], [], []
    start.wait()
    try:
        instance = client.login()
        for _ in range(max_labels):
            if instance is None or time.monotonic() > deadline:
                break
            ok, ms = client.submit(instance, rng.choice(["A", "B", "tie"]))
            submit_ms.append(ms)
            if not ok:
                errors.append("submit refused")
                break
            saved.append(instance)
            following, ms = client.next(instance)
            next_ms.append(ms)
            if following == instance:  # the last one: Potato shows it again
                break
            instance = following
    except OSError as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    with lock:
        results["next"].extend(next_ms)
        results["submit"].extend(submit_ms)
        results["saved"].extend((client.name, i) for i in saved)
        results["errors"].extend(errors)


def potato_verify(output_dir: Path, saved: list[tuple[str, str]]) -> dict:
    """Lost (acknowledged, not in the user's saved state) and over-assigned (labelled by more than k users)."""
    stored: set[tuple[str, str]] = set()
    for state_file in output_dir.glob("*/user_state.json"):
        state = json.loads(state_file.read_text())
        for instance, labels in (state.get("instance_id_to_label_to_value") or {}).items():
            if labels:
                stored.add((state["user_id"], instance))
    per_item: dict[str, int] = {}
    for _, instance in stored:
        per_item[instance] = per_item.get(instance, 0) + 1
    return {"stored": len(stored), "lost": len(set(saved) - stored),
            "over_assigned": sum(1 for n in per_item.values() if n > K)}


def _process_tree_cpu(pid: int) -> float:
    return load._proc_cpu_seconds(pid) + sum(load._proc_cpu_seconds(c) for c in load._children(pid))


def potato_run(potato: Path, args, work: Path) -> dict:
    """Potato on the job: one client alone, then the closed loop; the figures of each."""
    config = potato_project(work, args.items, args.seed)
    port = load._free_port()
    log = open(work / "potato.log", "wb")
    proc = subprocess.Popen([str(potato), "start", str(config), "-p", str(port)], cwd=work,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    figures = {}
    try:
        try:
            load._wait_for(port, proc, 180, path="/", server="Potato")
        except RuntimeError:
            log.flush()
            print("Potato did not start; the end of its log:\n" + (work / "potato.log").read_text()[-2000:])
            raise
        # Its first save loads what it imports lazily (seconds): one client warms it, not measured.
        warm = {"next": [], "submit": [], "saved": [], "errors": []}
        _potato_annotator(PotatoClient(port, "warm-up", 60.0), time.monotonic() + 30, 3, warm, threading.Lock(),
                          random.Random(args.seed), threading.Barrier(1))
        figures["warm"] = warm
        for name, clients, seconds in (("serial", 1, args.serial_seconds), ("loop", args.annotators, args.seconds)):
            results = {"next": [], "submit": [], "saved": [], "errors": []}
            lock, barrier = threading.Lock(), threading.Barrier(clients)
            load_before, cpu_before = os.getloadavg()[0], _process_tree_cpu(proc.pid)
            deadline = time.monotonic() + seconds
            threads = [threading.Thread(target=_potato_annotator, daemon=True, args=(
                PotatoClient(port, f"{name}-{i:02d}", 30.0), deadline, args.max_labels, results, lock,
                random.Random(args.seed * 1000 + i), barrier)) for i in range(clients)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=seconds + 60)
            wall = time.perf_counter() - started
            figures[name] = {**results, "wall": wall, "cpu": _process_tree_cpu(proc.pid) - cpu_before,
                             "load": (load_before, os.getloadavg()[0])}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # Potato saves its users' state on the way out
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    saved = [label for part in ("warm", "serial", "loop") for label in figures.get(part, {}).get("saved", [])]
    figures["check"] = potato_verify(work / "annotation_output", saved)
    return figures


# ---------------------------------------------------------------------------------------------------
# Atelier: gunicorn on PostgreSQL, both modes
# ---------------------------------------------------------------------------------------------------


def atelier_run(args, admin_url: str, var_dir: str) -> dict:
    env = load.bench_env(admin_url, var_dir, BENCH_DB)
    load._setup_django(env)
    modes = {"two requests": False, "combined": True}
    needed = {}
    for mode in modes:
        needed[f"serial {mode}"] = args.items // 4
        needed[f"loop {mode}"] = args.items
        needed[f"serial {mode}{NO_WAL_WAIT}"] = args.items // 4
    # ``serial`` is the name bench_annotation_load opens to its first annotator only; these are open to all.
    seeded = load._seed(args.annotators, needed, 0, args.seed)
    from django.db import connection, connections

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    connections.close_all()
    port = load._free_port()
    gunicorn = load.gunicorn_start(env, port, args.workers, Path(var_dir) / "access.log")
    figures = {}
    try:
        load._wait_for(port, gunicorn, 120)
        load._warm_workers(port, args.workers, gunicorn.pid)
        meter = load.CpuMeter(gunicorn.pid, float(env["DATABASE_CONN_MAX_AGE"]))
        names = sorted(seeded["sessions"])
        def scenario(key: str, clients: int, seconds: float, combined: bool) -> None:
            sessions = {n: seeded["sessions"][n] for n in names[:clients]}
            load.analyze_as_autovacuum_would()
            load_before = os.getloadavg()[0]
            meter.start()
            results, wall = load._run_load(
                port=port, sessions=sessions, campaign=seeded["load"][key], n_items=args.max_labels,
                think_s=(0.0, 0.0), resend_rate=0.0, time_limit=seconds, ramp_s=0.0, seed=args.seed,
                combined=combined, until_deadline=True,
            )
            cpu = meter.stop()
            check = load._verify(seeded["load"][key], set(results["saved"]), K)
            figures[key] = {**results, "wall": wall, "cpu": cpu["workers"] + cpu["postgres"], "cpu_parts": cpu,
                            "load": (load_before, os.getloadavg()[0]), "check": check}

        # Serial first in both modes, then the loops, modes alternating within each.
        for name, clients, seconds in (("serial", 1, args.serial_seconds), ("loop", args.annotators, args.seconds)):
            for mode, combined in modes.items():
                scenario(f"{name} {mode}", clients, seconds, combined)
        # Diagnostic, not how the site runs: the serial saves again with PostgreSQL answering COMMIT before
        # its WAL is flushed, to measure what the durable commit costs a save (Potato's save is a file write
        # without fsync).
        load.gunicorn_stop(gunicorn)
        load.close_django_connections()
        gunicorn = load.gunicorn_start({**env, "PGOPTIONS": "-c synchronous_commit=off"}, port, args.workers,
                                       Path(var_dir) / "access-no-wal-wait.log")
        load._wait_for(port, gunicorn, 120)
        load._warm_workers(port, args.workers, gunicorn.pid)
        meter = load.CpuMeter(gunicorn.pid, float(env["DATABASE_CONN_MAX_AGE"]))
        for mode, combined in modes.items():
            scenario(f"serial {mode}{NO_WAL_WAIT}", 1, args.serial_seconds, combined)
    finally:
        load.gunicorn_stop(gunicorn)
        load.close_django_connections()
    return figures


def server_floor(args, var_dir: str) -> dict:
    """gunicorn's own cycle: the same workers and clients on a WSGI app without Django
    (:mod:`tests.benchmarks.wsgi_floor`), for ``--seconds`` / 2; worker CPU per request."""
    from tests.benchmarks import wsgi_floor

    port = load._free_port()
    gunicorn = load.gunicorn_start({}, port, args.workers, Path(var_dir) / "access-floor.log",
                                   app="tests.benchmarks.wsgi_floor:application")
    try:
        load._wait_for(port, gunicorn, 60)
        workers = load._children(gunicorn.pid)
        before, load_before = sum(map(load._proc_cpu_seconds, workers)), os.getloadavg()[0]
        requests, wall, errors = wsgi_floor.closed_loop(
            lambda k: load.Client(port, f"floor-{k}", timeout=30), args.annotators, args.seconds / 2)
        cpu = sum(map(load._proc_cpu_seconds, workers)) - before
    finally:
        load.gunicorn_stop(gunicorn)
    return {"requests": requests, "wall": wall, "errors": errors, "cpu_ms": 1000 * cpu / max(1, requests),
            "load": (load_before, os.getloadavg()[0])}


# ---------------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------------


def _p(values: list[float], q: float) -> float:
    return load._percentile(values, q) if values else float("nan")


def _row(name: str, f: dict, serial: dict | None) -> dict:
    labels = len(f["saved"])
    row = {"labels_s": labels / f["wall"] if f["wall"] else 0.0, "cpu_ms": 1000 * f["cpu"] / labels if labels else float("nan"),
           "next_p95": _p(f["next"], 95), "submit_p95": _p(f["submit"], 95),
           "save_p50": _p(serial["submit"], 50) if serial else float("nan"),
           "serial_labels_s": len(serial["saved"]) / serial["wall"] if serial and serial["wall"] else float("nan")}
    print(f"{name:24s} {labels:6d} labels in {f['wall']:5.1f} s = {row['labels_s']:6.1f} labels/s | p95 next "
          f"{row['next_p95']:6.1f} ms, submit {row['submit_p95']:6.1f} ms | CPU {row['cpu_ms']:5.2f} ms/label | serial "
          f"{row['serial_labels_s']:5.1f} labels/s, save p50 {row['save_p50']:5.1f} ms | load {f['load'][0]:.2f} -> {f['load'][1]:.2f}")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--items", type=int, default=2500, help="text pairwise items per system and mode (k = 3)")
    parser.add_argument("--seconds", type=float, default=20.0, help="the closed loop's length per system and mode")
    parser.add_argument("--serial-seconds", type=float, default=8.0, help="one client alone, per system and mode")
    parser.add_argument("--max-labels", type=int, default=5000, help="the most labels one client sends (a bound)")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1), help="gunicorn sync workers")
    parser.add_argument("--install-timeout", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    admin_url = load._admin_url()
    problem = load._postgres_reachable(admin_url)
    if problem:
        print(f"SKIPPED bench_potato_side_by_side: PostgreSQL is not available ({problem}).")
        return 0
    potato, how = potato_install(args.install_timeout)
    print(f"Potato {POTATO_VERSION}: {how}" if potato else f"Potato: SKIPPED, it could not be installed ({how}); "
          "Atelier's two modes still run")
    print(f"job: {args.items} text pairwise items, k = {K}, {args.annotators} clients in a closed loop for "
          f"{args.seconds:.0f} s after 1 client for {args.serial_seconds:.0f} s, no think time, loopback; "
          f"{os.cpu_count()} CPUs; Atelier: gunicorn {args.workers} sync workers on PostgreSQL")
    var_dir = tempfile.mkdtemp(prefix="atelier-side-by-side-")
    load.bench_database(admin_url, BENCH_DB)
    try:
        atelier = atelier_run(args, admin_url, var_dir)
        floor = server_floor(args, var_dir)
        potato_figures = potato_run(potato, args, Path(var_dir) / "potato") if potato else None
    finally:
        load.close_django_connections()
        load.bench_database(admin_url, BENCH_DB, drop_only=True)
        shutil.rmtree(var_dir, ignore_errors=True)

    print("\nsystem / mode            labels, throughput at "
          f"{args.annotators} clients | p95 | CPU per label (Atelier: workers + PostgreSQL) | serial")
    rows, ok = {}, True
    for mode in ("two requests", "combined"):
        f = atelier[f"loop {mode}"]
        rows[mode] = _row(f"Atelier, {mode}", f, atelier[f"serial {mode}"])
        parts = f["cpu_parts"]
        labels = max(1, len(f["saved"]))
        rows[mode]["workers_ms"] = 1000 * parts["workers"] / labels
        print(f"{'':24s} CPU per label: gunicorn workers {rows[mode]['workers_ms']:.2f} ms, PostgreSQL "
              f"{'>= ' if parts['postgres_floor'] else ''}{1000 * parts['postgres'] / labels:.2f} ms")
    print(f"{'':24s} gunicorn's own cycle (the same workers and {args.annotators} clients on a WSGI app answering {{}} "
          f"without Django: tests/benchmarks/wsgi_floor.py): {floor['cpu_ms']:.3f} ms of worker CPU a request "
          f"({floor['requests'] / floor['wall']:.0f} requests/s, {floor['errors']} errors, load {floor['load'][0]:.2f} -> "
          f"{floor['load'][1]:.2f}) = {floor['cpu_ms'] / rows['combined']['workers_ms']:.1%} of a combined label's worker CPU")
    if potato_figures:
        rows["potato"] = _row("Potato", potato_figures["loop"], potato_figures["serial"])
    print("\nratios (same run):")
    two, one = rows["two requests"], rows["combined"]
    print(f"  Atelier combined / two requests: labels/s x{one['labels_s'] / two['labels_s']:.2f}, CPU per label "
          f"x{one['cpu_ms'] / two['cpu_ms']:.2f}, serial save p50 x{one['save_p50'] / two['save_p50']:.2f}")
    if "potato" in rows:
        pot = rows["potato"]
        for mode in ("two requests", "combined"):
            r = rows[mode]
            print(f"  Atelier {mode} / Potato: labels/s x{r['labels_s'] / pot['labels_s']:.2f}, CPU per label "
                  f"x{r['cpu_ms'] / pot['cpu_ms']:.2f}, serial save p50 x{r['save_p50'] / pot['save_p50']:.2f} "
                  f"(< 1: Atelier's is faster)")
    saves = {mode: _p(atelier[f"serial {mode}{NO_WAL_WAIT}"]["submit"], 50) for mode in ("two requests", "combined")}
    print(f"  serial save p50 with COMMIT not waiting for the WAL flush (synchronous_commit=off: a diagnostic, the "
          f"site waits, so a label it acknowledged survives a crash of PostgreSQL or the machine): two requests "
          f"{saves['two requests']:.1f} ms (the wait: {two['save_p50'] - saves['two requests']:.1f} ms of "
          f"{two['save_p50']:.1f}), combined {saves['combined']:.1f} ms (of {one['save_p50']:.1f})"
          + (f"; / Potato x{saves['two requests'] / rows['potato']['save_p50']:.2f} and "
             f"x{saves['combined'] / rows['potato']['save_p50']:.2f}" if "potato" in rows else ""))
    print("\nintegrity (lost / over-assigned must be 0 / 0):")
    for key in ("loop two requests", "loop combined", "serial two requests", "serial combined",
                f"serial two requests{NO_WAL_WAIT}", f"serial combined{NO_WAL_WAIT}"):
        check, errors = atelier[key]["check"], atelier[key]["errors"]
        bad = check["lost"] or check["over_assigned"] or check["duplicated"] or check["unexpected"] or errors
        ok = ok and not bad
        print(f"  Atelier {key}: stored {check['stored']}, lost {check['lost']}, over-assigned {check['over_assigned']}, "
              f"duplicated {check['duplicated']}{'; errors ' + str(sorted(set(errors))[:3]) if errors else ''}")
    if potato_figures:
        check = potato_figures["check"]
        errors = potato_figures["serial"]["errors"] + potato_figures["loop"]["errors"]
        ok = ok and not (check["lost"] or check["over_assigned"])
        print(f"  Potato: stored {check['stored']}, lost {check['lost']}, over-assigned {check['over_assigned']}"
              f"{'; errors ' + str(sorted(set(errors))[:3]) if errors else ''}")
    print("integrity: OK" if ok else "integrity: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
