"""Keys and secrets never enter a bundle.

Two guards. :func:`scrubbed` drops every value under a key that names a credential (``Authorization``,
``api_key``, ``token``, ``secret``, ``password``, ``cookie``) from a record before it is written, keeping
``*_env`` keys — the *name* of the environment variable a key is read from, never its value.
:func:`redactor` is the last pass over every text written: any given secret value (the values of the
environment variables the site's models read their keys from, and of any variable whose name looks
like a credential) is replaced by ``[redacted]`` wherever it appears, and so is the credential part of
any URL in the text (``https://user:password@host``, ``?key=…``, ``&access_token=…``, a signed URL's
``X-Amz-Signature=…``): a provider's endpoint or an error reply can carry a key in its URL, which no
variable of this machine holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "looks_secret", "redactor", "scrubbed", "without_url_credentials"]

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


#: ``scheme://user:password@``: the password part of a URL's userinfo.
_URL_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@\"'<>]*:)[^/\s@\"'<>]+@", re.I)
#: A URL query parameter that carries a credential (Gemini's ``?key=``, OAuth's ``access_token``, signed URLs).
_URL_SECRET_PARAMETER = re.compile(
    r"([?&](?:api[_-]?key|key|token|access[_-]?token|auth|sig|signature|x-amz-signature|x-amz-credential|"
    r"x-goog-signature|x-goog-credential|password|secret|client[_-]?secret)=)[^&#\s\"'<>]+", re.I)


def without_url_credentials(text: str) -> str:
    """``text`` with the credential parts of every URL in it replaced by ``[redacted]``."""
    return _URL_SECRET_PARAMETER.sub(lambda m: m.group(1) + REDACTED,
                                     _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text))


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function replacing each of ``secrets`` (longest first) in a text by ``[redacted]``, and the
    credential parts of URLs (:func:`without_url_credentials`)."""
    values = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
    if not values:
        return without_url_credentials
    pattern = re.compile("|".join(re.escape(v) for v in values))
    return lambda text: without_url_credentials(pattern.sub(REDACTED, text))
