from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Benchmarks and leaderboards"

    def ready(self) -> None:
        from leaderboard.protocols import Protocol, protocol_register

        # Ekphrasis's models live under the catalogue's own app label (leaderboard/ekphrasis is a plain package).
        protocol_register(Protocol(
            kind="ekphrasis", app_label="leaderboard", title="Ekphrasis", run_model="leaderboard.JudgeRun",
            nav_url="leaderboard_list", run_url="judge_run_detail", exporters=("csv", "json", "tex"),
            summary="Scores with bootstrap intervals, tiers, reliability, drill-down to each judgment.",
        ))
