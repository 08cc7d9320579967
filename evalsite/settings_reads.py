"""A setting read as Python's own attribute lookup (issue 30): ``django.conf.settings`` keeps every setting it
has read in its own ``__dict__``, but each read of one still runs ``LazyObject.__getattribute__`` in Python,
which also asks the value for a ``_mask_wrapped`` marker (the flag of the proxy methods ``LazyObject``
defines), an ``AttributeError`` raised and swallowed for every ordinary value. An annotator's combined label
reads settings 72 times (Django's cursor asks ``DEBUG`` on every statement; CSRF, sessions, signing,
requests and responses read theirs).

:func:`settings_reads_cached` gives the settings object a subclass of its class whose ``__getattribute__`` is
``object``'s: a kept setting is found in ``__dict__`` by the interpreter; a first read still falls through
to ``LazySettings.__getattr__``, which reads and keeps it; every change (``override_settings``, assignment,
``del``) still clears or pops the kept values through ``LazySettings.__setattr__``/``__delattr__``,
unchanged. What differs is only the ``_mask_wrapped`` test, which matters for ``LazyObject``'s proxy
methods asked for by name (``settings.__iter__``): they are now the lazy object's own proxy, which calls the
wrapped Settings' method. No setting's value is such a proxy. Callgrind, 100 combined labels
(``tests/benchmarks/callgrind_label.py``): 8.78 M -> 8.57 M instructions a label.
"""

from __future__ import annotations

from django.conf import LazySettings, settings


class CachedReadsSettings(LazySettings):
    #: Python's own lookup, in C: the class's data descriptors (``__class__``, ``configured``), then a setting
    #: kept in ``__dict__``, then the class's attributes, then ``LazySettings.__getattr__`` (a first read).
    __getattribute__ = object.__getattribute__


def settings_reads_cached() -> None:
    """Make ``django.conf.settings`` a :class:`CachedReadsSettings` (the same object, every module's
    reference to it unchanged); idempotent."""
    if type(settings) is LazySettings:
        # object's own __class__ slot: LazyObject's __class__ property reports the wrapped Settings' class,
        # and LazySettings' __setattr__ would set the attribute on the wrapped Settings
        object.__dict__["__class__"].__set__(settings, CachedReadsSettings)


__all__ = ["CachedReadsSettings", "settings_reads_cached"]
