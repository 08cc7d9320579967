from django.apps import AppConfig


class EaselConfig(AppConfig):
    name = "leaderboard.easel"
    label = "easel"
    verbose_name = "EASEL (dexterous visual tool use)"
