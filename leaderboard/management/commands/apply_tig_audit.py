import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from leaderboard.models import ChecklistItem
from leaderboard.services.tig import tig_audit_apply


class Command(BaseCommand):
    help = (
        "Apply TIG audit outcomes (JSONL: checklist_item_id, action accept|revise|exclude, optional revision, note): "
        "excluded items stop being used, revised wording replaces the original as a new version. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        applied = 0
        try:
            with transaction.atomic():
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                        tig_audit_apply(item_id=int(record["checklist_item_id"]), action=record["action"],
                                        revision=record.get("revision", ""), note=record.get("note", ""))
                    except (KeyError, ValueError, TypeError, ChecklistItem.DoesNotExist) as exc:
                        raise CommandError(f"{path}:{number}: {exc}") from exc
                    applied += 1
        except OSError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{applied} audit outcome(s) applied")
