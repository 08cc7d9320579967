"""The site as the backup test sees it, run in a process of its own (``python -m tests.evalsite.backup_scenario``):

* ``seed`` migrates, gives labels in a campaign through the services, runs a simulated judge run to its
  leaderboard snapshot, and puts a file in the media and var folders;
* ``digests`` prints what must survive a backup and restore: the SHA-256 of each campaign's label export
  (JSONL and CSV), of every leaderboard snapshot's payload, and of the media and var files.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import uuid
from pathlib import Path


def seed() -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from annotation import services
    from leaderboard.ekphrasis import judge_runs
    from tests.faults.database_restart import seed_campaign
    from tests.leaderboard.judging_factories import population, simulated_run

    seeded = seed_campaign(n_annotators=3, n_items=5)
    from annotation.models import Campaign

    campaign = Campaign.objects.get(pk=seeded["campaign"])
    rng = random.Random(3)
    for annotator in get_user_model().objects.filter(username__startswith="fault-annotator-").order_by("pk"):
        while (assignment := services.assignment_next(campaign=campaign, annotator=annotator, rng=rng)) is not None:
            services.label_submit(token=assignment.token, annotator=annotator, idempotency_key=uuid.uuid4(),
                                  answer={"choice": rng.choice(["A", "B", "tie"])}, time_on_item_ms=1500)
    task_set, models = population(n_models=4, n_tasks=2)
    judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=8))
    media = Path(settings.MEDIA_ROOT) / "renders" / "example.png"
    media.parent.mkdir(parents=True, exist_ok=True)
    media.write_bytes(bytes(range(256)) * 10)
    cache = Path(settings.VAR_DIR) / "provider-cache" / "note.txt"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a cached provider reply\n")


def digests() -> dict:
    from django.conf import settings

    from annotation.label_export import labels_export
    from annotation.label_models import PairwiseLabel
    from annotation.models import Campaign
    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    def sha(text: str | bytes) -> str:
        return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()

    out = {"labels": PairwiseLabel.objects.count(), "exports": {}, "snapshots": {}}
    for campaign in Campaign.objects.order_by("pk"):
        out["exports"][str(campaign.pk)] = [sha(labels_export(campaign=campaign, fmt=fmt)) for fmt in ("jsonl", "csv")]
    for snapshot in LeaderboardSnapshot.objects.order_by("pk"):
        out["snapshots"][str(snapshot.pk)] = sha(json.dumps(snapshot.payload, sort_keys=True))
    out["media"] = sha((Path(settings.MEDIA_ROOT) / "renders" / "example.png").read_bytes())
    out["var"] = sha((Path(settings.VAR_DIR) / "provider-cache" / "note.txt").read_bytes())
    return out


if __name__ == "__main__":
    import django

    django.setup()
    if sys.argv[1] == "seed":
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        seed()
    print(json.dumps(digests()))
