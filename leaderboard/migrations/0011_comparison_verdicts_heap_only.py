"""Comparison: a verdict's UPDATE of its planned row can be heap-only (HOT) on PostgreSQL.

* The index on (run, task, dimension, status) goes: it held ``status``, a column every verdict writes, so no
  verdict could be a HOT update and each wrote all nine of the table's indexes. Its lookups (by run, task and
  dimension) are served by ``comparison_identity_unique``, which begins with the same three columns.
* The run foreign key's own index goes too: ``comparison_identity_unique`` begins with the run.
* The table's fill factor is 10 (PostgreSQL only): a planned row is ~150 bytes and its verdict (rationale,
  per-item outcomes, the checklist shown) ~1.8 kB, so a HOT update needs the room on the planned row's page.
  At the default 100 a page is filled with ~50 planned rows and their verdicts all move to other pages (1 %
  HOT on a 40-task run); at 10 a page takes ~5 planned rows, about what it holds once they are judged (78 %
  HOT, 40 % less WAL for the run). The final table is about the same size: it is made of judged rows.
"""

from django.db import migrations, models

FILL_FACTOR = 10


def _set_fill_factor(apps, schema_editor, value: int | None) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    table = schema_editor.quote_name(apps.get_model("leaderboard", "Comparison")._meta.db_table)
    schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = {value})" if value
                          else f"ALTER TABLE {table} RESET (fillfactor)")


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0010_atom_extraction_long_extractor_names"),
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
        migrations.RunPython(lambda apps, editor: _set_fill_factor(apps, editor, FILL_FACTOR),
                             lambda apps, editor: _set_fill_factor(apps, editor, None)),
    ]
