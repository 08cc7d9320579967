"""The participant's pages of a crowd campaign (issue 25), all under the study's entry link
``/annotate/p/<entry token>/``: entry, consent, instructions, training, labelling and the end page
with the completion or screen-out code (and the hand-back to Prolific or MTurk).

Every page finds the study by its unguessable entry token (an unknown token gets the same "not a
valid link" page whatever it is, so tokens and participants cannot be enumerated) and admits only the
logged-in participant of that study; each step redirects to the participant's current one, so the path
cannot be skipped. Writes go to :mod:`annotation.participants` and :mod:`annotation.training`.
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.contrib.auth import login, logout
from django.core.cache import cache
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_safe

from annotation import annotator_reads, participants
from annotation.blinding_recheck import campaign_texts_current
from annotation.choices import FlagReason
from annotation.errors import CAMPAIGN_PAUSED_MESSAGE, AnnotationError
from annotation.kinds import kind_for
from annotation.panel_api import participant_progress
from annotation.panel_models import Panel, PanelStudy, Participant
from annotation.panels import (
    MTURK_FRAME_ANCESTORS,
    PanelParamsInvalid,
    entry_params_parse,
    mturk_submit_url,
    panel_id_key,
    panel_return_step,
    prolific_completion_url,
)
from annotation.participant_accounts import is_participant_account
from annotation.training import training_answer, training_step
from annotation.views import media_response
from evalsite.proxy import client_address
from evalsite.request_checks import id_of

#: How long the key of the browser a participant entered in is kept (its cookie,
#: ``ATELIER_PANEL_KEY_COOKIE_NAME``, sent back only to their study's entry link): longer than any study runs,
#: so a participant who comes back in the same browser is known after their session has ended.
BROWSER_KEY_MAX_AGE = 60 * 60 * 24 * 30

#: The participant's steps, in order, and the page of each.
STEP_PAGES = {"consent": "annotation:panel_consent", "instructions": "annotation:panel_instructions",
              "training": "annotation:panel_training", "work": "annotation:panel_work", "done": "annotation:panel_done"}


def participant_step(participant: Participant) -> str:
    if participant.verdict or participant.state not in (Participant.State.TRAINING, Participant.State.WORKING):
        return "done"
    if participant.consented_at is None:
        return "consent"
    if participant.instructions_read_at is None:
        return "instructions"
    if participant.state == Participant.State.TRAINING:
        return "training"
    return "work"


def _framed_by_mturk(study: PanelStudy | None, response, *, form_action: str = ""):
    """An MTurk study's pages run inside MTurk's frame (an ExternalQuestion): they may be framed by MTurk's
    sites (and no one else), and their session and CSRF cookies must reach a frame of another site
    (``SameSite=None; Secure``: :class:`evalsite.middleware.FramedStudyCookies`). ``form_action``: the
    MTurk address the end page's form posts the assignment to. Every other study keeps the site's
    policy (no framing at all, ``SameSite=Lax``)."""
    if study is None or study.panel != Panel.MTURK:
        return response
    response.xframe_options_exempt = True
    replace = {"frame-ancestors": list(MTURK_FRAME_ANCESTORS)}
    if form_action:
        replace["form-action"] = ["'self'", form_action]
    response._csp_replace = replace
    response.framed_study_cookies = True
    return response


def _study_or_404(entry: str) -> PanelStudy:
    study = PanelStudy.objects.select_related("campaign").filter(entry_token=entry).first()
    if study is None:
        raise Http404("This is not a valid study link.")
    return study


def _page(request, template: str, study: PanelStudy, status: int = 200, **context):
    return render(request, f"annotation/panel/{template}", {"study": study, "campaign": study.campaign, **context},
                  status=status)


def _problem(request, study: PanelStudy | None, title: str, message: str, status: int, return_step: str = ""):
    """``return_step``: what to do on the panel (a refused entry: the panel holds a place for them)."""
    return render(request, "annotation/panel/problem.html",
                  {"study": study, "title": title, "message": message, "return_step": return_step}, status=status)


def _paused(request, study: PanelStudy):
    """None while the study's campaign may be shown (:func:`annotation.blinding_recheck.campaign_texts_current`);
    else the neutral page of a campaign paused for review, which shows nothing of it (no study: not even
    its name as the page's title); a participant who already finished is sent to their end page (code)."""
    if campaign_texts_current(campaign=study.campaign):
        return None
    participant = _participant(request, study)
    if participant is not None and participant_step(participant) == "done":
        # finished (or ended) before the pause: their end page, with their code, shows nothing of the campaign
        return redirect("annotation:panel_done", entry=study.entry_token)
    return _problem(request, None, "This study is paused", CAMPAIGN_PAUSED_MESSAGE, 409)


def _participant(request, study: PanelStudy) -> Participant | None:
    """The logged-in participant of this study, their deadline checked; None for anyone else."""
    if not request.user.is_authenticated:
        return None
    participant = Participant.objects.select_related("study", "user", "campaign").filter(
        user=request.user, study=study).first()
    if participant is None:
        return None
    participant = participants.participant_time_check(participant=participant)
    return participants.participant_open_check(participant=participant)


def _on_step(request, study: PanelStudy, step: str):
    """(participant, None) when they are on ``step``; else (None, the response to send instead)."""
    participant = _participant(request, study)
    if participant is None:
        return None, _problem(request, study, "Open the study from your panel",
                              "This page belongs to a study participant. Open the study's link from your panel "
                              "(Prolific, MTurk or the site that sent you) again.", 403)
    current = participant_step(participant)
    if current != step:
        return None, redirect(STEP_PAGES[current], entry=study.entry_token)
    return participant, None


def _step_page(step: str):
    """A view of one step of the path: called as ``view(request, study, participant)`` only for the
    study's participant on that step (anyone else is refused, a participant elsewhere sent to their step)."""
    def decorate(view):
        @functools.wraps(view)
        def wrapped(request, entry: str):
            study = _study_or_404(entry)
            if (paused := _paused(request, study)) is not None:
                return _framed_by_mturk(study, paused)
            participant, elsewhere = _on_step(request, study, step)
            return _framed_by_mturk(study, elsewhere or view(request, study, participant))
        return wrapped
    return decorate


def _examples(campaign):
    return [(e, annotator_reads.markup_render(e.body)) for e in annotator_reads.calibration_examples(campaign=campaign)]


def _rate_limited(request) -> bool:
    """At most ATELIER_PANEL_ENTRIES_PER_MINUTE entries per client address per minute (Django's cache). The
    address: the one our proxy appended to X-Forwarded-For when ATELIER_BEHIND_PROXY says one is in front;
    else the connection's (without a proxy the client writes that header itself, a new value each time)."""
    address = client_address(request) if settings.ATELIER_BEHIND_PROXY else request.META.get("REMOTE_ADDR")
    key = f"panel-entry:{address or 'unknown'}"
    cache.add(key, 0, timeout=60)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=60)
        count = 1
    return count > settings.ATELIER_PANEL_ENTRIES_PER_MINUTE


# GET only, not HEAD as the read-only pages: the entry link creates the participant, logs them in and counts
# toward the rate limit, which a link checker's HEAD must not do.
@require_GET
def entry(request, entry: str):
    """The entry link: validate the panel's parameters, create or resume the participant, log them in
    (this campaign only), and send them to their step. Nothing is created on a refusal."""
    if _rate_limited(request):
        return _problem(request, None, "Too many attempts", "Too many entries from your address; wait a minute "
                                                            "and open the link again.", 429)
    study = _study_or_404(entry)
    paused = _paused(request, study)
    if paused is not None and paused.status_code == 409:
        paused = _finished_entry(request, study) or paused
    return _framed_by_mturk(study, _entry(request, study) if paused is None else paused)


def _finished_entry(request, study: PanelStudy):
    """While the campaign is paused for review: a participant who finished (or ended) before the pause and
    opens the entry link in a browser without their session is sent to their end page (their code), as the
    same browser is (:func:`_paused`). Only for the entry the panel gave them: the same panel id, study id
    and session id (Prolific's SESSION_ID, MTurk's assignmentId) as stored, so an id that has not finished, or
    a guessed id without its session, still gets the paused page and no code. None: the paused page."""
    try:
        given = entry_params_parse(panel=study.panel, params=request.GET, id_param=study.id_param)
    except PanelParamsInvalid:
        return None
    if given.preview:
        return None
    participant = Participant.objects.select_related("study", "user", "campaign").filter(
        study=study, panel_key=panel_id_key(given.panel_id)).first()
    if participant is None or not participants.holds_attempt_ids(participant, study_id=given.study_id,
                                                                 session_id=given.session_id):
        return None
    participant = participants.participant_time_check(participant=participant)
    if participant_step(participants.participant_open_check(participant=participant)) != "done":
        return None
    if request.user.is_authenticated and request.user.pk != participant.user_id:
        if not is_participant_account(request.user):
            return None  # a site account's session is not replaced (the entry says so once resumed)
        logout(request)
    if not request.user.is_authenticated:
        login(request, participant.user, backend="evalsite.auth_backends.ModelBackend")
    return redirect("annotation:panel_done", entry=study.entry_token)


def _entry(request, study: PanelStudy):
    try:
        given = entry_params_parse(panel=study.panel, params=request.GET, id_param=study.id_param)
    except PanelParamsInvalid as exc:
        if not request.GET and (participant := _participant(request, study)) is not None:
            # The bare link (a bookmark, the browser's history) opened by this study's participant in their
            # own session: their step, as the panel's link would; it names no one, so it resumes no one else.
            return redirect(STEP_PAGES[participant_step(participant)], entry=study.entry_token)
        return _page(request, "invalid_link.html", study, status=400, problems=exc.problems)
    if given.preview:
        return _page(request, "preview.html", study, consent=annotator_reads.markup_render(study.consent_text),
                     accepting=participants.study_accepting(study=study))
    if request.user.is_authenticated and not is_participant_account(request.user):
        return _problem(request, study, "You are signed in to Atelier",
                        f"You are signed in as {request.user.username}. Open the study link in a private window "
                        "(a participant's session would replace yours).", 409)
    try:
        entered = participants.participant_enter(
            study=study, entry=given, browser_key=request.COOKIES.get(settings.ATELIER_PANEL_KEY_COOKIE_NAME, ""),
            signed_in_as=request.user.pk if request.user.is_authenticated else None)
    except AnnotationError as exc:
        return _problem(request, study, "The study cannot start", exc.message, exc.status,
                        return_step=panel_return_step(study.panel))
    participant = entered.participant
    if request.user.is_authenticated and request.user.pk != participant.user_id:
        logout(request)
    if not request.user.is_authenticated:
        login(request, participant.user, backend="evalsite.auth_backends.ModelBackend")
    response = redirect(STEP_PAGES[participant_step(participant)], entry=study.entry_token)
    if entered.browser_key:
        # Sent back to this study's entry link only; never read by a script.
        response.set_cookie(settings.ATELIER_PANEL_KEY_COOKIE_NAME, entered.browser_key, max_age=BROWSER_KEY_MAX_AGE,
                            path=reverse("annotation:panel_entry", args=[study.entry_token]),
                            secure=settings.SESSION_COOKIE_SECURE, httponly=True, samesite="Lax")
    return response


@require_http_methods(["GET", "POST"])
@_step_page("consent")
def consent(request, study: PanelStudy, participant: Participant):
    if request.method == "POST":
        if request.POST.get("consent") != "yes":
            return _page(request, "consent.html", study, consent=annotator_reads.markup_render(study.consent_text),
                         error="Tick the box to give your consent, or return the study on your panel.", status=400)
        participants.participant_consent(participant=participant)
        return redirect("annotation:panel_instructions", entry=study.entry_token)
    return _page(request, "consent.html", study, consent=annotator_reads.markup_render(study.consent_text))


@require_http_methods(["GET", "POST"])
@_step_page("instructions")
def instructions(request, study: PanelStudy, participant: Participant):
    if request.method == "POST":
        participant = participants.participant_instructions_read(participant=participant)
        return redirect(STEP_PAGES[participant_step(participant)], entry=study.entry_token)
    return _page(request, "instructions.html", study, instructions=annotator_reads.markup_render(study.campaign.instructions),
                 examples=_examples(study.campaign))


@require_http_methods(["GET", "POST"])
@_step_page("training")
def training(request, study: PanelStudy, participant: Participant):
    """One training item at a time; after an answer, whether it was right and the explanation."""
    if request.method == "POST":
        raw = request.POST.get("item", "")
        # A tampered id ("²", "١", 30 digits) is "no such item", not a 500.
        item_id = id_of(raw) or 0
        # The attempt the form was shown for (a form sent twice must not answer the next attempt).
        attempt = None if "attempt" not in request.POST else id_of(request.POST["attempt"]) or 0
        try:
            feedback = training_answer(participant=participant, item_id=item_id, answer=request.POST.get("answer"),
                                       attempt=attempt)
        except AnnotationError as exc:
            step = training_step(participant=participant)
            return _page(request, "training.html", study, step=step, error=exc.message,
                         question=annotator_reads.markup_render(step.item.question) if step.item else "", status=400)
        return _page(request, "training_feedback.html", study, feedback=feedback, item=feedback.answer.item)
    step = training_step(participant=participant)
    return _page(request, "training.html", study, step=step,
                 question=annotator_reads.markup_render(step.item.question) if step.item else "")


@require_safe
@never_cache  # as the annotators' labelling page: the item and the answer being chosen are never stored
@_step_page("work")
def work(request, study: PanelStudy, participant: Participant):
    """The labelling page (the site's own, keyboard first), talking to the study's API."""
    campaign, entry = study.campaign, study.entry_token
    kind = kind_for(campaign.kind)
    return render(request, "annotation/work.html", {
        "campaign": campaign, "study": study, "kind": kind, "participant_page": True,
        "instructions": annotator_reads.markup_render(campaign.instructions),
        "examples": _examples(campaign),
        "progress": participant_progress(annotator_reads.campaign_progress(campaign=campaign, annotator=request.user), study),
        "config": {
            "kind": kind.code,
            "next": reverse("annotation:panel_api_next", args=[entry]),
            "submit": reverse("annotation:panel_api_submit", args=[entry, "TOKEN"]),
            "skip": reverse("annotation:panel_api_skip", args=[entry, "TOKEN"]),
            "previous": reverse("annotation:panel_api_previous", args=[entry]),
            "revise": reverse("annotation:panel_api_revise", args=[entry, "TOKEN"]),
            "queue": reverse("annotation:panel_done", args=[entry]),
            "finished": reverse("annotation:panel_done", args=[entry]),
            "flag_reasons": [{"code": r.value, "label": r.label} for r in FlagReason],
        },
    })


@require_safe
def logged_out(request, entry: str):
    """Where a participant's Log out lands: not the site's login page (a participant has no password, the
    entry link is their only way in) but a page saying how to go on; their answers are kept. It shows
    nothing of the campaign (no study in its context: not even the name, as for a campaign paused for review)."""
    study = _study_or_404(entry)
    return _framed_by_mturk(study, _problem(request, None, "You have logged out of the study",
                                            "Your answers so far are kept. To go on, open the study's link "
                                            "from your panel again.", 200))


@require_safe
def done(request, entry: str):
    """The end of the path: the completion code (completed) or the screen-out code (screened out), the
    hand-back to the panel; a participant who left or was refused is told so, without a code."""
    study = _study_or_404(entry)
    participant = _participant(request, study)
    if participant is None:
        return _framed_by_mturk(study, _problem(request, study, "Open the study from your panel",
                                                "Open the study's link from your panel again to see where you are.", 403))
    step = participant_step(participant)
    if step != "done":
        return _framed_by_mturk(study, redirect(STEP_PAGES[step], entry=entry))
    code = None
    if not participant.verdict and participant.state == Participant.State.COMPLETED:
        code = study.completion_code
    elif not participant.verdict and participant.state == Participant.State.SCREENED_OUT:
        code = study.screen_out_code
    # the code is still given when the campaign is paused for review, but not the campaign's name
    context = {"participant": participant, "code": code, "paused": not campaign_texts_current(campaign=study.campaign),
               "return_step": panel_return_step(study.panel)}
    if code and study.panel == Panel.PROLIFIC:
        context["prolific_url"] = prolific_completion_url(code)
    if code and study.panel == Panel.MTURK and participant.turk_submit_to:
        context["mturk_url"] = mturk_submit_url(participant.turk_submit_to)
    return _framed_by_mturk(study, _page(request, "done.html", study, **context),
                            form_action=participant.turk_submit_to if "mturk_url" in context else "")




@require_safe
def media(request, entry: str, token: str, slot: str):
    """An image of the participant's own assignment (the same re-encoded pixels as the annotators')."""
    study = _study_or_404(entry)
    if _participant(request, study) is None:
        raise Http404("No such image.")
    return media_response(user=request.user, token=token, slot=slot)


__all__ = ["consent", "done", "entry", "instructions", "media", "participant_step", "training", "work"]
