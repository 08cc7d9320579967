"""Writes of the shared catalogue, one module per concept (import each from its module: this package
re-exports nothing): ``catalogue`` (imports, exports, freezing, roles) and ``api_operations`` (the API's
own writes). Ekphrasis's writes are leaderboard/ekphrasis/, the run lifecycle is leaderboard/runs/."""
