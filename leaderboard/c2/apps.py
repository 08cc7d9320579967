from django.apps import AppConfig


class C2Config(AppConfig):
    name = "leaderboard.c2"
    label = "c2"
    verbose_name = "C²-Eval (convergent and divergent creativity)"

    def ready(self) -> None:
        from leaderboard.c2 import overview
        from leaderboard.c2.services.runs import C2_RUN_JOB
        from leaderboard.protocols import Protocol, protocol_register
        from leaderboard.runs.lifecycle import job_kind_register

        protocol_register(Protocol(
            kind="c2", app_label=self.label, title="C²", run_model="c2.C2Run",
            nav_url="c2:leaderboard", run_url="c2:run_detail", exporters=("csv", "json", "tex"),
            board=overview.latest_board, model_results=overview.model_results, compare_url="c2:compare",
            summary="Usefulness, Originality and Surprise of convergent and divergent answers.",
        ))
        job_kind_register(C2_RUN_JOB)
