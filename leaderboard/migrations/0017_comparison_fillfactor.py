"""Comparison: the table's fill factor 10 on PostgreSQL, so that most verdicts are heap-only (HOT) updates.

A comparison is written twice: planned (~150 bytes) before its call, then judged (~1.8 kB: per-item
outcomes, the checklist shown, the rationale). At the default fill factor a page filled with planned rows
has no room for their verdicts, so 61 of 6,932 verdicts at 40 tasks were HOT: every other one moved its row
to another page and wrote a new entry in each of the table's five indexes (primary key, the identity
constraint, the task's and the two shown responses'), which later inserts had to clean up (bottom-up
deletion). At fill factor 10 an insert leaves 90 % of a page free, and 5,400 of the 6,932 verdicts stay on
their page without touching an index: callgrind on the PostgreSQL backend over the whole inline 40-task
simulated run (its finishing reads included), 8.705 G → 8.048 G instructions (−7.5 %); comparisons and
snapshot identical.

What it costs: a run's rows spread over 1.60 times the heap pages (2,940 against 1,836 at 40 tasks; the
indexes are smaller, 185 against 249 pages, since fewer verdicts add entries), 1.50 times the pages in all.
Reading a whole run back (every column, as an export does) cost the backend the same instructions on both
(0.744 / 0.739 G against 0.747 / 0.741 G, warm). Migration 0012 had tried fill factor 10 and not kept it:
the backend's CPU difference was not measurable in wall-clock runs on the shared machine; the instruction
count shows it. Only new pages take it (rows stored before stay where they are). SQLite has nothing to set.
"""

from django.db import migrations

FILLFACTOR = 10


def _set(value: int | None):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        table = schema_editor.quote_name(apps.get_model("leaderboard", "Comparison")._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = {value})" if value
                              else f"ALTER TABLE {table} RESET (fillfactor)")
    return run


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0016_comparison_compact_check_constraints"),
    ]

    operations = [
        migrations.RunPython(_set(FILLFACTOR), _set(None)),
    ]
