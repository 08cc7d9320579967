from pathlib import Path

from django.core.management.base import CommandError
from django.db import transaction

from leaderboard.ekphrasis.models import ChecklistItem
from leaderboard.ekphrasis.tig import tig_audit_apply
from leaderboard.import_contract import (
    TEXT_MAX_CHARS,
    FieldRule,
    ImportFailed,
    RecordError,
    field_rule,
    file_records,
    record_check,
)
from leaderboard.management.base import TaskSetCommand
from leaderboard.run_command import AtelierCommand

#: The audit-outcome record, checked by the import contract like every other import file.
AUDIT_RULES = {
    "checklist_item_id": field_rule(ChecklistItem, "id", required=True),
    "action": FieldRule(str, required=True, max_chars=16, trimmed=True),
    "revision": field_rule(ChecklistItem, "text"),
    "note": FieldRule(str, max_chars=TEXT_MAX_CHARS),
}


class Command(AtelierCommand):
    help = (
        "Apply TIG audit outcomes (JSONL: checklist_item_id, action accept|revise|exclude, optional revision, note): "
        "excluded items stop being used, revised wording replaces the original as a new version. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the audit outcomes, JSONL")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        raw = TaskSetCommand.import_file_bytes(path)
        name = str(path)
        errors: list[RecordError] = []
        records = [r for r in file_records(name, raw, rules=AUDIT_RULES, fmt="jsonl", errors=errors)
                   if record_check(name, r, AUDIT_RULES, errors)]
        if errors:
            raise CommandError(str(ImportFailed(errors)))
        with transaction.atomic():
            for record in records:
                v = record.values
                try:
                    tig_audit_apply(item_id=v["checklist_item_id"], action=v["action"],
                                    revision=v.get("revision", ""), note=v.get("note", ""))
                except ChecklistItem.DoesNotExist as exc:
                    raise CommandError(f"{name}:{record.line}: field 'checklist_item_id': no such checklist item") from exc
                except ValueError as exc:
                    raise CommandError(f"{name}:{record.line}: field 'action': {exc}") from exc
        self.stdout.write(f"{len(records)} audit outcome(s) applied")
