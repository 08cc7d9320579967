"""The subtype grid and its cell quotas (Ekphrasis Algorithm 1 line 5, App. B Table 5).

A grid is a tuple of :class:`GridCell`: one family, the subtype a task of the cell carries, the
sampling stratum inside that subtype (a Combination distance band, a Transformation percentile
bucket) and the quota of kept tasks. :data:`TABLE5_GRID` is the paper's grid (400 tasks: 120
Abstraction, 90 Combination, 90 Transformation, 100 Adaptation) and the default everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "ABSTRACTION_SUBTYPES",
    "ADAPTATION_DOMAINS",
    "COMBINATION_BANDS",
    "COMBINATION_PAIR_TYPES",
    "FAMILIES",
    "TABLE5_GRID",
    "TRANSFORMATION_BUCKETS",
    "TRANSFORMATION_SUBTYPES",
    "GridCell",
    "GridError",
    "SubtypeGrid",
    "grid_with_quotas",
]

FAMILIES = ("abstraction", "combination", "transformation", "adaptation")
# Table 5, Abstraction row
ABSTRACTION_SUBTYPES = (
    "emotional/psychological", "perceptual/qualia", "process/temporal", "metaphysical",
    "relational/structural", "mathematical/logical",
)
# Table 5, Combination rows: AA abstract–abstract, AC abstract–concrete, CC concrete–concrete (App. B.1)
COMBINATION_PAIR_TYPES = ("AA", "AC", "CC")
COMBINATION_BANDS = ("near", "medium", "far")
# Table 5, Transformation row; Figure 8: equal counts from near, medium and far percentile buckets
TRANSFORMATION_SUBTYPES = ("material", "temporal", "contextual")
TRANSFORMATION_BUCKETS = ("near", "medium", "far")
# Table 5, Adaptation row
ADAPTATION_DOMAINS = (
    "public-interest campaign", "commercial communication", "digital product", "exhibition/public art",
    "educational communication",
)


class GridError(ValueError):
    """A grid that cannot be built from (unknown cell, negative quota, malformed record)."""


@dataclass(frozen=True)
class GridCell:
    """One cell of a family's subtype grid: tasks of ``subtype`` sampled under ``stratum``."""

    family: str
    subtype: str
    quota: int
    stratum: str = ""  # Combination: distance band; Transformation: percentile bucket; else empty

    @property
    def cell_id(self) -> str:
        return f"{self.family}/{self.subtype}" + (f"/{self.stratum}" if self.stratum else "")

    def to_dict(self) -> dict:
        return {"family": self.family, "subtype": self.subtype, "stratum": self.stratum, "quota": self.quota}


@dataclass(frozen=True)
class SubtypeGrid:
    """The cells of every family, in construction order."""

    name: str
    cells: tuple[GridCell, ...]

    def __post_init__(self) -> None:
        seen = set()
        for cell in self.cells:
            if cell.family not in FAMILIES:
                raise GridError(f"cell {cell.cell_id}: unknown family {cell.family!r}")
            if cell.quota < 0:
                raise GridError(f"cell {cell.cell_id}: quota must be >= 0, got {cell.quota}")
            if cell.cell_id in seen:
                raise GridError(f"cell {cell.cell_id} appears twice")
            seen.add(cell.cell_id)

    @property
    def total(self) -> int:
        return sum(c.quota for c in self.cells)

    def family_quota(self, family: str) -> int:
        """n_f of Algorithm 1: the family's target count."""
        return sum(c.quota for c in self.cells if c.family == family)

    def cells_of(self, family: str) -> list[GridCell]:
        return [c for c in self.cells if c.family == family]

    def quotas(self) -> dict[str, int]:
        return {c.cell_id: c.quota for c in self.cells}

    def to_dict(self) -> dict:
        return {"name": self.name, "cells": [c.to_dict() for c in self.cells]}

    @classmethod
    def from_dict(cls, data: Mapping) -> SubtypeGrid:
        try:
            cells = tuple(
                GridCell(family=str(c["family"]), subtype=str(c["subtype"]), quota=int(c["quota"]),
                         stratum=str(c.get("stratum", "")))
                for c in data["cells"]
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GridError(f"malformed grid record: {exc!r}") from exc
        return cls(name=str(data.get("name", "custom")), cells=cells)


def _table5_cells() -> Iterable[GridCell]:
    for subtype in ABSTRACTION_SUBTYPES:
        yield GridCell("abstraction", subtype, 20)  # Table 5: 20 each
    for band, quota in (("near", 8), ("medium", 15), ("far", 7)):  # Table 5: 8, 8, 8 / 15 each / 7 each
        for pair_type in COMBINATION_PAIR_TYPES:
            yield GridCell("combination", f"{pair_type}-{band}", quota, stratum=band)
    for subtype in TRANSFORMATION_SUBTYPES:
        for bucket in TRANSFORMATION_BUCKETS:
            yield GridCell("transformation", subtype, 10, stratum=bucket)  # 30 each, equal per bucket (Fig. 8)
    for domain in ADAPTATION_DOMAINS:
        yield GridCell("adaptation", domain, 20)  # Table 5: 20 each


#: Ekphrasis Table 5 (400 tasks).
TABLE5_GRID = SubtypeGrid(name="table5", cells=tuple(_table5_cells()))


def grid_with_quotas(quotas: Mapping[str, int], *, base: SubtypeGrid = TABLE5_GRID, name: str = "custom") -> SubtypeGrid:
    """``base`` with some cell quotas replaced (``{cell_id: quota}``); an unknown cell id is an error."""
    known = base.quotas()
    unknown = sorted(set(quotas) - set(known))
    if unknown:
        raise GridError(f"unknown grid cell(s): {', '.join(unknown)}")
    cells = tuple(
        GridCell(c.family, c.subtype, int(quotas.get(c.cell_id, c.quota)), c.stratum) for c in base.cells
    )
    return SubtypeGrid(name=name if quotas else base.name, cells=cells)
