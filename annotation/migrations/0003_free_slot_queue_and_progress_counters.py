"""The free-slot queue and the progress counters (issue 16).

Slots get their item's campaign and position and an ``is_free`` flag with a partial index on the free
ones; campaigns and annotators get progress counters. The data migration fills all of them from the
existing rows (a slot is free when no active or submitted assignment holds it; ``labels`` counts the
submitted assignments of regular items, ``done`` an annotator's submitted ones, gold included)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import Count, Exists, OuterRef, Subquery

LIVE = ("active", "submitted")


def fill(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    ItemSlot = apps.get_model("annotation", "ItemSlot")
    Assignment = apps.get_model("annotation", "Assignment")
    Campaign = apps.get_model("annotation", "Campaign")
    CampaignProgress = apps.get_model("annotation", "CampaignProgress")
    AnnotatorProgress = apps.get_model("annotation", "AnnotatorProgress")
    item = Item.objects.filter(pk=OuterRef("item_id"))
    ItemSlot.objects.update(
        campaign_id=Subquery(item.values("campaign_id")[:1]),
        position=Subquery(item.values("position")[:1]),
        is_free=~Exists(Assignment.objects.filter(slot_id=OuterRef("pk"), status__in=LIVE)),
    )
    slots = dict(ItemSlot.objects.values_list("campaign_id").annotate(n=Count("pk")))
    labels = dict(
        Assignment.objects.filter(status="submitted", slot__isnull=False).values_list("campaign_id").annotate(n=Count("pk"))
    )
    CampaignProgress.objects.bulk_create([
        CampaignProgress(campaign_id=pk, slots=slots.get(pk, 0), labels=labels.get(pk, 0))
        for pk in Campaign.objects.values_list("pk", flat=True)
    ])
    AnnotatorProgress.objects.bulk_create([
        AnnotatorProgress(campaign_id=campaign_id, annotator_id=annotator_id, done=n)
        for campaign_id, annotator_id, n in Assignment.objects.filter(status="submitted")
        .values_list("campaign_id", "annotator_id").annotate(n=Count("pk"))
    ])
    if schema_editor.connection.vendor == "postgresql":
        # Fire the deferred foreign-key checks of the updates now: the AlterField below cannot run
        # on a table with pending trigger events.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0002_assignment_active_expires"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="itemslot",
            name="campaign",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="annotation.campaign"),
        ),
        migrations.AddField(
            model_name="itemslot",
            name="position",
            field=models.PositiveIntegerField(default=0, help_text="The item's position (queue order)."),
        ),
        migrations.AddField(
            model_name="itemslot",
            name="is_free",
            field=models.BooleanField(default=True, help_text="No live (active or submitted) assignment holds the slot."),
        ),
        migrations.CreateModel(
            name="CampaignProgress",
            fields=[
                ("campaign", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                                  related_name="progress", serialize=False, to="annotation.campaign")),
                ("slots", models.PositiveIntegerField(default=0)),
                ("labels", models.PositiveIntegerField(default=0)),
                ("label_version", models.PositiveBigIntegerField(default=0)),
                ("item_version", models.PositiveBigIntegerField(
                    default=0,
                    help_text="Grows when items are created, changed, made gold or deleted (the dashboards' item cache).")),
            ],
        ),
        migrations.CreateModel(
            name="AnnotatorProgress",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("done", models.PositiveIntegerField(default=0)),
                ("annotator", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                                to=settings.AUTH_USER_MODEL)),
                ("campaign", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                               to="annotation.campaign")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("campaign", "annotator"), name="annotatorprogress_unique")],
            },
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="itemslot",
            name="campaign",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotation.campaign"),
        ),
        migrations.AddIndex(
            model_name="itemslot",
            index=models.Index(condition=models.Q(("is_free", True)), fields=["campaign", "position", "item", "index"],
                               name="itemslot_free_queue"),
        ),
    ]
