"""A label's four foreign keys become one, to its assignment's identity (issue 30), on PostgreSQL.

PostgreSQL checks each foreign key of an inserted row with its own query at commit (``RI_FKey_check_ins``,
~35 K instructions each under callgrind); a combined label's pairwise label checked four: its assignment,
campaign, item and annotator. Here the label's ``(item, assignment, campaign, annotator)`` references the
assignment's ``(item, id, campaign, annotator)`` (``assignment_identity``, unique because ``id`` is): one
check, and a stronger rule than before, since the label's campaign, item and annotator must now be its
assignment's (the one path that writes labels, ``services._label_submit``, copies them from it). Every row
the four keys protected stays protected: the label's assignment exists, and that assignment's own keys
(campaign, item, annotator, which stay) keep the campaign, the item and the user from being deleted under
it. ``assignment_identity`` leads with the item, so it also serves the lookups of the assignment's item key,
whose own index goes: an assignment still writes 9 indexes.

Only PostgreSQL's keys change (SQLite keeps Django's four, and gets the unique constraint): the models
declare the four keys as before, so Django's deletion cascades are unchanged. Callgrind on the PostgreSQL
backend (``tests/benchmarks/callgrind_label.py run --backend --warm 20 --labels 100``, 5,000-label seed):
foreign-key checks 8 → 5 a combined label, ``AfterTriggerFireDeferred`` 308 → 210 K instructions a label,
the backend 3.414 → 3.307 M a label (−3.1 %). ``tests/annotation/test_label_assignment_key.py`` shows a mismatched label and every
deletion the four keys refused are still refused, and the migration reverses to Django's four keys.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

LABEL_MODELS = ["pairwiselabel", "uoslabel", "faithfulnesslabel", "strategylabel", "tigauditlabel", "handwritinglabel"]
#: The label's columns, in the order of the assignment's referenced columns below.
KEY_FIELDS = ["item", "assignment", "campaign", "annotator"]
REFERENCED = "(item_id, id, campaign_id, annotator_id)"


def _one_key(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    for name in LABEL_MODELS:
        model = apps.get_model("annotation", name)
        table = model._meta.db_table
        columns = [model._meta.get_field(field).column for field in KEY_FIELDS]
        drops = [fk for column in columns for fk in schema_editor._constraint_names(model, [column], foreign_key=True)]
        clauses = [f"DROP CONSTRAINT {quote(fk)}" for fk in drops]
        clauses.append(
            f"ADD CONSTRAINT {quote(f'{table}_assignment_identity')} FOREIGN KEY ({', '.join(columns)}) "
            f"REFERENCES {quote('annotation_assignment')} {REFERENCED} DEFERRABLE INITIALLY DEFERRED"
        )
        schema_editor.execute(f"ALTER TABLE {quote(table)} " + ", ".join(clauses))


def _djangos_four_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    for name in LABEL_MODELS:
        model = apps.get_model("annotation", name)
        table = model._meta.db_table
        schema_editor.execute(f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(f'{table}_assignment_identity')}")
        for field in KEY_FIELDS:
            schema_editor.execute(schema_editor._create_fk_sql(model, model._meta.get_field(field), "_fk_%(to_table)s_%(to_column)s"))


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0024_label_path_checks_folded'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.UniqueConstraint(fields=('item', 'id', 'campaign', 'annotator'), name='assignment_identity'),
        ),
        migrations.AlterField(
            model_name='assignment',
            name='item',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='annotation.item'),
        ),
        migrations.RunPython(_one_key, _djangos_four_keys),
    ]
