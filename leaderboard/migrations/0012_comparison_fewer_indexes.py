"""Comparison: two indexes fewer to write for every planned row and every verdict.

* The index on (run, task, dimension, status) goes: it held ``status``, a column every verdict writes, so no
  verdict could be a heap-only (HOT) update. Its lookups (by run, task and dimension) are served by
  ``comparison_identity_unique``, which begins with the same three columns.
* The run foreign key's own index goes too: ``comparison_identity_unique`` begins with the run.

The table keeps the default fill factor. A planned row is ~150 bytes and its verdict (rationale, per-item
outcomes, the checklist shown) ~1.8 kB, so a page filled with planned rows has no room for their verdicts
and most verdicts still move to another page (1 % HOT on a 40-task run). A fill factor of 10 made 78 % of
them HOT, but spread a run's judged rows over 1.65 times the pages (2.3 rows a page instead of 3.8: the moved
rows land on pages filled to 10 % too), which every reader of a run pays, for a PostgreSQL CPU difference
not measurable on the shared machine.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0011_leaderboardsnapshot_updated_at"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="comparison",
            name="leaderboard_run_id_ee2bf5_idx",
        ),
        migrations.AlterField(
            model_name="comparison",
            name="run",
            field=models.ForeignKey(db_index=False, on_delete=models.deletion.CASCADE, related_name="comparisons",
                                    to="leaderboard.judgerun"),
        ),
    ]
