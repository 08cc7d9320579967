"""Comparison: a verdict's large values are compressed with LZ4 on PostgreSQL, not pglz.

A judged row (~2.3 kB: the per-item outcomes ~1.3 kB, the checklist shown ~0.8 kB) is over PostgreSQL's
TOAST threshold (~2 kB), so every verdict's UPDATE compresses its largest value in place; with pglz that was
3.7 % of the backend's CPU over a 40-task simulated run (perf, ``pglz_compress``), and every read of the
rows decompresses it again. LZ4 compresses and decompresses several times faster; the values read back are
the same. Only new values take it (rows stored before keep pglz, readable as ever). A PostgreSQL built
without LZ4 keeps pglz; SQLite has nothing to set.
"""

from django.db import migrations

COLUMNS = ("per_item_outcomes", "checklist", "rationale")


def _set_compression(method: str):
    def run(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
            row = cursor.fetchone()
        if not (row and row[0]):
            return  # a server built without LZ4
        table = connection.ops.quote_name(apps.get_model("leaderboard", "Comparison")._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} " + ", ".join(
            f"ALTER COLUMN {connection.ops.quote_name(column)} SET COMPRESSION {method}" for column in COLUMNS))
    return run


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0012_comparison_fewer_indexes"),
    ]

    operations = [
        migrations.RunPython(_set_compression("lz4"), _set_compression("default"), elidable=False),
    ]
