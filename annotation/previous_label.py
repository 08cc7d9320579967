"""The annotator's previous label as the page shows it to be changed (:mod:`annotation.label_revision`
writes the change). Reachable from :mod:`annotation.selectors` under the same name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation.blinding_recheck import item_blinding_current
from annotation.kinds import kind_for
from annotation.label_revision import previous_label, revision_refusal
from annotation.models import Assignment, Campaign, Item
from leaderboard.selectors import catalogue_revision

__all__ = ["previous_label_present"]


def previous_label_present(*, campaign: Campaign, annotator: AbstractBaseUser,
                           media_url_for: Callable[[str], Callable[[str], str]]) -> dict[str, Any] | None:
    """The annotator's previous (most recent) label in the campaign, for the page to show and change:
    the item as :func:`assignment_present` gives it (same blinded content, in the orientation the
    annotator saw), their answer in the page's own shape, shown order (``Kind.answer_for_page``), and
    the label's version. None when they have labelled nothing here. When it may not be changed
    (:func:`annotation.label_revision.revision_refusal`), ``revisable`` is false, ``refusal`` says
    why, and neither the item nor the answer is sent (the item may show something else by now).
    Nothing else: no item or model id, no gold status, no other annotator's label. ``media_url_for``
    maps an assignment token to the page's media URL builder."""
    label = previous_label(campaign=campaign, annotator=annotator)
    if label is None:
        return None
    kind = kind_for(campaign.kind)
    assignment = Assignment.objects.get(pk=label.assignment_id)
    assignment.campaign = campaign
    assignment.item = Item.objects.select_related(*kind.content_relations).get(pk=assignment.item_id)
    assignment.item.campaign = campaign
    # Blinding's gatekeeper before the item is shown again: checked against the catalogue's current names
    # (withheld when they reach it; a withheld item is refused below and its content not sent).
    item_blinding_current(item=assignment.item, kind=kind, revision=catalogue_revision())
    refusal = revision_refusal(label=label, assignment=assignment, item=assignment.item, kind=kind)
    body: dict[str, Any] = {"token": assignment.token, "kind": kind.code, "version": label.version,
                            "revisable": refusal is None, "refusal": refusal or "", "content": None, "answer": None}
    if refusal is None:
        body["content"] = kind.present(assignment.item, assignment, media_url=media_url_for(assignment.token))
        body["answer"] = kind.answer_for_page(label)
    return body
