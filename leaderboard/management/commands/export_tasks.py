from leaderboard.management.base import ExportCommand
from leaderboard.services.catalogue import tasks_export


class Command(ExportCommand):
    help = "Export a task set's tasks as JSONL or CSV (round-trips through import_tasks)."
    export = staticmethod(tasks_export)
