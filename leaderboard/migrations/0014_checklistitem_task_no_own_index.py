"""Checklist items: the task's own index goes. ``checklist_item_version_unique`` (task, dimension, slot,
context key, version) begins with the task and the dimension, and serves every lookup of items by task (all
of them name the dimension too) and a task's cascade delete; the single-column index was one more index for
every item stored (a judge run stores a Novelty context's items for every pair it judges on N: 1,876 items on
a 40-task simulated run, 18,700 at 400 tasks)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0013_comparison_lz4_compression'),
    ]

    operations = [
        migrations.AlterField(
            model_name='checklistitem',
            name='task',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='checklist_items', to='leaderboard.task'),
        ),
    ]
