from django.apps import AppConfig


class BundlesConfig(AppConfig):
    name = "leaderboard.bundles"
    label = "bundles"
    verbose_name = "Reproducibility bundles"
    default_auto_field = "django.db.models.BigAutoField"
