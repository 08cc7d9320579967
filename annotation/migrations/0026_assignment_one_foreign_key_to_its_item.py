"""An assignment's foreign keys to its item and its campaign become one on PostgreSQL (issue 30), after 0025.

PostgreSQL checks each foreign key of an inserted row with its own query at commit (``RI_FKey_check_ins``,
~35 K instructions each under callgrind); a hand-out's assignment checked four: campaign, item, slot and
annotator. Here the assignment's ``(item, campaign)`` references the item's ``(id, campaign)``
(``item_identity``, unique because ``id`` is): one check for two, and a stronger rule, since the
assignment's campaign must now be its item's (every hand-out takes the item from the campaign's own items
or slots). Every row the two keys protected stays protected: the item exists, and the item's own key to
its campaign keeps the campaign from being deleted under it. The item table is written when items are
made, not per label, so its new index costs the labelling path nothing.

Only PostgreSQL's keys change (SQLite keeps Django's, and gets the unique constraint): the model declares
both keys as before, so Django's deletion cascades are unchanged. Callgrind on the PostgreSQL backend
(``tests/benchmarks/callgrind_label.py run --backend --warm 20 --labels 100``, 5,000-label seed): foreign-key
checks 5 → 4 a combined label, ``AfterTriggerFireDeferred`` 210 → 183 K instructions a label, the backend
3.307 → 3.276 M a label (−1.0 %). ``tests/annotation/test_label_assignment_key.py`` shows a mismatched assignment and every
deletion the two keys refused are still refused, and the migration reverses to Django's keys.
"""

from django.db import migrations, models

#: The assignment's columns, in the order of the item's referenced columns below.
KEY_FIELDS = ["item", "campaign"]
REFERENCED = "(id, campaign_id)"
NAME = "annotation_assignment_item_identity"


def _one_key(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    model = apps.get_model("annotation", "assignment")
    columns = [model._meta.get_field(field).column for field in KEY_FIELDS]
    drops = [fk for column in columns for fk in schema_editor._constraint_names(model, [column], foreign_key=True)]
    clauses = [f"DROP CONSTRAINT {quote(fk)}" for fk in drops]
    clauses.append(f"ADD CONSTRAINT {quote(NAME)} FOREIGN KEY ({', '.join(columns)}) "
                   f"REFERENCES {quote('annotation_item')} {REFERENCED} DEFERRABLE INITIALLY DEFERRED")
    schema_editor.execute(f"ALTER TABLE {quote(model._meta.db_table)} " + ", ".join(clauses))


def _djangos_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    model = apps.get_model("annotation", "assignment")
    schema_editor.execute(f"ALTER TABLE {quote(model._meta.db_table)} DROP CONSTRAINT {quote(NAME)}")
    for field in KEY_FIELDS:
        schema_editor.execute(schema_editor._create_fk_sql(model, model._meta.get_field(field), "_fk_%(to_table)s_%(to_column)s"))


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0025_label_one_foreign_key_to_its_assignment'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='item',
            constraint=models.UniqueConstraint(fields=('id', 'campaign'), name='item_identity'),
        ),
        migrations.RunPython(_one_key, _djangos_keys),
    ]
