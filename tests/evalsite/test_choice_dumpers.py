"""Text-choices enum members sent as query parameters find ``str``'s psycopg dumpers at once
(evalsite/db_backends/postgresql/choice_dumpers.py, issue 30): the same dumper classes as psycopg's own
lookup through the class's ``__mro__``, the same value sent, no ``KeyError`` raised and swallowed."""

from __future__ import annotations

import sys

import psycopg
import pytest
from django.db import connection
from psycopg.adapt import PyFormat
from psycopg.pq import Format

from annotation.choices import PairChoice
from annotation.models import Assignment, Campaign
from evalsite.db_backends.postgresql.choice_dumpers import choice_adapters, text_choices_classes
from tests.conftest import require_service

FORMATS = (PyFormat.AUTO, PyFormat.TEXT, PyFormat.BINARY)


def test_every_text_choices_class_gets_the_dumper_psycopgs_own_lookup_finds():
    ours = choice_adapters(psycopg.adapters)
    classes = text_choices_classes()
    assert {Assignment.Status, Campaign.Status, PairChoice} <= set(classes)
    for cls in classes:
        for fmt in FORMATS:
            # psycopg.adapters has no entry for the class: it walks the __mro__ to str's dumper
            assert (
                ours.get_dumper(cls, fmt)
                is psycopg.adapters.get_dumper(cls, fmt)
                is ours.get_dumper(str, fmt)
            )
    for fmt in (Format.TEXT, Format.BINARY):  # what is dumped by type oid stays psycopg's
        for oid in (25, 1043, 19):
            assert ours.get_dumper_by_oid(oid, fmt) is psycopg.adapters.get_dumper_by_oid(oid, fmt)
    assert ours.get_dumper(int, PyFormat.AUTO) is psycopg.adapters.get_dumper(int, PyFormat.AUTO)


def _dumper_key_errors(run) -> int:
    """KeyErrors raised inside psycopg's adapter lookups while ``run()`` runs."""
    raised = 0

    def tracer(frame, event, arg):
        nonlocal raised
        if (
            event == "exception"
            and arg[0] is KeyError
            and frame.f_code.co_filename.endswith(("_adapters_map.py", "_py_transformer.py"))
            and frame.f_code.co_name == "get_dumper"
        ):
            raised += 1
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return raised


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_choice_parameter_is_dumped_without_a_swallowed_key_error_and_sends_its_value():
    require_service("postgres")
    values = [Assignment.Status.ACTIVE, PairChoice.TIE, Campaign.Status.OPEN]
    read = []

    def query():
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s, %s, %s, pg_typeof(%s)::text, pg_typeof(%s)::text", [*values, values[0], "active"])
            read.append(cursor.fetchone())

    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s", ["warm"])  # str's own first lookup on a cursor is not what is counted
    # psycopg's map answers at once instead of walking each class's __mro__ (15 KeyErrors without it)
    assert _dumper_key_errors(query) == 0
    # the values sent, typed as the plain string is (client-side binding leaves both literals "unknown")
    assert read[0][:3] == ("active", "tie", "open") and read[0][3] == read[0][4]
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 0
