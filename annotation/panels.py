"""What each recruitment panel sends with the entry link and expects back (issue 25): the parameter
contract of Prolific, MTurk and a generic panel, their validation, the placeholders the researcher
pastes into the panel, and where the participant goes when done.

* Prolific appends ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` (the study URL carries the
  placeholders ``{{%PROLIFIC_PID%}}`` …); a finished participant is sent to
  ``https://app.prolific.com/submissions/complete?cc=CODE``.
* MTurk (ExternalQuestion) appends ``workerId``, ``assignmentId``, ``hitId`` and ``turkSubmitTo``; while a
  worker only previews the HIT, ``assignmentId`` is ``ASSIGNMENT_ID_NOT_AVAILABLE`` and there is no
  ``workerId``. A finished worker's page posts ``assignmentId`` (and the code) to
  ``<turkSubmitTo>/mturk/externalSubmit``.
* A generic panel appends its own id under a parameter the researcher names (default ``pid``), and, when the
  study signs its entries, ``sig``: the hex HMAC-SHA256 of ``<entry token>:<id>`` under the study's entry-signing
  secret (:func:`entry_signature`), so that an id is entered only from the link the panel made for it.

Ids are refused unless they are 1–64 characters of ``[A-Za-z0-9_-]`` starting with a letter or digit
(surrounding whitespace, which a link pasted by hand may carry, is trimmed first): an unsubstituted
placeholder, markup, a path or an over-long value never becomes a participant. A parameter given twice
with two different well-formed values is refused too (neither is taken).

A panel id names a person whatever its letter case: Prolific PIDs are lower-case hex, MTurk worker ids
upper-case, and no panel issues two ids that differ only in case. So a participant is found, made unique,
blocked and refused a second code by :func:`panel_id_key` of their id, never by the id as typed: a
worker blocked as ``A1B2C3`` cannot come back as ``a1b2c3``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from annotation.panel_models import Panel, PanelStudy

#: A panel id, study id or session id: what every panel's ids look like (Prolific: 24 hex digits,
#: MTurk: 12–14 upper-case letters and digits, ours: up to 64 of these).
PANEL_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: A generic panel's parameter name.
PARAM_NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")
#: MTurk's assignmentId while the worker previews the HIT.
MTURK_PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
#: Where MTurk may tell us to post the finished assignment (production and sandbox); anything else is
#: refused, so the entry link can never be turned into a redirect to someone else's site.
MTURK_SUBMIT_HOSTS = ("www.mturk.com", "workersandbox.mturk.com")
#: The parameter that carries a generic panel's signature of the entry (:func:`entry_signature`).
ENTRY_SIGNATURE_PARAM = "sig"
#: A signature as the panel sends it: the 64 hex digits of an HMAC-SHA256 (either case).
ENTRY_SIGNATURE_PATTERN = re.compile(r"[0-9A-Fa-f]{64}")
PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete"
#: The MTurk sites that show an ExternalQuestion's page in their frame (worker site, its sandbox, and the
#: legacy site): an MTurk study's pages may be framed by these and nothing else.
MTURK_FRAME_ANCESTORS = ("https://worker.mturk.com", "https://www.mturk.com", "https://workersandbox.mturk.com")


class PanelParamsInvalid(ValueError):
    """The entry link was opened without the panel's parameters, or with malformed ones."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class PanelEntry:
    """The ids one entry request carried, validated. ``preview``: an MTurk worker previewing the HIT
    (no worker id, nothing may be created). ``signature``: a generic panel's ``sig`` as given, unchecked (a study
    that signs nothing ignores it; one that does checks it, :func:`entry_signature_valid`)."""

    panel_id: str
    study_id: str = ""
    session_id: str = ""
    turk_submit_to: str = ""
    preview: bool = False
    signature: str = ""


#: What :func:`_given` answers for a parameter given twice with different well-formed values.
_CONFLICT = object()


def _given(params: Mapping[str, str], name: str, problems: list[str], well_formed) -> str | None | object:
    """The one value the request gives ``name``: None when absent or empty. A parameter may come more than
    once (a link pasted with the panel's placeholders, to which a panel appends its own): the same value
    twice is that value; a well-formed value beside malformed ones (an unsubstituted placeholder) is the
    well-formed one; two different well-formed values name two participants, and neither is taken
    (``_CONFLICT``, the problem said). All malformed: the last, whose problem the caller reports."""
    getlist = getattr(params, "getlist", None)
    values = list(getlist(name)) if getlist is not None else [params.get(name)]
    values = [v.strip() if isinstance(v, str) else v for v in values]
    distinct = list(dict.fromkeys(v for v in values if v is not None and v != ""))
    if len(distinct) <= 1:
        return distinct[0] if distinct else None
    good = [v for v in distinct if isinstance(v, str) and well_formed(v)]
    if len(good) > 1:
        problems.append(f"{name} is given more than once, with different values")
        return _CONFLICT
    return good[0] if good else distinct[-1]


def _id_well_formed(value: str) -> bool:
    return bool(PANEL_ID_PATTERN.fullmatch(value))


def _id(params: Mapping[str, str], name: str, problems: list[str], *, required: bool = True) -> str:
    value = _given(params, name, problems, _id_well_formed)
    if value is _CONFLICT:
        return ""
    if value is None:
        if required:
            problems.append(f"{name} is missing")
        return ""
    if not isinstance(value, str) or not PANEL_ID_PATTERN.fullmatch(value):
        problems.append(f"{name} is malformed (1–64 letters, digits, '_' or '-')")
        return ""
    return value


def _turk_submit_host(value: str) -> str | None:
    """``https://<MTurk's host>`` when ``value`` is an MTurk submit address, else None."""
    try:
        # urlsplit raises ValueError on an unclosed "[" (an IPv6 host), .port on a port that is not
        # 0-65535 in ASCII digits (":abc", ":99999", ":²"): not an MTurk address either.
        parts = urlsplit(value)
        refused = parts.scheme != "https" or parts.hostname not in MTURK_SUBMIT_HOSTS or parts.username \
            or parts.port or parts.path not in ("", "/") or parts.query or parts.fragment
    except ValueError:
        refused = True
    return None if refused else f"https://{parts.hostname}"


def _turk_submit_to(params: Mapping[str, str], problems: list[str]) -> str:
    value = _given(params, "turkSubmitTo", problems, _turk_submit_host)
    if value is _CONFLICT:
        return ""
    if not value:
        problems.append("turkSubmitTo is missing")
        return ""
    host = _turk_submit_host(value) if isinstance(value, str) else None
    if host is None:
        problems.append("turkSubmitTo is not an MTurk address")
        return ""
    return host


def _signature(params: Mapping[str, str]) -> str:
    """The one ``sig`` the request gives, trimmed, or "": never a problem of the link's (a study that signs nothing
    ignores it), and two different ones are none (a study that signs refuses the entry then)."""
    getlist = getattr(params, "getlist", None)
    values = list(getlist(ENTRY_SIGNATURE_PARAM)) if getlist is not None else [params.get(ENTRY_SIGNATURE_PARAM)]
    distinct = {v.strip() for v in values if isinstance(v, str) and v.strip()}
    return distinct.pop() if len(distinct) == 1 else ""


def entry_signature(*, secret: str, entry_token: str, panel_id: str) -> str:
    """What a panel appends as ``sig`` to a signing study's link: the hex HMAC-SHA256, keyed with the study's
    entry-signing secret (its text, as shown to the researcher), of ``<entry token>:<panel id>`` (the id as the
    panel puts it in the link). The entry token binds the signature to this one study; neither it nor an id
    holds ':', so no two (token, id) pairs sign the same text."""
    return hmac.new(secret.encode(), f"{entry_token}:{panel_id}".encode(), hashlib.sha256).hexdigest()


def entry_signature_valid(*, secret: str, entry_token: str, panel_id: str, signature: str) -> bool:
    """Whether ``signature`` is :func:`entry_signature` of this entry: 64 hex digits (either case), compared in
    constant time. An empty secret signs nothing, so it validates nothing."""
    if not secret or not ENTRY_SIGNATURE_PATTERN.fullmatch(signature):
        return False
    expected = entry_signature(secret=secret, entry_token=entry_token, panel_id=panel_id)
    return hmac.compare_digest(signature.lower().encode(), expected.encode())


def entry_signing_fingerprint(secret: str) -> str:
    """Which entry-signing secret a page's form was made under: the first 16 hex digits of the secret's SHA-256
    ("" for none). The form that replaces the secret carries it, so a form sent again (a reload of the page that
    showed the new secret) replaces nothing; it says nothing of the secret an HMAC needs."""
    return hashlib.sha256(secret.encode()).hexdigest()[:16] if secret else ""


def entry_signing_required(study: PanelStudy) -> bool:
    """Whether ``study`` admits only entries its panel signed: a generic panel with an entry-signing secret."""
    return study.panel == Panel.GENERIC and bool(study.entry_signing_secret)


def entry_params_parse(*, panel: str, params: Mapping[str, str], id_param: str = "pid") -> PanelEntry:
    """The validated ids of an entry request; :class:`PanelParamsInvalid` naming every problem."""
    problems: list[str] = []
    if panel == Panel.PROLIFIC:
        entry = PanelEntry(_id(params, "PROLIFIC_PID", problems), _id(params, "STUDY_ID", problems),
                           _id(params, "SESSION_ID", problems))
    elif panel == Panel.MTURK:
        assignment_problems: list[str] = []
        assignment = _id(params, "assignmentId", assignment_problems)
        if assignment == MTURK_PREVIEW_ASSIGNMENT:
            return PanelEntry(panel_id="", preview=True)
        worker, hit = _id(params, "workerId", problems), _id(params, "hitId", problems)
        problems += assignment_problems
        entry = PanelEntry(worker, hit, assignment, _turk_submit_to(params, problems))
    elif panel == Panel.GENERIC:
        entry = PanelEntry(_id(params, id_param, problems), signature=_signature(params))
    else:
        problems.append(f"unknown panel {panel!r}")
        entry = None
    if problems:
        raise PanelParamsInvalid(problems)
    return entry


def panel_id_key(panel_id: str) -> str:
    """What identifies a panel id: trimmed and in lower case (module docstring). Ids are ASCII
    (:data:`PANEL_ID_PATTERN`), so this is the database's ``LOWER()`` too."""
    return panel_id.strip().lower()


#: What a participant who ends without a code does on their panel, so the panel does not wait for a
#: code that will not come (Prolific times the submission out; MTurk holds the HIT until it expires).
RETURN_STEPS = {
    Panel.PROLIFIC: "return your submission on Prolific (open the study there and choose “Return submission”); "
                    "do not enter a completion code",
    Panel.MTURK: "return the HIT on MTurk (choose “Return” on the HIT); do not submit it",
    Panel.GENERIC: "return or withdraw from the study on the panel that sent you",
}


def panel_return_step(panel: str) -> str:
    """What to do on ``panel`` to give a submission back (:data:`RETURN_STEPS`), in lower case."""
    return RETURN_STEPS.get(panel, RETURN_STEPS[Panel.GENERIC])


def entry_placeholders(*, panel: str, id_param: str = "pid", signed: bool = False) -> dict[str, str]:
    """The query the researcher pastes into the panel: each parameter with the panel's placeholder.
    MTurk appends its parameters itself (none to paste). ``signed``: a generic study that signs its entries
    (the panel fills ``sig`` in with :func:`entry_signature`)."""
    if panel == Panel.PROLIFIC:
        return {"PROLIFIC_PID": "{{%PROLIFIC_PID%}}", "STUDY_ID": "{{%STUDY_ID%}}", "SESSION_ID": "{{%SESSION_ID%}}"}
    if panel == Panel.GENERIC:
        signature = {ENTRY_SIGNATURE_PARAM: "{{SIGNATURE}}"} if signed else {}
        return {id_param: "{{PARTICIPANT_ID}}", **signature}
    return {}


def entry_query(*, panel: str, id_param: str = "pid", signed: bool = False) -> str:
    """``?PROLIFIC_PID={{%PROLIFIC_PID%}}&…`` (placeholders left readable, not percent-encoded), or ''."""
    placeholders = entry_placeholders(panel=panel, id_param=id_param, signed=signed)
    if not placeholders:
        return ""
    return "?" + urlencode(placeholders, safe="{}%")


def prolific_completion_url(code: str) -> str:
    return f"{PROLIFIC_COMPLETION_URL}?{urlencode({'cc': code})}"


def mturk_submit_url(turk_submit_to: str) -> str:
    """Where the finished worker's form posts (``turk_submit_to`` was validated at entry)."""
    return f"{turk_submit_to.rstrip('/')}/mturk/externalSubmit"


__all__ = [
    "ENTRY_SIGNATURE_PARAM",
    "MTURK_FRAME_ANCESTORS",
    "MTURK_PREVIEW_ASSIGNMENT",
    "PANEL_ID_PATTERN",
    "RETURN_STEPS",
    "PanelEntry",
    "PanelParamsInvalid",
    "entry_params_parse",
    "entry_placeholders",
    "entry_query",
    "entry_signature",
    "entry_signature_valid",
    "entry_signing_fingerprint",
    "entry_signing_required",
    "mturk_submit_url",
    "panel_id_key",
    "panel_return_step",
    "prolific_completion_url",
]
