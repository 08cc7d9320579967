"""DEMO campaigns: one of each kind on the demo task set, pre-filled with labels from SIMULATED
annotators so every dashboard shows numbers, with items left open for annotator1..3.

Everything here is labelled: campaigns are ``is_demo``, their names start with "DEMO", the
simulated annotators are inactive accounts named ``simulated-annotator-N`` whose labels carry
``is_simulated``, renders are placeholders drawn by :mod:`engine.schematic_render`, and the TIG
checklist items were written by hand for the demo (not materialised by the TIG engine).

The simulated annotators answer from latent qualities plus per-annotator noise; labels go through
the same services and validation as a person's. Reproducible: a pairwise answer's noise is seeded
by the demo seed, the annotator and the comparison itself (task, dimension, the two models, the
shown order), never by the order in which the queue happened to hand items out, and the queue's own
random choices (gold orientation) draw from the seeded simulator. The pairwise answers see the same
per-answer qualities as the demo's simulated judge (:data:`leaderboard.demo.DEMO_ANSWER_SPREAD`).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation import item_creation, novelty_ablation, selectors, services
from annotation.choices import CampaignKind, Dimension
from annotation.label_models import STRATEGIES, TIG_CRITERIA
from annotation.models import Campaign, Item
from annotation.participants import participant_accounts_delete
from engine.judge.simulated import answer_quality
from leaderboard.demo import (
    DEMO_ACCOUNTS,
    DEMO_ANSWER_SPREAD,
    DEMO_SIMULATED_SKILLS,
    demo_annotator_accounts_ensure,
)
from leaderboard.models import Render, Response, TaskSet
from leaderboard.roles import ANNOTATOR

SIMULATED_USERNAMES = ("simulated-annotator-1", "simulated-annotator-2", "simulated-annotator-3")
DEMO_ANNOTATORS = tuple(name for name, role in DEMO_ACCOUNTS if role == ANNOTATOR)
#: The demo's text campaign labels every pair (the 4 demo models' 6) of every other task, in task
#: order; the judge's verdicts on the other tasks are comparisons nobody labelled, which the
#: calibrated board borrows from. Splitting by task (not by pair) keeps the labelled comparisons a
#: sample of the same kinds of comparison as the unlabelled ones, as PPI assumes (issue 24).
DEMO_TEXT_PAIRS_PER_TASK = 6
DEMO_TEXT_TASK_STEP = 2
#: Tasks of the demo's calibration-rule batch (one pair per task and dimension), among those the
#: simulated annotators left unlabelled.
DEMO_CALIBRATION_TASKS = 4
#: Items per campaign left without any label for the demo annotators.
OPEN_ITEMS = {
    CampaignKind.TEXT_PAIRWISE: 12,
    CampaignKind.TIG_AUDIT: 4,
    CampaignKind.FAITHFULNESS: 6,
    CampaignKind.IMAGE_PREFERENCE: 4,
    CampaignKind.STRATEGY: 2,
}
#: Latent skills of the demo models for the simulated annotators: the simulated judge's skills
#: (leaderboard.demo) plus a render quality per model.
DEMO_RENDER_SKILL = {"demo-atlas": 0.85, "demo-brook": 0.75, "demo-cinder": 0.8, "demo-dune": 0.5}
DEMO_MODEL_SKILL = {m: {**s, "render": DEMO_RENDER_SKILL[m]} for m, s in DEMO_SIMULATED_SKILLS.items()}
#: Per simulated annotator: judgment noise and A-position bias (one is deliberately careless).
SIMULATED_PROFILES = {
    "simulated-annotator-1": {"noise": 0.5, "a_bias": 0.0},
    "simulated-annotator-2": {"noise": 0.6, "a_bias": 0.1},
    "simulated-annotator-3": {"noise": 1.1, "a_bias": 0.45},
}

INSTRUCTIONS = {
    CampaignKind.TEXT_PAIRWISE: """# DEMO campaign — text pairwise validation (Ekphrasis App. H)
You see one brief and two anonymous responses. Judge **only the dimension named above the responses**.
- **Usefulness** (Core Idea): which idea more specifically satisfies the brief, constraints, audience and medium?
- **Expressiveness** (Visual Description): which description gives a more concrete, stable, drawable image?
- **Novelty** (Core Idea + cliché cues): which idea better avoids or transforms population clichés while staying meaningful?
Treat checklist items as reference cues, not a score sheet: do not count them. Do not reward verbosity.
Tie only when there is no stable, explainable winner — not as a substitute for uncertainty.
Flag (F) missing or truncated responses, field–dimension mismatches, ambiguous briefs, checklist/task mismatch, suspected duplication or identity leakage, responses that are not one static image, or a cliché item that fails the TIG audit criteria. A flag is not a fourth label: still choose A, B or tie.""",
    CampaignKind.TIG_AUDIT: """# DEMO campaign — TIG checklist audit (Ekphrasis App. G.7)
Each item is a Novelty checklist anchor with the cluster it summarises and how many models share it (counts only).
Code each criterion pass / partial / fail / not enough evidence, then choose the action:
- **accept** — passes all criteria or only minor partial issues;
- **revise** — the cluster is valid but the wording is underspecified or not visual enough (say what to change);
- **exclude** — fails cluster validity, visual specificity, faithfulness or non-leakage.
*These demo anchors were written by hand for the demo, not materialised by the TIG engine.*""",
    CampaignKind.FAITHFULNESS: """# DEMO campaign — faithfulness gate (Ekphrasis App. I.2)
Does the rendering preserve the plan's central carrier, objects, relation and context well enough to compare it?
Score 1–5. Mark a hard fail (H) with its reason: major semantic drift, missing core object, concept splitting (fusion tasks), object identity loss (transformation tasks), style/context mismatch (applied design tasks).
**Pass = score ≥ 4 and no hard fail.** *Demo images are labelled PLACEHOLDER schematic drawings, not real renders.*""",
    CampaignKind.IMAGE_PREFERENCE: """# DEMO campaign — image-level preference (Ekphrasis App. I.3)
Two images for the same brief. Which better realizes a useful, expressive, and non-clichéd visual plan as a whole?
You see only the images and the brief — no text plan, no model, no score. Only images that passed the faithfulness gate appear.
*Demo images are labelled PLACEHOLDER schematic drawings, not real renders.*""",
    CampaignKind.STRATEGY: """# DEMO campaign — adaptation strategy labels (Ekphrasis App. J)
Mark every strategy the response uses (zero or more), each **central** (removing it would change the core visual idea) or **incidental** (surface styling only).""",
}

CALIBRATION = {
    CampaignKind.TEXT_PAIRWISE: [
        ("Useful but clichéd", ("A plan that satisfies every constraint of a meditation-app brief with a sunrise over still "
                                "water, against a stranger plan that still fits the brief."),
         "Usefulness: the sunrise may win; Novelty: the stranger plan",
         "The dimensions are separable: fit and cliché avoidance are judged apart (App. H.4)."),
        ("Vivid but task-misaligned", "A richly described scene that ignores the required medium.",
         "Expressiveness: may win; Usefulness: loses", "Vivid language does not repair a missed constraint."),
        ("Unusual but under-specified", "A surprising idea with a one-line Visual Description.",
         "Novelty: may win; Expressiveness: loses", "Do not reward obscurity; do not punish novelty for brevity in the other dimensions."),
    ],
}

# Hand-written demo TIG anchors: (task id, checklist text, cluster summary, models sharing, responses sharing, latent action)
DEMO_TIG_ITEMS = [
    ("demo-abs-01", "Which response avoids relying on common hourglass-and-sand imagery unless it transforms that motif into a more specific visual mechanism?",
     "hourglass, falling sand, sand grains as measured time", 3, 5, "accept"),
    ("demo-abs-01", "Which response avoids relying on common calm and peaceful feelings?",
     "calm, peaceful, serene mood words", 4, 9, "exclude"),
    ("demo-abs-02", "Which response avoids relying on common empty-chair imagery unless it transforms that motif into a more specific visual mechanism?",
     "empty chair, vacant seat at a table, unused second cup", 3, 6, "accept"),
    ("demo-abs-02", "Which response avoids relying on common lonely things?",
     "single lighthouse, lone tree, single figure in a vast field", 2, 4, "revise"),
    ("demo-com-01", "Which response avoids relying on common faded-photograph imagery unless it transforms that motif into a more specific visual mechanism?",
     "sepia photographs, faded prints printed on the canopy", 3, 5, "accept"),
    ("demo-com-01", "Which response avoids relying on common umbrella-as-shelter-from-memories imagery?",
     "umbrella sheltering a memory, rain of old moments", 2, 3, "revise"),
    ("demo-com-02", "Which response avoids relying on common tentacles-as-typebars imagery unless it transforms that motif into a more specific visual mechanism?",
     "tentacles ending in typebars, jellyfish bell as a typewriter body", 3, 7, "accept"),
    ("demo-com-02", "Which response avoids relying on the glowing bioluminescent keyboard from one answer?",
     "one response's glowing keyboard", 1, 1, "exclude"),
    ("demo-tra-01", "Which response avoids relying on common frost-coating imagery unless it transforms that motif into a more specific visual mechanism?",
     "frost, icicles hanging from a normal piano", 3, 6, "accept"),
    ("demo-tra-01", "Which response avoids relying on common melting-piano puddle imagery?",
     "piano melting into a puddle on a stage", 2, 3, "accept"),
    ("demo-tra-02", "Which response avoids relying on common rust-and-vines imagery unless it transforms that motif into a more specific visual mechanism?",
     "rust, ivy and vines growing through the frame and spokes", 4, 10, "accept"),
    ("demo-tra-02", "Which response avoids relying on common old things?",
     "old, aged, weathered", 4, 8, "revise"),
    ("demo-ada-01", "Which response avoids relying on common water-droplet-shaped-garment imagery unless it transforms that motif into a more specific visual mechanism?",
     "T-shirt shaped like a water drop, shirt filled with water", 3, 6, "accept"),
    ("demo-ada-01", "Which response avoids relying on a T-shirt wrung out over a bucket, as the candidate answer does?",
     "wrung-out T-shirt dripping into a bucket", 1, 2, "exclude"),
    ("demo-ada-02", "Which response avoids relying on common piggy-bank imagery unless it transforms that motif into a more specific visual mechanism?",
     "piggy bank, coins dropping into a jar", 4, 9, "accept"),
    ("demo-ada-02", "Which response avoids relying on common growth-chart imagery?",
     "rising arrows, bar charts, plant growing from coins", 3, 7, "revise"),
]


@dataclass
class DemoCampaignsSummary:
    campaigns: list[Campaign] = field(default_factory=list)
    renders_created: int = 0
    simulated_labels: int = 0
    open_items: dict[str, int] = field(default_factory=dict)
    skipped: bool = False
    ablation: dict = field(default_factory=dict)  # the text campaign's Novelty ablation panel
    calibration_items: int = 0  # text items chosen by the calibration sampling rule (issue 24)


def simulated_annotators_ensure() -> list:
    """Inactive accounts (they cannot log in) with the annotator role, named as simulated."""
    User = get_user_model()
    group = Group.objects.get_or_create(name=ANNOTATOR)[0]
    users = []
    for username in SIMULATED_USERNAMES:
        user, created = User.objects.get_or_create(
            username=username, defaults={"first_name": "SIMULATED", "last_name": "annotator (demo)", "is_active": False}
        )
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        user.groups.add(group)
        users.append(user)
    return users


def _demo_annotators() -> list:
    """annotator1..3, created if missing (``make demo`` loads the campaigns before it gives them passwords)."""
    return demo_annotator_accounts_ensure()


def demo_annotators_join(campaigns) -> None:
    """annotator1..3 become members of ``campaigns`` (idempotent): demo campaigns loaded before their
    accounts existed are mended when the loader runs again."""
    annotators = _demo_annotators()
    for campaign in campaigns:
        services.campaign_annotators_add(campaign=campaign, annotators=annotators)


def _skill(model_name: str, key: str) -> float:
    return DEMO_MODEL_SKILL.get(model_name, {}).get(key, 0.0)


class _Simulator:
    """Answers of the simulated annotators, from latent qualities plus noise."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.tig_truth: dict[int, str] = {}
        self.strategy_truth: dict[int, dict[str, str]] = {}

    def pairwise(self, username: str, item: Item, swapped: bool, key: str) -> dict:
        profile = SIMULATED_PROFILES[username]
        a, b = (item.response_a, item.response_b) if item.response_a_id else (item.render_a.response, item.render_b.response)
        model_a, model_b, task = a.subject_model.display_name, b.subject_model.display_name, item.task.external_id
        delta = (_skill(model_a, key) + answer_quality(task, model_a, key, spread=DEMO_ANSWER_SPREAD)
                 - _skill(model_b, key) - answer_quality(task, model_b, key, spread=DEMO_ANSWER_SPREAD))
        # noise seeded by the comparison, not by the queue's order (see the module docstring)
        noise = random.Random(f"{self.seed}|{username}|{task}|{key}|{model_a}|{model_b}|{swapped}")
        delta += noise.gauss(0.0, profile["noise"])
        shown_delta = (-delta if swapped else delta) + profile["a_bias"]
        if abs(shown_delta) < 0.3:
            return {"choice": "tie"}
        return {"choice": "A" if shown_delta > 0 else "B"}

    def faithfulness(self, username: str, item: Item) -> dict:
        quality = _skill(item.render_a.response.subject_model.display_name, "render")
        quality += self.rng.gauss(0.0, 0.12 * (1 + SIMULATED_PROFILES[username]["noise"]))
        score = max(1, min(5, round(1 + 4 * quality + self.rng.gauss(0.0, 0.4))))
        reasons = []
        if score <= 2 and self.rng.random() < 0.6:
            family_reason = {"combination": "concept_splitting", "transformation": "object_identity_loss",
                             "adaptation": "style_context_mismatch"}.get(item.task.family, "major_semantic_drift")
            reasons = [family_reason]
        return {"score": score, "hard_fail": bool(reasons), "hard_fail_reasons": reasons}

    def tig(self, username: str, item: Item) -> dict:
        truth = self.tig_truth.get(item.pk, "accept")
        action = truth
        if self.rng.random() > 0.82 - 0.2 * (SIMULATED_PROFILES[username]["noise"] > 1):
            action = self.rng.choice([a for a in ("accept", "revise", "exclude") if a != truth])
        codes = {c: "pass" for c in TIG_CRITERIA}
        if action == "exclude":
            codes[self.rng.choice(["cluster_validity", "visual_specificity", "non_leakage"])] = "fail"
        elif action == "revise":
            codes["visual_specificity"] = "partial"
            codes["usefulness_for_judging"] = self.rng.choice(["partial", "pass"])
        elif self.rng.random() < 0.2:
            codes["usefulness_for_judging"] = "partial"
        return {"criteria": codes, "overall_action": action,
                "revision_note": "Name the visual pattern concretely." if action == "revise" else ""}

    def strategy(self, username: str, item: Item) -> dict:
        truth = self.strategy_truth.setdefault(item.pk, self._latent_strategies())
        marked = {}
        for code in STRATEGIES:
            if code in truth and self.rng.random() < 0.85:
                marked[code] = truth[code] if self.rng.random() < 0.85 else ("incidental" if truth[code] == "central" else "central")
            elif code not in truth and self.rng.random() < 0.06:
                marked[code] = "incidental"
        return {"strategies": marked}

    def _latent_strategies(self) -> dict[str, str]:
        codes = self.rng.sample(STRATEGIES, self.rng.choice([1, 2, 2, 3]))
        return {c: ("central" if i == 0 else self.rng.choice(["central", "incidental"])) for i, c in enumerate(codes)}


def _simulate(campaign: Campaign, simulated: list, sim: _Simulator, *, leave_open: int) -> int:
    """Simulated annotators label every item but the last ``leave_open`` ones (in queue order)."""
    n_regular = Item.objects.filter(campaign=campaign, is_gold=False).count()
    to_fill = max(n_regular - leave_open, 0)
    labels = 0
    for user in simulated:
        done_regular = 0
        while done_regular < to_fill:
            assignment = services.assignment_next(campaign=campaign, annotator=user, rng=sim.rng)
            if assignment is None:
                break
            item = assignment.item
            if campaign.kind == CampaignKind.TEXT_PAIRWISE:
                answer = sim.pairwise(user.username, item, assignment.swapped, item.dimension)
            elif campaign.kind == CampaignKind.IMAGE_PREFERENCE:
                answer = sim.pairwise(user.username, item, assignment.swapped, "novelty")
            elif campaign.kind == CampaignKind.FAITHFULNESS:
                answer = sim.faithfulness(user.username, item)
            elif campaign.kind == CampaignKind.TIG_AUDIT:
                answer = sim.tig(user.username, item)
            else:
                answer = sim.strategy(user.username, item)
            services.label_submit(
                token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(), answer=answer,
                time_on_item_ms=int(sim.rng.uniform(6_000, 45_000)), is_simulated=True,
            )
            labels += 1
            done_regular += not item.is_gold
    return labels


#: The reason recorded when the demo opens its campaigns from a simulated run whose launch gates fail.
DEMO_LAUNCH_OVERRIDE = ("DEMO DATA: the demo's simulated judge run is validated by simulated annotators so that every "
                        "campaign kind can be explored; its failed launch gates (App. D.3) are shown on the run page.")


def _demo_launch_override(task_set: TaskSet) -> None:
    """Record the demo's labelled override when the demo run's gates fail (a real launch would stop here)."""
    from leaderboard.ekphrasis.models import LaunchGateOverride
    from leaderboard.ekphrasis.selectors import judge_run_launch_gates, launch_gate_run_for

    run = launch_gate_run_for(task_set=task_set)
    if run is None or LaunchGateOverride.objects.filter(run=run).exists():
        return
    gates = judge_run_launch_gates(run=run)
    if not gates["ready"]:
        LaunchGateOverride.objects.create(run=run, reason=DEMO_LAUNCH_OVERRIDE, failed_gates=gates["failed"])


def _campaign(name: str, kind: str, task_set: TaskSet, members: list, **extra) -> Campaign:
    campaign = services.campaign_create(
        name=name, kind=kind, task_set=task_set, instructions=INSTRUCTIONS[kind], annotators=members, is_demo=True,
        status=Campaign.Status.DRAFT, **extra,
    )
    for position, (title, body, expected, why) in enumerate(CALIBRATION.get(kind, [])):
        services.calibration_example_add(campaign=campaign, title=title, body=body, expected=expected, explanation=why,
                                         position=position)
    return campaign


@transaction.atomic
def demo_campaigns_load(*, task_set: TaskSet, seed: int = 7, reset: bool = False) -> DemoCampaignsSummary:
    """Create the five DEMO campaigns on ``task_set`` (idempotent unless ``reset``)."""
    summary = DemoCampaignsSummary()
    existing = Campaign.objects.filter(task_set=task_set, is_demo=True)
    if existing.exists():
        if not reset:
            summary.campaigns = list(existing)
            summary.skipped = True
            # the crowd study has participants, not members
            demo_annotators_join(existing.filter(panel_study__isnull=True))
            return summary
        # The demo crowd study's simulated participants' accounts go with their campaign.
        participant_accounts_delete(campaigns=existing)
        for campaign in existing:
            campaign.delete()
    rng = random.Random(seed)
    sim = _Simulator(seed)
    simulated = simulated_annotators_ensure()
    members = simulated + _demo_annotators()
    primaries = list(
        Response.objects.filter(task__task_set=task_set, is_primary=True)
        .exclude(normalisation_method=Response.Normalisation.PENDING)
        .select_related("task", "subject_model").order_by("task__position", "subject_model__display_name")
    )

    # 1. text pairwise: H.5 pairs from the (simulated) judge ranking, all three dimensions
    text = _campaign("DEMO · Text pairwise validation", CampaignKind.TEXT_PAIRWISE, task_set, members, gold_rate=0.1)
    rankings, _ = selectors.judge_rankings(campaign=text, dimensions=[d.value for d in (Dimension.USEFULNESS, Dimension.EXPRESSIVENESS, Dimension.NOVELTY)])
    cues = _checklist_cues(task_set)
    # Every pair of every other task: the judge's verdicts on the other tasks are comparisons nobody
    # labelled, which is what the calibrated board (annotation.calibration, issue 24) borrows from.
    labelled_tasks = list(task_set.tasks.order_by("position", "external_id"))[::DEMO_TEXT_TASK_STEP]
    item_creation.items_create_validation_pairs(campaign=text, rankings=rankings, checklists=cues, rng=rng,
                                                tasks=labelled_tasks, pairs_per_task=DEMO_TEXT_PAIRS_PER_TASK)
    for item in Item.objects.filter(campaign=text).order_by("position")[:2]:
        a, b = item.response_a.subject_model.display_name, item.response_b.subject_model.display_name
        delta = _skill(a, item.dimension) - _skill(b, item.dimension)
        item_creation.item_gold_set(item=item, answer="A" if delta > 0.3 else "B" if delta < -0.3 else "tie")

    # 2. TIG audit: hand-written demo anchors
    tig = _campaign("DEMO · TIG checklist audit", CampaignKind.TIG_AUDIT, task_set, members)
    tasks = {t.external_id: t for t in task_set.tasks.all()}
    specs = []
    # Each demo item names the A/B pair of its leave-two-models-out comparison (App. G.7 comparison_key),
    # so the audit page can show the two candidates for the non-leakage question.
    names = sorted({r.subject_model.display_name for r in primaries})
    pairs = [(a, b) for k, a in enumerate(names) for b in names[k + 1:]]
    for i, (task_id, text_, summary_, n_models, n_responses, action) in enumerate(DEMO_TIG_ITEMS):
        if task_id in tasks:
            a, b = pairs[i % len(pairs)] if pairs else ("", "")
            specs.append(item_creation.ItemSpec(task=tasks[task_id], key=f"demo-tig-{i:02d}", payload={
                "checklist_text": text_, "cluster_summary": summary_,
                "provenance": {"models_sharing": n_models, "models_in_population": 4,
                               "responses_sharing": n_responses, "responses_in_population": 12},
                "meta": {"demo_latent_action": action, **({"comparison_key": f"{a}|{b}"} if pairs else {})},
            }))
    created, _ = item_creation.items_create(campaign=tig, specs=specs, rng=rng)
    sim.tig_truth = {item.pk: item.payload["meta"]["demo_latent_action"] for item in created}

    # 3. faithfulness: a labelled placeholder render of every primary response
    renders = []
    for response in primaries:
        before = Render.objects.filter(response=response, renderer=services.PLACEHOLDER_RENDERER).exists()
        renders.append(services.render_placeholder_create(response=response))
        summary.renders_created += not before
    faith = _campaign("DEMO · Faithfulness gate", CampaignKind.FAITHFULNESS, task_set, members)
    render_specs = [item_creation.ItemSpec(task=r.response.task, render_a=r) for r in renders]
    rng.shuffle(render_specs)
    item_creation.items_create(campaign=faith, specs=render_specs, rng=rng)

    # 4. strategy labels: the adaptation tasks' primary responses
    strategy = _campaign("DEMO · Adaptation strategy labels", CampaignKind.STRATEGY, task_set, members)
    item_creation.items_create(campaign=strategy, specs=[
        item_creation.ItemSpec(task=r.task, response_a=r) for r in primaries if r.task.family == "adaptation"
    ], rng=rng)

    _demo_launch_override(task_set)
    for campaign in (text, tig, faith, strategy):
        services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)
        summary.simulated_labels += _simulate(campaign, simulated, sim, leave_open=OPEN_ITEMS[campaign.kind])

    # 5. image preference: pairs of gate-passing renders (after the simulated faithfulness labels)
    images = _campaign("DEMO · Image preference", CampaignKind.IMAGE_PREFERENCE, task_set, members,
                       show_brief=True)
    passing = selectors.gate_passing_renders(task_set=task_set)
    by_task: dict[int, list[Render]] = {}
    for render in renders:
        if render.pk in passing:
            by_task.setdefault(render.response.task_id, []).append(render)
    pairs = []
    for group in by_task.values():
        candidates = [(a, b) for i, a in enumerate(group) for b in group[i + 1:]]
        rng.shuffle(candidates)
        pairs.extend(candidates[:4])  # App. I.3: four image pairs per task
    if pairs:
        item_creation.items_create_image_pairs(campaign=images, pairs=pairs, rng=rng)
        services.campaign_status_set(campaign=images, status=Campaign.Status.OPEN)
        summary.simulated_labels += _simulate(images, simulated, sim, leave_open=OPEN_ITEMS[CampaignKind.IMAGE_PREFERENCE])

    summary.ablation = _novelty_ablation_run(text)
    summary.calibration_items = _calibration_rule_items(text)

    for campaign in (text, tig, faith, strategy, images):
        summary.campaigns.append(campaign)
        summary.open_items[campaign.name] = Item.objects.filter(campaign=campaign, is_gold=False).exclude(
            assignments__status="submitted").count()
    return summary


def _calibration_rule_items(campaign: Campaign) -> int:
    """Both sampling rules in the demo: the text campaign's first items came from the classical H.5
    rule; a further batch (one pair per task and dimension on the first tasks nobody labelled, left
    for the demo annotators) comes from the ``calibration`` rule, planned from the calibrated board of
    the simulated labels so far. Their ``sampling_stratum`` says "calibration"."""
    from annotation.calibration_sampling import campaign_calibration_plan

    labelled = set(Item.objects.filter(campaign=campaign).values_list("task_id", flat=True))
    tasks = [t for t in campaign.task_set.tasks.order_by("position", "external_id")
             if t.pk not in labelled][:DEMO_CALIBRATION_TASKS]
    dimensions = [d.value for d in (Dimension.USEFULNESS, Dimension.EXPRESSIVENESS, Dimension.NOVELTY)]
    plans, _ = campaign_calibration_plan(campaign=campaign, dimensions=dimensions, tasks=tasks, pairs_per_task=1)
    if not plans:
        return 0
    created = item_creation.items_create_validation_pairs(campaign=campaign, dimensions=list(plans), tasks=tasks,
                                                      pairs_per_task=1, plans=plans, rng=random.Random(24))
    return len(created)


def _novelty_ablation_run(campaign: Campaign) -> dict:
    """Judge the text campaign's Novelty pairs with the SIMULATED judge (the demo leaderboard's skills)
    under TIG and generic anchors, so the dashboard's ablation panel shows numbers. The simulated judge
    does not read the anchors: both conditions give the same verdicts, and the panel says so."""
    from leaderboard.ekphrasis.judge_runs import judge_run_execute_inline

    for run in novelty_ablation.novelty_ablation_runs_create(
        campaign=campaign, judge_name="simulated", seed=42,
        config={"simulated": {"skills": DEMO_SIMULATED_SKILLS, "answer_spread": DEMO_ANSWER_SPREAD}},
    ):
        judge_run_execute_inline(run=run)
    return selectors.novelty_ablation_panel(campaign=campaign)


def _checklist_cues(task_set: TaskSet) -> dict[tuple[str, str], list[str]]:
    """The task's active checklist items per dimension, as reference cues for the pairwise items."""
    from leaderboard.ekphrasis.models import ChecklistItem

    names = {"U": Dimension.USEFULNESS.value, "E": Dimension.EXPRESSIVENESS.value, "N": Dimension.NOVELTY.value}
    cues: dict[tuple[str, str], list[str]] = {}
    rows = ChecklistItem.objects.filter(task__task_set=task_set, active=True, context_key="").order_by("slot")
    for task_id, dimension, text in rows.values_list("task__external_id", "dimension", "text"):
        cues.setdefault((task_id, names.get(dimension, dimension)), []).append(text)
    return cues
