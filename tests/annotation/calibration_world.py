"""One calibrated world for the calibrated-board walks: models named by an attacker, judged on a small task set
(an Ekphrasis snapshot with its verdicts on all three dimensions), a text-pairwise campaign on that task set whose
labels join the judge's verdicts, a C² run with a U-O-S campaign rating its samples, and an EASEL canvas-similarity
campaign (each campaign named by an attacker too); every campaign labelled to the end by three annotators, and a fourth annotator of each who labels nothing."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from annotation.models import Campaign
from leaderboard.c2.models import C2Run
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import LeaderboardSnapshot
from leaderboard.models import SubjectModel
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators, fill
from tests.annotation.validation_factories import C2World, EaselWorld, canvas_campaign, uos_campaign
from tests.leaderboard.judging_factories import simulated_run

#: Model names an attacker chose: a spreadsheet formula, LaTeX commands, markup (each also a model's name on the
#: C² run, so every calibrated board and export shows them).
HOSTILE_MODELS = (
    '=HYPERLINK("http://evil.invalid","x")',
    '@SUM(1+1) \\input{/etc/passwd} <img src=x onerror=alert(1)>',
    '+cmd|"/C calc"!A0 %#~^^5c\\write18{id}& $x$',
    '-2+3 {un" onmouseover="alert(3) 模型😀',
)


@dataclass
class CalibratedWorld:
    snapshot: LeaderboardSnapshot
    text_campaign: Campaign  # text pairwise on the snapshot's task set: the calibrated board's labels
    c2_run: C2Run
    uos_campaign: Campaign  # U-O-S rating of the run's samples: its calibrated columns
    canvas_campaign: Campaign  # EASEL canvas similarity: calibrated columns too
    models: list[SubjectModel]
    annotator: get_user_model()  # an annotator of every campaign, who labelled nothing: a blinded reader


def _pairwise_answer(user, assignment):
    return {"choice": "AB"[(assignment.item.pk + len(user.username)) % 2]}


def _uos_answer(user, assignment):
    return {"usefulness": assignment.item.pk % 6, "originality": (assignment.item.pk + 2) % 6, "surprise": 3}


def calibrated_world() -> CalibratedWorld:
    """The world, its snapshot's calibrated board computed once (the first page load's work)."""
    from annotation.calibration import calibration_record_ensure

    users = annotators(3, prefix="calibrator")
    extra_annotators = annotators(1, prefix="blinded")
    catalogue = Catalogue(n_tasks=2, models=HOSTILE_MODELS)
    text = pairwise_campaign(catalogue, annotators=[*users, *extra_annotators])  # before the judge run: no launch gates to pass yet
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(catalogue.task_set, catalogue.models, budget=6,
                                                                      dimensions="UEN"))
    fill(text, users, _pairwise_answer)
    c2 = C2World()
    for model, name in zip(c2.models, HOSTILE_MODELS[1:]):
        SubjectModel.objects.filter(pk=model.pk).update(display_name=name + " c2")
    C2Run.objects.filter(pk=c2.run.pk).update(subject_names=[name + " c2" for name in HOSTILE_MODELS[1:]])
    uos = uos_campaign(c2, annotators=[*users, *extra_annotators], n_items=8)
    fill(uos, users, _uos_answer)
    canvas = canvas_campaign(EaselWorld(), annotators=[*users, *extra_annotators], pairs_per_task=2)
    fill(canvas, users, lambda user, assignment: {"choice": "A"})
    for campaign, name in ((text, HOSTILE_MODELS[0]), (uos, HOSTILE_MODELS[1]), (canvas, HOSTILE_MODELS[2])):
        Campaign.objects.filter(pk=campaign.pk).update(name=name + " campaign")  # a researcher's name, shown too
        campaign.refresh_from_db()
    calibration_record_ensure(snapshot=snapshot, campaign=text)
    return CalibratedWorld(snapshot, text, c2.run, uos, canvas, catalogue.models, extra_annotators[0])

