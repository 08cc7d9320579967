"""Builders for annotation tests: campaigns of each kind on a small catalogue.

Model names are deliberately distinctive ("Zephyr-Secret-…") so blinding tests can search every
byte an annotator can load for them.
"""

from __future__ import annotations

import hashlib
import random

import factory
from django.core.files.base import ContentFile

from annotation import item_creation, services
from annotation.choices import CampaignKind, Dimension
from annotation.models import Campaign
from engine.schematic_render import schematic_png
from leaderboard.models import Render
from tests.factories import ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory

MODEL_NAMES = ("Zephyr-Secret-Alpha", "Quasar-Hidden-Beta", "Nimbus-Covert-Gamma", "Orion-Masked-Delta")


class RenderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Render

    response = factory.SubFactory(ResponseFactory)
    renderer = "test-renderer"
    seed = factory.Sequence(lambda n: n)
    is_placeholder = True

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        render = model_class(*args, **kwargs)
        png = schematic_png(core_idea=render.response.core_idea, visual_description="", seed=render.seed)
        render.image_sha256 = hashlib.sha256(png).hexdigest()
        render.image.save(f"r{render.seed}.png", ContentFile(png), save=False)
        render.save()
        return render


class Catalogue:
    """A task set with ``n_tasks`` tasks and one primary response per model per task."""

    def __init__(self, n_tasks: int = 3, models=MODEL_NAMES, families=("abstraction", "combination", "transformation", "adaptation")):
        self.task_set = TaskSetFactory(version="1")
        self.models = [SubjectModelFactory(display_name=name, provider_id=f"provider/{name.lower()}") for name in models]
        self.tasks = [TaskFactory(task_set=self.task_set, family=families[i % len(families)]) for i in range(n_tasks)]
        self.responses = {
            (task.pk, model.pk): ResponseFactory(task=task, subject_model=model, sample=1,
                                                  core_idea=f"Idea {i}-{j}: a lantern of folded hours.",
                                                  visual_description=f"Scene {i}-{j}: paper creases glowing amber " + "x" * (j * 7))
            for i, task in enumerate(self.tasks) for j, model in enumerate(self.models)
        }

    def response(self, task, model_index: int):
        return self.responses[(task.pk, self.models[model_index].pk)]


def campaign_for(kind: str, catalogue: Catalogue, *, k: int = 3, annotators=(), status=Campaign.Status.OPEN, **extra) -> Campaign:
    return services.campaign_create(
        name=f"{kind} campaign {random.random():.8f}", kind=kind, task_set=catalogue.task_set, k=k,
        annotators=annotators, status=status, gold_rate=extra.pop("gold_rate", 0.0), **extra,
    )


def pairwise_campaign(catalogue: Catalogue, *, n_items: int | None = None, k: int = 3, annotators=(), **extra) -> Campaign:
    """Text pairwise items: model 0 vs 1, 2 vs 3, … per task, novelty with checklist cues."""
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue, k=k, annotators=annotators, **extra)
    specs = []
    for task in catalogue.tasks:
        for a, b in ((0, 1), (2, 3), (0, 3)):
            specs.append(item_creation.ItemSpec(
                task=task, dimension=Dimension.NOVELTY, response_a=catalogue.response(task, a),
                response_b=catalogue.response(task, b),
                payload={"checklist": ["Which response avoids common lantern imagery unless it transforms it?"]},
            ))
    item_creation.items_create(campaign=campaign, specs=specs[:n_items] if n_items else specs, rng=random.Random(1))
    return campaign


def faithfulness_campaign(catalogue: Catalogue, *, k: int = 3, annotators=(), **extra) -> tuple[Campaign, list[Render]]:
    campaign = campaign_for(CampaignKind.FAITHFULNESS, catalogue, k=k, annotators=annotators, **extra)
    renders = [RenderFactory(response=r) for r in catalogue.responses.values()]
    item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(task=r.response.task, render_a=r) for r in renders])
    return campaign, renders


def tig_campaign(catalogue: Catalogue, *, k: int = 3, annotators=(), **extra) -> Campaign:
    campaign = campaign_for(CampaignKind.TIG_AUDIT, catalogue, k=k, annotators=annotators, **extra)
    item_creation.items_create(campaign=campaign, specs=[
        item_creation.ItemSpec(task=task, payload={
            "checklist_text": "Which response avoids relying on common plant-growth imagery?",
            "cluster_summary": "plants, leaves, soft green growth as a stand-in for calm",
            "provenance": {"models_sharing": 3, "models_in_population": 4, "responses_sharing": 7, "responses_in_population": 12},
        }) for task in catalogue.tasks
    ])
    return campaign


def strategy_campaign(catalogue: Catalogue, *, k: int = 3, annotators=(), **extra) -> Campaign:
    campaign = campaign_for(CampaignKind.STRATEGY, catalogue, k=k, annotators=annotators, **extra)
    item_creation.items_create(campaign=campaign, specs=[
        item_creation.ItemSpec(task=r.task, response_a=r) for r in list(catalogue.responses.values())[:4]
    ])
    return campaign


def image_campaign(catalogue: Catalogue, renders, *, k: int = 3, annotators=(), **extra) -> Campaign:
    """Image preference items on pairs of renders of the same task (gate not checked: built directly)."""
    campaign = campaign_for(CampaignKind.IMAGE_PREFERENCE, catalogue, k=k, annotators=annotators, **extra)
    by_task = {}
    for render in renders:
        by_task.setdefault(render.response.task_id, []).append(render)
    specs = [item_creation.ItemSpec(task=group[0].response.task, dimension=Dimension.OVERALL, render_a=group[0], render_b=group[1])
             for group in by_task.values() if len(group) >= 2]
    item_creation.items_create(campaign=campaign, specs=specs)
    return campaign


PAIR_ANSWERS = ({"choice": "A"}, {"choice": "B"}, {"choice": "tie"})
VALID_ANSWERS = {
    CampaignKind.TEXT_PAIRWISE: {"choice": "A"},
    CampaignKind.IMAGE_PREFERENCE: {"choice": "B"},
    CampaignKind.FAITHFULNESS: {"score": 4, "hard_fail_reasons": []},
    CampaignKind.TIG_AUDIT: {"criteria": {c: "pass" for c in ("cluster_validity", "visual_specificity", "faithfulness",
                                                              "non_leakage", "usefulness_for_judging")},
                             "overall_action": "accept", "revision_note": ""},
    CampaignKind.STRATEGY: {"strategies": {"medium_adaptation": "central"}},
}
