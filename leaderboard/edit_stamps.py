"""When a stored record was last saved: the stamp a cache key or an ETag reads to see a hand edit.

Some records are summarised into cached numbers (a C² run's results, a leaderboard snapshot's payload, an
EASEL episode's text and JSON columns), and a key built from counts, ids and finish times cannot see an edit
that leaves those alone (the shell, a data fix). Every ``save()`` stamps :attr:`EditStamped.updated_at`, one
more column in the key's own query or on the object already read; a ``queryset.update()`` or raw SQL does not.
"""

from __future__ import annotations

from django.db import models

__all__ = ["EditStamped"]


class EditStamped(models.Model):
    """Abstract: ``updated_at`` is set by every save, a save with ``update_fields`` included."""

    updated_at = models.DateTimeField(auto_now=True, help_text="Set by every save: caches keyed on it see edits.")

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        # auto_now is written only when listed in update_fields: a partial save of a summarised field would
        # leave the stamp, and the caches keyed on it, behind.
        update_fields = kwargs.get("update_fields")
        if update_fields:
            kwargs["update_fields"] = {*update_fields, "updated_at"}
        super().save(*args, **kwargs)
