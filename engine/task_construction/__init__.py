"""Ekphrasis task-set construction (Algorithm 1, App. A; Table 5, App. B), one module per step:

- ``grid``: the subtype grid with cell quotas (Table 5 by default);
- ``pools``: source-pool records and their validation (line, field, message);
- ``sampling``: frequency belts, embedding-distance bands and percentile buckets;
- ``compose``: the family templates of App. A, versioned;
- ``keep``: the keep rule (duplicate check, offline or model screen);
- ``build``: the Algorithm 1 driver;
- ``demo_pools``: the labelled demo pools.

The package re-exports nothing: import each name from the module it lives in.
"""
