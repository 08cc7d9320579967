"""tests/conftest.py: under `--dist loadgroup` (make test, .ci/run) the tests that share one Redis database's
unacknowledged hash are given to one pytest process (and so, by the same hook, are those that read the
once-built demo).

pytest-xdist reads a test's group from a suffix it writes into the node id; a pytest whose node ids do not
take that suffix (9.2, pytest-dev/pytest-xdist#1386), or a group mark added after xdist looked, leaves the
groups silently unapplied, and the broker tests then empty and read the hash from two processes at once.
"""

from __future__ import annotations

import pytest


@pytest.mark.broker
def test_a_broker_test_is_scheduled_in_the_broker_group(request, pytestconfig):
    if not getattr(pytestconfig.option, "loadgroup", False):
        pytest.skip("not distributed by group: make test runs with --dist loadgroup")
    assert request.node.nodeid.endswith("@celery-broker"), request.node.nodeid

