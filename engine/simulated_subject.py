"""A labelled *simulated subject* for Ekphrasis briefs, so that a task set built offline (Algorithm 1 with
the demo pools) can be judged end to end without a provider. It is never a model: every answer says so in
the record that stores it, and it is used only when a model named ``simulated-…`` is asked for.

An answer is composed deterministically from the brief's own content words and a per-model style (how many
of the brief's words it keeps, and a preferred composition, palette and light), seeded by
(model, task, sample) through :func:`engine.seeding.derived_seed`, so re-running gives the same text. The
two fields follow the App. A answer format: a one-sentence *Core Idea* and a *Visual Description*.
"""

from __future__ import annotations

import random
import re

from engine.seeding import derived_seed

__all__ = ["SIMULATED_SUBJECT_PREFIX", "is_simulated_subject", "simulated_answer"]

SIMULATED_SUBJECT_PREFIX = "simulated-"

_STOPWORDS = frozenset(
    "a an the and or of to in on for with as by at from into that this these those it its be is are was were "
    "one single image static visual concept idea make create design show depict express brief without using "
    "use your their them they which what who how must should can could would each any some more most very "
    "text words letters faces people logos".split()
)
_SUBJECTS = ("a lone figure", "an open doorway", "a folded paper boat", "a cracked teacup", "a rising kite",
             "a staircase that ends in air", "a glass jar of fog", "two hands almost touching", "a clock without hands")
_COMPOSITIONS = ("centred on an empty field", "seen from directly above", "in a tight close-up",
                 "off-centre with wide negative space", "framed by a window", "as a symmetrical diptych")
_PALETTES = ("muted ochre and slate", "deep indigo with one warm accent", "bleached pastels", "charcoal and white",
             "saturated primaries", "sea-green and rust")
_LIGHTS = ("low raking light", "a single soft window light", "flat overcast light", "hard noon shadows",
           "backlight that rims every edge", "candle-warm glow")


def is_simulated_subject(name: str) -> bool:
    """Whether a subject-model name asks for this simulated subject (``simulated-<anything>``)."""
    return name.startswith(SIMULATED_SUBJECT_PREFIX) and len(name) > len(SIMULATED_SUBJECT_PREFIX)


def _content_words(brief: str) -> list[str]:
    words = re.findall(r"[A-Za-z][A-Za-z'-]{3,}", brief)
    seen, kept = set(), []
    for w in words:
        low = w.lower()
        if low not in _STOPWORDS and low not in seen:
            seen.add(low)
            kept.append(low)
    return kept


def simulated_answer(brief: str, *, model: str, task_id: str, sample: int) -> tuple[str, str]:
    """(Core Idea, Visual Description) of ``model``'s simulated answer ``sample`` to ``brief``."""
    style = random.Random(derived_seed("simulated-subject-style", model))
    rng = random.Random(derived_seed("simulated-subject", model, task_id, sample))
    words = _content_words(brief) or ["the brief"]
    keep = max(1, round(len(words) * style.uniform(0.3, 0.9)))
    chosen = rng.sample(words, k=min(keep, len(words)))
    subject = rng.choice(_SUBJECTS)
    core = f"{subject.capitalize()} stands for {' and '.join(chosen[:2])}."
    composition = _COMPOSITIONS[style.randrange(len(_COMPOSITIONS))] if rng.random() < 0.7 else rng.choice(_COMPOSITIONS)
    palette = _PALETTES[style.randrange(len(_PALETTES))] if rng.random() < 0.7 else rng.choice(_PALETTES)
    light = rng.choice(_LIGHTS)
    details = ", ".join(chosen[2:5])
    visual = (f"{subject.capitalize()} {composition}, in {palette}, under {light}"
              + (f"; small details echo {details}." if details else "."))
    return core, visual
