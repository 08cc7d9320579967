"""Loading the real demo for a test module and removing it afterwards (shared by the modules that
read the demo campaigns)."""

from __future__ import annotations

import io
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from annotation.models import Campaign
from leaderboard.ekphrasis.models import JudgeRun
from leaderboard.models import Render, SubjectModel, TaskSet


@contextmanager
def demo_loaded(*, judge_run: bool = False) -> Iterator[dict]:
    """The demo catalogue, accounts and campaigns (without the EASEL/C² validation data), and with
    ``judge_run`` the simulated judge's run and snapshot; everything is deleted on exit."""
    from annotation.demo import DEMO_ANNOTATORS, SIMULATED_USERNAMES
    from leaderboard.demo import demo_accounts_create, demo_catalogue_load, demo_judge_run

    media = tempfile.mkdtemp(prefix="atelier-demo-media-")
    with override_settings(MEDIA_ROOT=media):
        catalogue = demo_catalogue_load()
        demo_accounts_create()
        snapshot = demo_judge_run(task_set=catalogue.task_set) if judge_run else None
        out = io.StringIO()
        # the EASEL/C² validation campaigns have their own test (test_demo_validation.py)
        call_command("load_demo_campaigns", "--no-protocol-demo-data", stdout=out)
        try:
            yield {"task_set": catalogue.task_set, "output": out.getvalue(), "snapshot": snapshot}
        finally:
            get_user_model().objects.filter(panel_participant__campaign__task_set=catalogue.task_set).delete()
            Campaign.objects.filter(task_set=catalogue.task_set).delete()
            Render.objects.filter(response__task__task_set=catalogue.task_set).delete()
            JudgeRun.objects.filter(task_set=catalogue.task_set).delete()  # the demo's judge and ablation runs
            TaskSet.objects.filter(pk=catalogue.task_set.pk).delete()
            SubjectModel.objects.filter(is_demo=True, responses__isnull=True).delete()
            get_user_model().objects.filter(
                username__in=[*SIMULATED_USERNAMES, *DEMO_ANNOTATORS, "admin", "researcher"]).delete()
            shutil.rmtree(media, ignore_errors=True)
