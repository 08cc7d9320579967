"""Comparison: on PostgreSQL, five foreign keys instead of six; each shown response checked as one of the
comparison's task's responses, which also says the task exists (issue 30).

A planned comparison's INSERT queues one deferred foreign-key check a key, run at commit: PostgreSQL starts an
executor for each (``SELECT 1 … FOR KEY SHARE``, ~34.6 k instructions), 19 % of the backend's instructions in an
inline judge run. Django's six single-column keys (run, task, model_x, model_y, shown_a, shown_b) become four of
them (run, model_x, model_y kept) and two composite ones, ``(task_id, shown_a_id)`` and ``(task_id, shown_b_id)``
→ ``leaderboard_response (task_id, id)``:

* every row the six keys accepted that the judge writes, the five accept (a shown response is always one of the
  task's: the plan draws them from it), and every row the six rejected, the five reject: a missing task has no
  response, and a missing response matches no key;
* they reject more: a shown response of another task;
* the referenced side refuses the same deletes: a response that comparisons show (the composite keys), and a
  task that comparisons name, since they name it only with one of its responses, whose own key to the task
  refuses the delete while it exists (and which the comparisons' keys keep).

The keys' target is a unique constraint on ``leaderboard_response (task_id, id)``, which replaces the response's
single-column task index (it begins with the task, as ``response_one_per_sample`` does), so a response's INSERT
writes as many index entries as before. Only PostgreSQL's keys change: the model keeps its three ``ForeignKey``
fields with their constraints in Django's state (SQLite keeps them); a later migration that alters the task or a
shown field must first run this one backwards. ``tests/leaderboard/ekphrasis/test_comparison_foreign_keys.py``
shows each rule still refusing a bad row.
"""

import django.db.models.deletion
from django.db import migrations, models

#: (the composite key's name, the shown column)
COMPOSITE = [
    ("comparison_shown_a_of_its_task", "shown_a_id"),
    ("comparison_shown_b_of_its_task", "shown_b_id"),
]
SINGLE = ["task", "shown_a", "shown_b"]


def _composite(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    model = apps.get_model("leaderboard", "Comparison")
    response = schema_editor.quote_name(apps.get_model("leaderboard", "Response")._meta.db_table)
    quote = schema_editor.quote_name
    drops = []
    for name in SINGLE:
        column = model._meta.get_field(name).column
        (constraint,) = schema_editor._constraint_names(model, [column], foreign_key=True)
        drops.append(f"DROP CONSTRAINT {quote(constraint)}")
    adds = [f"ADD CONSTRAINT {quote(name)} FOREIGN KEY (task_id, {quote(column)}) REFERENCES {response} (task_id, id) "
            f"DEFERRABLE INITIALLY DEFERRED" for name, column in COMPOSITE]
    schema_editor.execute(f"ALTER TABLE {quote(model._meta.db_table)} {', '.join(drops + adds)}")


def _single(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    model = apps.get_model("leaderboard", "Comparison")
    quote = schema_editor.quote_name
    schema_editor.execute(f"ALTER TABLE {quote(model._meta.db_table)} "
                          + ", ".join(f"DROP CONSTRAINT {quote(name)}" for name, _ in COMPOSITE))
    for name in SINGLE:  # Django's own keys, under the names Django gives them
        schema_editor.execute(schema_editor._create_fk_sql(model, model._meta.get_field(name),
                                                           "_fk_%(to_table)s_%(to_column)s"))


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0017_comparison_fillfactor"),
    ]

    operations = [
        migrations.AlterField(
            model_name="response",
            name="task",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="responses", to="leaderboard.task"),
        ),
        migrations.AddConstraint(
            model_name="response",
            constraint=models.UniqueConstraint(fields=("task", "id"), name="response_task_id_unique"),
        ),
        migrations.RunPython(_composite, _single),
    ]
