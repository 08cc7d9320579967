#!/usr/bin/env python
"""Atelier's command line: Django's manage.py with two changes a newcomer meets first.

* Settings that cannot start (most often: no ``SECRET_KEY`` outside development) end every command in
  one line naming the fix, exit status 2, instead of a traceback (or, for ``help``, a list of
  Django's commands only).
* ``manage.py help`` lists the project's own commands together under ``[atelier]``.
"""

import os
import sys
from collections import defaultdict

#: Top-level packages whose commands are the project's (listed under ``[atelier]`` by ``help``).
PROJECT_PACKAGES = ("annotation", "engine", "evalsite", "leaderboard")
#: Exit status of a command that could not start because the settings refused the environment.
SETTINGS_REFUSED_STATUS = 2


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    from django.core.management import CommandParser, ManagementUtility, get_commands, handle_default_options
    from django.core.management.base import CommandError
    from django.core.management.color import color_style

    class AtelierManagementUtility(ManagementUtility):
        def execute(self) -> None:
            # --settings/--pythonpath choose the settings, so they are applied first, as Django does.
            parser = CommandParser(add_help=False, allow_abbrev=False)
            parser.add_argument("--settings")
            parser.add_argument("--pythonpath")
            try:
                options, _ = parser.parse_known_args(self.argv[2:])
                handle_default_options(options)
            except CommandError:
                pass  # Django reports bad options itself, in super().execute()
            settings_refused(self.prog_name)
            super().execute()

        def main_help_text(self, commands_only: bool = False) -> str:
            if commands_only:
                return super().main_help_text(commands_only=True)
            groups: dict[str, list[str]] = defaultdict(list)
            for name, app in get_commands().items():
                if app.partition(".")[0] in PROJECT_PACKAGES:
                    groups["atelier"].append(name)
                else:
                    groups["django" if app == "django.core" else app.rpartition(".")[-1]].append(name)
            style = color_style()
            lines = ["", f"Type '{self.prog_name} help <subcommand>' for help on a specific subcommand.", "",
                     "Available subcommands:"]
            # The project's commands first: they are what a reader of the README looks for.
            for app in sorted(groups, key=lambda group: (group != "atelier", group)):
                lines += ["", style.NOTICE(f"[{app}]"), *(f"    {name}" for name in sorted(groups[app]))]
            return "\n".join(lines)

    AtelierManagementUtility(sys.argv).execute()


def settings_refused(prog_name: str) -> None:
    """Load the settings; if they refuse the environment, say why in one line and exit."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"{prog_name}: {exc}\n")
        sys.exit(SETTINGS_REFUSED_STATUS)


if __name__ == "__main__":
    main()
