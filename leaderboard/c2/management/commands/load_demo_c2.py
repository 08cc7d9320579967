"""manage.py load_demo_c2: the C² demo task set and its simulated standard and creative runs (idempotent)."""

import time

from leaderboard.c2.demo import demo_c2_load
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Load the C² demo: a few hand-written items of every task type (DEMO DATA) and runs of four "
            "SIMULATED subjects rated by the SIMULATED rater, standard and creative template. Re-runnable.")

    def handle(self, *args, **opts):
        started = time.perf_counter()
        demo = demo_c2_load()
        self.stdout.write(f"{demo.task_set}: {demo.task_set.tasks.count()} tasks (demo data)")
        for run in demo.runs:
            self.stdout.write(f"  C² run {run.pk} ({run.template} template, SIMULATED): {run.status}")
        self.stdout.write(f"C² demo ready in {time.perf_counter() - started:.1f} s")
