from django.apps import AppConfig


class EvalsiteConfig(AppConfig):
    """The project package as an app, so that its system checks (evalsite/checks.py) register."""

    name = "evalsite"
    label = "evalsite"

    def ready(self) -> None:
        from evalsite import checks  # noqa: F401  (registers the checks)
        from evalsite.lazy_regexes import lazy_regexes_compiled
        from evalsite.loop_checks import connection_lookups_unraised
        from evalsite.metrics import observe_provider_calls
        from evalsite.settings_reads import settings_reads_cached

        observe_provider_calls()
        settings_reads_cached()
        connection_lookups_unraised()
        lazy_regexes_compiled()
