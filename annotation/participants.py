"""Writes of crowd campaigns (issue 25): opening a campaign to a panel, a participant's entry and path
(consent → instructions → training → work → completion), their quota and time limit, leaving (panel
"returned", time-out) and the researcher's verdicts (reject, block, take back).

A participant is a user account scoped to one campaign: no usable password (the entry link, with the
panel's id, is the only way in), listed on its campaign only, in no role group. The gatekeeper admits
them on that campaign while they are at work (:mod:`annotation.participant_state`); the labelling
itself goes through the same services as everyone's (:func:`annotation.services.item_next`,
:func:`annotation.services.label_submit`), with the existing blinding, gold and k-overlap.

Leaving or a verdict releases what the participant holds: their active assignment is ended (status
*expired*, ``finished_at`` = when) and its slot freed for the next taker. Their submitted labels are
kept; a verdict takes them out of the statistics (:mod:`annotation.counted_labels`) until taken back.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.backends.base.operations import BaseDatabaseOperations
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation.blinding import IdentityMatcher, texts_identity_problems
from annotation.blinding_recheck import campaign_texts_writing
from annotation.errors import AnnotationError, Busy, CampaignNotOpen, CampaignPaused, ItemsInvalid, NotAllowed
from annotation.kinds.base import refused_excerpt
from annotation.models import Assignment, Campaign, CampaignAnnotator, ItemSlot
from annotation.panel_models import (
    BlockedPanelId,
    ItemActiveTime,
    Panel,
    PanelStudy,
    Participant,
    TrainingItem,
)
from annotation.panels import (
    ENTRY_SIGNATURE_PARAM,
    PARAM_NAME_PATTERN,
    PanelEntry,
    entry_signature_valid,
    entry_signing_fingerprint,
    entry_signing_required,
    panel_id_key,
)
from annotation.participant_release import (
    participant_complete_locked,
    participant_held_release,
    participant_locked,
    participant_study_ended,
)
from annotation.progress import campaign_version_bump
from annotation.services import NextItem, Submission, item_next, label_submit
from annotation.training import training_required
from leaderboard.roles import is_researcher

#: Longest active time the page may report for one item (as the label's time on item).
ACTIVE_MS_MAX = 24 * 3600 * 1000
#: Longest wall time an item's active-time row records: its 32-bit column's, 24.8 days (PostgreSQL refuses
#: more). An item held longer (a late label in a study without a time limit) is recorded as held this long.
WALL_MS_MAX = BaseDatabaseOperations.integer_field_ranges["PositiveIntegerField"][1]


class ParticipantRefused(AnnotationError):
    """The participant cannot go on (screened out, returned, timed out, rejected, blocked)."""

    status = 403


class StudyFull(CampaignNotOpen):
    """Nothing is left to hand out: every item has its labels (none is held by someone who may give it back)."""

    code = "study_full"


class AlreadyTookPart(AnnotationError):
    """A panel id that finished the study with a code entered under another submission of the panel."""

    status = 409
    code = "already_took_part"


class EnteredElsewhere(AnnotationError):
    """A panel id whose participant is bound to another browser, presented without that browser's key and
    without the panel's id of the attempt they entered under (:func:`participant_resume_allowed`). The one
    answer whatever the participant's state: it tells nothing of their progress."""

    status = 409
    code = "entered_elsewhere"


class EntryNotSigned(AnnotationError):
    """An entry of a study that signs its entries without the panel's valid signature of its id
    (:func:`entry_signature_admits`): refused before anything is read or written of that id."""

    status = 403
    code = "entry_not_signed"


ENTRY_NOT_SIGNED_MESSAGE = (
    "This study link is not signed for your id by the panel that sent you (its signature is missing or does not "
    "match). Open the study again from your panel's own link; nothing was recorded.")

ENTERED_ELSEWHERE_MESSAGE = (
    "This study was started with your panel id in another browser. Continue it in that browser, or open the "
    "study again from your panel's own link to it.")


def _code() -> str:
    return secrets.token_hex(4).upper()


# ---------------------------------------------------------------------------------------------------
# Researchers: opening a campaign to a panel
# ---------------------------------------------------------------------------------------------------


def panel_study_open(
    *,
    campaign: Campaign,
    panel: str,
    consent_text: str | None = None,
    training_min_correct: int | None = None,
    training_max_attempts: int | None = None,
    item_quota: int | None = None,
    time_limit_minutes: int | None = None,
    completion_code: str | None = None,
    screen_out_code: str | None = None,
    id_param: str | None = None,
    too_fast_ms: int | None = None,
    bonus_per_item: Decimal | float | str | None = None,
    bonus_min_gold_accuracy: float | None = None,
) -> PanelStudy:
    """Open ``campaign`` to ``panel`` (or change the settings given; those left None are kept). The
    entry token is made once and never changes; the codes are generated when not given. Refused:
    another panel once participants arrived from the first; a code or a parameter name of the wrong
    shape."""
    if panel not in Panel.values:
        raise ItemsInvalid([(0, "panel", f"unknown panel {panel!r}; one of {', '.join(Panel.values)}")])
    given = {
        "consent_text": consent_text, "training_min_correct": training_min_correct,
        "training_max_attempts": training_max_attempts, "item_quota": item_quota,
        "time_limit_minutes": time_limit_minutes, "completion_code": completion_code,
        "screen_out_code": screen_out_code, "id_param": id_param, "too_fast_ms": too_fast_ms,
        "bonus_per_item": bonus_per_item, "bonus_min_gold_accuracy": bonus_min_gold_accuracy,
    }
    given = {name: value for name, value in given.items() if value is not None}
    # The consent text is a shown text of the campaign: checked with the names of the revision it records.
    with campaign_texts_writing(campaign_id=campaign.pk) as matcher:
        _settings_check(given, matcher=matcher)
        return _panel_study_save(campaign, panel, given)


def _panel_study_save(campaign: Campaign, panel: str, given: dict[str, Any]) -> PanelStudy:
    if "bonus_per_item" in given:
        given["bonus_per_item"] = Decimal(str(given["bonus_per_item"]))
    with transaction.atomic():
        study = PanelStudy.objects.select_for_update().filter(campaign=campaign).first()
        if study is None:
            study = PanelStudy(campaign=campaign, panel=panel, entry_token=secrets.token_urlsafe(32),
                               completion_code=_code(), screen_out_code=_code())
        elif study.panel != panel and study.participants.exists():
            raise ItemsInvalid([(0, "panel", f"participants already arrived from {study.get_panel_display()}; "
                                             "a campaign is opened to one panel")])
        study.panel = panel
        for name, value in given.items():
            setattr(study, name, value)
        if panel != Panel.GENERIC:
            study.entry_signing_secret = ""  # only a generic panel signs its links (the other panels sign nothing)
        if study.completion_code == study.screen_out_code:
            raise ItemsInvalid([(0, "screen_out_code", "the screen-out code must differ from the completion code")])
        _signing_param_check(study)
        study.save()
    return study


def _signing_param_check(study: PanelStudy) -> None:
    """A signing study's id cannot come in the signature's own parameter."""
    if study.entry_signing_secret and study.id_param == ENTRY_SIGNATURE_PARAM:
        raise ItemsInvalid([(0, "id_param", f"{ENTRY_SIGNATURE_PARAM!r} carries the signature of a study that signs "
                                            "its entries; name the id's parameter otherwise")])


class SigningSecretReplaced(AnnotationError):
    """A new entry-signing secret asked for in place of one that is no longer the study's (``replacing``)."""

    status = 409
    code = "signing_secret_replaced"


def panel_study_signing_set(*, study: PanelStudy, required: bool, replacing: str | None = None) -> str:
    """Require a generic panel's entries to be signed (``required``): a new entry-signing secret, returned to be
    shown to the researcher (once), replacing any earlier one, so links signed with that one enter no more; or
    stop requiring it (``required=False``: the secret is dropped, "" returned). An entry of a signing study
    carries ``sig``, :func:`annotation.panels.entry_signature` of its id (checked by
    :func:`entry_signature_admits`). Refused for Prolific and MTurk, which sign nothing the site could check.
    ``replacing``: the :func:`annotation.panels.entry_signing_fingerprint` of the secret the caller saw ("" for
    none); when it is no longer the study's, nothing changes (:class:`SigningSecretReplaced`), so a form sent
    twice does not replace the secret its first answer showed."""
    with transaction.atomic():
        study = PanelStudy.objects.select_for_update().get(pk=study.pk)
        if replacing is not None and replacing != entry_signing_fingerprint(study.entry_signing_secret):
            raise SigningSecretReplaced(
                "The entry-signing secret was already replaced (this page sent again, or another tab): nothing "
                "changed. The secret in force is the one last shown.")
        if required and study.panel != Panel.GENERIC:
            # not a field's problem (no "line 0: field:" prefix): the panel itself cannot do it
            raise NotAllowed(f"{study.get_panel_display()} does not sign its links; only a generic panel's entries "
                             "can be signed")
        study.entry_signing_secret = secrets.token_hex(32) if required else ""
        _signing_param_check(study)
        study.save(update_fields=["entry_signing_secret"])
    return study.entry_signing_secret


def _settings_check(given: Mapping[str, Any], *, matcher: IdentityMatcher | None = None) -> None:
    problems = []
    for name in ("completion_code", "screen_out_code"):
        value = given.get(name)
        if value is not None and not (isinstance(value, str) and value.isascii() and value.isalnum()
                                      and 1 <= len(value) <= 32):
            problems.append((0, name, "a code is 1–32 letters and digits (A–Z, a–z, 0–9)"))
    if "id_param" in given and not PARAM_NAME_PATTERN.fullmatch(str(given["id_param"])):
        problems.append((0, "id_param", "a parameter name is a letter then up to 31 letters, digits or '_'"))
    for name in ("training_max_attempts", "item_quota", "time_limit_minutes"):
        if name in given and int(given[name]) < 1:
            problems.append((0, name, "must be at least 1"))
    try:
        if "bonus_per_item" in given and not Decimal(str(given["bonus_per_item"])) >= 0:
            problems.append((0, "bonus_per_item", "an amount of at least 0"))
    except ArithmeticError:
        problems.append((0, "bonus_per_item", "an amount such as 0.50"))
    accuracy = given.get("bonus_min_gold_accuracy")
    if accuracy is not None and not 0.0 <= float(accuracy) <= 1.0:
        problems.append((0, "bonus_min_gold_accuracy", "a share between 0 and 1"))
    if "consent_text" in given and (leaks := texts_identity_problems({"consent_text": given["consent_text"]},
                                                                          matcher=matcher)):
        problems += [(0, field, message) for field, message in leaks.items()]
    if problems:
        raise ItemsInvalid(problems)


def training_item_add(*, study: PanelStudy, question: str, choices: Iterable[str], answer: str,
                      explanation: str = "", position: int | None = None) -> TrainingItem:
    """A training question with its known answer (one of ``choices``) and the explanation shown after it."""
    choices = [str(c) for c in choices]
    problems = []
    if len(choices) < 2 or len(set(choices)) != len(choices) or any(not c or len(c) > 200 for c in choices):
        problems.append((0, "choices", "two or more different answers of 1–200 characters"))
    if answer not in choices:
        problems.append((0, "answer", f"{refused_excerpt(answer)} is not one of the choices"))
    with campaign_texts_writing(campaign_id=study.campaign_id) as matcher:  # records the revision it is checked at
        texts = {"question": question, "explanation": explanation, "choices": " ".join(choices)}
        if leaks := texts_identity_problems(texts, matcher=matcher):
            problems += [(0, field, message) for field, message in leaks.items()]
        if problems:
            raise ItemsInvalid(problems)
        if position is None:
            position = study.training_items.count()
        return TrainingItem.objects.create(study=study, question=question, choices=choices, answer=answer,
                                           explanation=explanation, position=position)


# ---------------------------------------------------------------------------------------------------
# Entry
# ---------------------------------------------------------------------------------------------------


def study_work_left(*, study: PanelStudy) -> bool:
    """Something is left to hand out: a free slot, or one held now (it comes back if its holder leaves)."""
    return (ItemSlot.objects.filter(campaign_id=study.campaign_id, is_free=True).exists()
            or Assignment.objects.filter(campaign_id=study.campaign_id, status=Assignment.Status.ACTIVE,
                                         slot__isnull=False).exists())


def study_accepting(*, study: PanelStudy) -> bool:
    """A newcomer may start: the campaign is open and something is left to hand out."""
    return study.campaign.status == Campaign.Status.OPEN and study_work_left(study=study)


def _code_given(participant: Participant) -> bool:
    """The participant finished with a code (completion or screen-out) and no verdict took it away."""
    return not participant.verdict and participant.state in (Participant.State.COMPLETED,
                                                              Participant.State.SCREENED_OUT)


@dataclass(frozen=True)
class Entered:
    participant: Participant
    created: bool
    #: The key the entering browser is to hold from now on (its cookie), or "" when it holds it already.
    browser_key: str = ""


def browser_key_hash(browser_key: str) -> str:
    """What is stored of a browser key: its SHA-256, so the table alone resumes nobody."""
    return hashlib.sha256(browser_key.encode()).hexdigest()


def _holds_key(participant: Participant, browser_key: str) -> bool:
    """Whether ``browser_key`` is the participant's browser key (compared in constant time)."""
    return bool(browser_key and participant.browser_key_hash) and hmac.compare_digest(
        browser_key_hash(browser_key), participant.browser_key_hash)


def holds_attempt_ids(participant: Participant, *, study_id: str, session_id: str) -> bool:
    """Whether an entry carries the panel's ids of the attempt ``participant`` entered under (Prolific's STUDY_ID
    and SESSION_ID, MTurk's hitId and assignmentId): those resume them in any browser, so they are compared as
    the browser key is (in constant time), not with ``==``."""
    return bool(session_id) and all(
        hmac.compare_digest(str(given).encode(), str(stored).encode())
        for given, stored in ((study_id, participant.panel_study_id), (session_id, participant.panel_session_id)))


#: How long after a generic panel's first entry a second one without the key resumes the participant, while they
#: have not consented (:func:`participant_resume_allowed`): a double click on the link.
FIRST_ENTRY_GRACE = timedelta(seconds=10)


def _just_entered(participant: Participant, now: datetime) -> bool:
    """Entered at most :data:`FIRST_ENTRY_GRACE` before ``now``, seen by no entry since and not yet consented:
    another entry now is the other click of a double click (or a tab opened at once)."""
    return (participant.consented_at is None and participant.last_seen_at == participant.entered_at
            and now - participant.entered_at <= FIRST_ENTRY_GRACE)


def _first_key(participant: Participant) -> str:
    """The key a participant's first entry gives (its SHA-256 stored until another browser is given one): an
    HMAC under the site's secret key of their account's random name (Django's salted_hmac, SHA-256), so that
    each entry of a double click gives the same key, whichever of them the browser keeps."""
    return salted_hmac("annotation.participants.browser_key", participant.user.username,
                       algorithm="sha256").hexdigest()


def participant_resume_allowed(*, participant: Participant, entry: PanelEntry, browser_key: str = "",
                               signed_in_as: int | None = None, now: datetime | None = None) -> bool:
    """Whether this entry may resume ``participant``: a panel id is not a secret (a worker id is printed in
    every requester's data, a PID in any shared export), so it alone resumes nobody. One condition a line:

    * the browser holds the key given to the browser they entered in (the cookie set at their entry);
    * the browser is signed in as them already (their session, whose cookie outlived the key's);
    * the entry carries the panel's id of the attempt they entered under, with its study: Prolific's
      SESSION_ID (one per submission) and STUDY_ID, MTurk's assignmentId (one per accepted assignment) and
      hitId. Only the panel and the participant see those, so opening the study from the panel again
      resumes them in any browser;
    * they were made before browsers were bound (no key stored) on a panel that sends no such id (generic);
    * a double click on a generic panel's link (which carries no attempt id): the browser shows the second
      entry's answer, and the first's, with the key and the session, may never reach it, which would lock the
      participant out for good. So a participant entered at most :data:`FIRST_ENTRY_GRACE` ago, seen by no
      other entry since and not yet consented (nothing of theirs to read) resumes once without the key.
    """
    if _holds_key(participant, browser_key):
        return True
    if signed_in_as is not None and signed_in_as == participant.user_id:
        return True
    if participant.study.panel != Panel.GENERIC:
        return holds_attempt_ids(participant, study_id=entry.study_id, session_id=entry.session_id)
    return _just_entered(participant, now or timezone.now()) or not participant.browser_key_hash


def entry_signature_admits(*, study: PanelStudy, entry: PanelEntry, browser_key: str = "",
                           signed_in_as: int | None = None) -> bool:
    """Whether an entry passes the study's signing rule: who enters first with an id holds it, so on a generic
    panel whose ids can be guessed a stranger with the link could take another's id, unless the panel signs
    each id's link. One condition a line:

    * the study does not sign its entries (:func:`entry_signing_required`);
    * the entry carries the panel's signature of its id for this study (constant-time compare);
    * the browser holds the key of the id's participant, or is signed in as them: it is theirs already, which
      proves more than a signature would (coming back in the browser they entered in works as before).
    """
    if not entry_signing_required(study):
        return True
    if entry_signature_valid(secret=study.entry_signing_secret, entry_token=study.entry_token,
                             panel_id=entry.panel_id, signature=entry.signature):
        return True
    existing = Participant.objects.filter(campaign_id=study.campaign_id, panel_key=panel_id_key(entry.panel_id)).first()
    return existing is not None and (_holds_key(existing, browser_key) or (
        signed_in_as is not None and signed_in_as == existing.user_id))


def participant_enter(*, study: PanelStudy, entry: PanelEntry, browser_key: str = "", signed_in_as: int | None = None,
                      now: datetime | None = None) -> Entered:
    """The participant of this panel id in the study's campaign, created on first entry (an account
    of this campaign only, no usable password, the ids the panel sent, and a new key for the browser:
    :attr:`Entered.browser_key`), else the same one resumed when :func:`participant_resume_allowed` (the
    entering browser's ``browser_key``, the user it is ``signed_in_as``) says so; a browser that resumed
    without the key is given a new one, except the other entry of a double click, given the first entry's
    (each click's answer then leaves the browser a key that resumes it, whichever it keeps). Refused, nothing created: an MTurk preview, a campaign that is not
    open or is full (:class:`StudyFull`), an entry of a signing study that :func:`entry_signature_admits` does not
    admit (:class:`EntryNotSigned`, before any other answer about the id). Refused, nothing changed: any other entry of a known panel id
    (:class:`EnteredElsewhere`, whatever the participant's state), and with the same answer an id blocked in
    another campaign of the site, and a participant who finished with a
    code entering under another submission (:class:`AlreadyTookPart`).
    MTurk: a worker still on their path who accepted the HIT again (in the browser they started in) holds a
    new assignment, recorded; a finished one keeps the assignment they finished under."""
    return _participant_enter(study=study, entry=entry, browser_key=browser_key, signed_in_as=signed_in_as,
                              now=now or timezone.now(), race_lost=False)


def _participant_enter(*, study: PanelStudy, entry: PanelEntry, browser_key: str, signed_in_as: int | None,
                       now: datetime, race_lost: bool) -> Entered:
    if entry.preview:
        raise NotAllowed("Previewing: accept the HIT to start.")
    if not entry_signature_admits(study=study, entry=entry, browser_key=browser_key, signed_in_as=signed_in_as):
        # Before any answer about the id: an unsigned entry learns nothing of it (taken, blocked, finished).
        raise EntryNotSigned(ENTRY_NOT_SIGNED_MESSAGE)
    key = panel_id_key(entry.panel_id)
    if BlockedPanelId.objects.filter(panel=study.panel, panel_key=key).exclude(
            participant__campaign_id=study.campaign_id).exists():
        # Nobody here can prove they are that participant (their key and attempt ids are the other campaign's), and a
        # panel id is not a secret: "a researcher ended your participation" told whoever presented the id that its
        # participant was blocked. The answer is that of an id known to this study (:class:`EnteredElsewhere`), which
        # says nothing of any participant's state. The campaign that blocked them shows them its verdict.
        raise EnteredElsewhere(ENTERED_ELSEWHERE_MESSAGE)
    existing = Participant.objects.select_related("user", "study").filter(campaign_id=study.campaign_id,
                                                                           panel_key=key).first()
    if existing is not None:
        if not participant_resume_allowed(participant=existing, entry=entry, browser_key=browser_key,
                                          signed_in_as=signed_in_as, now=now):
            raise EnteredElsewhere(ENTERED_ELSEWHERE_MESSAGE)
        if _code_given(existing) and study.panel != Panel.GENERIC and entry.session_id != existing.panel_session_id:
            # Their code is for the submission they finished in (Prolific's SESSION_ID, MTurk's assignmentId):
            # another one (a worker accepting a second HIT of the study) would be paid again for the same work.
            raise AlreadyTookPart(
                "You have already taken part in this study and have its code, under another "
                f"{'assignment' if study.panel == Panel.MTURK else 'submission'}. A panel id takes part once: "
                f"return this {'HIT' if study.panel == Panel.MTURK else 'submission'} on your panel.")
        changes: dict[str, Any] = {"last_seen_at": now}
        first_key = _first_key(existing) if _just_entered(existing, now) else ""
        if _holds_key(existing, browser_key):
            new_key = ""
        elif _holds_key(existing, first_key):
            new_key = first_key  # the other click of a double click: the first entry's key, which stays theirs
        else:
            new_key = secrets.token_urlsafe(32)
            changes["browser_key_hash"] = browser_key_hash(new_key)
        if study.panel == Panel.MTURK and not existing.verdict and existing.state in (
                Participant.State.TRAINING, Participant.State.WORKING):
            # MTurk: a worker who returned the HIT and accepted it again holds a new assignment; the end page
            # must post the one they hold now (their progress stays theirs, by workerId).
            changes.update(panel_study_id=entry.study_id, panel_session_id=entry.session_id,
                           turk_submit_to=entry.turk_submit_to)
        Participant.objects.filter(pk=existing.pk).update(**changes)
        for name, value in changes.items():
            setattr(existing, name, value)
        return Entered(existing, created=False, browser_key=new_key)
    campaign = study.campaign
    if campaign.status != Campaign.Status.OPEN:
        raise CampaignNotOpen("This study is not open at the moment.")
    if not study_work_left(study=study):
        # A newcomer would go through consent and training to be completed with no item (and paid for it).
        raise StudyFull("This study is full: every item has all the answers it needs. Return the study on your "
                        "panel; nothing was recorded.")
    try:
        with transaction.atomic():
            user = get_user_model()(username=f"panel-{campaign.pk}-{secrets.token_hex(8)}", is_active=True)
            user.set_unusable_password()
            user.save()
            CampaignAnnotator.objects.create(campaign=campaign, annotator=user)
            deadline = now + timedelta(minutes=study.time_limit_minutes) if study.time_limit_minutes else None
            participant = Participant(
                study=study, campaign=campaign, user=user, panel_id=entry.panel_id, panel_key=key,
                panel_study_id=entry.study_id,
                panel_session_id=entry.session_id, turk_submit_to=entry.turk_submit_to, entered_at=now,
                last_seen_at=now, deadline=deadline,
            )
            new_key = _first_key(participant)
            participant.browser_key_hash = browser_key_hash(new_key)
            participant.save(force_insert=True)
    except IntegrityError:
        # Race prevented (the unique panel key per campaign): two first entries of one participant (a
        # double click on the panel's link, or two tabs with the id in two cases) making two accounts. The
        # loser enters once more, now as the winner's participant, with every check of a resumed entry.
        if race_lost:
            raise Busy("The study could not start just now; open the link again in a moment.") from None
        return _participant_enter(study=study, entry=entry, browser_key=browser_key, signed_in_as=signed_in_as,
                                  now=now, race_lost=True)
    return Entered(participant, created=True, browser_key=new_key)


# ---------------------------------------------------------------------------------------------------
# The path
# ---------------------------------------------------------------------------------------------------


def _locked(participant: Participant) -> Participant:
    return participant_locked(participant.pk)


def participant_time_check(*, participant: Participant, now: datetime | None = None) -> Participant:
    """Time the participant out when their deadline has passed (their held item is released)."""
    now = now or timezone.now()
    if participant.deadline is not None and participant.deadline <= now and participant.state in (
        Participant.State.TRAINING, Participant.State.WORKING
    ):
        return participant_leave(participant=participant, state=Participant.State.TIMED_OUT, now=now)
    return participant


def participant_open_check(*, participant: Participant, now: datetime | None = None) -> Participant:
    """End the participant's path when the study ended while they are on it
    (:func:`annotation.participant_release.participant_study_ended`): their campaign was closed, or nothing
    is left to hand out (every item has its labels and no held one can come back), so a participant in
    training is told now, not after passing it. A campaign back in draft (a researcher's edit) or paused
    for review ends nobody's path here (next-item ends a worker's in draft, as before)."""
    if participant.verdict or participant.state not in (Participant.State.TRAINING, Participant.State.WORKING):
        return participant
    # the campaign: the pages read it with the participant
    status = participant.campaign.status
    if status == Campaign.Status.DRAFT or (status == Campaign.Status.OPEN and study_work_left(study=participant.study)):
        return participant
    return participant_study_ended(participant_id=participant.pk, now=now or timezone.now())


def participant_consent(*, participant: Participant, now: datetime | None = None) -> Participant:
    with transaction.atomic():
        participant = _locked(participant)
        if participant.consented_at is None:
            participant.consented_at = now or timezone.now()
            participant.save(update_fields=["consented_at"])
    return participant


def participant_instructions_read(*, participant: Participant, now: datetime | None = None) -> Participant:
    """The instructions were read: on to the training, or straight to work when the study has none."""
    now = now or timezone.now()
    with transaction.atomic():
        participant = _locked(participant)
        if participant.consented_at is None:
            raise NotAllowed("Give your consent first.")
        if participant.instructions_read_at is None:
            participant.instructions_read_at = now
            fields = ["instructions_read_at"]
            if participant.state == Participant.State.TRAINING and not training_required(participant.study):
                participant.state, participant.training_passed_at = Participant.State.WORKING, now
                fields += ["state", "training_passed_at"]
            participant.save(update_fields=fields)
    return participant


def _items_done(participant: Participant) -> int:
    return Assignment.objects.filter(campaign_id=participant.campaign_id, annotator_id=participant.user_id,
                                     status=Assignment.Status.SUBMITTED).count()


def participant_next(*, participant: Participant, now: datetime | None = None) -> NextItem | None:
    """The participant's current or next item; None when they are done (quota reached, nothing left
    for them, or the campaign closed: then they are completed). ParticipantRefused when they may not go on;
    CampaignPaused while the campaign is paused for review."""
    now = now or timezone.now()
    participant = participant_time_check(participant=participant, now=now)
    _at_work_check(participant)
    # The quota is the gatekeeper's (item_next completes a participant at their quota, on every path).
    try:
        handed = item_next(campaign_id=participant.campaign_id, annotator=participant.user, now=now)
    except CampaignNotOpen as exc:
        if isinstance(exc, CampaignPaused):
            raise  # paused for review: for a while, ending nobody's work
        # Closed by the researcher while they were at work: nothing is left for anyone, so they are done
        # (their code, their labels kept) rather than stranded without a code to take back to the panel;
        # unless they had done nothing yet: then no code (a code is full pay), closed before work.
        participant_study_ended(participant_id=participant.pk, now=now)
        return None
    if handed.assignment is None:
        # Nothing left for them (their quota is the gatekeeper's, above): done, with their code when they
        # did some work; a study that filled up before their work began gives no code (closed before work).
        participant_study_ended(participant_id=participant.pk, now=now)
        return None
    return handed


def _at_work_check(participant: Participant) -> None:
    if participant.verdict:
        raise ParticipantRefused("Your participation in this study has ended.")
    if participant.state != Participant.State.WORKING:
        raise ParticipantRefused(f"You are not labelling in this study ({participant.get_state_display().lower()}).")


def _active_ms(value: Any) -> int:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ItemsInvalid([(0, "active_ms", "the page's measured active time, in milliseconds")])
    return max(0, min(int(value), ACTIVE_MS_MAX))


@dataclass(frozen=True)
class ParticipantSubmission:
    submission: Submission
    active: ItemActiveTime | None
    #: The participant reached their quota with this label (they are completed now).
    finished: bool


def participant_label_submit(
    *, participant: Participant, token: str, idempotency_key: Any, answer: Any, time_on_item_ms: Any = None,
    active_ms: Any = None, now: datetime | None = None, is_simulated: bool = False,
) -> ParticipantSubmission:
    """Store a participant's label (:func:`annotation.services.label_submit`) with the active time the
    page measured, clamped to the wall time the item was held (from its hand-out to now): a page cannot
    claim more time than it had. A re-sent submission writes neither twice."""
    now = now or timezone.now()
    reported = _active_ms(active_ms)
    with transaction.atomic():
        submission = label_submit(token=token, annotator=participant.user, idempotency_key=idempotency_key,
                                  answer=answer, time_on_item_ms=time_on_item_ms, now=now,
                                  is_simulated=is_simulated)
        assignment = submission.label.assignment
        active = ItemActiveTime.objects.filter(assignment=assignment).first()
        if active is None:
            wall = max(0, min(int((now - assignment.created_at).total_seconds() * 1000), WALL_MS_MAX))
            active = ItemActiveTime.objects.create(assignment=assignment, participant=participant, reported_ms=reported,
                                                   active_ms=min(reported, wall), wall_ms=wall, recorded_at=now)
    # After the commit: this transaction holds the assignment's lock, a release takes the participant's
    # then the assignments' (lock order: participant before assignment, never the other way round).
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=now)
    quota = participant.study.item_quota
    finished = quota is not None and _items_done(participant) >= quota
    if finished:
        participant_complete(participant=participant, now=now)
    return ParticipantSubmission(submission, active, finished)


def participant_complete(*, participant: Participant, now: datetime | None = None) -> Participant:
    """Done: the completion code is theirs. Idempotent."""
    return participant_complete_locked(participant_id=participant.pk, now=now or timezone.now())


# ---------------------------------------------------------------------------------------------------
# Leaving and verdicts
# ---------------------------------------------------------------------------------------------------


def participant_leave(*, participant: Participant, state: str = Participant.State.RETURNED,
                      now: datetime | None = None) -> Participant:
    """The participant left (``returned`` through the panel, or ``timed_out``): the item they hold goes
    back to the queue; their labels are kept. Idempotent; a participant who completed or was screened
    out keeps that state."""
    if state not in Participant.LEFT:
        raise ItemsInvalid([(0, "state", f"a participant leaves as one of {', '.join(Participant.LEFT)}")])
    now = now or timezone.now()
    with transaction.atomic():
        participant = _locked(participant)
        if participant.state in (Participant.State.TRAINING, Participant.State.WORKING):
            participant_held_release(participant, now)
            participant.state_before, participant.state, participant.finished_at = participant.state, state, now
            participant.save(update_fields=["state_before", "state", "finished_at"])
    return participant


def participants_time_out(*, campaign: Campaign | None = None, now: datetime | None = None) -> int:
    """Time out every participant past their deadline (the periodic sweep); the number timed out."""
    now = now or timezone.now()
    overdue = Participant.objects.filter(deadline__lte=now, state__in=[Participant.State.TRAINING,
                                                                       Participant.State.WORKING])
    if campaign is not None:
        overdue = overdue.filter(campaign=campaign)
    count = 0
    for participant in overdue.select_related("study"):
        if participant_leave(participant=participant, state=Participant.State.TIMED_OUT, now=now).state == "timed_out":
            count += 1
    return count


def participants_study_closed(*, campaign: Campaign | None = None, now: datetime | None = None) -> int:
    """End the path of every participant still on it in a closed campaign (the periodic sweep;
    :func:`annotation.participant_release.participant_study_ended`), so the pay report lists them as closed
    before work (or completed) without waiting for them to load a page; the number ended. A campaign back
    in draft is a researcher's edit: nobody is ended for it here."""
    now = now or timezone.now()
    on_path = Participant.objects.filter(state__in=[Participant.State.TRAINING, Participant.State.WORKING],
                                         verdict=Participant.Verdict.NONE, campaign__status=Campaign.Status.CLOSED)
    if campaign is not None:
        on_path = on_path.filter(campaign=campaign)
    return sum(1 for pk in on_path.values_list("pk", flat=True)
               if participant_study_ended(participant_id=pk, now=now).state not in (Participant.State.TRAINING,
                                                                                    Participant.State.WORKING))


def participant_verdict_set(*, participant: Participant, verdict: str, researcher: AbstractBaseUser,
                            note: str = "", now: datetime | None = None) -> Participant:
    """Reject or block a participant (their held item goes back to the queue, their labels leave the
    statistics, nothing is deleted; a block also bars their panel id from entering the site's other
    campaigns of that panel, :class:`~annotation.panel_models.BlockedPanelId`), or take the verdict back
    (``verdict=""``: labels counted again,
    the participant may go on where they were)."""
    if not is_researcher(researcher):
        raise NotAllowed("Researchers only.")
    if verdict not in Participant.Verdict.values:
        raise ItemsInvalid([(0, "verdict", f"one of rejected, blocked or '' (take back), not {verdict!r}")])
    now = now or timezone.now()
    with transaction.atomic():
        participant = _locked(participant)
        if participant.verdict == verdict:
            return participant
        if verdict:
            participant_held_release(participant, now)
        participant.verdict, participant.verdict_note = verdict, note[:500] if verdict else ""
        participant.verdict_at = now if verdict else None
        participant.save(update_fields=["verdict", "verdict_note", "verdict_at"])
        # A block also bars the panel id from the site's other campaigns (checked at entry); a rejection
        # or taking the block back lifts that.
        if verdict == Participant.Verdict.BLOCKED:
            BlockedPanelId.objects.create(participant=participant, panel=participant.study.panel,
                                          panel_id=participant.panel_id, panel_key=panel_id_key(participant.panel_id),
                                          blocked_at=now)
        else:
            BlockedPanelId.objects.filter(participant=participant).delete()
        # The dashboards are cached by label_version: they recompute without (or with) these labels.
        campaign_version_bump(campaign_id=participant.campaign_id)
    return participant


def participant_accounts_delete(*, campaigns) -> int:
    """Delete the participants' accounts of ``campaigns`` (a queryset or list): an account is scoped to its
    one campaign, so it must go with it (deleting a campaign alone cascades to the Participant row, not
    the user). Call before deleting the campaigns; the number of accounts deleted."""
    users = get_user_model().objects.filter(panel_participant__campaign__in=campaigns)
    return users.delete()[1].get(get_user_model()._meta.label, 0)


def participant_for_panel_id(*, campaign: Campaign, panel_id: str) -> Participant | None:
    """The campaign's participant of ``panel_id``, in whatever case it is given."""
    return Participant.objects.select_related("study", "user").filter(campaign=campaign,
                                                                      panel_key=panel_id_key(panel_id)).first()


__all__ = [
    "ACTIVE_MS_MAX",
    "AlreadyTookPart",
    "ENTERED_ELSEWHERE_MESSAGE",
    "ENTRY_NOT_SIGNED_MESSAGE",
    "Entered",
    "EntryNotSigned",
    "FIRST_ENTRY_GRACE",
    "EnteredElsewhere",
    "ParticipantRefused",
    "ParticipantSubmission",
    "SigningSecretReplaced",
    "StudyFull",
    "panel_study_open",
    "panel_study_signing_set",
    "participant_accounts_delete",
    "participant_complete",
    "participant_consent",
    "browser_key_hash",
    "entry_signature_admits",
    "participant_enter",
    "participant_resume_allowed",
    "participant_for_panel_id",
    "participant_instructions_read",
    "participant_label_submit",
    "participant_leave",
    "participant_next",
    "participant_open_check",
    "participant_time_check",
    "participant_verdict_set",
    "participants_study_closed",
    "participants_time_out",
    "study_accepting",
    "study_work_left",
    "training_item_add",
]
