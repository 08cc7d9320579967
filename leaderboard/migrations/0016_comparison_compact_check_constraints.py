"""Comparison: two check constraints every planned row and every verdict checks, stored in a form PostgreSQL
reads back faster (issue 30; the pattern of migration annotation 0022).

PostgreSQL 15 reads a table's check constraints back from their stored node trees (``stringToNode``) and
prepares them again at every INSERT or UPDATE statement that writes the table, whatever the columns it
changes: a judge run's round write (the verdicts' UPDATE and the next plan's INSERT, one statement) does it
twice. Django writes ``winner IN (…)`` as ``ARRAY['A'::varchar, …]::text[]``, one cast constant node a value,
and ``confidence >= 0.0`` with a numeric constant cast to ``double precision`` at each use. These two hold the
same rule in fewer nodes: the list as one ``text[]`` constant, the bounds as ``double precision`` constants,
and no ``IS NULL`` branch (a check passes when its expression is NULL, so a NULL confidence passes the
bounds alone). The six constraints' stored text 4,637 → 3,475 characters.

Only PostgreSQL's copy changes: the model keeps the constraints as Django writes them (SQLite, and
``Model.validate_constraints``, use those), and a later migration that alters one replaces it by name.
``tests/leaderboard/ekphrasis/test_comparison_check_constraints.py`` evaluates each stored form and Django's
own over the listed values and others (NULL, NaN, infinities, values just outside the bounds), and finds the
same verdicts.
"""

from django.db import migrations

#: (constraint, the model's rule in fewer nodes); the test above compares the two forms value by value.
COMPACT = [
    ("comparison_ok_has_winner", "status::text <> 'ok' OR winner::text = ANY ('{A,B,tie}'::text[])"),
    ("comparison_confidence_0_1", "confidence >= '0'::double precision AND confidence <= '1'::double precision"),
]


def _compact(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    table = apps.get_model("leaderboard", "Comparison")._meta.db_table
    for name, check in COMPACT:
        schema_editor.execute(
            f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(name)}, ADD CONSTRAINT {quote(name)} CHECK ({check})"
        )


def _as_django_writes_them(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    model = apps.get_model("leaderboard", "Comparison")
    for name, _ in COMPACT:
        constraint = next(c for c in model._meta.constraints if c.name == name)
        schema_editor.remove_constraint(model, constraint)
        schema_editor.add_constraint(model, constraint)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0015_comparison_model_pair_no_own_indexes"),
    ]

    operations = [
        migrations.RunPython(_compact, _as_django_writes_them),
    ]
