"""The demo: a small Ekphrasis task set, four demo subject models and accounts.

Everything created here is labelled as demo data (``is_demo``) so that no page
can pass it off as a real evaluation.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from leaderboard.ekphrasis.judges import SIMULATED_JUDGE_SKILLS
from leaderboard.models import TaskSet
from leaderboard.roles import ADMIN, ANNOTATOR, RESEARCHER
from leaderboard.services.catalogue import ImportSummary, responses_import, role_groups_ensure, tasks_import

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_TASK_SET = "ekphrasis-demo"
DEMO_VERSION = "1"
DEMO_ACCOUNTS = (
    ("admin", ADMIN),
    ("researcher", RESEARCHER),
    ("annotator1", ANNOTATOR),
    ("annotator2", ANNOTATOR),
    ("annotator3", ANNOTATOR),
)


# The simulated judge's latent skills for the demo models live in its configuration (leaderboard/ekphrasis/judges.py),
# so a run started from the page with any seed judges the same "true" models.
DEMO_SIMULATED_SKILLS = SIMULATED_JUDGE_SKILLS
#: How far one demo answer's quality strays from its model's skill (the simulated judge's
#: ``answer_spread``, :func:`engine.judge.simulated.answer_quality`): the demo's simulated annotators
#: see the same per-answer qualities, so the judge's verdict on a comparison predicts theirs beyond
#: the two models' skills, which is what the calibrated board borrows (issue 24).
DEMO_ANSWER_SPREAD = 1.0


@dataclass
class DemoCatalogue:
    task_set: TaskSet
    tasks: ImportSummary
    responses: ImportSummary


@transaction.atomic
def demo_catalogue_load() -> DemoCatalogue:
    """Import the demo task set and responses (idempotent)."""
    tasks_path = DEMO_DIR / "ekphrasis_tasks.jsonl"
    responses_path = DEMO_DIR / "ekphrasis_responses.jsonl"
    task_set, task_summary = tasks_import(
        name=str(tasks_path.relative_to(DEMO_DIR.parent.parent)),
        raw=tasks_path.read_bytes(),
        task_set_name=DEMO_TASK_SET,
        version=DEMO_VERSION,
        description="DEMO DATA: eight briefs written for the demo, two per family, answered by four demo models.",
        is_demo=True,
    )
    response_summary = responses_import(
        name=str(responses_path.relative_to(DEMO_DIR.parent.parent)),
        raw=responses_path.read_bytes(),
        task_set=task_set,
        create_models=True,
        demo_models=True,
    )
    if not task_set.frozen:
        task_set.frozen = True
        task_set.save(update_fields=["frozen"])
    return DemoCatalogue(task_set, task_summary, response_summary)


@transaction.atomic
def development_machine() -> bool:
    """The one gate of everything that prints a demo password: a development machine says so explicitly
    (``ATELIER_DEV=true`` or ``DEBUG=true``); anything else is production."""
    from django.conf import settings

    return bool(settings.DEBUG or settings.ATELIER_DEV)


@transaction.atomic
def demo_accounts_refresh() -> dict[str, str]:
    """Create the demo accounts that are missing and give every demo account a new password; username ->
    password. ``make demo`` calls this each time, so the summary it prints last always holds working ones."""
    demo_accounts_create()
    User = get_user_model()
    passwords = {}
    for username, _ in DEMO_ACCOUNTS:
        user = User.objects.get(username=username)
        passwords[username] = secrets.token_urlsafe(9)
        user.set_password(passwords[username])
        user.save(update_fields=["password"])
    return passwords


def demo_accounts_create() -> dict[str, str | None]:
    """Create the demo accounts; returns username -> new password (None if it already existed with one).
    An account made by :func:`demo_annotator_accounts_ensure` has no usable password yet: it gets one here."""
    role_groups_ensure()
    User = get_user_model()
    passwords: dict[str, str | None] = {}
    for username, role in DEMO_ACCOUNTS:
        user, created = User.objects.get_or_create(username=username)
        if created or not user.has_usable_password():
            password = secrets.token_urlsafe(9)
            user.set_password(password)
            user.is_staff = role == ADMIN
            user.is_superuser = role == ADMIN
            user.save()
            passwords[username] = password
        else:
            passwords[username] = None
        user.groups.add(Group.objects.get(name=role))
    return passwords


def demo_annotator_accounts_ensure() -> list:
    """The demo's annotator accounts (annotator1..3), created when missing with the annotator role and no
    usable password. The demo campaigns make them members when they are created, which in ``make demo``
    is before its last step (serve_demo) gives every demo account its password; an account made here
    before ``load_demo`` gets its printed password there (:func:`demo_accounts_create`)."""
    role_groups_ensure()
    User = get_user_model()
    users = []
    for username, role in DEMO_ACCOUNTS:
        if role != ANNOTATOR:
            continue
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        user.groups.add(Group.objects.get(name=role))
        users.append(user)
    return users


def demo_judge_run(*, task_set: TaskSet, progress=None):
    """Judge the demo set with the labelled simulated judge through the real pipeline (idempotent)."""
    from leaderboard.ekphrasis import judge_runs
    from leaderboard.ekphrasis.models import JudgeRun

    # fixed-pair runs (the demo's Novelty ablation) are not the leaderboard run
    runs = JudgeRun.objects.filter(task_set=task_set, judge_name="simulated").exclude(config__has_key="fixed_pairs")
    done = runs.filter(status=JudgeRun.Status.DONE).first()
    if done is not None:
        return done.snapshots.first()
    run = runs.exclude(status=JudgeRun.Status.FAILED).first()
    if run is None:
        run = judge_runs.judge_run_create(
            task_set=task_set, judge_name="simulated", budget_per_task=50, seed=42,
            config={"simulated": {"skills": DEMO_SIMULATED_SKILLS, "answer_spread": DEMO_ANSWER_SPREAD},
                    "auxiliary_judges": ["simulated-aux"],
                    "auxiliary_share": 0.2, "duplicate_share": 0.1},
        )
    return judge_runs.judge_run_execute_inline(run=run, progress=progress)
