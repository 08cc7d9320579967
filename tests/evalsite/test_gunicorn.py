"""`make serve` runs gunicorn with evalsite/gunicorn.conf.py: it blanks gunicorn's Server banner, lets an address
up to the site's own limit reach the site (which answers one over it with its 414 page), and takes no
``SCRIPT_NAME`` or ``PATH_INFO`` from a request's headers."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalsite.request_checks import MAX_ADDRESS_CHARS

ROOT = Path(__file__).resolve().parents[2]
#: Connection attempts while gunicorn starts (a readiness wait, not a timing assertion).
START_ATTEMPTS = 150
#: gunicorn's longest request line (``limit_request_line``), method and version included.
LONGEST_REQUEST_LINE = 8190


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def gunicorn_port():
    # GUNICORN_TEST_PORT: a fixed port, where a machine's ports are shared out among its users.
    port = int(os.environ.get("GUNICORN_TEST_PORT") or free_port())
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(ATELIER_DEV="true", GUNICORN_BIND=f"127.0.0.1:{port}", GUNICORN_WORKERS="1")
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "evalsite/gunicorn.conf.py", "evalsite.wsgi"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(START_ATTEMPTS):
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", "/healthz")
                connection.getresponse().read()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.1)
        else:
            pytest.fail("gunicorn did not start")
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def raw_request(port: int, target: bytes, headers: bytes = b"") -> tuple[int, bytes]:
    """(status, body) for ``GET target`` sent as bytes, as a client may send them."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers + b"\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer.partition(b"\r\n\r\n")[2]


def test_responses_carry_no_server_product_or_version(gunicorn_port):
    connection = http.client.HTTPConnection("127.0.0.1", gunicorn_port, timeout=5)
    connection.request("GET", "/healthz")
    response = connection.getresponse()
    assert response.status == 200 and response.read() == b"ok"
    assert (response.getheader("Server") or "") == ""
    assert "gunicorn" not in str(response.headers).lower()


def test_an_address_over_the_sites_limit_gets_the_sites_414_page(gunicorn_port):
    # gunicorn's own limit was 4,094 bytes: such an address got its bare 400 page.
    target = b"/leaderboards/?q=" + b"=" * MAX_ADDRESS_CHARS
    status, body = raw_request(gunicorn_port, target)
    assert status == 414 and b"Address too long" in body


def test_an_address_past_gunicorns_request_line_gets_the_sites_414_page(gunicorn_port):
    # gunicorn refuses it before the site sees it: its bare page ("Request Line is too large") answered.
    status, body = raw_request(gunicorn_port, b"/leaderboards/?q=" + b"=" * LONGEST_REQUEST_LINE)
    assert status == 414 and b"Address too long" in body and b"Start page" in body
    assert b"Request Line is too large" not in body


def test_gunicorns_other_refusals_stay_its_own(gunicorn_port):
    status, body = raw_request(gunicorn_port, b"/leaderboards/", b"Bad Header\r\n")
    assert status == 400 and b"Address too long" not in body


@pytest.mark.parametrize("target", [b"/%ff%fe", b"/%ff/leaderboards/", b"/%ed%a0%80/"])
def test_a_path_that_is_not_utf8_is_the_login_redirect(gunicorn_port, target):
    assert raw_request(gunicorn_port, target)[0] == 302


@pytest.mark.parametrize("header", [b"SCRIPT_NAME: /\xff", b"SCRIPT_NAME: /elsewhere", b"PATH_INFO: /\xff\xfe"])
def test_a_script_name_or_path_sent_as_a_header_is_not_taken(gunicorn_port, header):
    # From a peer in forwarded_allow_ips (127.0.0.1: the proxy in front, which may pass a client's header on)
    # gunicorn took them by default: a script name the path does not start with was its own 500
    # ("Configuration problem"), and one that is not UTF-8 the site's.
    assert raw_request(gunicorn_port, b"/%ff/leaderboards/", header + b"\r\n")[0] == 302
