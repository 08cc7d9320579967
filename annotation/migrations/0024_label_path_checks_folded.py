"""The check constraints a combined label writes, folded into fewer stored constraints (issue 30), after 0022/0023.

PostgreSQL 15 reads every check constraint of a written table back from its stored node tree
(``stringToNode``, ~30 instructions a character) and prepares it again at each INSERT or UPDATE; a combined
label (``submit?next=1``) checked 20 of them, 12,429 stored characters. Here a rule that another stored rule
of the same row already carries is folded into that one, and ranges are one ``int4range`` constant:

* label kinds and revisions: Django's ``time_on_item_ms >= 0`` (``PositiveIntegerField``) joins
  ``time_under_a_day`` as ``time_on_item_ms <@ '[0,86400000]'::int4range`` (NULL passes as before);
  Django's ``version >= 0`` is dropped, ``version_revised_together`` (``version = 1`` or ``version > 1``,
  and a revision's ``version_from_1``) refuses every row it refused;
* pairwise: ``shown_choice_known`` joins the swap rule, ``shown || ' ' || choice`` in the listed pairs of
  its side (``A A``, ``B B``, ``tie tie`` unswapped; ``tie tie``, ``A B``, ``B A`` swapped): every listed
  pair has a known shown choice, and the one space in each pair lets no other split match;
* slot: Django's ``index >= 0`` joins ``itemslot_index_below_9`` as ``index <@ '[0,8]'``;
* campaign progress: Django's four ``>= 0`` checks become one ``LEAST(…) >= 0`` (LEAST skips NULLs, so it
  is false exactly when one count is negative).

A combined label now checks 13 stored constraints, 10,168 characters. Callgrind on the PostgreSQL backend
(``tests/benchmarks/callgrind_label.py run --backend --warm 20 --labels 100``, a 5,000-label seed, the
same template database migrated back and forth): ``ExecConstraints`` 471 → 398 K instructions a label,
the backend 3.484 → 3.414 M a label (−2.0 %).

Only PostgreSQL's copy changes; the models keep Django's rules (SQLite, ``Model.validate_constraints``).
The dropped names no longer exist on PostgreSQL: a later migration that alters or removes one of these
rules must change the folded constraint that carries it (``FOLDS`` below). The test
``tests/annotation/test_check_constraints_folded.py`` judges each folded form against the conjunction of
Django's rules it carries over a grid of values, and inserts a bad row for every rule.
"""

from django.db import migrations

FLAG_TABLES = [
    "annotation_pairwiselabel",
    "annotation_uoslabel",
    "annotation_faithfulnesslabel",
    "annotation_strategylabel",
    "annotation_tigauditlabel",
    "annotation_handwritinglabel",
]

#: The swap rule as 0022 stored it, and 0022's shown-choice list.
SWAP_0022 = (
    "CASE WHEN swapped THEN (shown_choice::text || ' ' || choice::text) = ANY ('{\"tie tie\",\"A B\",\"B A\"}'::text[]) "
    "ELSE choice::text = shown_choice::text END"
)
SHOWN_0022 = "shown_choice::text = ANY ('{A,B,tie}'::text[])"


def _label_folds(table: str) -> list[tuple]:
    return [
        (table, f"{table}_time_under_a_day", "time_on_item_ms <@ '[0,86400000]'::int4range",
         "time_on_item_ms <= 86400000", [(f"{table}_time_on_item_ms_check", '"time_on_item_ms" >= 0')]),
        (table, f"{table}_version_revised_together", None, None, [(f"{table}_version_check", '"version" >= 0')]),
    ]


#: (table, the constraint that carries the folded rules, its new form or None when unchanged, its form before
#: (None: it did not exist), [(a folded constraint's name, its form before)]).
FOLDS = [
    *(fold for table in FLAG_TABLES for fold in _label_folds(table)),
    ("annotation_labelrevision", "labelrevision_time_under_a_day", "time_on_revision_ms <@ '[0,86400000]'::int4range",
     "time_on_revision_ms <= 86400000",
     [("annotation_labelrevision_time_on_revision_ms_check", '"time_on_revision_ms" >= 0')]),
    ("annotation_labelrevision", "labelrevision_version_from_1", None, None,
     [("annotation_labelrevision_version_check", '"version" >= 0')]),
    ("annotation_pairwiselabel", "pairwiselabel_choice_maps_through_swap",
     "(shown_choice::text || ' ' || choice::text) = ANY (CASE WHEN swapped THEN '{\"tie tie\",\"A B\",\"B A\"}'::text[] "
     "ELSE '{\"A A\",\"B B\",\"tie tie\"}'::text[] END)",
     SWAP_0022, [("pairwiselabel_shown_choice_known", SHOWN_0022)]),
    ("annotation_itemslot", "itemslot_index_below_9", "\"index\"::integer <@ '[0,8]'::int4range", '"index" <= 8',
     [("annotation_itemslot_index_check", '"index" >= 0')]),
    ("annotation_campaignprogress", "campaignprogress_counts_not_negative",
     'LEAST("labels", "slots", "item_version", "label_version") >= 0',
     None,
     [(f"annotation_campaignprogress_{column}_check", f'"{column}" >= 0')
      for column in ("labels", "slots", "item_version", "label_version")]),
]


def _alter(schema_editor, table: str, drops: list[str], adds: list[tuple[str, str]]) -> None:
    quote = schema_editor.quote_name
    clauses = [f"DROP CONSTRAINT {quote(name)}" for name in drops]
    clauses += [f"ADD CONSTRAINT {quote(name)} CHECK ({check})" for name, check in adds]
    schema_editor.execute(f"ALTER TABLE {quote(table)} " + ", ".join(clauses))


def _fold(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, carrier, form, before, folded in FOLDS:
        drops = [name for name, _ in folded]
        adds = []
        if form is not None:
            if before is not None:
                drops.append(carrier)
            adds.append((carrier, form))
        _alter(schema_editor, table, drops, adds)


def _unfold(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, carrier, form, before, folded in reversed(FOLDS):
        drops, adds = [], list(folded)
        if form is not None:
            drops.append(carrier)
            if before is not None:
                adds.append((carrier, before))
        _alter(schema_editor, table, drops, adds)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0023_label_check_constraints_fewer_nodes"),
    ]

    operations = [
        migrations.RunPython(_fold, _unfold),
    ]
