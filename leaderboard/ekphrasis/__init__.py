"""Ekphrasis (pairwise judged visual creative ideation): judging, judge runs and their chunks, Typed Idea
Graphs, task construction (Algorithm 1), checklists, launch gates, renders, response generation, results.
A plain package under the ``leaderboard`` app label (its models are in leaderboard/models.py, its
management commands in leaderboard/management/commands so that Django finds them)."""
