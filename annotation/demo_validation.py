"""DEMO campaigns of the EASEL/C² validation kinds (issue 13): one U-O-S rating campaign on the C² demo
run, one canvas similarity and one handwriting campaign on the EASEL demo runs, pre-filled by the
SIMULATED annotators, with items left open for annotator1..3.

If the EASEL or C² demo data are missing they are created here through their own demo loaders
(``leaderboard.easel.demo``, ``leaderboard.c2.demo``), or, when asked not to, the campaign is skipped
with a note. Everything is labelled: campaigns are ``is_demo`` and named "DEMO · …", labels carry
``is_simulated``.

The simulated annotators do not look at the automatic instruments' outputs:

* U-O-S: a latent score per sample and component from the SIMULATED subject's ``quality`` profile
  (``leaderboard.c2.demo.DEMO_SUBJECTS``) plus a sample effect, then per-annotator bias and noise;
* canvas similarity: a *simulated perception* S_h = 0.4·SSIM + 0.2·(1 − L1) + 0.4·EdgeIoU —
  deliberately not Eq. 1's weights, so the dashboard's weight fit has something to find — plus noise;
  a tie when the perceived difference is small;
* handwriting: a pixel reader — the canvas is cut into five columns, one per letter of "hello"; a
  column with ink is read as its letter with a probability growing with its ink, else left out;
  almost no ink is "unreadable".

None of these are measurements of people; the demo's agreement figures only show the panels working.
"""

from __future__ import annotations

import hashlib
import io
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction

from annotation import services
from annotation.choices import CampaignKind
from annotation.demo import (
    SIMULATED_PROFILES,
    _demo_annotators,
    demo_annotators_join,
    simulated_annotators_ensure,
)
from annotation.models import Assignment, Campaign, Item
from annotation.validation_items import (
    items_create_canvas_pairs,
    items_create_handwriting,
    items_create_uos_samples,
)
from engine.easel.semantic import HELLO

# Annotators see these names (their work list, the page's header): no paper references in them (issue 15).
UOS_NAME = "DEMO · C² U-O-S rating"
CANVAS_NAME = "DEMO · EASEL canvas similarity"
HANDWRITING_NAME = "DEMO · EASEL handwriting reading"
#: The names a demo made before 2026-12-05 gave them; loading the demo again renames those campaigns.
OLD_NAMES = {"DEMO · C² U-O-S rating (c2-eval §3.2.2)": UOS_NAME, "DEMO · EASEL canvas similarity (Eq. 1)": CANVAS_NAME,
             "DEMO · EASEL handwriting reading (§3.3)": HANDWRITING_NAME}
#: Items per campaign left without any label for the demo annotators.
OPEN_ITEMS = {CampaignKind.UOS_RATING: 6, CampaignKind.CANVAS_SIMILARITY: 6, CampaignKind.HANDWRITING: 3}
UOS_ITEMS = 36
CANVAS_PAIRS_PER_REFERENCE = 5
#: Earlier "hello" canvases added to the handwriting campaign (read by Tesseract when it was the recogniser).
HANDWRITING_PARTIAL = (0.25, 0.5, 0.75)
#: The simulated perception's weights on SSIM, 1 − L1, Edge IoU (not Eq. 1's, on purpose).
SIMULATED_PERCEPTION = (0.4, 0.2, 0.4)
#: Perceived differences below this are a tie; the logistic sharpness of the simulated choice.
TIE_BELOW, CHOICE_SHARPNESS = 0.01, 30.0

INSTRUCTIONS = {
    CampaignKind.UOS_RATING: """# DEMO campaign — C² U-O-S rating
Read the prompt (and look at the image, for a visual story) and the response. Rate the response **on its own** on
**Usefulness**, **Originality** and **Surprise**, each 0–5, with the rubric beside each scale — it is the same text the
automatic rater received. Press 0–5 for the focused component; Tab or the arrows move between components; Enter submits.""",
    CampaignKind.CANVAS_SIMILARITY: """# DEMO campaign — EASEL canvas similarity
Above: the reference. Below: two canvases painted towards it. Which canvas **looks more like the reference**, as a whole —
shapes, layout and colours? Press A or B; T for a tie only when neither is closer. Enter submits.""",
    CampaignKind.HANDWRITING: """# DEMO campaign — EASEL handwriting reading
The canvas shows an attempt to write a word by hand. **Type the letters you can read**, in order, leaving out what you
cannot read (at most 20 characters), and press Enter. If you can read nothing, press Esc then U (unreadable).""",
}


@dataclass
class ValidationDemoSummary:
    campaigns: list[Campaign] = field(default_factory=list)
    simulated_labels: int = 0
    open_items: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _unit_noise(*parts: object) -> float:
    """A reproducible N(0, 1) draw keyed by ``parts`` (sha256-seeded)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).gauss(0.0, 1.0)


class ValidationSimulator:
    """Answers of the SIMULATED annotators for the three validation kinds (see the module docstring)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)

    def uos(self, username: str, item: Item) -> dict:
        from leaderboard.c2.demo import DEMO_SUBJECTS

        profile = SIMULATED_PROFILES[username]
        quality = DEMO_SUBJECTS.get(item.c2_sample.subject_model.display_name, {}).get("quality", 0.5)
        out = {}
        for k, component in enumerate(("usefulness", "originality", "surprise")):
            latent = 1.0 + 3.5 * quality + 0.8 * _unit_noise(self.seed, "sample", item.c2_sample_id, component)
            bias = (0.3, -0.2, 0.5)[k] * profile["a_bias"] * 2
            value = latent + bias + self.rng.gauss(0.0, 0.6 * profile["noise"])
            out[component] = int(max(0, min(5, round(value))))
        return out

    def canvas(self, username: str, item: Item, swapped: bool) -> dict:
        def perceived(step) -> float:
            terms = (step.ssim, 1.0 - step.l1, step.edge_iou)
            return sum(w * t for w, t in zip(SIMULATED_PERCEPTION, terms))

        delta = perceived(item.easel_step_a) - perceived(item.easel_step_b)
        delta += self.rng.gauss(0.0, 0.02 * SIMULATED_PROFILES[username]["noise"])
        if abs(delta) < TIE_BELOW:
            return {"choice": "tie"}
        canonical = "A" if self.rng.random() < 1 / (1 + np.exp(-CHOICE_SHARPNESS * delta)) else "B"
        shown = {"A": "B", "B": "A"}[canonical] if swapped else canonical
        return {"choice": shown}

    def handwriting(self, username: str, item: Item) -> dict:
        from PIL import Image

        with Image.open(io.BytesIO(bytes(item.easel_step_a.canvas_png))) as image:
            grey = np.asarray(image.convert("L"), dtype=float) / 255.0
        ink = grey < 0.5
        if ink.mean() < 0.002:
            return {"unreadable": True}
        columns = np.array_split(ink, len(HELLO), axis=1)
        noise = SIMULATED_PROFILES[username]["noise"]
        letters = []
        for letter, column in zip(HELLO, columns):
            p = min(1.0, column.mean() / 0.04) * (1.0 - 0.25 * noise)
            if self.rng.random() < p:
                letters.append(letter)
        return {"text": "".join(letters)} if letters else {"unreadable": True}


def _campaign(name: str, kind: str, task_set, members: list) -> Campaign:
    return services.campaign_create(name=name, kind=kind, task_set=task_set, instructions=INSTRUCTIONS[kind], k=3,
                                    annotators=members, gold_rate=0.0, is_demo=True, status=Campaign.Status.DRAFT)


def _simulate(campaign: Campaign, simulated: list, answer: Callable[[str, Assignment], dict], *, leave_open: int) -> int:
    """The simulated annotators label every item but the last ``leave_open`` ones (in queue order)."""
    to_fill = max(campaign.items.count() - leave_open, 0)
    labels = 0
    for user in simulated:
        for _ in range(to_fill):
            assignment = services.assignment_next(campaign=campaign, annotator=user)
            if assignment is None:
                break
            services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                                  answer=answer(user.username, assignment), is_simulated=True,
                                  time_on_item_ms=int(random.Random(assignment.pk).uniform(4_000, 30_000)))
            labels += 1
    return labels


def _easel_demo(load_missing: bool, notes: list[str]):
    from leaderboard.easel.demo import DEMO_SUITE_NAME, demo_runs_load, demo_suite_load
    from leaderboard.easel.models import EaselRun
    from leaderboard.models import TaskSet

    suite = TaskSet.objects.filter(name=DEMO_SUITE_NAME, is_demo=True).order_by("-created_at").first()
    runs = list(EaselRun.objects.filter(task_set=suite, status=EaselRun.Status.DONE)) if suite else []
    if not runs:
        if not load_missing:
            notes.append("EASEL demo data missing: canvas similarity and handwriting campaigns skipped "
                         "(run `manage.py load_demo_easel`, then this command again).")
            return None, []
        notes.append("EASEL demo data missing: loaded now through leaderboard.easel.demo.")
        suite = demo_suite_load()
        runs = [r for r in demo_runs_load(task_set=suite) if r.status == EaselRun.Status.DONE]
    return suite, runs


def _c2_demo(load_missing: bool, notes: list[str]):
    from leaderboard.c2.demo import DEMO_TASK_SET, demo_c2_load
    from leaderboard.c2.models import C2Run
    from leaderboard.models import TaskSet

    task_set = TaskSet.objects.filter(name=DEMO_TASK_SET, is_demo=True).order_by("-created_at").first()
    run = (C2Run.objects.filter(task_set=task_set, status=C2Run.Status.DONE, template=C2Run.Template.STANDARD)
           .order_by("-created_at").first() if task_set else None)
    if run is None:
        if not load_missing:
            notes.append("C² demo data missing: the U-O-S campaign is skipped (run `manage.py load_demo_c2`, then this "
                         "command again).")
            return None
        notes.append("C² demo data missing: loaded now through leaderboard.c2.demo.")
        demo = demo_c2_load()
        run = next((r for r in demo.runs if r.template == C2Run.Template.STANDARD and r.status == C2Run.Status.DONE), None)
    return run


def validation_demo_load(*, seed: int = 7, reset: bool = False, load_missing: bool = True) -> ValidationDemoSummary:
    """Create the three DEMO validation campaigns (idempotent per campaign name unless ``reset``)."""
    summary = ValidationDemoSummary()
    wanted = (UOS_NAME, CANVAS_NAME, HANDWRITING_NAME)
    for old_name, name in OLD_NAMES.items():
        if not Campaign.objects.filter(name=name).exists():
            Campaign.objects.filter(name=old_name, is_demo=True).update(name=name)
    existing = Campaign.objects.filter(name__in=wanted, is_demo=True)
    if reset:
        existing.delete()
    else:
        demo_annotators_join(existing)  # those made before annotator1..3 existed
        if existing.count() == len(wanted):
            summary.campaigns = list(existing)
            summary.notes.append("DEMO validation campaigns already exist; use --reset to recreate.")
            return summary
    present = set(Campaign.objects.filter(name__in=wanted).values_list("name", flat=True))
    sim = ValidationSimulator(seed)
    simulated = simulated_annotators_ensure()
    members = simulated + _demo_annotators()

    plans = []
    if UOS_NAME not in present:
        run = _c2_demo(load_missing, summary.notes)
        if run is not None:
            plans.append((UOS_NAME, CampaignKind.UOS_RATING, run.task_set,
                          lambda c, run=run: items_create_uos_samples(campaign=c, run=run, rule="rater_spread",
                                                                      n_items=UOS_ITEMS, seed=seed,
                                                                      blinding_rng=random.Random(seed)),
                          lambda name, a: sim.uos(name, a.item)))
    if CANVAS_NAME not in present or HANDWRITING_NAME not in present:
        suite, runs = _easel_demo(load_missing, summary.notes)
        if runs and CANVAS_NAME not in present:
            plans.append((CANVAS_NAME, CampaignKind.CANVAS_SIMILARITY, suite,
                          lambda c, runs=runs: items_create_canvas_pairs(campaign=c, runs=runs, rule="mixed",
                                                                         pairs_per_task=CANVAS_PAIRS_PER_REFERENCE, seed=seed,
                                                                         blinding_rng=random.Random(seed)),
                          lambda name, a: sim.canvas(name, a.item, a.swapped)))
        if runs and HANDWRITING_NAME not in present:
            plans.append((HANDWRITING_NAME, CampaignKind.HANDWRITING, suite,
                          lambda c, runs=runs: items_create_handwriting(campaign=c, runs=runs, seed=seed,
                                                                        partial_fractions=HANDWRITING_PARTIAL,
                                                                        blinding_rng=random.Random(seed)),
                          lambda name, a: sim.handwriting(name, a.item)))
    for name, kind, task_set, create_items, answer in plans:
        with transaction.atomic():
            campaign = _campaign(name, kind, task_set, members)
            create_items(campaign)
            services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
            summary.simulated_labels += _simulate(campaign, simulated, answer, leave_open=OPEN_ITEMS[kind])
        summary.campaigns.append(campaign)
        summary.open_items[campaign.name] = campaign.items.exclude(assignments__status="submitted").count()
    return summary
