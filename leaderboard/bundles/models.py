"""An imported board: a bundle loaded into this site, read-only and labelled as imported.

Choice: a separate model, not flagged rows in the protocols' own tables. An imported board has no runs,
responses or episodes of this site behind it — only the bundle's records — and the site's writers
(judging, finalising, resuming) must never touch it; a table of its own makes that impossible rather
than a rule every writer must remember. The bundle's files stay stored as they came (``manifest`` and
the ``board`` as JSON, plus the viewer's data), with the verification that ran on import.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class ImportedBoard(models.Model):
    class Kind(models.TextChoices):
        EKPHRASIS = "ekphrasis", "Ekphrasis"
        EASEL = "easel", "EASEL"
        C2 = "c2", "C²-Eval"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    title = models.CharField(max_length=300)
    bundle_sha256 = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the bundle's manifest.json.")
    manifest = models.JSONField()
    board = models.JSONField(help_text="The board exactly as the bundle stores it (board/board.json).")
    viewer = models.JSONField(default=dict, help_text="The viewer's protocol-neutral tables (data.js).")
    is_simulated = models.BooleanField(default=False)
    is_demo = models.BooleanField(default=False)
    verified = models.BooleanField(help_text="verify_bundle found every file and number identical on import.")
    verification = models.JSONField(default=dict, blank=True, help_text="Counts and the differences, if any.")
    source = models.CharField(max_length=500, blank=True, help_text="The path or name it was imported from.")
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["ekphrasis", "easel", "c2"]), name="importedboard_kind_known"),
        ]
        ordering = ["-imported_at"]

    def __str__(self) -> str:
        return f"imported {self.get_kind_display()} board: {self.title}"
