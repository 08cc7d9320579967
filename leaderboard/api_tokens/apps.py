from django.apps import AppConfig


class ApiTokensConfig(AppConfig):
    name = "leaderboard.api_tokens"
    label = "api_tokens"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "API tokens"
