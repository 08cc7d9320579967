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

    #: The calls the job still needs (0 when the raiser cannot tell).
    still_needed: int = 0


def provider_outage_of(outcomes) -> Exception | None:
    """The first of ``outcomes`` (replies or errors of the provider client) that is an outage — an error the
    client gave up on after its bounded retries (``ProviderError.retryable``) — or None. A refusal (HTTP 4xx)
    is not an outage: resuming would get the same answer."""
    return next((o for o in outcomes if isinstance(o, Exception) and getattr(o, "retryable", False)), None)


class ProviderCallsUnanswered(ProviderOutage):
    """Raised where a provider call is made (an EASEL step, a C² generation or rating batch) when the provider
    stopped answering; the job's unit turns it into a :class:`ProviderStopped` naming the calls still needed.
    Nothing of the unanswered batch is stored; its answered calls are in the request cache."""

    def __init__(self, error: Exception | str, *, who: str) -> None:
        super().__init__(f"{who}: {error}")
        self.error, self.who = str(error), who


class ProviderStopped(ProviderOutage):
    """The job's stopping error: which provider did not answer, and how many calls the job still needs."""

    def __init__(self, *, who: str, error: str, still_needed: int) -> None:
        self.still_needed = still_needed
        super().__init__(
            f"The provider of the {who} did not answer after its retries ({error}). The run stopped with "
            f"{still_needed} call(s) still needed; answered calls are kept (and cached). Resume it once the "
            "provider answers again: it finishes as an uninterrupted run would.")
