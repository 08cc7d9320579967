"""Typed idea atoms: the records that Extract–Define–Canonicalize produces (Ekphrasis §4.2, App. G.1).

For each Core Idea an extractor returns 3–7 typed atoms -- *concept* (central solution or representational
strategy), *motif* (visual or semantic element), *mechanism* (technique, transformation or implementation
move), *purpose* (intended effect or communicative function), *audience* (only if explicit) -- and typed
edges between atoms of the same response, such as *motif supports purpose* or *mechanism realises concept*.

Everything here is a plain, JSON-serialisable dataclass so the Django side can store extractions per
response and hand them back (``ResponseAtoms.to_dict`` / ``from_dict``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from engine.tig.lexicon import lemma, singular

__all__ = [
    "ATOM_TYPES",
    "MAX_ATOMS",
    "MIN_ATOMS",
    "RELATION_CODES",
    "RELATION_TYPES",
    "TYPE_CODES",
    "Atom",
    "AtomTable",
    "Extractor",
    "IdeaRecord",
    "KeyOrder",
    "Relation",
    "ResponseAtoms",
    "atom_key",
    "atom_label",
    "idea_record",
]

# App. G.1, Table 14
ATOM_TYPES: tuple[str, ...] = ("concept", "motif", "mechanism", "purpose", "audience")
# App. G.1: "for each Core Idea, the extractor returns 3-7 typed atoms"
MIN_ATOMS = 3
MAX_ATOMS = 7
# Typed within-response relations (App. G.1 names "motif supports purpose" and "mechanism realizes concept";
# the other three complete the five types): source type -> target type in the docstrings of the extractors.
RELATION_TYPES: tuple[str, ...] = ("supports", "realises", "composes", "transforms", "addresses")


@dataclass(frozen=True)
class IdeaRecord:
    """One response's Core Idea with its provenance (model, task, sample)."""

    model: str
    sample: int | str
    core_idea: str
    task: str = ""
    response_id: str = ""
    brief: str = ""

    def __post_init__(self) -> None:
        if not self.response_id:
            object.__setattr__(self, "response_id", f"{self.task}:{self.model}:{self.sample}")


def idea_record(obj: Any, *, task: str = "", brief: str = "") -> IdeaRecord:
    """An :class:`IdeaRecord` from a dict or any object with ``model``, ``sample``, ``core_idea``.

    Optional fields ``task``, ``response_id`` (or ``id``) and ``brief`` are read when present; ``task`` and
    ``brief`` fall back to the keyword arguments.
    """
    if isinstance(obj, IdeaRecord):
        return obj
    get = obj.get if isinstance(obj, Mapping) else (lambda k, d=None: getattr(obj, k, d))
    missing = [k for k in ("model", "sample", "core_idea") if get(k) is None]
    if missing:
        raise ValueError(f"idea record lacks {', '.join(missing)}: {obj!r}")
    response_id = get("response_id") or get("id") or ""
    return IdeaRecord(
        model=str(get("model")),
        sample=get("sample"),
        core_idea=str(get("core_idea") or ""),
        task=str(get("task") or task or ""),
        response_id=str(response_id),
        brief=str(get("brief") or brief or ""),
    )


@dataclass(frozen=True)
class Atom:
    """One typed atom as extracted from one response: ``label`` is its surface phrase in display form
    (:func:`atom_label`), ``key`` the normalised form used for exact synonym grouping (no articles, singular
    nouns, verb lemmas)."""

    type: str
    label: str
    key: str = ""

    def __post_init__(self) -> None:
        if self.type not in ATOM_TYPES:
            raise ValueError(f"unknown atom type {self.type!r}; expected one of {ATOM_TYPES}")
        label = atom_label(self.label)
        if label != self.label:
            object.__setattr__(self, "label", label)
        if not self.key:
            object.__setattr__(self, "key", atom_key(label))


@dataclass(frozen=True)
class Relation:
    """A typed directed edge ``atoms[source] -relation-> atoms[target]`` inside one response."""

    source: int
    relation: str
    target: int


@dataclass
class ResponseAtoms:
    """The extraction of one response: its atoms, typed relations and which extractor produced them.

    ``extractor`` is ``"offline-rules"`` for the rule-based fallback and ``"llm:<model>@<prompt version>"`` for the
    provider extractor (:data:`engine.tig.llm.EXTRACTION_PROMPT_VERSION`); ``note`` says why an LLM extraction fell back or was repaired.
    """

    response_id: str
    model: str
    task: str
    sample: int | str
    extractor: str
    atoms: list[Atom] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "response_id": self.response_id,
            "model": self.model,
            "task": self.task,
            "sample": self.sample,
            "extractor": self.extractor,
            "atoms": [{"type": a.type, "label": a.label, "key": a.key} for a in self.atoms],
            "relations": [[r.source, r.relation, r.target] for r in self.relations],
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResponseAtoms:
        return cls(
            response_id=str(data["response_id"]),
            model=str(data["model"]),
            task=str(data.get("task", "")),
            sample=data.get("sample", ""),
            extractor=str(data["extractor"]),
            atoms=[Atom(a["type"], a["label"], a.get("key", "")) for a in data.get("atoms", [])],
            relations=[Relation(int(s), str(r), int(t)) for s, r, t in data.get("relations", [])],
            note=str(data.get("note", "")),
        )


class Extractor(Protocol):
    """Anything that turns one Core Idea into typed atoms; ``name`` goes into the population version."""

    name: str

    def extract(self, idea: IdeaRecord) -> ResponseAtoms: ...


# --------------------------------------------------------------------------------------------------------
# Normalised keys

_LEADING_FUNCTION_WORDS = frozenset(
    """a an the this that these those its their his her our your my each every some any another such""".split()
)
_ARTICLES = frozenset({"a", "an", "the"})
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)


def atom_label(text: str) -> str:
    """The display form of a phrase: NFKC, collapsed whitespace, no surrounding punctuation or leading
    determiners, lower case (atoms are compared case-insensitively)."""
    text = unicodedata.normalize("NFKC", text).strip().lower()
    words = _WORD.findall(text)
    while words and words[0] in _LEADING_FUNCTION_WORDS:
        words = words[1:]
    return " ".join(words)


def atom_key(text: str) -> str:
    """The normalised key of a phrase: :func:`atom_label` without articles, every word singularised and verb
    forms of the offline lexicon reduced to their lemma, so "lighthouses" and "a lighthouse" share one key."""
    return " ".join(lemma(singular(w)) for w in atom_label(text).split() if w not in _ARTICLES)


# --------------------------------------------------------------------------------------------------------
# Array form of a population's atoms

TYPE_CODES: dict[str, int] = {t: i for i, t in enumerate(ATOM_TYPES)}
RELATION_CODES: dict[str, int] = {r: i for i, r in enumerate(RELATION_TYPES)}


@dataclass(frozen=True)
class KeyOrder:
    """The content order of a table's ``(type, key)`` pairs: ``rank[k]`` is key id k's position when the
    pairs are sorted, ``by_rank`` the inverse; ``type_code[k]`` and ``qualified[k]`` (``"type:key"``) per
    key id."""

    rank: np.ndarray
    by_rank: np.ndarray
    type_code: np.ndarray
    qualified: list[str]


@dataclass
class AtomTable:
    """Every atom mention of a population of responses, in arrays (one row per mention).

    ``response`` indexes ``response_ids``/``models``/``samples``; ``label_ids`` index ``label_names`` (the
    distinct surface labels, sorted by length then text, so a smaller id is the preferred tie-break);
    ``key_ids`` index ``key_names`` (``(type, key)`` pairs, so equal keys of different types stay apart);
    ``relations`` rows are ``(source mention, target mention, relation code)``; ``label_embeddings`` row l is
    the embedding of ``label_names[l]`` and :attr:`label_similarity` their cosine matrix, computed once and
    shared by every subset -- so a context needs no vector arithmetic in the embedding dimension. Built once
    per task (a few hundred labels); a leave-out context is a :meth:`subset` (no re-extraction, no
    re-embedding).
    """

    task: str
    response_ids: list[str]
    models: list[str]
    samples: list[Any]
    extractors: list[str]
    label_ids: np.ndarray
    label_names: list[str]
    types: np.ndarray
    response: np.ndarray
    key_ids: np.ndarray
    key_names: list[tuple[str, str]]
    label_embeddings: np.ndarray
    relations: np.ndarray
    _similarity: list[np.ndarray] = field(default_factory=list, repr=False)
    _key_order: list[KeyOrder] = field(default_factory=list, repr=False)
    _text_rank: list[np.ndarray] = field(default_factory=list, repr=False)

    @property
    def n_mentions(self) -> int:
        return len(self.label_ids)

    @property
    def n_responses(self) -> int:
        return len(self.response_ids)

    @property
    def embeddings(self) -> np.ndarray:
        """Embedding of every mention (its label's row)."""
        return self.label_embeddings[self.label_ids]

    @property
    def label_similarity(self) -> np.ndarray:
        """Cosine similarity between all labels (unit rows), float64; computed on first use and shared
        with subsets."""
        if not self._similarity:
            e = self.label_embeddings.astype(np.float64)
            self._similarity.append(e @ e.T)
        return self._similarity[0]

    @property
    def key_order(self) -> KeyOrder:
        """Every key of :attr:`key_names` in content order, with its type and type-qualified name;
        computed on first use and shared with subsets (a subset's keys keep this relative order)."""
        if not self._key_order:
            by_content = sorted(range(len(self.key_names)), key=self.key_names.__getitem__)
            rank = np.empty(len(by_content), dtype=np.int64)
            rank[by_content] = np.arange(len(by_content))
            self._key_order.append(KeyOrder(
                rank=rank,
                by_rank=np.asarray(by_content, dtype=np.int64),
                type_code=np.asarray([TYPE_CODES[t] for t, _ in self.key_names], dtype=np.int64),
                qualified=[f"{t}:{key}" for t, key in self.key_names],
            ))
        return self._key_order[0]

    @property
    def label_text_rank(self) -> np.ndarray:
        """Each label's position when :attr:`label_names` are sorted as Python sorts strings (the ids
        themselves are in length-then-text order); computed on first use and shared with subsets."""
        if not self._text_rank:
            rank = np.empty(len(self.label_names), dtype=np.int64)
            rank[sorted(range(len(self.label_names)), key=self.label_names.__getitem__)] = np.arange(len(rank))
            self._text_rank.append(rank)
        return self._text_rank[0]

    @property
    def labels(self) -> list[str]:
        """Surface label of every mention."""
        names = self.label_names
        return [names[i] for i in self.label_ids.tolist()]

    @classmethod
    def build(
        cls,
        extractions: Sequence[ResponseAtoms],
        embed: Callable[[Sequence[str]], np.ndarray],
        *,
        task: str = "",
    ) -> AtomTable:
        """Flatten extractions and embed each distinct atom label once (``embed`` takes a list of texts)."""
        labels: list[str] = []
        types: list[int] = []
        response: list[int] = []
        key_index: dict[tuple[str, str], int] = {}
        key_ids: list[int] = []
        relations: list[tuple[int, int, int]] = []
        for r, ext in enumerate(extractions):
            base = len(labels)
            for atom in ext.atoms:
                labels.append(atom.label)
                types.append(TYPE_CODES[atom.type])
                response.append(r)
                key_ids.append(key_index.setdefault((atom.type, atom.key), len(key_index)))
            for rel in ext.relations:
                if (
                    0 <= rel.source < len(ext.atoms)
                    and 0 <= rel.target < len(ext.atoms)
                    and rel.relation in RELATION_CODES
                ):
                    relations.append((base + rel.source, base + rel.target, RELATION_CODES[rel.relation]))
        names = sorted(set(labels), key=lambda s: (len(s), s))
        label_index = {label: i for i, label in enumerate(names)}
        label_ids = np.asarray([label_index[label] for label in labels], dtype=np.int64)
        vectors = np.asarray(embed(names), dtype=np.float32) if names else np.zeros((0, 0), np.float32)
        return cls(
            task=task,
            response_ids=[e.response_id for e in extractions],
            models=[e.model for e in extractions],
            samples=[e.sample for e in extractions],
            extractors=[e.extractor for e in extractions],
            label_ids=label_ids,
            label_names=names,
            types=np.asarray(types, dtype=np.int64),
            response=np.asarray(response, dtype=np.int64),
            key_ids=np.asarray(key_ids, dtype=np.int64),
            key_names=list(key_index),
            label_embeddings=np.ascontiguousarray(vectors, dtype=np.float32),
            relations=np.asarray(relations, dtype=np.int64).reshape(-1, 3),
        )

    def subset(self, keep_responses: np.ndarray) -> AtomTable:
        """The table restricted to the responses where ``keep_responses`` (bool per response) is true."""
        keep_responses = np.asarray(keep_responses, dtype=bool)
        new_response_index = keep_responses.cumsum() - 1
        keep = keep_responses[self.response]
        rows = keep.nonzero()[0]
        rel = self.relations
        if len(rel):
            mention_map = np.empty(self.n_mentions, dtype=np.int64)  # read only at kept mentions
            mention_map[rows] = np.arange(len(rows))
            rel = rel[keep[rel[:, 0]] & keep[rel[:, 1]]]  # a copy: its mention columns renumbered in place
            rel[:, :2] = mention_map[rel[:, :2]]
        kept_responses = keep_responses.nonzero()[0].tolist()
        return AtomTable(
            task=self.task,
            response_ids=[self.response_ids[i] for i in kept_responses],
            models=[self.models[i] for i in kept_responses],
            samples=[self.samples[i] for i in kept_responses],
            extractors=[self.extractors[i] for i in kept_responses],
            label_ids=self.label_ids[rows],
            label_names=self.label_names,
            types=self.types[rows],
            response=new_response_index[self.response[rows]],
            key_ids=self.key_ids[rows],
            key_names=self.key_names,
            label_embeddings=self.label_embeddings,
            relations=rel.reshape(-1, 3),
            _similarity=self._similarity,
            _key_order=self._key_order,
            _text_rank=self._text_rank,
        )
