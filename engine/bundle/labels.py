"""The labels a reader of a bundle sees first — SIMULATED, DEMO and the protocol — checked against the
bundle's configuration and records.

The viewer's labels, the summary line and an imported board's flags are read from the manifest's
``simulated``, ``demo`` and ``protocol`` fields, which no number depends on: a bundle whose manifest
said ``"simulated": false`` (and whose ``data.js`` was rebuilt to match) verified, and an imported site
showed a simulated board unlabelled. So each label is compared with what the rest of the bundle says:

* ``simulated`` is true when any component the manifest lists is simulated, when the configuration the
  numbers were recomputed with says so (C²'s ``simulated``; an EASEL board run's ``is_simulated``), or
  when a record names the simulated judge or rater (Ekphrasis comparisons' ``judge``, C² ratings'
  ``rater``: ``simulated`` or ``simulated-…``, the site's rule in ``leaderboard.providers``);
* ``demo`` is true when the task set is a demo one or the configuration says ``demo``;
* ``protocol`` is the protocol of the manifest's ``kind``;
* ``human_labels.used`` is false but for Ekphrasis (whose calibrated views verify recomputes).

Nothing in a bundle is signed: one who rewrites every record, the configuration and the components
consistently still passes. These checks make the label a consequence of the evidence instead of a free field.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.bundle import c2, easel, ekphrasis
from engine.bundle.manifest import read_jsonl
from engine.bundle.numbers import NumberCheck

__all__ = ["PROTOCOLS", "label_checks", "named_simulated"]

PROTOCOLS = {"ekphrasis": ekphrasis.PROTOCOL, "easel": easel.PROTOCOL, "c2": c2.PROTOCOL}
SIMULATED_NAME = "simulated"


def named_simulated(name: Any) -> bool:
    """A judge or rater name that is the simulated one (``simulated`` or ``simulated-…``)."""
    return isinstance(name, str) and (name == SIMULATED_NAME or name.startswith(f"{SIMULATED_NAME}-"))


def _simulated_evidence(root: Path, manifest: Mapping[str, Any]) -> bool:
    kind = manifest["kind"]
    config = manifest.get("configuration") or {}
    if any(bool(c.get("simulated")) for c in manifest.get("components") or [] if isinstance(c, Mapping)):
        return True
    if kind == "ekphrasis":
        return any(named_simulated(row.get("judge")) for row in read_jsonl(root, ekphrasis.COMPARISONS))
    if kind == "easel":
        return any(bool(r.get("is_simulated")) for r in read_jsonl(root, easel.RUNS) if r.get("on_board"))
    return bool(config.get("simulated")) or any(named_simulated(row.get("rater")) for row in read_jsonl(root, c2.RATINGS))


def label_checks(root: Path, manifest: Mapping[str, Any]) -> list[NumberCheck]:
    """The manifest's ``simulated``, ``demo`` and ``protocol`` beside what the bundle's evidence gives."""
    config = manifest.get("configuration") or {}
    demo = bool((manifest.get("task_set") or {}).get("is_demo")) or bool(config.get("demo"))
    return [
        NumberCheck("manifest.simulated (the SIMULATED label of the viewer and an imported board; from the components, "
                    "configuration and records)", manifest.get("simulated"), _simulated_evidence(root, manifest)),
        NumberCheck("manifest.demo (the DEMO label; from the task set and configuration)", manifest.get("demo"), demo),
        NumberCheck(f"manifest.protocol (the protocol of kind {manifest['kind']})", manifest.get("protocol"),
                    PROTOCOLS[manifest["kind"]]),
    ] + ([] if manifest["kind"] == "ekphrasis" else [
        # only a snapshot's calibrated views read human labels (and verify recomputes them); elsewhere a
        # "used" claim would show on the imported board with nothing behind it
        NumberCheck(f"manifest.human_labels.used (no human label enters a {manifest['kind']} board)",
                    bool((manifest.get("human_labels") or {}).get("used")), False)])
