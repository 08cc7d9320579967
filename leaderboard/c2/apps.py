from django.apps import AppConfig


class C2Config(AppConfig):
    name = "leaderboard.c2"
    label = "c2"
    verbose_name = "C²-Eval (convergent and divergent creativity)"
