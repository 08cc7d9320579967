"""Text as the identity check reads it: a folded skeleton of letters and digits with its word structure.

A disguised model name must be found however it is written, and an ordinary word must not be taken
for one. Both the shown text and every catalogue name go through the same :func:`skeleton`:

1. Unicode compatibility decomposition (NFKD, i.e. NFKC's folding: fullwidth ``Ｇ`` → ``G``,
   mathematical bold letters, ligatures, superscripts), then every mark (combining accents, Unicode
   category M*), every format or control character (category C*: zero-width space and joiner, soft
   hyphen, direction overrides, word joiner, byte-order mark; whitespace controls excepted) and the
   invisible Hangul fillers are dropped, and the rest recomposed (NFC).
2. Look-alike letters are folded to the ASCII letter they imitate (:mod:`engine.look_alikes`, shared with
   the catalogue's identity of model names) with the Unicode confusables table that ``confusable-homoglyphs`` ships (Cyrillic ``а``, Greek ``Τ`` …); a Latin letter the table
   leaves out is folded by its Unicode name when that name is a plain letter in another dress: small
   capitals (``ᴅᴇᴍᴏ``), a letter "with" a hook, stroke or other attachment (``ɗ``), squared and
   negative-squared or circled letters (``🅳``); a look-alike that step 1 would decompose into a letter
   imitating nothing (Greek lunate sigma ``ϲ`` → final sigma ``ς``) is folded before it; ASCII itself is never folded (``l``, ``1`` and ``I``
   stay distinct, so "o1" is not "ol"). Other scripts' decimal digits become ASCII digits.
3. Every other character (space, ``-``, ``_``, ``.``, ``/``, every dash, U+2011, apostrophes, …) is a
   separator: words are the runs of letters and digits between separators. Inside a word a name may
   start or end where the case turns from lower to upper (``useDemoAtlas``), where the script changes
   (``我用GPT写``), and at every character of a script written without spaces (Han, kana, Thai, …); it may
   end where letters turn to digits, a version written onto a family's name (``GPT4``, ``llama3``,
   ``Claude3``), but not start where digits turn to letters (``Al2O3`` does not name "o3").
4. Case is folded (``str.casefold``).

Matching (:meth:`Skeleton.contains`): a name is found where the text's skeleton holds the name's
skeleton starting and ending on a word edge or one of the in-word points above, and every separator
the match runs across falls where the name itself has a break (a separator, a case or script change,
or a letter–digit change: ``demo atlas``, ``demo_atlas`` and ``GPT 4o`` match "demo-atlas" and "gpt-4o"),
or lies between two one-character words (a name spelled out: ``d.e.m.o-a.t.l.a.s``), or holds no
whitespace (punctuation splitting a name anywhere: ``At-las``, ``Ge.mi_ni``, ``Clau·de``), or is one line
break, alone or after a hyphen (a name carried over to the next line: ``Clau\nde``, ``Clau-\nde``). Joining across
whitespace anywhere else would take "at las" for "Atlas"; matching inside a word would take "atlases"
for "Atlas", "co3" and "o30" for "o3".

A name is also found where digits or a capital ``I`` stand in for its letters as they do on screen
(:data:`STAND_INS`: ``Cl4ude``, ``G3m1n1``, ``CIaude``, and Cyrillic ``СІаudе``, which folds to ``CIaude``),
for a name of three letters or more and at most half of its letters; the name's own digits are never stood
in for, so "01" is not "o1" and "GPT-41" is not "gpt-4o".

Right-to-left override (U+202E) displays the characters after it reversed, so a name written backwards
behind one reads correctly on screen: :func:`displayed_variants` gives the text as stored and, where it
holds an override, as displayed; both are checked. Our pages show text escaped, never as HTML, but the
same text may end up in an HTML export or a rendered note: where it holds ``&`` or ``<``, the text with
its character references decoded and its tags and comments removed (``&#100;emo``, ``de<b></b>mo``) is
checked as well, and so is text holding URL escapes (``%47PT``) with them decoded, as a browser shows a link.
"""

from __future__ import annotations

import html
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass
from functools import cached_property, lru_cache

from confusable_homoglyphs.categories import alias as script_of

from engine.look_alikes import decomposition_safe, drawn, look_alike

__all__ = ["Skeleton", "displayed_variants", "skeleton"]

#: Scripts written without spaces between words: each character may start or end a name.
_UNSPACED_SCRIPTS = frozenset({"HAN", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN"})
#: Bidirectional controls: the right-to-left override, every control that opens an embedding,
#: override or isolate (nested inside an override), and their closers.
_RLO = "\u202e"
_OPENERS = frozenset("\u202a\u202b\u202d\u202e\u2066\u2067\u2068")
_CLOSERS = frozenset("\u202c\u2069")


@lru_cache(maxsize=4096)
def _script(char: str) -> str:
    if char.isascii():
        return "LATIN"  # ASCII digits go with Latin letters ("gpt4o" is one run)
    return script_of(char)


#: Name letter -> what stands in for it on screen (leetspeak digits; a capital I for a small l): read in the
#: text's folded letters before case folding, so a small ``i`` never stands in for an ``l``.
STAND_INS = {"a": "4", "b": "8", "e": "3", "g": "69", "i": "1", "l": "1I", "o": "0", "s": "5", "t": "7", "z": "2"}
#: Each letter and its stand-ins made one character, in case-folded text (where a capital I is an ``i``, so
#: ``i`` and ``l`` share one): a name written with stand-ins is then a plain substring, found in C; only
#: there is the exact pattern tried (a text names no model, the usual case, at the cost of one search).
_LOOSE = str.maketrans({"i": "l", "1": "l", "4": "a", "8": "b", "3": "e", "6": "g", "9": "g", "0": "o", "5": "s",
                        "7": "t", "2": "z"})


@lru_cache(maxsize=4096)
def _stand_in_pattern(name: str) -> re.Pattern[str] | None:
    """A pattern for ``name`` (a skeleton's ``chars``) with each letter's stand-ins allowed, searched in a
    text's ``cased``; None for a name of fewer than three letters."""
    if sum(c.isalpha() for c in name) < 3:
        return None
    parts = []
    for char in name:
        upper = char.upper() if len(char.upper()) == 1 else ""
        parts.append("[" + re.escape(char + upper + STAND_INS.get(char, "")) + "]" if char.isalpha() else re.escape(char))
    return re.compile("".join(parts))


_MARKUP = re.compile(r"<!--.*?(?:-->|$)|<[^<>]*>", re.DOTALL)
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def displayed_variants(text: str) -> list[str]:
    """``text`` as stored, then as rendered as HTML where it holds markup (character references decoded,
    tags and comments removed), then each of those with its URL escapes decoded where it holds any
    (``%47%50%54``, ``gpt%2D4o``), then each as displayed where it holds a right-to-left override."""
    variants = [text]
    if "&" in text or "<" in text:
        rendered = html.unescape(_MARKUP.sub("", text))
        if rendered != text:
            variants.append(rendered)
    variants += [urllib.parse.unquote(variant) for variant in variants if _PERCENT_ESCAPE.search(variant)]
    return [shown for variant in variants for shown in _overrides_displayed(variant)]


def _overrides_displayed(text: str) -> list[str]:
    """``text`` as stored and, if it holds a right-to-left override, as displayed: each overridden run
    (to its closing U+202C, the paragraph's end or the end) reversed. Embeddings opened inside the run
    are counted so their closers do not end it early; the controls themselves are dropped later."""
    if _RLO not in text:
        return [text]
    lines = []
    for line in text.split("\n"):
        out: list[str] = []
        run: list[str] = []
        depth = 0  # open controls inside the current override; 0: not overridden
        for char in line:
            if depth == 0:
                if char == _RLO:
                    depth = 1
                else:
                    out.append(char)
            elif char in _OPENERS:
                depth += 1
            elif char in _CLOSERS:
                depth -= 1
                if depth == 0:
                    out.append("".join(reversed(run)))
                    run = []
            else:
                run.append(char)
        out.append("".join(reversed(run)))
        lines.append("".join(out))
    return [text, "\n".join(lines)]


@dataclass(frozen=True)
class Skeleton:
    """A text's folded letters and digits, with where its words and in-word break points lie.

    ``chars`` is the skeleton; ``starts``/``ends`` the offsets where a name may begin/end; ``gaps`` the
    offsets where a separator stood (the end of one word, the start of the next); ``single_starts`` and
    ``single_ends`` where one-character words start and end; ``breaks`` every offset where a name's own
    parts meet (gaps, case, script and letter–digit changes), used for the name side of a match;
    ``cased`` is ``chars`` before case folding (same offsets), where stand-ins are read;
    ``tight_gaps`` the gaps whose separators hold no whitespace (``At-las``, ``Ge.mini``) or are one line break
    inside a word (``At-\nlas``).
    """

    chars: str
    starts: frozenset[int]
    ends: frozenset[int]
    gaps: tuple[int, ...]
    single_starts: frozenset[int]
    single_ends: frozenset[int]
    breaks: frozenset[int]
    tight_gaps: frozenset[int] = frozenset()
    cased: str = ""

    def contains(self, name: Skeleton) -> bool:
        """Whether ``name`` is written in this text (the rules of the module docstring)."""
        if not name.chars:
            return False
        position = self.chars.find(name.chars)
        while position != -1:
            if self._found_at(position, name):
                return True
            position = self.chars.find(name.chars, position + 1)
        return self._contains_with_stand_ins(name)

    def _found_at(self, position: int, name: Skeleton) -> bool:
        end = position + len(name.chars)
        return position in self.starts and end in self.ends and self._gaps_allowed(position, end, name)

    def _contains_with_stand_ins(self, name: Skeleton) -> bool:
        pattern = _stand_in_pattern(name.chars)
        if pattern is None:
            return False
        allowed = sum(c.isalpha() for c in name.chars) // 2
        loose_name = name.chars.translate(_LOOSE)
        position = self.loose.find(loose_name)
        while position != -1:  # every place the exact pattern can match (and a few where it cannot)
            if pattern.match(self.cased, position) is not None:
                shown = self.chars[position:position + len(name.chars)]
                stood_in = sum(a != b for a, b in zip(shown, name.chars))
                if stood_in <= allowed and self._found_at(position, name):
                    return True
            position = self.loose.find(loose_name, position + 1)  # matches may overlap
        return False

    @cached_property
    def loose(self) -> str:
        """``chars`` with each letter's stand-ins made one character (:data:`_LOOSE`)."""
        return self.chars.translate(_LOOSE)

    def _gaps_allowed(self, start: int, end: int, name: Skeleton) -> bool:
        for gap in self.gaps:
            if gap <= start:
                continue
            if gap >= end:
                break
            # spelled out letter by letter, punctuation without a space, or a separator where the name
            # has a break of its own
            if (not (gap in self.single_ends and gap in self.single_starts) and gap not in self.tight_gaps
                    and (gap - start) not in name.breaks):
                return False
        return True


#: In an ASCII word: lower→upper ("useDemo") and before the last capital of a run that a small letter
#: follows ("GPTModel").
_ASCII_CASE_BREAK = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_DIGIT_BREAK = re.compile(r"(?<=\d)(?=\D)|(?<=\D)(?=\d)")
#: Where a word's letters turn to digits: a name ending in a letter may end there ("GPT4", "llama3").
_VERSION_END = re.compile(r"(?<=[^\W\d_])(?=\d)")
#: Words: runs of letters and digits (``\w`` less the underscore; marks are already gone).
_WORD = re.compile(r"[^\W_]+")
_WHITESPACE = re.compile(r"\s")
#: A word carried over to the next line: one line break, right after the word's letters or after the
#: hyphen that marks the break ("Clau\nde", "Clau-\nde"); it reads as the one word on screen.
_LINE_BREAK_IN_WORD = re.compile(r"[-\u2010]?(?:\r\n|[\n\r\u2028])")
#: ASCII controls other than whitespace, dropped as format characters are (the ASCII fast path).
_ASCII_CONTROLS = {c: None for c in range(32) if not chr(c).isspace()} | {127: None}


def _in_word_breaks(word: str) -> list[int]:
    """Offsets inside ``word`` (folded, case kept) where a name may start or end: lower→upper, before
    the last capital of a run followed by a small letter (``GPTModel``), script changes, and around
    each character of an unspaced script."""
    if word.isascii():
        return [m.start() for m in _ASCII_CASE_BREAK.finditer(word)] if not word.islower() else []
    found = []
    for i in range(1, len(word)):
        before, after = word[i - 1], word[i]
        scripts = _script(before), _script(after)
        if ((before.islower() and after.isupper())
                or (before.isupper() and after.isupper() and i + 1 < len(word) and word[i + 1].islower())
                or scripts[0] != scripts[1] or scripts[0] in _UNSPACED_SCRIPTS):
            found.append(i)
    return found


def _digit_breaks(word: str) -> list[int]:
    if word.isalpha() or word.isdigit():
        return []
    return [m.start() for m in _DIGIT_BREAK.finditer(word)]


def _folded(text: str) -> str:
    """Steps 1–2 of the module docstring: decomposed, cleaned of marks and invisible characters, recomposed,
    look-alikes folded (case kept). ASCII text only loses its control characters."""
    if text.isascii():
        return text.translate(_ASCII_CONTROLS)
    decomposed = unicodedata.normalize("NFKD", decomposition_safe(text))
    cleaned = unicodedata.normalize("NFC", "".join(c for c in decomposed if drawn(c)))
    return "".join(look_alike(c) for c in cleaned)


def skeleton(text: str) -> Skeleton:
    """The folded skeleton of ``text`` (one variant: see :func:`displayed_variants` for overrides)."""
    folded_text = _folded(text)
    words = _WORD.findall(folded_text)
    separators = _WORD.split(folded_text)  # separators[i]: what stands before words[i]
    chars: list[str] = []
    cased: list[str] = []
    starts, ends, single_starts, single_ends, breaks, tight = set(), set(), set(), set(), set(), set()
    gaps = []
    offset = 0
    for index, word in enumerate(words):
        if index:
            gaps.append(offset)
            breaks.add(offset)
            if ((separators[index] != " " and _WHITESPACE.search(separators[index]) is None)
                    or _LINE_BREAK_IN_WORD.fullmatch(separators[index])):
                tight.add(offset)
        if word.isascii():
            folded = word.lower()
            cased.append(word)
            positions = range(len(word) + 1)
        else:
            # casefold per character, so in-word offsets map onto the skeleton ("ß" becomes "ss")
            pieces = [char.casefold() for char in word]
            cased.extend(char if len(piece) == 1 else piece for char, piece in zip(word, pieces))
            folded = "".join(pieces)
            positions = [0]
            for piece in pieces:
                positions.append(positions[-1] + len(piece))
        chars.append(folded)
        length = len(folded)
        inner = {offset + positions[i] for i in _in_word_breaks(word)}
        starts.add(offset)
        ends.add(offset + length)
        if inner:
            starts |= inner
            ends |= inner
            breaks |= inner
        breaks.update(offset + positions[i] for i in _digit_breaks(word))
        if not word.isalpha():
            ends.update(offset + positions[m.start()] for m in _VERSION_END.finditer(word))
        if length == 1:
            single_starts.add(offset)
            single_ends.add(offset + 1)
        offset += length
    return Skeleton("".join(chars), frozenset(starts), frozenset(ends), tuple(gaps), frozenset(single_starts),
                    frozenset(single_ends), frozenset(breaks), frozenset(tight), "".join(cased))
