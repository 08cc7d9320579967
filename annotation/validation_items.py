"""Items of the EASEL and C² validation kinds, drawn from stored runs (issue 13).

Admins choose a run (or a suite's runs), a sampling rule and how many items; every rule is seeded and
stated here, and the resulting specs go through :func:`annotation.services.items_create` like every
other kind (all or nothing, content hashes, k slots).

* U-O-S (:func:`items_create_uos_samples`): divergent samples of one C² run with a response text.
  ``random`` draws uniformly; ``rater_spread`` sorts them by the run's rater mean (U + O + S)/3 and takes
  evenly spaced ranks, so the items span the rater's whole scale (a fair test of agreement needs
  both ends), breaking ties by a seeded shuffle.
* Canvas similarity (:func:`items_create_canvas_pairs`): per reference, the candidate canvases are the
  stored canvases at ¼, ½ and the end of every stepped episode of the chosen runs (anchors store no
  steps and are left out); pairs of distinct canvases (different agents, or different steps of one
  episode) are sorted by |ΔS| and ``pairs_per_task`` are taken at evenly spaced ranks, so the pairs
  span small to large S differences. Rule ``across_agents`` keeps only pairs from different runs,
  ``across_steps`` only pairs within one episode, ``mixed`` both.
* Handwriting (:func:`items_create_handwriting`): the last stored canvas of every episode of the
  "hello" task in the chosen runs (the canvas the recogniser read), up to ``limit``. With
  ``partial_fractions`` (e.g. ¼, ½) earlier canvases of the same episodes are added *when the episode's
  recogniser was Tesseract*: it reads them now, offline, and its reading is kept with the item
  (``payload["meta"]``, never shown). A multimodal recogniser is not called again here.

The seed makes *which* items are drawn reproducible. The blinding draws — the queue order, a canvas pair's
canonical A/B order and each item's orientation — come from ``blinding_rng``, by default the system's
randomness: drawn from the seed (0 unless the admin types another), an annotator who reads this code could
replay them and tell, from an item's place in the queue, which agent painted a canvas or where the rater put
a response on its scale. The demo passes a seeded generator of its own, to stay reproducible.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from annotation.canvas_candidates import canvas_candidates
from annotation.choices import CampaignKind
from annotation.errors import ItemsInvalid
from annotation.item_creation import ItemSpec, items_create
from annotation.kinds.handwriting import is_handwriting_task
from annotation.models import Campaign, Item
from leaderboard.c2.models import DIVERGENT_TYPES, C2Rating, C2Run, C2Sample
from leaderboard.easel.models import EaselEpisode, EaselRun, EaselStep

UOS_RULES = ("random", "rater_spread")
CANVAS_RULES = ("mixed", "across_agents", "across_steps")


def _check_kind(campaign: Campaign, kind: str, what: str) -> None:
    if campaign.kind != kind:
        raise ItemsInvalid([(0, "campaign", f"{what} items go into a {CampaignKind(kind).label} campaign")])


def _evenly_spaced(ordered: Sequence, n: int) -> list:
    """n elements at evenly spaced ranks of ``ordered`` (all of them when n ≥ len)."""
    if n >= len(ordered):
        return list(ordered)
    if n == 1:
        return [ordered[len(ordered) // 2]]
    return [ordered[round(i * (len(ordered) - 1) / (n - 1))] for i in range(n)]


def items_create_uos_samples(*, campaign: Campaign, run: C2Run, rule: str = "rater_spread", n_items: int = 30,
                             seed: int = 0, blinding_rng: random.Random | None = None) -> list[Item]:
    """U-O-S items from the divergent samples of ``run`` (see the module docstring for the rules)."""
    _check_kind(campaign, CampaignKind.UOS_RATING, "U-O-S")
    if rule not in UOS_RULES:
        raise ItemsInvalid([(0, "rule", f"unknown sampling rule {rule!r}; use one of {', '.join(UOS_RULES)}")])
    if run.task_set_id != campaign.task_set_id:
        raise ItemsInvalid([(0, "run", f"run {run.pk} is on {run.task_set}, the campaign on {campaign.task_set}")])
    samples = list(C2Sample.objects.filter(run=run, task__family__in=DIVERGENT_TYPES, status=C2Sample.Status.DONE)
                   .exclude(text="").select_related("task").order_by("task__position", "subject_model_id", "sample_index"))
    if not samples:
        raise ItemsInvalid([(0, "run", f"run {run.pk} has no finished divergent samples")])
    rng = random.Random(seed)
    if rule == "random":
        chosen = rng.sample(samples, min(n_items, len(samples)))
    else:
        rater = {r.sample_id: (r.u + r.o + r.s) / 3 for r in C2Rating.objects.filter(
            sample__run=run, rater_name=run.rater_name, repeat=0, status=C2Rating.Status.OK)}
        rated = [s for s in samples if s.pk in rater]
        rng.shuffle(rated)
        rated.sort(key=lambda s: rater[s.pk])
        chosen = _evenly_spaced(rated, n_items)
    draws = blinding_rng or random.SystemRandom()
    draws.shuffle(chosen)  # chosen in rater order: the queue must not say where the rater put a sample
    specs = [ItemSpec(task=s.task, c2_sample=s, key=f"c2:{run.pk}:{s.pk}", sampling_stratum=rule) for s in chosen]
    created, _ = items_create(campaign=campaign, specs=specs, rng=draws)
    return created


def _canvas_digest(step_id: int) -> str:
    png = EaselStep.objects.values_list("canvas_png", flat=True).get(pk=step_id)
    return hashlib.sha256(bytes(png)).hexdigest()


def items_create_canvas_pairs(*, campaign: Campaign, runs: Sequence[EaselRun], rule: str = "mixed",
                              pairs_per_task: int = 4, seed: int = 0,
                              blinding_rng: random.Random | None = None) -> list[Item]:
    """Canvas similarity items from the stored canvases of ``runs`` (see the module docstring)."""
    _check_kind(campaign, CampaignKind.CANVAS_SIMILARITY, "canvas similarity")
    if rule not in CANVAS_RULES:
        raise ItemsInvalid([(0, "rule", f"unknown sampling rule {rule!r}; use one of {', '.join(CANVAS_RULES)}")])
    other = [r for r in runs if r.task_set_id != campaign.task_set_id]
    if other:
        raise ItemsInvalid([(0, "runs", f"run {other[0].pk} is on {other[0].task_set}, the campaign on {campaign.task_set}")])
    rng = random.Random(seed)
    draws = blinding_rng or random.SystemRandom()
    specs = []
    for task_id, steps in sorted(canvas_candidates(runs).items()):
        digests = {s.pk: _canvas_digest(s.pk) for s in steps}
        pairs = []
        for i, a in enumerate(steps):
            for b in steps[i + 1:]:
                same_episode = a.episode_id == b.episode_id
                if digests[a.pk] == digests[b.pk]:
                    continue  # identical pixels: nothing to compare
                if (rule == "across_agents" and same_episode) or (rule == "across_steps" and not same_episode):
                    continue
                pairs.append((abs(a.s - b.s), rng.random(), a, b, "same_episode" if same_episode else "across_agents"))
        pairs.sort(key=lambda p: (p[0], p[1]))
        for _, _, a, b, stratum in _evenly_spaced(pairs, pairs_per_task):
            first, second = (a, b) if draws.random() < 0.5 else (b, a)  # canonical order carries no S or agent order
            # the key names the pair as listed, not as drawn: drawing again adds no second copy of it
            specs.append(ItemSpec(task=first.episode.task, easel_step_a=first, easel_step_b=second,
                                  key=f"canvas:{a.pk}:{b.pk}", sampling_stratum=stratum))
    if not specs:
        raise ItemsInvalid([(0, "runs", "the chosen runs store no pair of distinct reconstruction canvases")])
    draws.shuffle(specs)  # listed by reference and |ΔS|: the queue must not say which pair an item is
    created, _ = items_create(campaign=campaign, specs=specs, rng=draws)
    return created


def _tesseract_reading(step: EaselStep, reader) -> str:
    from engine.easel.task import image_from_png

    return reader.recognise(image_from_png(bytes(step.canvas_png)))


def items_create_handwriting(*, campaign: Campaign, runs: Sequence[EaselRun], limit: int = 50, seed: int = 0,
                             partial_fractions: Sequence[float] = (),
                             blinding_rng: random.Random | None = None) -> list[Item]:
    """Handwriting items: the last stored canvas of each "hello" episode of ``runs`` (up to ``limit``), and
    with ``partial_fractions`` earlier canvases read by Tesseract (see the module docstring)."""
    _check_kind(campaign, CampaignKind.HANDWRITING, "handwriting")
    rng = random.Random(seed)
    specs = []
    reader = None
    episodes = EaselEpisode.objects.filter(run__in=runs, kind="semantic", status=EaselEpisode.Status.DONE,
                                           task__task_set=campaign.task_set).select_related("task")
    for episode in episodes.order_by("run_id", "position"):
        if not is_handwriting_task(episode.task):
            continue
        stored = list(EaselStep.objects.filter(episode=episode, canvas_png__isnull=False).order_by("index"))
        if not stored:
            continue
        last = stored[-1]
        specs.append(ItemSpec(task=episode.task, easel_step_a=last, key=f"hello:{episode.pk}:{last.index}",
                              sampling_stratum="final_canvas"))
        if not partial_fractions or not episode.recogniser.lower().startswith("tesseract"):
            continue
        if reader is None:
            from engine.easel.semantic import TesseractRecogniser

            reader = TesseractRecogniser()
        earlier = {stored[max(0, round(f * len(stored)) - 1)].pk: stored[max(0, round(f * len(stored)) - 1)]
                   for f in partial_fractions if f < 1}
        last_png = bytes(last.canvas_png)
        for step in earlier.values():
            if step.pk == last.pk or bytes(step.canvas_png) == last_png:
                continue
            specs.append(ItemSpec(task=episode.task, easel_step_a=step, key=f"hello:{episode.pk}:{step.index}",
                                  sampling_stratum="partial_canvas",
                                  payload={"meta": {"recognised": _tesseract_reading(step, reader), "recogniser": reader.name}}))
    if not specs:
        raise ItemsInvalid([(0, "runs", "the chosen runs have no finished handwriting episode with a stored canvas")])
    rng.shuffle(specs)
    chosen = specs[:limit]
    draws = blinding_rng or random.SystemRandom()
    draws.shuffle(chosen)  # listed by run: the queue must not say which agent painted a canvas
    created, _ = items_create(campaign=campaign, specs=chosen, rng=draws)
    return created
