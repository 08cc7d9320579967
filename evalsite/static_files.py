"""Static files through WhiteNoise, without its warning about a ``STATIC_ROOT`` a development machine never fills.

A deployment runs ``collectstatic`` into ``STATIC_ROOT`` and WhiteNoise serves that folder; a missing one
there is a real fault, and WhiteNoise's ``No directory at`` warning stays. A development machine (the demo,
the tests) serves static files from the finders (``WHITENOISE_USE_FINDERS``) and has no collected folder:
the warning would read like a fault on a clean start, so the absent folder is simply not added.
"""

from pathlib import Path

from whitenoise.middleware import WhiteNoiseMiddleware


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    def add_files(self, root, prefix=None):
        uncollected = self.use_finders and root == self.static_root and not Path(root).is_dir()
        if not uncollected:
            super().add_files(root, prefix=prefix)
