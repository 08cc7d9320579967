"""The launch decision of Ekphrasis App. D.3: "Human validation and cross-modal validation are launched
only after these pilot gates pass." One gatekeeper (:func:`launch_gates_require`) and the admin's
recorded override (:func:`launch_gates_override`)."""

from __future__ import annotations

from django.db import transaction

from leaderboard.ekphrasis.models import JudgeRun, LaunchGateOverride
from leaderboard.ekphrasis.selectors import judge_run_launch_gates, launch_gate_run_for
from leaderboard.models import TaskSet
from leaderboard.roles import require_admin


class LaunchGatesNotPassed(Exception):
    """Human validation may not start from this run: its gates failed and no admin overrode them."""

    def __init__(self, run: JudgeRun, failed: list[str]):
        self.run, self.failed = run, failed
        super().__init__(
            f"judge run #{run.pk} has not passed its launch gates (Ekphrasis App. D.3): {'; '.join(failed)}. "
            f"Human validation starts only after they pass; an admin can override on the run's page "
            f"(/runs/{run.pk}/) with a recorded reason."
        )


def launch_gates_require(*, task_set: TaskSet) -> JudgeRun | None:
    """The run validation of ``task_set`` launches from, if its gates passed or an admin overrode them;
    raises :class:`LaunchGatesNotPassed` otherwise. None when the set has no finished run to launch from."""
    run = launch_gate_run_for(task_set=task_set)
    if run is None:
        return None
    gates = judge_run_launch_gates(run=run)
    if not gates["cleared"]:
        raise LaunchGatesNotPassed(run, gates["failed"])
    return run


@transaction.atomic
def launch_gates_override(*, run: JudgeRun, reason: str, by) -> LaunchGateOverride:
    """Record an admin's reason to launch human validation from ``run`` although its gates failed."""
    require_admin(by)
    reason = (reason or "").strip()
    if not reason:
        raise ValueError("an override needs a reason")
    gates = judge_run_launch_gates(run=run)
    return LaunchGateOverride.objects.create(run=run, reason=reason, failed_gates=gates["failed"], created_by=by)
