"""Four check constraints every label checks, stored in a form PostgreSQL reads back faster (issue 30).

PostgreSQL 15 reads a table's check constraints back from their stored node trees (``stringToNode``) and
plans them again at every execution of an INSERT or UPDATE that writes the table, whatever the columns it
changes; a combined label checks 21 of them. Django writes ``status IN (…)`` as ``ARRAY['a'::varchar, …]``,
each element a cast constant node, and the swap rule as four branches of three comparisons. Callgrind on
the PostgreSQL backend (100-odd combined labels in the site's WSGI application, 20 annotators taking
turns) counted 0.68 M of its 4.07 M instructions a label in ``ExecConstraints``, 0.50 M of them in
``stringToNode``. These four hold the same rule in fewer nodes: a list of values as one ``text[]``
constant, and the swap rule as one ``CASE``: 19,000 stored characters a label become 13,000, and the
backend's instructions a label 4.07 M → 3.88 M (−4.7 %).

Only PostgreSQL's copy changes: the models keep the constraints as Django writes them (SQLite, and
``Model.validate_constraints``, use those), and a later migration that alters one replaces it by name.
``swapped``, ``choice`` and ``shown_choice`` are NOT NULL, so the ``CASE`` needs no NULL branch; in
``shown_choice || ' ' || choice`` the one space stands where it does in each listed pair, so only those
pairs match. ``tests/annotation/test_check_constraints.py`` evaluates each stored form and Django's own
over every listed value and others, and finds the same verdicts.
"""

from django.db import migrations

#: (table, constraint, the model's rule in fewer nodes). Values are the model's (Assignment.Status,
#: FlagReason with the blank, PairChoice); the test above compares the two forms value by value.
COMPACT = [
    (
        "annotation_assignment",
        "assignment_status_known",
        "status::text = ANY ('{active,submitted,skipped,expired,stale}'::text[])",
    ),
    (
        "annotation_pairwiselabel",
        "annotation_pairwiselabel_flag_known",
        "flag_reason::text = ANY ('{missing_or_truncated,field_dimension_mismatch,ambiguous_brief,"
        "checklist_task_mismatch,duplication_or_identity_leak,not_one_static_image,tig_audit_failure,"
        'translation_problem,""}\'::text[])',
    ),
    (
        "annotation_pairwiselabel",
        "pairwiselabel_shown_choice_known",
        "shown_choice::text = ANY ('{A,B,tie}'::text[])",
    ),
    (
        "annotation_pairwiselabel",
        "pairwiselabel_choice_maps_through_swap",
        'CASE WHEN swapped THEN (shown_choice::text || \' \' || choice::text) = ANY (\'{"tie tie","A B","B A"}\'::text[]) '
        "ELSE choice::text = shown_choice::text END",
    ),
]


def _compact(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    for table, name, check in COMPACT:
        schema_editor.execute(
            f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(name)}, "
            f"ADD CONSTRAINT {quote(name)} CHECK ({check})"
        )


def _as_django_writes_them(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    models = {model._meta.db_table: model for model in apps.get_app_config("annotation").get_models()}
    for table, name, _ in COMPACT:
        model = models[table]
        constraint = next(c for c in model._meta.constraints if c.name == name)
        schema_editor.remove_constraint(model, constraint)
        schema_editor.add_constraint(model, constraint)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0021_sweep_without_its_own_index"),
    ]

    operations = [
        migrations.RunPython(_compact, _as_django_writes_them),
    ]
