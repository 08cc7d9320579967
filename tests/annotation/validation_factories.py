"""Builders for the EASEL/C² validation kinds: a small EASEL suite (references, "hello" canvases) and a
small C² run (divergent samples with rater scores), written as rows directly so the tests stay fast.

Names are distinctive ("Zephyr-Secret-…") so the blinding crawl can search every byte for them.
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image

from annotation import services
from annotation.choices import CampaignKind
from annotation.models import Campaign
from annotation.validation_items import (
    items_create_canvas_pairs,
    items_create_handwriting,
    items_create_uos_samples,
)
from engine.easel.metrics import combine
from leaderboard.c2.models import C2Rating, C2Run, C2Sample, C2TaskImage
from leaderboard.easel.models import EaselEpisode, EaselImage, EaselRun, EaselStep
from leaderboard.models import Benchmark
from tests.factories import BenchmarkFactory, SubjectModelFactory, TaskFactory, TaskSetFactory

AGENT_NAMES = ("Zephyr-Secret-Painter", "Quasar-Hidden-Brush", "Nimbus-Covert-Pen")
C2_MODEL_NAMES = ("Orion-Masked-Writer", "Vega-Veiled-Author", "Lyra-Cloaked-Poet")
STEPS = 8


def png(seed: int, size: int = 24) -> bytes:
    """A small distinct RGB PNG."""
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (size, size, 3), dtype=np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


class EaselWorld:
    """Two reconstruction references and one "hello" task; three simulated agents paint each."""

    def __init__(self, *, seed: int = 0, n_references: int = 2, recognised=("hello", "hcllo", "")):
        rng = random.Random(seed)
        self.task_set = TaskSetFactory(benchmark=BenchmarkFactory(kind=Benchmark.Kind.EASEL, name="EASEL"), version="1")
        self.references = [TaskFactory(task_set=self.task_set, family="natural", subtype="reconstruction",
                                       source={"id": f"ref{i}", "kind": "reconstruction", "spec": {}})
                           for i in range(n_references)]
        self.hello = TaskFactory(task_set=self.task_set, family="semantic", subtype="semantic",
                                 source={"id": "hello", "kind": "semantic", "spec": {"task": "handwriting_hello", "target": "hello"}})
        for i, task in enumerate([*self.references, self.hello]):
            EaselImage.objects.create(task=task, png=png(1000 + i), sha256="x", width=24, height=24)
        self.runs = []
        for j, name in enumerate(AGENT_NAMES):
            run = EaselRun.objects.create(task_set=self.task_set, agent_kind="simulated", agent_name=name, is_simulated=True,
                                          status="done", seed=j)
            self.runs.append(run)
            for task in self.references:
                episode = EaselEpisode.objects.create(run=run, task=task, kind="reconstruction", category="natural",
                                                      budget=STEPS, status="done", steps_done=STEPS)
                skill = 0.3 + 0.3 * j
                for t in range(1, STEPS + 1):
                    ssim = min(1.0, skill * t / STEPS + rng.uniform(-0.05, 0.05))
                    l1 = max(0.0, 0.6 - 0.5 * skill * t / STEPS + rng.uniform(-0.03, 0.03))
                    edge = min(1.0, max(0.0, skill * t / STEPS * 0.8 + rng.uniform(-0.05, 0.05)))
                    score = combine(ssim, l1, edge)
                    EaselStep.objects.create(episode=episode, index=t, valid=True, kind="stroke", raw="stroke",
                                             s=score.s, ssim=score.ssim, l1=score.l1, edge_iou=score.edge_iou,
                                             canvas_png=png(j * 100000 + task.pk * 100 + t))
            text = recognised[j % len(recognised)]
            episode = EaselEpisode.objects.create(
                run=run, task=self.hello, kind="semantic", category="semantic", budget=STEPS, status="done",
                steps_done=2, recogniser="tesseract", semantic_detail={"recognised": text, "target": "hello"})
            for t in (1, 2):
                EaselStep.objects.create(episode=episode, index=t, valid=True, kind="stroke", raw="stroke",
                                         canvas_png=png(900000 + j * 10 + t))


class C2World:
    """Three models × two story prompts and one visual story × two samples, each rated by the rater."""

    def __init__(self, *, seed: int = 0):
        rng = random.Random(seed)
        self.task_set = TaskSetFactory(benchmark=BenchmarkFactory(kind=Benchmark.Kind.C2, name="C2"), version="1")
        self.models = [SubjectModelFactory(display_name=name, provider_id=f"provider/{name.lower()}") for name in C2_MODEL_NAMES]
        self.stories = [TaskFactory(task_set=self.task_set, family="story", subtype="writingprompts",
                                    brief=f"Write a story about lighthouse number {i}.") for i in range(2)]
        self.visual = TaskFactory(task_set=self.task_set, family="visual_story", subtype="creation_mmbench",
                                  brief="Tell the story of this picture.")
        self.qa = TaskFactory(task_set=self.task_set, family="qa", subtype="triviaqa", brief="Who wrote Hamlet?")
        data = png(4242)
        C2TaskImage.objects.create(task=self.visual, file_name="pic.png", content_type="image/png", data=data, sha256="x",
                                   width=24, height=24)
        self.run = C2Run.objects.create(task_set=self.task_set, subject_names=list(C2_MODEL_NAMES), rater_name="simulated",
                                        is_simulated=True, status="done")
        self.run.subjects.set(self.models)
        for m, model in enumerate(self.models):
            for task in [*self.stories, self.visual, self.qa]:
                for index in (1, 2):
                    sample = C2Sample.objects.create(run=self.run, subject_model=model, task=task, sample_index=index,
                                                     status="done", text=f"Once upon a time, sample {m}-{task.pk}-{index}.")
                    if task.family != "qa":
                        C2Rating.objects.create(sample=sample, rater_name="simulated", repeat=0, status="ok",
                                                u=min(5, m + rng.randint(1, 2)), o=min(5, m + rng.randint(0, 2)),
                                                s=min(5, m + rng.randint(0, 3)))


def _campaign(kind: str, task_set, *, k: int, annotators, **extra) -> Campaign:
    campaign = services.campaign_create(name=f"{kind} campaign {task_set.pk}", kind=kind, task_set=task_set, k=k,
                                        annotators=annotators, gold_rate=0.0, **extra)
    return campaign


def uos_campaign(world: C2World, *, k: int = 3, annotators=(), n_items: int = 12, status=Campaign.Status.OPEN) -> Campaign:
    campaign = _campaign(CampaignKind.UOS_RATING, world.task_set, k=k, annotators=annotators)
    items_create_uos_samples(campaign=campaign, run=world.run, rule="rater_spread", n_items=n_items)
    return services.campaign_status_set(campaign=campaign, status=status)


def canvas_campaign(world: EaselWorld, *, k: int = 3, annotators=(), pairs_per_task: int = 4,
                    status=Campaign.Status.OPEN) -> Campaign:
    campaign = _campaign(CampaignKind.CANVAS_SIMILARITY, world.task_set, k=k, annotators=annotators)
    items_create_canvas_pairs(campaign=campaign, runs=world.runs, rule="mixed", pairs_per_task=pairs_per_task)
    return services.campaign_status_set(campaign=campaign, status=status)


def handwriting_campaign(world: EaselWorld, *, k: int = 3, annotators=(), status=Campaign.Status.OPEN) -> Campaign:
    campaign = _campaign(CampaignKind.HANDWRITING, world.task_set, k=k, annotators=annotators)
    items_create_handwriting(campaign=campaign, runs=world.runs)
    return services.campaign_status_set(campaign=campaign, status=status)


VALID_VALIDATION_ANSWERS = {
    CampaignKind.UOS_RATING: {"usefulness": 3, "originality": 2, "surprise": 4},
    CampaignKind.CANVAS_SIMILARITY: {"choice": "A"},
    CampaignKind.HANDWRITING: {"text": "hello", "unreadable": False},
}
