"""EASEL: closed-loop stroke painting (easel.txt §3–§5). Plain Python, never Django.

Contract with the site (brief/easel-contract.md), with these refinements:

- ``EaselTask`` lives in ``engine/easel/task.py`` and is re-exported by ``episode.py`` (with
  ``task_to_record`` / ``task_from_record``), so ``semantic.py`` can build tasks without importing the
  environment. ``size`` is the side of a square canvas; ``task.initial_canvas()`` gives C_0.
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
- ``semantic.score_semantic(task, ink, canvas, recogniser=...)``; recognisers: ``TesseractRecogniser()``
  and ``MultimodalRecogniser(chat, label=...)``; ``semantic_episode_summary`` / ``semantic_diagnostics``
  give Table 4's trajectory columns.
"""
