"""Adjective density of a text from a fixed offline word list (for launch criterion (vi) of Ekphrasis
App. D.3: "length and adjective-density correlations do not dominate scores").

No tagger is run: :data:`ADJECTIVES` is a hand-written list of common English adjectives, weighted
towards the descriptive vocabulary of visual plans (colour, light, texture, size, shape, mood), plus the
productive suffixes in :data:`ADJECTIVE_SUFFIXES` for words of at least seven letters. It over- and
under-counts at the margins (``light`` the noun counts); it is a cheap, deterministic proxy that moves
with "ornate" description, which is all the criterion needs.

    density = adjective tokens / all word tokens   (0 for an empty text)
"""

from __future__ import annotations

import re

__all__ = ["ADJECTIVES", "ADJECTIVE_SUFFIXES", "adjective_count", "adjective_density"]

ADJECTIVES = frozenset("""
able absent abstract ancient angry anxious arched bare beautiful big bitter black bleak blue blurred bold
bright brilliant broad broken bronze brown brushed calm careful cheap clean clear cloudy cold colossal
complex cool copper cracked crimson crisp crooked crowded crystalline curved cyan damp dark dead deep
delicate dense dim dirty distant dramatic dry dull dusty eager early elegant empty enormous ethereal even
faded faint false familiar famous fast fat fierce fine flat floating fluffy foggy fragile fresh frozen full
fuzzy gentle ghostly giant glassy glossy glowing gold golden gorgeous graceful grand gray great green grey
grim hard harsh heavy hidden high hollow hot huge icy immense intense intricate ivory jagged large late
lavish lean leafy light little lonely long loose lost loud low lush luminous magenta massive matte mellow
metallic mighty mild misty modern moody muddy murky muted naked narrow neat new noisy old opaque orange
ornate pale pastel perfect pink plain polished poor pretty proud pure purple quiet radiant rapid rare raw
red rich rigid ripe rough round royal rugged rusty sad scarlet serene shadowy shallow sharp shiny short
silent silver simple sleek slender slick slim slow small smooth soft solid sombre somber sparkling stark
steep sticky still strange strong sturdy subtle sunny swift tall tangled teal tender thick thin tidy tiny
translucent transparent twisted ugly vast velvet vibrant violet vivid warm weathered wet white wide wild
wooden worn yellow young
""".split())
#: Suffixes that mark adjectives in words of seven or more letters (beautiful, luminous, metallic, fragile…).
ADJECTIVE_SUFFIXES = ("ful", "ous", "ive", "ic", "al", "less", "able", "ible", "ish", "esque")
_TOKEN = re.compile(r"[a-z]+(?:-[a-z]+)?")
_MIN_SUFFIX_WORD = 7


def _is_adjective(word: str) -> bool:
    if word in ADJECTIVES:
        return True
    return len(word) >= _MIN_SUFFIX_WORD and word.endswith(ADJECTIVE_SUFFIXES)


def adjective_density(text: str) -> float:
    """Share of the word tokens of ``text`` that are adjectives by the word list (0.0 for no words)."""
    words = _TOKEN.findall(text.lower())
    if not words:
        return 0.0
    # density = adjective tokens / word tokens
    return sum(_is_adjective(w) for w in words) / len(words)


def adjective_count(text: str) -> int:
    """Number of adjective tokens of ``text`` by the word list (a style covariate of issue 24)."""
    return sum(_is_adjective(w) for w in _TOKEN.findall(text.lower()))
