from django.apps import AppConfig


class EaselConfig(AppConfig):
    name = "leaderboard.easel"
    label = "easel"
    verbose_name = "EASEL (dexterous visual tool use)"

    def ready(self) -> None:
        from leaderboard.easel import overview
        from leaderboard.easel.services import EASEL_RUN_JOB
        from leaderboard.protocols import Protocol, protocol_register
        from leaderboard.runs.lifecycle import job_kind_register

        protocol_register(Protocol(
            kind="easel", app_label=self.label, title="EASEL", run_model="easel.EaselRun",
            nav_url="easel:leaderboard", run_url="easel:run_detail", exporters=("csv", "json", "tex"),
            board=overview.latest_board, model_results=overview.model_results, compare_url="easel:compare",
            summary="Agents paint stroke by stroke; S = SSIM, L1 and edge IoU per step.",
        ))
        job_kind_register(EASEL_RUN_JOB)
