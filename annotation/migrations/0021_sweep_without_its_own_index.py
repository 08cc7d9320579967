"""The expiry sweep's own index goes (issue 30): one index fewer written at every hand-out.

``assignment_active_expires`` (``expires_at`` of the active assignments) was written at each hand-out and
read only by the expiry sweep. ``assignment_one_active_per_annotator`` indexes the same rows (the active
ones, at most one per annotator and campaign), so the sweep, across campaigns or in one, reads them
through it and checks each one's ``expires_at``: as many rows as annotators hold items, never the table.
A hand-out now writes 9 assignment indexes where it wrote 10. ``tests/annotation/test_write_indexes.py``
checks that the sweep's lookups still have an index.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0020_fewer_indexes_written_per_label"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="assignment",
            name="assignment_active_expires",
        ),
    ]
