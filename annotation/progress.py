"""Progress counters of campaigns and annotators (issue 16), written in the transactions that change
what they count, so that reading progress is one row and never an aggregate over the campaign.

* :class:`~annotation.models.CampaignProgress` ``labels`` (live submitted assignments of regular
  items), ``slots`` (regular items × k) and ``label_version`` (grows on every change a dashboard shows);
  an item withheld for blinding (:mod:`annotation.blinding_recheck`) is in neither;
* :class:`~annotation.models.AnnotatorProgress` ``done`` (an annotator's live submitted assignments).

A counter row that does not exist yet (a campaign made in the admin, an annotator's first label) is
created from a recount of the rows it counts, taken inside the same transaction, after the change: the
recount already includes the change, so it is never applied twice.
"""

from __future__ import annotations

from typing import NamedTuple

from django.db import connection, transaction
from django.db.models import F, Model

from annotation.models import AnnotatorProgress, Assignment, CampaignProgress, ItemSlot
from evalsite.precompiled import row_inserted
from evalsite.prepared_statements import statement_cursor


def _campaign_recount(campaign_id: int) -> dict[str, int]:
    return {
        "slots": ItemSlot.objects.filter(campaign_id=campaign_id, item__withheld_at__isnull=True).count(),
        "labels": Assignment.objects.filter(
            campaign_id=campaign_id, status=Assignment.Status.SUBMITTED, slot__isnull=False,
            item__withheld_at__isnull=True,
        ).count(),
    }


def campaign_progress_add(*, campaign_id: int, labels: int = 0, slots: int = 0, items_changed: bool = False) -> None:
    """Add to a campaign's counters (negative to subtract) and bump its ``label_version`` (and its
    ``item_version`` when items were created, changed, made gold or deleted)."""
    updated = CampaignProgress.objects.filter(pk=campaign_id).update(
        labels=F("labels") + labels, slots=F("slots") + slots, label_version=F("label_version") + 1,
        item_version=F("item_version") + int(items_changed),
    )
    if updated:
        return
    with transaction.atomic():  # a savepoint: a concurrent creator wins, then we add to its row
        _, created = CampaignProgress.objects.get_or_create(
            pk=campaign_id, defaults={**_campaign_recount(campaign_id), "label_version": 1, "item_version": 1}
        )
    if not created:
        campaign_progress_add(campaign_id=campaign_id, labels=labels, slots=slots, items_changed=items_changed)


def campaign_version_bump(*, campaign_id: int) -> None:
    """Something a dashboard shows changed without changing the counters (a skip, an adjudication)."""
    campaign_progress_add(campaign_id=campaign_id)


def annotator_progress_add(*, campaign_id: int, annotator_id: int, done: int) -> None:
    """Add to an annotator's submitted count in a campaign (negative to subtract)."""
    row = AnnotatorProgress.objects.filter(campaign_id=campaign_id, annotator_id=annotator_id)
    if row.update(done=F("done") + done):
        return
    recount = Assignment.objects.filter(
        campaign_id=campaign_id, annotator_id=annotator_id, status=Assignment.Status.SUBMITTED
    ).count()
    with transaction.atomic():
        _, created = AnnotatorProgress.objects.get_or_create(
            campaign_id=campaign_id, annotator_id=annotator_id, defaults={"done": recount}
        )
    if not created:
        row.update(done=F("done") + done)


class SubmissionCounts(NamedTuple):
    """The counters right after a submission moved them: the campaign's labels and slots, the
    annotator's done."""

    labels: int
    slots: int
    done: int


def submission_counted(*, campaign_id: int, annotator_id: int, labels: int,
                       label: tuple[Model, str, list] | None = None) -> SubmissionCounts:
    """One submission of ``annotator_id``: the campaign's ``labels`` grow by ``labels`` (1 for a regular
    item, 0 for gold) and its ``label_version`` by one, the annotator's ``done`` by one; the counters
    after it. On PostgreSQL both updates are one statement (two ``UPDATE … RETURNING`` in a ``WITH``);
    a missing row is created from a recount, as :func:`campaign_progress_add` and
    :func:`annotator_progress_add` do.

    ``label``: the submission's label as :func:`evalsite.precompiled.row_insert` gives it, stored by the
    same statement on PostgreSQL (a third part of the ``WITH``: one round trip fewer, and the campaign's
    counter row, which every submission of the campaign locks until its commit, held one round trip
    less), by its own INSERT after the counters elsewhere; its key is set either way, and a unique
    constraint it breaks fails the statement (IntegrityError) as its own INSERT would."""
    campaigns, annotators = CampaignProgress._meta.db_table, AnnotatorProgress._meta.db_table
    campaign_sql = (f"UPDATE {campaigns} SET labels = labels + %s, label_version = label_version + 1 "
                    f"WHERE campaign_id = %s RETURNING labels, slots")
    annotator_sql = f"UPDATE {annotators} SET done = done + 1 WHERE campaign_id = %s AND annotator_id = %s RETURNING done"
    with statement_cursor(connection) as cursor:
        if connection.vendor == "postgresql":
            inserted, insert_params = ((f", label AS ({label[1]})", label[2]) if label is not None else ("", []))
            cursor.execute(f"""WITH campaign AS ({campaign_sql}), annotator AS ({annotator_sql}){inserted}
                               SELECT (SELECT labels FROM campaign), (SELECT slots FROM campaign),
                                      (SELECT done FROM annotator){", (SELECT * FROM label)" if label else ""}""",
                           [labels, campaign_id, campaign_id, annotator_id, *insert_params])
            counted_labels, slots, done, *key = cursor.fetchone()
        else:
            cursor.execute(campaign_sql, [labels, campaign_id])
            counted_labels, slots = cursor.fetchone() or (None, None)
            cursor.execute(annotator_sql, [campaign_id, annotator_id])
            done = (cursor.fetchone() or (None,))[0]
            if label is not None:
                cursor.execute(label[1], label[2])
                key = cursor.fetchone()
    if label is not None:
        row_inserted(label[0], key[0])
    if counted_labels is None:  # no counter row yet: made from a recount that includes this submission
        campaign_progress_add(campaign_id=campaign_id, labels=labels)
        counted_labels, slots = CampaignProgress.objects.values_list("labels", "slots").get(pk=campaign_id)
    if done is None:
        annotator_progress_add(campaign_id=campaign_id, annotator_id=annotator_id, done=1)
        done = AnnotatorProgress.objects.values_list("done", flat=True).get(campaign_id=campaign_id,
                                                                            annotator_id=annotator_id)
    return SubmissionCounts(counted_labels, slots, done)


def campaign_progress_recount(*, campaign_id: int) -> CampaignProgress:
    """Set a campaign's counters (and its annotators') from the rows they count: what the data
    migration did, for repairs after writes that went around the services (a shell, raw SQL)."""
    from django.db.models import Count

    with transaction.atomic():
        progress, _ = CampaignProgress.objects.update_or_create(
            pk=campaign_id, defaults=_campaign_recount(campaign_id)
        )
        CampaignProgress.objects.filter(pk=campaign_id).update(label_version=F("label_version") + 1,
                                                               item_version=F("item_version") + 1)
        AnnotatorProgress.objects.filter(campaign_id=campaign_id).delete()
        AnnotatorProgress.objects.bulk_create([
            AnnotatorProgress(campaign_id=campaign_id, annotator_id=annotator_id, done=n)
            for annotator_id, n in Assignment.objects.filter(campaign_id=campaign_id, status=Assignment.Status.SUBMITTED)
            .values_list("annotator_id").annotate(n=Count("pk"))
        ])
    return progress


def campaign_counters_refresh(*, campaign_id: int) -> None:
    """Set existing counter rows from a recount and bump the version, creating nothing (safe inside a
    cascade that may be deleting the campaign itself)."""
    from django.db.models import Count, OuterRef, Subquery
    from django.db.models.functions import Coalesce

    CampaignProgress.objects.filter(pk=campaign_id).update(**_campaign_recount(campaign_id),
                                                           label_version=F("label_version") + 1,
                                                           item_version=F("item_version") + 1)
    submitted = (
        Assignment.objects.filter(campaign_id=campaign_id, annotator_id=OuterRef("annotator_id"),
                                  status=Assignment.Status.SUBMITTED)
        .order_by().values("annotator_id").annotate(n=Count("pk")).values("n")
    )
    AnnotatorProgress.objects.filter(campaign_id=campaign_id).update(done=Coalesce(Subquery(submitted), 0))
