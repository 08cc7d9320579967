"""A participant's state ``closed_before_work`` (issue 25 audit): the campaign closed while they were in
consent, instructions or training, or at work with nothing done. The state column grows to hold it."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0013_participant_panel_key_matches_any_case"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="participant",
            name="participant_state_known",
        ),
        migrations.AlterField(
            model_name="participant",
            name="state",
            field=models.CharField(
                choices=[("training", "Training (consent, instructions, training items)"), ("working", "Working"),
                         ("completed", "Completed"), ("screened_out", "Screened out (failed the training)"),
                         ("returned", "Returned (left through the panel)"), ("timed_out", "Timed out"),
                         ("closed_before_work", "Closed before their work began")],
                default="training", max_length=24),
        ),
        migrations.AlterField(
            model_name="participant",
            name="state_before",
            field=models.CharField(blank=True, max_length=24),
        ),
        migrations.AddConstraint(
            model_name="participant",
            constraint=models.CheckConstraint(
                condition=models.Q(("state__in", ["training", "working", "completed", "screened_out", "returned",
                                                  "timed_out", "closed_before_work"])),
                name="participant_state_known"),
        ),
    ]
