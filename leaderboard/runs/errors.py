"""The errors of the run lifecycle, defined once for every kind of job."""

from __future__ import annotations


class RunConfigurationError(ValueError):
    """A run's configuration the domain refuses (an unknown model, a task set of another kind, a visual task
    without its image...). Resuming cannot change it: a run that fails with it is marked not resumable."""


class RunStateConflict(Exception):
    """An operation the run's state does not allow (cancel a finished run, resume a running one): a 409."""

    status = 409
    code = "conflict"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.errors = None


class UnitTakenOver(Exception):
    """Another delivery of the same unit is ahead of this one (it will finish the unit): not an error."""


class ProviderOutage(Exception):
    """A provider did not answer past the client's retry bound (issue 28): retrying the unit at once would
    not help, so the job stops resumable, saying how many calls it still needs, and is not retried."""
