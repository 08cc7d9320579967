"""The pages' side of every kind of run, written once: Start (validate the form, create the run through the
kind's service, start it in the background, follow it on its page), the live status JSON its page polls
(``static/js/run_status.js``) and Resume. Researchers only; a protocol's views name its model, form, service
and URLs."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from leaderboard.forms import form_problems
from leaderboard.roles import require_researcher
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.runs.models import RunJob
from leaderboard.runs.starting import run_resume_from_page, run_start

__all__ = ["run_form_typed", "run_new_from_page", "run_resume_view", "run_status_view"]


def run_new_from_page(request: HttpRequest, form: forms.Form, *, create: Callable[..., RunJob], back: str,
                      detail: str, refused: str | None = None) -> HttpResponse:
    """A page's Start: an invalid form or a run the service refuses goes back to ``back`` (``refused`` for
    the service's refusal, when it differs) saying why; a created run starts in the background — in the
    embedded default (no broker) it would take the request hostage — and its page ``detail`` follows it."""
    if not form.is_valid():
        messages.error(request, f"Run not started: {form_problems(form)}")
        _typed_keep(request, form)
        return redirect(back)
    try:
        run = create(created_by=request.user, **form.run_arguments())
    except RunConfigurationError as exc:
        messages.error(request, f"Run not started: {exc}")
        _typed_keep(request, form)
        return redirect(refused or back)
    run_start(run, background=True)
    return redirect(detail, pk=run.pk)


#: Session key of the values a refused Start held, per form class; a value is kept up to this many characters.
TYPED_SESSION_KEY = "run_form_typed:{}"
TYPED_MAX_CHARS = 2000


def _typed_keep(request: HttpRequest, form: forms.Form) -> None:
    request.session[TYPED_SESSION_KEY.format(type(form).__name__)] = {
        name: value[:TYPED_MAX_CHARS] for name, value in request.POST.items() if name != "csrfmiddlewaretoken"}


def run_form_typed(request: HttpRequest, form_class: type[forms.Form]) -> dict[str, str]:
    """What the researcher typed into a Start of ``form_class`` that was just refused (once; {} otherwise), so
    the page it went back to shows it again instead of the form's defaults."""
    return request.session.pop(TYPED_SESSION_KEY.format(form_class.__name__), {})


def run_status_view(model: type[RunJob], progress: Callable[..., dict]):
    """The view of a run's live status: ``progress(run=run)`` as JSON."""

    def run_status(request, pk: int):
        require_researcher(request.user)
        return JsonResponse(progress(run=get_object_or_404(model, pk=pk)))

    run_status.__doc__ = f"The live status of one {model._meta.verbose_name} (polled by run_status.js)."
    return run_status


def run_resume_view(model: type[RunJob], detail: str, doc: str):
    """The view of a run page's Resume button: resume (or say why not) and go back to the run's page."""

    @require_POST
    def run_resume(request, pk: int):
        require_researcher(request.user)
        run_resume_from_page(request, get_object_or_404(model, pk=pk))
        return redirect(detail, pk=pk)

    run_resume.__doc__ = doc
    return run_resume
