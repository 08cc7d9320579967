from leaderboard.management.base import ExportCommand
from leaderboard.services.catalogue import responses_export


class Command(ExportCommand):
    help = "Export a task set's responses as JSONL or CSV (round-trips through import_responses)."
    export = staticmethod(responses_export)
