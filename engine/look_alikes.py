"""Look-alike characters: the ASCII letter or digit a character is drawn like, for every check of a name
that a reader must not be able to mistake for another (the blinding of model names in what annotators
are shown, :mod:`annotation.identity_text`, and the one identity of a subject model's name,
:func:`leaderboard.services.catalogue.model_name_readings`).

The table is Unicode's confusables (UTS #39, ``confusables.txt``) as ``confusable-homoglyphs`` ships it:
Cyrillic ``а``, Greek ``Τ``, Cherokee ``Ꭺ`` … each has exactly one ASCII alphanumeric look-alike. A Latin
letter the table leaves out is folded by its Unicode name when that name is a plain letter in another
dress: small capitals (``ᴅ``), a letter "with" a hook, stroke or other attachment (``ɗ``), squared,
negative-squared or circled letters (``🅳``). Other scripts' decimal digits are ASCII digits. ASCII itself
is never folded (``l``, ``1`` and ``I`` stay distinct).

A look-alike that compatibility decomposition (NFKD/NFKC) would turn into a letter imitating nothing
(Greek lunate sigma ``ϲ`` → final sigma ``ς``) is folded before it: :func:`decomposition_safe`.
"""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache

from confusable_homoglyphs.confusables import confusables_data

__all__ = ["INVISIBLE_LETTERS", "case_blind_readings", "decomposition_safe", "drawn", "look_alike", "look_alike_any_case"]

_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)
#: Letters that draw nothing (Hangul fillers): dropped like format characters.
INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")


@lru_cache(maxsize=1)
def _look_alikes() -> dict[str, str]:
    """Non-ASCII character -> the ASCII letter or digit it imitates (Unicode confusables.txt, as
    ``confusable-homoglyphs`` ships it; every such character has exactly one ASCII alphanumeric look-alike)."""
    table = {}
    for char, homoglyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        targets = [h["c"] for h in homoglyphs if h["c"] in _ASCII_ALNUM]
        if targets:
            table[char] = targets[0]
    return table


#: A Latin letter in another dress, by its Unicode name: small capital, with an attachment, squared,
#: negative squared, circled or parenthesized ("LATIN SMALL LETTER D WITH HOOK", "NEGATIVE SQUARED LATIN
#: CAPITAL LETTER D"). Turned, reversed or open letters ("TURNED A", "OPEN E") are other letters.
_DRESSED_LATIN = re.compile(r"LATIN (?:(?:CAPITAL|SMALL) )?LETTER (?:SMALL CAPITAL )?([A-Z])(?: WITH .+)?$")


def _dressed_latin(char: str) -> str | None:
    found = _DRESSED_LATIN.search(unicodedata.name(char, ""))
    if found is None:
        return None
    return found.group(1) if char.isupper() or "CAPITAL LETTER" in unicodedata.name(char) else found.group(1).lower()


@lru_cache(maxsize=4096)
def look_alike(char: str) -> str:
    """One character folded to the ASCII letter or digit it imitates, keeping its case; else itself."""
    if char.isascii():
        return char
    if unicodedata.category(char) == "Nd":
        return str(unicodedata.digit(char))
    table = _look_alikes()
    lower = char.lower()
    # A character takes its own look-alike (Greek capital "Ν" is "N" though its small "ν" looks like
    # "v"); a capital the table gives "l" draws a capital I (Cyrillic "І"); a capital the table leaves
    # out takes its small form's look-alike.
    target = table.get(char)
    if target == "l" and char.isupper():
        return "I"
    if target is None and lower != char and len(lower) == 1:
        target = table.get(lower)
    if target is None:
        return _dressed_latin(char) or char
    return target.upper() if char.isupper() else target


@lru_cache(maxsize=4096)
def look_alike_any_case(char: str) -> str:
    """:func:`look_alike`, or where a character imitates nothing, the look-alike of its other case: Cyrillic
    small ``т`` is ``t`` because its capital ``Т`` is ``T``. A name compared case-blind must fold both cases
    of a letter alike, else ``ТЕСТ`` would read as ``TECT`` and its small form ``тест`` as nothing."""
    own = look_alike(char)
    if own != char or char.isascii():
        return own
    for other in (char.upper(), char.lower()):
        if len(other) == 1 and other != char and look_alike(other) != other and look_alike(other).isascii():
            folded = look_alike(other)
            return folded.lower() if char.islower() else folded.upper()
    return char


@lru_cache(maxsize=4096)
def case_blind_readings(char: str) -> frozenset[str]:
    """Everything ``char`` may be read as in a name compared case-blind (case folded): the look-alike of each of
    its cases (:func:`look_alike_any_case`). Mostly one; two for the letters whose capital and small forms
    imitate different characters (confusables.txt): Greek ``Ν``/``ν`` (N, v), ``Υ``/``υ`` (Y, u), Latin tone
    five ``Ƽ``/``ƽ`` (5, s), Warang Citi ``𑢣``/``𑣃`` (L, i), ``𑢤``/``𑣄`` (Y, z), ``𑢦``/``𑣆`` (E, 7),
    ``𑢵``/``𑣕`` (O, 6), ``𑢼``/``𑣜`` (T, y). So ``νovaGen`` is ``NovaGen`` (its capitals ``ΝOVAGEN``
    read as ``NOVAGEN``) and ``vovaGen`` too (as drawn); a single fold would keep only one of the two."""
    readings = {look_alike_any_case(char).casefold()}
    for other in (char.upper(), char.lower()):
        if len(other) == 1 and other != char and look_alike_any_case(other).isascii():
            readings.add(look_alike_any_case(other).casefold())
    return frozenset(readings)


def drawn(char: str) -> bool:
    """Whether a character draws something of its own: not a mark (Unicode category M*), not a format or
    control character (C*, whitespace excepted), not an invisible Hangul filler."""
    category = unicodedata.category(char)
    if category[0] == "M" or char in INVISIBLE_LETTERS:
        return False
    return category[0] != "C" or char.isspace()


@lru_cache(maxsize=1)
def _hidden_by_decomposition() -> dict[int, str]:
    """Look-alike letters whose compatibility decomposition is a letter that imitates nothing (Greek lunate
    sigma ``ϲ`` decomposes to final sigma ``ς``, its capital ``Ϲ`` to ``Σ``): folded before NFKD, else lost."""
    hidden = {}
    for char in _look_alikes():
        if unicodedata.category(char)[0] != "L":
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", char) if drawn(c))
        if base != char and not base.isascii() and "".join(map(look_alike, base)).lower() != look_alike(char).lower():
            hidden[ord(char)] = look_alike(char)
    return hidden


def decomposition_safe(text: str) -> str:
    """``text`` with the look-alikes that compatibility decomposition would hide already folded."""
    return text.translate(_hidden_by_decomposition())
