"""The label tables' shared check constraints stored in fewer nodes (issue 30), the pattern of 0022.

PostgreSQL 15 reads a table's check constraints back from their stored node trees (``stringToNode``, about
30 instructions a character of the tree's text) at every INSERT or UPDATE of the table. Every label kind
shares four rules (``Label.Meta.constraints``); Django stores three of them with nodes that add nothing:

* ``time_under_a_day``: ``time_on_item_ms IS NULL OR time_on_item_ms <= 86400000``. A check passes unless
  it is false, and ``NULL <= 86400000`` is NULL, so the comparison alone passes and refuses the same rows
  (the same for the revision's ``time_on_revision_ms``).
* ``flag_has_note``: ``flag_reason = '' OR NOT flag_note = ''``; ``NOT x = ''`` is ``x <> ''`` in
  three-valued logic too.
* ``version_revised_together``: ``(revised_at IS NULL AND version = 1) OR (revised_at IS NOT NULL AND
  version > 1)``. ``revised_at IS NULL`` is never NULL, so the rule is ``version = 1`` when it is true and
  ``version > 1`` when it is false: one ``CASE`` with the same value for every row, NULL version included.

and ``flag_known`` of the kinds other than pairwise (0022 compacted the pairwise one) as its one
``text[]`` constant. A pairwise label's checks are 7,154 stored characters where they were 7,641; callgrind
on the PostgreSQL backend (``tests/benchmarks/callgrind_label.py run --backend``, 100 combined labels):
``ExecConstraints`` 489 → 471 K instructions a label, the backend 3.614 → 3.597 M (−0.5 %).
Only PostgreSQL's copy changes; the models keep Django's form. ``tests/annotation/test_check_constraints.py``
judges each stored form and Django's own over a grid of values and finds the same verdicts.
"""

from django.db import migrations

#: The label kinds' tables (``Label`` subclasses); each has the four shared rules under these names.
LABEL_TABLES = [
    "annotation_pairwiselabel",
    "annotation_uoslabel",
    "annotation_faithfulnesslabel",
    "annotation_strategylabel",
    "annotation_tigauditlabel",
    "annotation_handwritinglabel",
]

#: FlagReason's values and the blank, as 0022 lists them for the pairwise label.
FLAG_KNOWN = (
    "flag_reason::text = ANY ('{missing_or_truncated,field_dimension_mismatch,ambiguous_brief,"
    "checklist_task_mismatch,duplication_or_identity_leak,not_one_static_image,tig_audit_failure,"
    'translation_problem,""}\'::text[])'
)


def _label_rules(table: str) -> list[tuple[str, str, str]]:
    rules = [
        (table, f"{table}_time_under_a_day", "time_on_item_ms <= 86400000"),
        (table, f"{table}_flag_has_note", "flag_reason::text = '' OR flag_note::text <> ''"),
        (table, f"{table}_version_revised_together", "CASE WHEN revised_at IS NULL THEN version = 1 ELSE version > 1 END"),
    ]
    if table != "annotation_pairwiselabel":  # 0022 stored the pairwise one so
        rules.append((table, f"{table}_flag_known", FLAG_KNOWN))
    return rules


#: (table, constraint, the model's rule in fewer nodes); the test above compares the two forms value by value.
COMPACT = [
    *(rule for table in LABEL_TABLES for rule in _label_rules(table)),
    ("annotation_labelrevision", "labelrevision_time_under_a_day", "time_on_revision_ms <= 86400000"),
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
        ("annotation", "0022_compact_check_constraints"),
    ]

    operations = [
        migrations.RunPython(_compact, _as_django_writes_them),
    ]
