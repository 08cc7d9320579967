from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Human annotation"

    def ready(self) -> None:
        from annotation.dashboard_cache import connect_invalidation_signals

        connect_invalidation_signals()
