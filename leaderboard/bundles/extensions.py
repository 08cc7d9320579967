"""Bundle contents other apps add: a small registry that keeps the dependency rule.

``annotation`` depends on ``leaderboard``, never the reverse, yet a board's bundle must carry the
human labels it was calibrated with. So an app that knows more of a board registers a contents
extension here from its ``AppConfig.ready()`` (``annotation`` registers the human-calibrated views of
an Ekphrasis snapshot), and the exporter calls every extension of the kind after its own contents.

An extension is ``extension(obj, writer) -> dict``: it writes its files through the
:class:`~engine.bundle.manifest.BundleWriter` and returns manifest fields (merged over the
exporter's own, so ``human_labels`` from an extension replaces the exporter's "none used").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.bundle.manifest import BundleWriter

__all__ = ["Extension", "extension_fields", "register_extension"]

Extension = Callable[[Any, BundleWriter], dict]
_EXTENSIONS: dict[str, list[Extension]] = {}


def register_extension(kind: str, extension: Extension) -> None:
    """Add ``extension`` to the bundles of ``kind`` (once: a second registration is ignored)."""
    registered = _EXTENSIONS.setdefault(kind, [])
    if extension not in registered:
        registered.append(extension)


def extension_fields(kind: str, obj: Any, writer: BundleWriter) -> dict:
    """Run every extension of ``kind`` on ``obj``; their manifest fields, later ones over earlier."""
    fields: dict = {}
    for extension in _EXTENSIONS.get(kind, ()):
        fields.update(extension(obj, writer))
    return fields
