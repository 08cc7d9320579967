"""EASEL: closed-loop stroke painting (easel.txt §3–§5). Plain Python, never Django.

Contract with the site (brief/easel-contract.md), with these refinements:

- ``EaselTask`` lives in ``engine/easel/task.py`` (with ``task_to_record`` / ``task_from_record``), so
  ``semantic.py`` can build tasks without importing the environment. ``size`` is the side of a square canvas; ``task.initial_canvas()`` gives C_0.
- Actions are JSON objects with an ``"action"`` key: reconstruction
  ``{"action": "brush_stroke", "xs", "ys", "xc", "yc", "xe", "ye", "rs", "alpha_s", "re", "alpha_e",
  "cr", "cg", "cb"}``; semantic ``{"action": "brush_stroke", "xs", "ys", "xc", "yc", "xe", "ye"}``,
  ``{"action": "undo"}``, ``{"action": "submit"}``. Exactly these keys; path coordinates either all
  numbers in [0, 1] or all integers in [0, 1000] (quantised form, k/1000); anything else is invalid.
- ``StepOutcome.feedback`` gives the text shown to the agent next turn (collision / invalid reason);
  ``Environment.s_values()`` gives S_1..S_t; ``Environment.similarity`` the current Similarity;
  ``Environment.ink`` the semantic strokes' coverage; ``Environment.submitted_at`` the submit step.
- ``metrics.IncrementalSimilarity(reference, canvas)`` with ``score``, ``apply(box, patch)``,
  ``gain(box, patch)``, ``reset(canvas)``; ``render.stroke_coverage(params, H, W) -> (mask, Box) | None``
  and ``render.composite(region, mask, colour)``.
- ``Environment(task, budget=None, recogniser=None)``: ``budget`` overrides the task's (native 250-step
  painter runs); ``observation()`` builds the agent's Observation (semantic tasks: the last 3 turns, the
  last feedback, ``extra["strokes_on_canvas"]``); ``run(policy, on_step=...)`` drives a policy to the end.
- ``painter.ANCHORS`` maps ``blank`` / ``mean_colour`` / ``dominant_colour`` to their fill functions;
  ``SearchPainter(seed, candidates=24, refinements=16)``; ``simulated.SIMULATED_PROFILES`` and
  ``simulated_agent(profile, seed)`` give the demo's labelled simulated agents.
- ``training_data.next_action_samples(task, actions, curriculum="C1"|"C2", seed=0)`` (``None`` for an
  invalid step) and ``sample_record(sample) -> (record, png)``.
- ``semantic.score_semantic(task, ink, canvas, recogniser=...)``; recognisers: ``TesseractRecogniser()``
  and ``MultimodalRecogniser(chat, label=...)``; ``semantic_episode_summary`` / ``semantic_diagnostics``
  give Table 4's trajectory columns.
"""
