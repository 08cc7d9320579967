"""Comparison: one index, (task, shown_a, shown_b), instead of three single-column ones (task, shown_a, shown_b)
(issue 30).

No read of a judge run uses them (its reads go through comparison_identity_unique); they serve deletes: a task's
cascade (Django's lookup by task) and a response's (PostgreSQL's checks of the foreign keys (task, shown_a) and
(task, shown_b) of migration 0018, and Django's PROTECT lookups by the response alone). The one index serves them
all: the task is its first column, and the checks' conditions are all index conditions (the second key's within
the task's entries); Django's lookups by a response alone can read the small index whole rather than the table,
whose pages are nine tenths empty (fill factor 10). Every planned comparison wrote an entry in each of the three
(its verdict mostly none, a heap-only update): two entries fewer a planned row.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0018_comparison_shown_responses_of_its_task'),
    ]

    operations = [
        migrations.AlterField(
            model_name='comparison',
            name='shown_a',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='leaderboard.response'),
        ),
        migrations.AlterField(
            model_name='comparison',
            name='shown_b',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='leaderboard.response'),
        ),
        migrations.AlterField(
            model_name='comparison',
            name='task',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='comparisons', to='leaderboard.task'),
        ),
        migrations.AddIndex(
            model_name='comparison',
            index=models.Index(fields=['task', 'shown_a', 'shown_b'], name='comparison_task_shown'),
        ),
    ]
