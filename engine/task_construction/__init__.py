"""Ekphrasis task-set construction (Algorithm 1, App. A; Table 5, App. B), one module per step:

- ``grid``: the subtype grid with cell quotas (Table 5 by default);
- ``pools``: source-pool records and their validation (line, field, message);
- ``sampling``: frequency belts, embedding-distance bands and percentile buckets;
- ``compose``: the family templates of App. A, versioned;
- ``keep``: the keep rule (duplicate check, offline or model screen);
- ``build``: the Algorithm 1 driver;
- ``demo_pools``: the labelled demo pools.
"""

from engine.task_construction.build import ConstructionResult, RejectedCandidate, build_task_set
from engine.task_construction.grid import TABLE5_GRID, GridCell, GridError, SubtypeGrid, grid_with_quotas
from engine.task_construction.keep import ModelScreen, OfflineScreen
from engine.task_construction.pools import PoolError, PoolInvalid, PoolRecord, SourcePool, pool_from_rows

__all__ = [
    "TABLE5_GRID",
    "ConstructionResult",
    "GridCell",
    "GridError",
    "ModelScreen",
    "OfflineScreen",
    "PoolError",
    "PoolInvalid",
    "PoolRecord",
    "RejectedCandidate",
    "SourcePool",
    "SubtypeGrid",
    "build_task_set",
    "grid_with_quotas",
    "pool_from_rows",
]
