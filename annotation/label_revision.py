"""An annotator changes their previous label: a new version of the label, pinned and audited, never a
silent overwrite (issue 15, "Annotator page").

The rule, one condition per line in :func:`revision_refusal` (the page's selector and the service ask
the same function, after the one access gatekeeper :func:`annotation.access.annotator_access_check`,
which refuses a closed campaign, a lost membership or a withdrawn assignment):

* only the annotator's own label, and only their most recent one in the campaign (the label of the
  item they answered last: "the previous item"; an older one is no longer theirs to change);
* the item still shows what it showed when they labelled it (the label is not stale, and the
  item's content hash — recomputed now — is the one the label was given under);
* the item is not withheld (its text was found to name a model after a catalogue change:
  :mod:`annotation.blinding_recheck`), so that it is never shown again.

Whether the item went to adjudication plays no part: an item goes there only when its annotators
disagreed, so a label refused (or a ``revisable: false``) there and not on an item everybody agreed on
would tell the annotator what the others chose (with k = 3 pairwise: each of them). A label under
adjudication changes as any other does; the change is archived as a :class:`LabelRevision` and bumps
the campaign's ``label_version``, so the researcher's item view and dashboard show the current answer.

Gold items are changed like any other: refusing them would tell the annotator which items are gold.

Changing a label, in one transaction with the assignment and label rows locked: the current answer
and flag fields are archived as a :class:`~annotation.label_models.LabelRevision` (``version`` = the
superseded version), the new values are written through the kind's own validation (``Kind.validate``,
the path every submission takes), ``version`` grows by one, and the campaign's ``label_version``
is bumped so that the dashboards recompute. The progress counters do not move: it is the same label.
Re-sending the same request (same idempotency key) writes nothing and returns the same result; a
change to the same answer writes nothing either (no empty version).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.access import annotator_access_check
from annotation.errors import Busy, LabelNotRevisable, NotFound, SubmissionConflict
from annotation.kinds import kind_for
from annotation.kinds.base import Kind, validate_time_on_item
from annotation.label_models import Label, LabelRevision
from annotation.models import Assignment, Campaign, Item
from annotation.progress import campaign_version_bump
from annotation.services import _attach_item, _one, _parse_key

#: Retries of a transaction that lost a race to a unique constraint (SQLite has no row locks: two
#: copies of one request can both read the same version; the unique (label, version) index refuses one).
RACE_RETRIES = 5

REFUSED_NOT_PREVIOUS = "Only your most recent label in this campaign can be changed."
#: One message for a changed item and a withheld one (paused for review).
REFUSED_LOCKED = ("This label can no longer be changed: the item changed since you labelled it, or it is under "
                  "review. Your label was kept as you gave it.")


@dataclass(frozen=True)
class Revision:
    """The outcome of a change request: the label as it now is, the version this request wrote (or
    found unchanged), and whether it wrote one (``changed``) or repeated one already stored
    (``replayed``, which writes nothing)."""

    label: Label
    version: int
    changed: bool
    replayed: bool


def label_fields(label: Label, names: Any) -> dict[str, Any]:
    """The label's current values of ``names`` (the fields ``Kind.validate`` returns)."""
    return {name: getattr(label, name) for name in names}


def previous_label(*, campaign: Campaign, annotator: AbstractBaseUser) -> Label | None:
    """The annotator's most recent label in the campaign (latest first given), any state."""
    return _latest(kind_for(campaign.kind).label_model.objects.filter(campaign=campaign, annotator=annotator))


def _latest(labels):
    return next(iter(labels.order_by("-created_at", "-pk")[:1]), None)


def revision_refusal(*, label: Label, assignment: Assignment, item: Item, kind: Kind) -> str | None:
    """Why the annotator may not change ``label`` now, or None when they may (see the module
    docstring). Writes nothing: an item found changed is marked stale by the next submission or
    content refresh, not by a refused change."""
    if label.is_stale or assignment.status != Assignment.Status.SUBMITTED:
        return REFUSED_LOCKED
    if item.withheld_at is not None:
        return REFUSED_LOCKED
    latest = _latest(type(label).objects.filter(campaign_id=label.campaign_id, annotator_id=label.annotator_id))
    if latest is None or latest.pk != label.pk:
        return REFUSED_NOT_PREVIOUS
    if item.content_hash != label.content_hash or kind.shown_content(item).digest != label.content_hash:
        return REFUSED_LOCKED
    return None


def label_revise(
    *,
    token: str,
    annotator: AbstractBaseUser,
    idempotency_key: Any,
    answer: Any,
    time_on_item_ms: Any = None,
    now: datetime | None = None,
) -> Revision:
    """Change the annotator's previous label (the assignment ``token``) to ``answer``: a new version.

    Refused, with nothing written: another annotator's or an unknown token (404), a closed campaign or
    lost access (the gatekeeper), an answer its kind refuses (400, the same validation as a
    submission), a label that is not the annotator's most recent, whose item changed or was withheld
    (409 :class:`LabelNotRevisable`), a key already used for another change (409).
    """
    key = _parse_key(idempotency_key)
    time_ms = validate_time_on_item(time_on_item_ms)
    for _ in range(RACE_RETRIES):
        try:
            with transaction.atomic():
                return _label_revise(token, annotator, key, answer, time_ms, now)
        except IntegrityError:
            # A concurrent copy of this request archived the same version first (SQLite); the next
            # pass finds its revision by key and replays it.
            continue
    raise Busy("The server is busy saving this change; try again.")


def _label_revise(token: str, annotator: AbstractBaseUser, key: uuid.UUID, answer: Any, time_ms: int | None,
                  now: datetime | None) -> Revision:
    # Race prevented: two changes of one label (double Enter, a retried request) both archiving the
    # same version; the second waits here for the first to commit, then replays or archives the next.
    assignment = _one(Assignment.objects.select_for_update(of=("self",)).select_related("campaign")
                      .filter(token=token, annotator=annotator))
    if assignment is None:
        raise NotFound("No such assignment.")
    annotator_access_check(user=annotator, assignment=assignment)
    kind = kind_for(assignment.campaign.kind)
    label = _one(kind.label_model.objects.select_for_update().filter(assignment=assignment))
    if label is None:
        raise LabelNotRevisable("This item has no saved label to change; answer it first.")
    _attach_item(assignment)
    values = kind.validate(answer, item=assignment.item, assignment=assignment)
    done = _one(LabelRevision.objects.filter(idempotency_key=key))
    if done is not None:
        return _replayed(done, label, assignment, values)
    if kind.label_model.objects.filter(idempotency_key=key).exists():
        raise SubmissionConflict("This key was already used to save a label; the change was not saved.")
    refusal = revision_refusal(label=label, assignment=assignment, item=assignment.item, kind=kind)
    if refusal is not None:
        raise LabelNotRevisable(refusal)
    current = label_fields(label, values)
    if current == values:
        return Revision(label, label.version, changed=False, replayed=False)
    # The time is read under the locks: a change that waited for another one is later than it.
    now = now or timezone.now()
    LabelRevision.objects.create(
        assignment=assignment, campaign_id=assignment.campaign_id, annotator=annotator, version=label.version,
        values=current, given_at=label.revised_at or label.created_at, superseded_at=now, idempotency_key=key,
        content_hash=label.content_hash, task_set_version=label.task_set_version, time_on_revision_ms=time_ms,
    )
    for name, value in values.items():
        setattr(label, name, value)
    label.version += 1
    label.revised_at = now
    label.save(update_fields=[*values, "version", "revised_at"])
    # The same label with other values: the dashboards recompute, the counters stay.
    campaign_version_bump(campaign_id=assignment.campaign_id)
    return Revision(label, label.version, changed=True, replayed=False)


def _replayed(done: LabelRevision, label: Label, assignment: Assignment, values: dict[str, Any]) -> Revision:
    """A re-sent change: the label as it is, if this key wrote exactly these values."""
    if done.assignment_id != assignment.pk:
        raise SubmissionConflict("This change key was already used for another item; the change was not saved.")
    written_version = done.version + 1
    if label.version == written_version:
        written = label_fields(label, values)
    else:  # changed again since: what this request wrote is archived as the next revision
        written = LabelRevision.objects.get(assignment=assignment, version=written_version).values
    if written != values:
        raise SubmissionConflict("This change was already saved with a different answer; the new answer was not saved.")
    return Revision(label, written_version, changed=True, replayed=True)


def label_revisions(*, assignment: Assignment) -> list[LabelRevision]:
    """The superseded versions of an assignment's label, oldest first."""
    return list(LabelRevision.objects.filter(assignment=assignment).order_by("version"))


__all__ = [
    "REFUSED_LOCKED", "REFUSED_NOT_PREVIOUS", "Revision", "label_fields", "label_revise",
    "label_revisions", "previous_label", "revision_refusal",
]
