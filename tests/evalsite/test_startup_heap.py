"""The serving process's start-up objects are frozen out of the garbage collector (evalsite/startup_heap.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, sys
import evalsite.wsgi
print(gc.get_freeze_count(), "annotation.api" in sys.modules, gc.get_count()[0] < 700)
"""


def test_loading_the_wsgi_application_freezes_the_loaded_site_for_the_collector():
    """A worker as gunicorn loads it: the URLconf and view modules are imported at load, not on request one,
    and everything then alive is frozen, so no later full collection walks it again (issue 30)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalsite.settings"}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    frozen, views_loaded, young_small = done.stdout.split()[-3:]
    assert int(frozen) > 50_000
    assert views_loaded == "True" and young_small == "True"


def test_freezing_first_collects_the_start_up_garbage():
    """Garbage unreachable at the freeze is collected, not kept alive for the process's life."""
    import gc
    import weakref

    from evalsite.startup_heap import startup_objects_frozen

    class Node:
        pass

    cycle = Node()
    cycle.me = cycle
    gone = weakref.ref(cycle)
    del cycle
    try:
        assert startup_objects_frozen() > 0
        assert gone() is None
    finally:
        gc.unfreeze()
