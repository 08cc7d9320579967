"""Keys and secrets never enter a bundle.

Two guards. :func:`scrubbed` drops every value under a key that names a credential (``Authorization``,
``api_key``, ``token``, ``secret``, ``password``, ``cookie``) from a record before it is written, keeping
``*_env`` keys — the *name* of the environment variable a key is read from, never its value.
:func:`redactor` is the last pass over every text written: any given secret value (the values of the
environment variables the site's models read their keys from, and of any variable whose name looks
like a credential) is replaced by ``[redacted]`` wherever it appears.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "looks_secret", "redactor", "scrubbed"]

REDACTED = "[redacted]"
_SECRET_KEY = re.compile(r"authori[sz]ation|api[_-]?key|secret|token(?!s)|password|passwd|cookie|credential", re.I)
#: Shorter values are not searched for: they would match ordinary text (and are no real key).
MIN_SECRET_LENGTH = 8


def looks_secret(name: str) -> bool:
    """A key or variable name that holds a credential (``*_env`` names a variable, and is kept)."""
    return bool(_SECRET_KEY.search(name)) and not name.lower().endswith("_env")


def scrubbed(value: Any) -> Any:
    """``value`` with every credential-named key's value replaced by ``[redacted]`` (recursively)."""
    if isinstance(value, Mapping):
        return {k: (REDACTED if looks_secret(str(k)) and v not in (None, "") else scrubbed(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrubbed(v) for v in value]
    return value


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function replacing each of ``secrets`` (longest first) in a text by ``[redacted]``."""
    values = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
    if not values:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(v) for v in values))
    return lambda text: pattern.sub(REDACTED, text)
