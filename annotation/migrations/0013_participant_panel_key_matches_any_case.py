"""Panel ids are matched whatever their case (issue 25 audit): a normalised column, ``panel_key``
(trimmed, lower case: annotation.panels.panel_id_key), on participants and blocked ids. Uniqueness per
campaign moves from ``panel_id`` to ``panel_key``; ``panel_id`` keeps the id as the panel sent it (the one
a researcher pays or bonuses, which MTurk matches case-sensitively).

Rows made before: each gets its key. Should a campaign already hold two participants whose ids differ
only in case (someone who came back under another case), the first to enter keeps the key and each later
one gets ``<key>~<pk>``: nothing is deleted or merged, both stay in the pay report under the ids they
used, and the id, in any case, now resumes the first.
"""

import django.db.models.functions.text
from django.db import migrations, models


def _keys_fill(apps, schema_editor):
    Participant = apps.get_model("annotation", "Participant")
    BlockedPanelId = apps.get_model("annotation", "BlockedPanelId")
    taken: set[tuple[int, str]] = set()
    for pk, campaign_id, panel_id in Participant.objects.order_by("campaign_id", "entered_at", "pk").values_list(
            "pk", "campaign_id", "panel_id"):
        key = panel_id.strip().lower()
        if (campaign_id, key) in taken:
            key = f"{key}~{pk}"
        taken.add((campaign_id, key))
        Participant.objects.filter(pk=pk).update(panel_key=key)
    for pk, panel_id in BlockedPanelId.objects.values_list("pk", "panel_id"):
        BlockedPanelId.objects.filter(pk=pk).update(panel_key=panel_id.strip().lower())


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0012_campaign_texts_paused_after_catalogue_change"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="participant",
            name="participant_one_per_panel_id",
        ),
        migrations.RemoveIndex(
            model_name="blockedpanelid",
            name="blockedpanelid_lookup",
        ),
        migrations.AddField(
            model_name="blockedpanelid",
            name="panel_key",
            field=models.CharField(default="", max_length=80),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="participant",
            name="panel_key",
            field=models.CharField(default="", max_length=80),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="participant",
            name="panel_id",
            field=models.CharField(
                help_text="PROLIFIC_PID, MTurk workerId or the generic panel's id, as the panel first sent it (the one to pay).",
                max_length=64),
        ),
        migrations.RunPython(_keys_fill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="blockedpanelid",
            index=models.Index(fields=["panel", "panel_key"], name="blockedpanelid_key_lookup"),
        ),
        migrations.AddConstraint(
            model_name="participant",
            constraint=models.UniqueConstraint(fields=("campaign", "panel_key"), name="participant_one_per_panel_key"),
        ),
        migrations.AddConstraint(
            model_name="participant",
            constraint=models.CheckConstraint(
                condition=models.Q(("panel_key", django.db.models.functions.text.Lower("panel_id")),
                                   ("panel_key__contains", "~"), _connector="OR"),
                name="participant_panel_key_is_lowered_id"),
        ),
    ]
