"""An annotator's image, by assignment token and shown slot: the one path behind the labelling page's
``/annotate/media/…`` and the API's ``/api/v1/annotate/assignments/…/media/…`` (a token client).

Only the assignment's own annotator gets it (:func:`annotation.services.assignment_for_token` runs the
annotator gatekeeper); the URL carries the opaque assignment token and the shown slot, never an item,
model or file name. The bytes are those pinned (SHA-256) when the item was handed out, served as
pixels only from the cache of :func:`annotation.media.served_image`.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth.models import AbstractBaseUser

from annotation import annotator_reads, services
from annotation.errors import AnnotationError, ImageNotShown, NotFound
from annotation.media import ImageUnreadable, served_image


def assignment_image(*, token: str, annotator: AbstractBaseUser, shown_slot: str) -> tuple[bytes, str]:
    """(bytes, content type) of the image in ``shown_slot`` of the annotator's assignment ``token``.

    :class:`NotFound` for another's assignment or a slot the item does not show; :class:`ImageNotShown`
    when the stored file changed since hand-out or cannot be shown (undecodable, over the pixel budget)."""
    try:
        assignment = services.assignment_for_token(token=token, annotator=annotator)
        data, expected = annotator_reads.media_bytes_for_assignment(assignment=assignment, shown_slot=shown_slot)
    except (AnnotationError, KeyError) as exc:
        raise NotFound("No such image.") from exc
    sha256 = hashlib.sha256(data).hexdigest()
    if sha256 != expected:
        # The file changed since the item was handed out: never show other content under this label.
        raise ImageNotShown("This image changed after the item was assigned; skip the item.")
    try:
        return served_image(data, sha256=sha256)
    except ImageUnreadable as exc:
        raise ImageNotShown("This image cannot be shown; skip the item.") from exc
