"""Composition of a task instance x_t = (f, b_t, C_t, S_t) from its family template (Ekphrasis App. A,
Algorithm 1 line 7).

The brief wording is App. A's template for each family, filled with the sampled source variables;
the constraint set carries the template's fixed constraint and output format. Templates are
versioned (:data:`TEMPLATE_VERSION`): a change of wording is a new version, recorded in every
construction record, so two task sets built from different wordings are never mistaken for one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FAMILY_TEMPLATES", "OUTPUT_FORMAT", "TEMPLATE_VERSION", "Candidate", "compose_candidate", "stable_task_id"]

TEMPLATE_VERSION = "ekphrasis-appA-v1"

# App. A, "Output: Give exactly two labeled blocks: Core Idea and Visual Description."
OUTPUT_FORMAT = "Give exactly two labeled blocks: Core Idea and Visual Description."

#: App. A.1–A.4 templates: brief wording (``{…}`` are the source variables) and the fixed constraint.
FAMILY_TEMPLATES: dict[str, dict[str, str]] = {
    "abstraction": {  # A.1: phi_abs : a -> v
        "brief": "Design a visual concept that expresses the abstract concept \u201c{a}\u201d.",
        "constraint": "Express the concept through a visible object, scene, relation, or action rather than through text in the image.",
    },
    "combination": {  # A.2: phi_comb : (c1, c2, delta) -> v
        "brief": "Fuse \u201c{c1}\u201d and \u201c{c2}\u201d into one coherent visual entity.",
        "constraint": "Both source concepts must jointly participate in structure, function, or form.",
    },
    "transformation": {  # A.3: phi_tfm : (o, r) -> v
        "brief": "Re-present the object \u201c{o}\u201d under the transformation condition \u201c{r}\u201d.",
        "constraint": "The condition should reshape the object itself rather than merely decorate it or provide a background.",
    },
    "adaptation": {  # A.4: phi_adp : (s, C) -> v
        "brief": "Produce a visual deliverable for the applied situation: {s}.",
        "constraint": "Satisfy all explicit audience, medium, domain, and communication constraints.",
    },
}

_FAMILY_CODES = {"abstraction": "abs", "combination": "com", "transformation": "tra", "adaptation": "ada"}


@dataclass(frozen=True)
class Candidate:
    """A composed candidate task: what the keep rule screens and a kept task becomes."""

    family: str
    subtype: str
    cell_id: str
    brief: str
    constraints: Mapping[str, Any]
    source: Mapping[str, Any]
    external_id: str
    diagnostics: Mapping[str, Any] = field(default_factory=dict)  # frequency, distance, band (not part of the task)

    def task_record(self) -> dict[str, Any]:
        """The task in the import/export record shape (``id``, ``family``, ``subtype``, ``brief``, …)."""
        return {"id": self.external_id, "family": self.family, "subtype": self.subtype, "brief": self.brief,
                "constraints": dict(self.constraints), "source": dict(self.source)}

    def to_dict(self) -> dict[str, Any]:
        return {**self.task_record(), "cell_id": self.cell_id, "diagnostics": dict(self.diagnostics)}


def stable_task_id(family: str, subtype: str, source: Mapping[str, Any]) -> str:
    """``<family code>-<12 hex>``: a hash of family, subtype and source variables (and the template
    version), so the same instance gets the same id in every build and a different one never does."""
    canonical = json.dumps({"f": family, "s": subtype, "S": source, "v": TEMPLATE_VERSION}, sort_keys=True,
                           ensure_ascii=False)
    return f"{_FAMILY_CODES[family]}-{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:12]}"


def compose_candidate(*, family: str, subtype: str, cell_id: str, source: Mapping[str, Any],
                      diagnostics: Mapping[str, Any] | None = None) -> Candidate:
    """Fill the family's template with ``source`` (keys a / c1, c2 / o, r / s + audience, medium)."""
    template = FAMILY_TEMPLATES[family]
    constraints: dict[str, Any] = {"requirement": template["constraint"], "output": OUTPUT_FORMAT}
    if family == "abstraction":
        brief = template["brief"].format(a=source["concept"])
    elif family == "combination":
        brief = template["brief"].format(c1=source["concept_a"], c2=source["concept_b"])
    elif family == "transformation":
        brief = template["brief"].format(o=source["object"], r=source["condition"])
    elif family == "adaptation":
        brief = template["brief"].format(s=source["situation"])
        for key in ("audience", "medium", "deliverable"):
            if source.get(key):
                constraints[key] = source[key]
        constraints["domain"] = subtype
    else:
        raise ValueError(f"unknown family {family!r}")
    return Candidate(
        family=family, subtype=subtype, cell_id=cell_id, brief=brief, constraints=constraints,
        source=dict(source), external_id=stable_task_id(family, subtype, source), diagnostics=dict(diagnostics or {}),
    )
