from importlib import import_module

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Benchmarks and leaderboards"

    def import_models(self) -> None:
        """The catalogue's models (``leaderboard.models``), then Ekphrasis's (``leaderboard.ekphrasis.models``,
        a plain package under this app label: its models keep their tables and migrations here)."""
        super().import_models()
        import_module("leaderboard.ekphrasis.models")

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from leaderboard.ekphrasis import judge_runs, overview, task_construction, tig
        from leaderboard.ekphrasis.models import LeaderboardSnapshot
        from leaderboard.ekphrasis.tasks import snapshot_written
        from leaderboard.protocols import Protocol, protocol_register
        from leaderboard.runs.lifecycle import job_kind_register

        # Ekphrasis's models live under the catalogue's own app label (leaderboard/ekphrasis is a plain package).
        protocol_register(Protocol(
            kind="ekphrasis", app_label="leaderboard", title="Ekphrasis", run_model="leaderboard.JudgeRun",
            nav_url="leaderboard_list", nav_label="Leaderboards", run_url="judge_run_detail", exporters=("csv", "json", "tex"),
            board=overview.latest_board, model_results=overview.model_results, compare_url="snapshot_compare",
            summary="Scores with bootstrap intervals, tiers, reliability, drill-down to each judgment.",
        ))
        for job in (judge_runs.JUDGE_RUN_JOB, tig.TIG_BUILD_JOB, task_construction.TASK_SET_BUILD_JOB):
            job_kind_register(job)
        # a new snapshot's page data is computed into the cache once it commits
        post_save.connect(snapshot_written, sender=LeaderboardSnapshot, dispatch_uid="ekphrasis-snapshot-warm")
