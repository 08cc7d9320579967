"""manage.py serve_demo: start the development server on the demo and, once it answers, print the summary a
newcomer needs — the URL, every demo account with its password, where to start, how to stop — as the last
thing on the screen (``make demo``'s last step)."""

from __future__ import annotations

import errno
import os
import shlex
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from leaderboard.demo import DEMO_ACCOUNTS, demo_accounts_refresh, development_machine
from leaderboard.run_command import AtelierCommand

#: How long the server may take to answer its first request before the command gives up.
START_TIMEOUT_S = 120.0
#: Pause after the first answer, so the server's request log line lands before the summary, not inside it.
LOG_SETTLE_S = 0.5


def entry_points(base: str) -> list[tuple[str, str]]:
    """(what, URL) of the pages to start from: the annotator page and a leaderboard of each protocol."""
    from leaderboard.c2.models import C2Run
    from leaderboard.easel.demo import DEMO_SUITE_NAME
    from leaderboard.ekphrasis.models import LeaderboardSnapshot
    from leaderboard.models import TaskSet

    snapshot = LeaderboardSnapshot.objects.filter(run__task_set__is_demo=True).order_by("-pk").first()
    suite = TaskSet.objects.filter(name=DEMO_SUITE_NAME).order_by("-pk").first()
    c2_run = C2Run.objects.filter(task_set__is_demo=True, status=C2Run.Status.DONE).order_by("-pk").first()
    return [
        ("Annotate (log in as annotator1)", f"{base}annotate/"),
        ("Ekphrasis leaderboard (researcher)", f"{base}leaderboards/{snapshot.pk}/" if snapshot else f"{base}leaderboards/"),
        ("EASEL leaderboard (researcher)", f"{base}easel/?task_set={suite.pk}" if suite else f"{base}easel/"),
        ("C²-Eval leaderboard (researcher)", f"{base}c2/?run={c2_run.pk}" if c2_run else f"{base}c2/"),
        ("Admin (admin)", f"{base}admin/"),
    ]


def summary_lines(base: str, passwords: dict[str, str]) -> list[str]:
    roles = dict(DEMO_ACCOUNTS)
    width = max(len(what) for what, _ in entry_points(base))
    lines = ["", "=" * 72, f"Atelier demo is running at {base}  (DEMO DATA, SIMULATED components)", "",
             "Demo accounts (new passwords at every `make demo`):"]
    lines += [f"  {name:<12} {roles[name]:<11} {password}" for name, password in passwords.items()]
    lines += ["", "Where to start:"]
    lines += [f"  {what:<{width}}  {url}" for what, url in entry_points(base)]
    lines += ["", f"Stop: press Ctrl-C here.  Start afresh: {start_afresh()}", "=" * 72]
    return lines


def start_afresh() -> str:
    """How to start the demo afresh: remove the var folder this demo uses (ATELIER_VAR_DIR, when set)."""
    var_dir = Path(settings.VAR_DIR)
    if var_dir.resolve() == (Path(settings.BASE_DIR) / "var").resolve():
        return "`rm -rf var && make demo` (the demo database is in var/)."
    quoted = shlex.quote(str(var_dir))
    return f"`rm -rf {quoted} && ATELIER_VAR_DIR={quoted} make demo` (the demo database is in {var_dir}/)."


IN_USE = "is already in use"


def address_taken(host: str, port: int) -> str:
    """Why the development server could not listen on host:port ('' when it can): checked before anything is
    changed, since an earlier server still answering there would otherwise be taken for this one."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        return f"cannot be listened on: {host!r} is not a host name or address ({exc})"
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the development server binds
        try:
            probe.bind(address)
        except OSError as exc:
            return IN_USE if exc.errno == errno.EADDRINUSE else f"cannot be listened on ({exc.strerror})"
    return ""

class Command(AtelierCommand):
    help = ("Start the development server on the demo (development machines only) and, once it answers, print "
            "the URL, every demo account with a new password, where to start and how to stop.")

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000", help="HOST:PORT to serve on")

    def handle(self, *args, **opts):
        if not development_machine():
            raise CommandError("serve_demo runs on a development machine only (export ATELIER_DEV=true): it sets "
                               "and prints the demo accounts' passwords")
        host, _, port = opts["addrport"].rpartition(":")
        if not host or not port.isdigit():
            raise CommandError(f"{opts['addrport']!r} is not HOST:PORT (e.g. 127.0.0.1:8000)")
        if not 1 <= int(port) <= 65535:
            raise CommandError(f"{opts['addrport']!r}: a port is 1–65535 (e.g. 127.0.0.1:8000)")
        taken = address_taken(host, int(port))
        if taken == IN_USE:
            raise CommandError(f"{host}:{port} {taken}: stop the server using it (an earlier `make demo`?) or choose "
                               "another port (`make demo PORT=8001`, or `manage.py serve_demo HOST:PORT`)")
        if taken:
            raise CommandError(f"{host}:{port} {taken}")
        base = f"http://{host}:{port}/"
        passwords = demo_accounts_refresh()
        # The summary says this is the development server; Django's own warning would be a warning line.
        # Unbuffered, so that piped to a log the server's lines still come before the summary.
        env = {**os.environ, "DJANGO_RUNSERVER_HIDE_WARNING": "true", "PYTHONUNBUFFERED": "1"}
        server = subprocess.Popen([sys.executable, str(settings.BASE_DIR / "manage.py"), "runserver", "--noreload",
                                   "--skip-checks", opts["addrport"]], env=env)
        try:
            self._wait_for_answer(base, server)
            time.sleep(LOG_SETTLE_S)
            self.stdout.write("\n".join(summary_lines(base, passwords)))
            self.stdout.flush()
            server.wait()
        except KeyboardInterrupt:
            server.terminate()
            server.wait()
            self.stdout.write("\nAtelier demo stopped.")
        if server.returncode not in (0, None, -15):
            raise CommandError(f"the development server stopped with status {server.returncode}")

    @staticmethod
    def _wait_for_answer(base: str, server: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise CommandError(f"the development server stopped with status {server.returncode} before answering")
            try:
                with urllib.request.urlopen(base, timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)
        server.terminate()
        raise CommandError(f"the development server did not answer at {base} within {START_TIMEOUT_S:.0f} s")
