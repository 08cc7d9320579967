"""psycopg dumpers registered for the site's text choices (``TextChoices`` enum members, issue 30).

A query parameter that is an enum member — ``status=Assignment.Status.ACTIVE``, a pair's ``PairChoice`` —
is a ``str`` subclass psycopg has no dumper registered for: each new cursor's first such value makes
``AdaptersMap.get_dumper`` miss on the class, then walk its ``__mro__`` raising and swallowing a
``KeyError`` for the class and for ``TextChoices`` before it finds ``str``'s dumper (about 21 a combined
label). Registering ``str``'s own dumpers for every text-choices class makes that first lookup a hit with
the same dumper classes, so the same bytes are sent; a class defined after the first connection (none is,
outside tests) is still found the old way.
"""

from __future__ import annotations

import functools


def text_choices_classes() -> list[type]:
    """Every ``str``-valued choices enum defined so far (``TextChoices`` and its subclasses, recursively)."""
    from django.db.models import TextChoices

    found, todo = [], [TextChoices]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


@functools.cache
def choice_adapters(template):
    """``template`` with ``str``'s dumpers also registered for every :func:`text_choices_classes` class."""
    from psycopg.adapt import AdaptersMap, PyFormat

    adapters = AdaptersMap(template)
    # register_dumper files a dumper under its own format and under AUTO: binary, then text, then AUTO's
    # leaves each format with exactly the dumper str has there.
    dumpers = [template.get_dumper(str, fmt) for fmt in (PyFormat.BINARY, PyFormat.TEXT, PyFormat.AUTO)]
    for cls in text_choices_classes():
        for dumper in dumpers:
            adapters.register_dumper(cls, dumper)
    return adapters
