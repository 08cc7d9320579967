"""Django's module-level regular expressions that every annotator request uses, compiled once at start-up
(issue 30). Django keeps them as ``_lazy_re_compile`` objects (a ``SimpleLazyObject`` around ``re.compile``):
each use (``invalid_token_chars_re.search``) runs ``LazyObject.__getattribute__`` in Python, which raises and
swallows an ``AttributeError`` (the method is not the wrapper's own) before ``__getattr__`` hands the call to
the compiled pattern. A combined label used them 11 times: the CSRF token checks, the signed session's
separator check, the host check, the response's charset and the no-store header.

:func:`lazy_regexes_compiled` replaces each such module global of :data:`MODULES` by the pattern it wraps (the
same ``re.Pattern`` object the wrapper would hand every call to, compiled now instead of at the first use).
"""

from __future__ import annotations

import importlib
import re

from django.utils.functional import SimpleLazyObject, empty

#: Modules whose lazily compiled patterns an annotator's request uses (signing: the session; request: the
#: host; response: the charset; csrf: the tokens; cache: Cache-Control).
MODULES = ("django.core.signing", "django.http.request", "django.http.response", "django.middleware.csrf",
           "django.utils.cache")


def lazy_regexes_compiled(modules: tuple[str, ...] = MODULES) -> list[str]:
    """Put in each module's globals the compiled pattern of each lazily compiled one; the names replaced
    (none the second time)."""
    replaced = []
    for name in modules:
        module = importlib.import_module(name)
        for attribute, value in list(vars(module).items()):
            if type(value) is not SimpleLazyObject:
                continue
            if value._wrapped is empty:
                value._setup()
            if isinstance(value._wrapped, re.Pattern):
                setattr(module, attribute, value._wrapped)
                replaced.append(f"{name}.{attribute}")
    return replaced


__all__ = ["MODULES", "lazy_regexes_compiled"]
