"""Offline rule-based atom extractor: the labelled fallback when no provider is configured.

Not the paper's extractor (App. G.2 uses an LLM prompt); it exists so the demo builds real Typed Idea Graphs
without a provider. Every record it produces carries ``extractor = "offline-rules"``.

Rules, applied per clause (clauses split at punctuation):

* words are tagged from closed lists (determiner, preposition, conjunction, pronoun/auxiliary/adverb), a
  verb lexicon with inflections, and suffix rules (-ing gerunds, -ly adverbs); everything else is content;
* noun-phrase chunks are runs of content words, joined across "of" ("cup of coffee"), with lighting/colour/
  texture/composition modifiers stripped and phrases headed by such nouns dropped unless the phrase is the
  only one (App. G.2: "avoid lighting, color, texture, or composition unless central");
* **purpose** -- the complement of a meaning cue ("symbolising renewal" -> "renewal") or "to <verb> ..."
  ("to celebrate resilience");
* **audience** -- a noun phrase after an explicit cue ("for", "aimed at", "designed for", ...) whose head is
  an audience noun; nothing else is ever typed audience (App. G.1: audience only if explicit);
* **mechanism** -- a verb-phrase chunk headed by a transformation verb, or by any lexicon verb followed by
  "of"/"from"/"out of" ("made of gears"), with its particle and object ("melting into river");
* **concept** -- an "X as Y" construction if there is one, otherwise the first noun phrase that is not a
  format noun ("a poster of a lighthouse" -> "lighthouse");
* **motif** -- every other noun phrase.

At most 7 atoms are kept (concept, audience, two purposes, two mechanisms, then motifs in text order); a
Core Idea with fewer chunks yields fewer than 3 atoms -- the extractor never invents one. Within a response,
relations are added by type: motif supports purpose, mechanism realises concept, motif composes concept,
mechanism transforms the motifs it acts on, purpose (or concept) addresses audience.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.tig.atoms import MAX_ATOMS, Atom, IdeaRecord, Relation, ResponseAtoms, atom_key
from engine.tig.lexicon import (
    AUDIENCE_CUES,
    AUDIENCE_NOUNS,
    AUXILIARIES,
    CONJUNCTIONS,
    DETERMINERS,
    FORMAT_NOUNS,
    MEANING_CUES,
    MECHANISM_PARTICLES,
    PREPOSITIONS,
    PRONOUNS,
    STYLE_MODIFIERS,
    STYLE_NOUNS,
    TRANSFORM_VERBS,
    VERB_FORMS,
    is_adverb,
    is_ambiguous_noun,
    is_gerund,
)

__all__ = ["OFFLINE_EXTRACTOR_NAME", "OfflineExtractor"]

OFFLINE_EXTRACTOR_NAME = "offline-rules"
# quota per type when more than MAX_ATOMS chunks are found (App. G.1 caps atoms at 7)
_TYPE_QUOTA = {"concept": 1, "audience": 1, "purpose": 2, "mechanism": 2}
# a purpose complement longer than this is cut (keeps labels short enough to group)
_MAX_PURPOSE_WORDS = 6
_CLAUSE_SPLIT = re.compile(r"[,.;:!?()\[\]{}\"“”«»—–]+|\s-\s")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
# next words that make an ambiguous noun/verb ("forms", "bridge") a verb
_VERB_OPENERS = DETERMINERS | frozenset(
    "into through across around over from out up down apart between beneath under along inside within behind "
    "onto".split()
)
_PASSIVE_PARTICLES = {"of", "from", "out"}
_MEANING_CUE_WORDS = [tuple(c.split()) for c in MEANING_CUES]
_AUDIENCE_CUE_WORDS = [tuple(c.split()) for c in AUDIENCE_CUES]
# conjunctions that end a purpose complement
_PURPOSE_STOPS = (CONJUNCTIONS - {"and", "that", "or"}) | {
    w for cue in AUDIENCE_CUES for w in cue.split()[:1]
}


@dataclass
class _Chunk:
    type: str
    words: list[str]
    start: int
    end: int
    head: str = ""
    acted_on_by: _Chunk | None = None  # the mechanism chunk whose object this motif is


def _tag(words: list[str]) -> list[str]:
    """One tag per word: D det, P prep, C conj, X other function word, V verb, N content."""
    tags = []
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w == "to" and nxt in VERB_FORMS and VERB_FORMS[nxt] == nxt:
            tags.append("P")
        elif w.endswith("ing") and (w in VERB_FORMS or is_gerund(w)):
            # -ing form: a verb before a preposition, determiner or clause end; a modifier before a noun
            # ("made of melting ice"); a noun after a determiner ("the rising")
            opens = not nxt or nxt in PREPOSITIONS or nxt in DETERMINERS or nxt in CONJUNCTIONS
            tags.append("V" if opens and prev not in DETERMINERS else "N")
        elif w in DETERMINERS and w != "that":
            tags.append("D")
        elif w in PREPOSITIONS:
            tags.append("P")
        elif w in CONJUNCTIONS:
            tags.append("C")
        elif w in PRONOUNS or w in AUXILIARIES or is_adverb(w):
            tags.append("X")
        elif w in VERB_FORMS:
            if prev in DETERMINERS and prev != "that":
                tags.append("N")
            elif is_ambiguous_noun(w):
                tags.append("V" if nxt in _VERB_OPENERS or prev == "to" else "N")
            elif (
                w.endswith(("ed", "en"))
                and w != VERB_FORMS[w]
                and nxt
                and nxt not in PREPOSITIONS
                and nxt not in DETERMINERS
                and nxt not in CONJUNCTIONS
            ):
                tags.append("N")  # participle used as a modifier: "woven basket"
            else:
                tags.append("V")
        else:
            tags.append("N")
    return tags


def _match(words: list[str], i: int, cues: list[tuple[str, ...]]) -> int:
    """Length of the longest cue starting at ``words[i]`` (0 if none)."""
    best = 0
    for cue in cues:
        n = len(cue)
        if n > best and tuple(words[i : i + n]) == cue:
            best = n
    return best


def _clean_phrase(words: list[str]) -> list[str]:
    words = [w for w in words if w not in STYLE_MODIFIERS]
    # "a poster of a lighthouse" names the content, not the deliverable
    while "of" in words and words[: words.index("of")] and words[words.index("of") - 1] in FORMAT_NOUNS:
        words = words[words.index("of") + 1 :]
    while words and (words[0] in DETERMINERS or words[0] in AUXILIARIES or words[0] in ("that", "of")):
        words = words[1:]
    while words and (words[-1] in PREPOSITIONS or words[-1] in CONJUNCTIONS or words[-1] in DETERMINERS):
        words = words[:-1]
    return words


def _noun_phrase(words: list[str], tags: list[str], i: int) -> tuple[list[str], int]:
    """The noun phrase starting at ``i`` (after optional determiners): runs of N joined by "of"."""
    j = i
    while j < len(words) and tags[j] == "D":
        j += 1
    start = j
    while j < len(words) and tags[j] == "N":
        j += 1
    if j == start:
        return [], i
    # "cup of coffee", "edge of the cliff"
    while j + 1 < len(words) and words[j] == "of":
        k = j + 1
        while k < len(words) and tags[k] == "D":
            k += 1
        m = k
        while m < len(words) and tags[m] == "N":
            m += 1
        if m == k:
            break
        j = m
    return [w for w, t in zip(words[start:j], tags[start:j]) if t != "D"], j


def _head(words: list[str]) -> str:
    """Head noun: the last word before any "of", else the last word."""
    if "of" in words:
        words = words[: words.index("of")]
    return words[-1] if words else ""


class OfflineExtractor:
    """Rule-based typed-atom extractor (fallback; records carry ``extractor="offline-rules"``)."""

    name = OFFLINE_EXTRACTOR_NAME

    def extract(self, idea: IdeaRecord) -> ResponseAtoms:
        chunks = self._chunks(idea.core_idea)
        atoms, relations = self._select(chunks)
        return ResponseAtoms(
            response_id=idea.response_id,
            model=idea.model,
            task=idea.task,
            sample=idea.sample,
            extractor=self.name,
            atoms=atoms,
            relations=relations,
        )

    # -- chunking ------------------------------------------------------------------------------------

    def _chunks(self, text: str) -> list[_Chunk]:
        chunks: list[_Chunk] = []
        offset = 0
        for clause in _CLAUSE_SPLIT.split(text.lower()):
            words = _WORD.findall(clause)
            if words:
                chunks.extend(self._clause_chunks(words, offset))
                offset += len(words) + 1
        noun_chunks = [c for c in chunks if c.type == "motif"]
        # App. G.2: drop lighting/colour/texture/composition phrases unless that is all there is
        if len(noun_chunks) > 1:
            chunks = [c for c in chunks if not (c.type == "motif" and c.head in STYLE_NOUNS)]
        self._assign_concept(chunks)
        return chunks

    def _clause_chunks(self, words: list[str], offset: int) -> list[_Chunk]:
        tags = _tag(words)
        chunks: list[_Chunk] = []
        i = 0
        while i < len(words):
            # purpose: meaning cue + complement
            n = _match(words, i, _MEANING_CUE_WORDS)
            if n or (
                words[i] == "to"
                and tags[i] == "P"
                and i + 1 < len(words)
                and words[i + 1] in VERB_FORMS
                and VERB_FORMS[words[i + 1]] == words[i + 1]
                and words[i + 1] not in PREPOSITIONS
            ):
                keep_verb = not n or words[i : i + n] in (["so", "that"], ["in", "order", "to"])
                j = i + (n or 1)
                end = j
                while end < len(words) and words[end] not in _PURPOSE_STOPS:
                    end += 1
                phrase = _clean_phrase(words[j:end])
                if not keep_verb and phrase and phrase[0] in VERB_FORMS and tags[j] == "V":
                    phrase = phrase[1:]
                phrase = phrase[:_MAX_PURPOSE_WORDS]
                if phrase:
                    chunks.append(_Chunk("purpose", phrase, offset + i, offset + end))
                i = max(end, i + 1)
                continue
            # audience: explicit cue + noun phrase headed by an audience noun
            n = _match(words, i, _AUDIENCE_CUE_WORDS)
            if n:
                phrase, end = _noun_phrase(words, tags, i + n)
                phrase = _clean_phrase(phrase)
                if phrase and _head(phrase) in AUDIENCE_NOUNS:
                    chunks.append(_Chunk("audience", phrase, offset + i, offset + end, head=_head(phrase)))
                    i = end
                    continue
            # concept: "X as Y" right after a noun phrase ("the city as a living organism")
            if words[i] == "as" and chunks and chunks[-1].type == "motif" and chunks[-1].end == offset + i:
                phrase, end = _noun_phrase(words, tags, i + 1)
                phrase = _clean_phrase(phrase)
                if phrase:
                    x = chunks[-1]
                    chunks.append(_Chunk("concept", [*x.words, "as", *phrase], x.start, offset + end))
                    chunks.append(_Chunk("motif", phrase, offset + i + 1, offset + end, head=_head(phrase)))
                    i = end
                    continue
            if tags[i] == "V":
                i = self._verb_chunk(words, tags, i, offset, chunks)
                continue
            if tags[i] in ("N", "D"):
                phrase, end = _noun_phrase(words, tags, i)
                if end > i:
                    phrase = _clean_phrase(phrase)
                    if phrase:
                        chunks.append(_Chunk("motif", phrase, offset + i, offset + end, head=_head(phrase)))
                    i = end
                    continue
            i += 1
        return chunks

    def _verb_chunk(
        self, words: list[str], tags: list[str], i: int, offset: int, chunks: list[_Chunk]
    ) -> int:
        verb = words[i]
        base = VERB_FORMS.get(verb, verb)
        j = i + 1
        particles: list[str] = []
        while j < len(words) and words[j] in MECHANISM_PARTICLES and len(particles) < 2:
            particles.append(words[j])
            j += 1
        obj, end = _noun_phrase(words, tags, j)
        obj = _clean_phrase(obj)
        passive = bool(particles) and particles[0] in _PASSIVE_PARTICLES
        if base not in TRANSFORM_VERBS and not passive:
            return i + 1
        mech = _Chunk("mechanism", [verb, *particles, *obj], offset + i, offset + max(end, j))
        chunks.append(mech)
        if obj:
            chunks.append(_Chunk("motif", obj, offset + j, offset + end, head=_head(obj), acted_on_by=mech))
        return max(end, j)

    @staticmethod
    def _assign_concept(chunks: list[_Chunk]) -> None:
        if any(c.type == "concept" for c in chunks):
            return
        for c in chunks:
            if c.type == "motif" and c.head not in FORMAT_NOUNS:
                c.type = "concept"
                return

    # -- selection and relations -----------------------------------------------------------------------

    def _select(self, chunks: list[_Chunk]) -> tuple[list[Atom], list[Relation]]:
        seen: set[tuple[str, str]] = set()
        unique: list[_Chunk] = []
        for c in chunks:
            if c.type == "motif" and c.head in FORMAT_NOUNS and len(c.words) == 1:
                continue
            # a motif repeating the concept's phrase is the concept
            key = ("concept" if c.type == "motif" else c.type, atom_key(" ".join(c.words)))
            if key[1] and key not in seen:
                seen.add(key)
                unique.append(c)
        kept: list[_Chunk] = []
        for t, quota in _TYPE_QUOTA.items():
            kept.extend([c for c in unique if c.type == t][:quota])
        for c in unique:
            if c.type == "motif" and len(kept) < MAX_ATOMS:
                kept.append(c)
        kept = kept[:MAX_ATOMS]
        kept.sort(key=lambda c: c.start)
        atoms = [Atom(c.type, " ".join(c.words)) for c in kept]
        index = {id(c): k for k, c in enumerate(kept)}
        by_type: dict[str, list[int]] = {}
        for k, c in enumerate(kept):
            by_type.setdefault(c.type, []).append(k)
        relations: list[Relation] = []
        for m in by_type.get("motif", []):
            relations += [Relation(m, "supports", p) for p in by_type.get("purpose", [])]
            relations += [Relation(m, "composes", c) for c in by_type.get("concept", [])]
        for mech in by_type.get("mechanism", []):
            relations += [Relation(mech, "realises", c) for c in by_type.get("concept", [])]
        for k, c in enumerate(kept):
            if c.acted_on_by is not None and id(c.acted_on_by) in index:
                relations.append(Relation(index[id(c.acted_on_by)], "transforms", k))
        addressers = by_type.get("purpose") or by_type.get("concept", [])
        for a in by_type.get("audience", []):
            relations += [Relation(p, "addresses", a) for p in addressers]
        return atoms, relations
