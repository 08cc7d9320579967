"""Path converters of the annotation URLs: only a well-formed assignment token or shown image slot
reaches a view (a NUL, a slash or a kilobyte of text in a token is a 404 from the resolver)."""

from __future__ import annotations


class AssignmentTokenConverter:
    # secrets.token_urlsafe(24) gives 32 characters of this alphabet; the labelling page's URL
    # templates use the placeholder "TOKEN", which the same pattern accepts.
    regex = r"[A-Za-z0-9_-]{1,64}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class ShownSlotConverter:
    # A and B: the two shown images of a pair; R: a canvas-similarity item's reference
    regex = r"[ABR]"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
