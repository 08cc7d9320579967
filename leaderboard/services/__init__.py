"""Writes of the leaderboard app, one module per concept (import each from its module: this package
re-exports nothing): ``catalogue`` (imports, exports, freezing, roles), ``judge_runs`` and ``judge_chunk``
(automatic judging), ``tig``, ``task_construction``, ``renders``, ``checklists``, ``launch_gates``,
``provider_jobs``, ``api_operations``."""
