"""Domain errors of the annotation app. Each carries the HTTP status it maps to; the API maps them
to responses in one place (``annotation.api.AnnotationAPIView.handle_exception``)."""

from __future__ import annotations


class AnnotationError(Exception):
    """Base class: a request the domain refuses, with a message fit to show the user."""

    status = 400
    code = "invalid"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def as_dict(self) -> dict:
        return {"error": self.code, "detail": self.message}


class LabelInvalid(AnnotationError):
    """A submitted label breaks its kind's rules; ``errors`` maps field -> message."""

    code = "label_invalid"

    def __init__(self, errors: dict[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{field}: {message}" for field, message in self.errors.items()))

    def as_dict(self) -> dict:
        return {"error": self.code, "detail": self.message, "fields": self.errors}


class NotAllowed(AnnotationError):
    status = 403
    code = "not_allowed"


class NotFound(AnnotationError):
    status = 404
    code = "not_found"


class CampaignNotOpen(AnnotationError):
    status = 409
    code = "campaign_not_open"


class CampaignPaused(CampaignNotOpen):
    """The campaign is paused for review: a text annotators read names a model the catalogue gained (or
    renamed) after it was written (:func:`annotation.blinding_recheck.campaign_texts_current`). The
    message is neutral: it names neither the campaign nor the model."""

    code = "campaign_paused"


#: What annotators and participants are told about a paused campaign (nothing more).
CAMPAIGN_PAUSED_MESSAGE = "This campaign is paused for review. Please come back later."


class AssignmentClosed(AnnotationError):
    """The assignment can no longer take a label (skipped, reassigned after expiry, content changed)."""

    status = 409
    code = "assignment_closed"


class SubmissionConflict(AnnotationError):
    """The assignment already has a label that differs from this submission."""

    status = 409
    code = "submission_conflict"


class Busy(AnnotationError):
    status = 503
    code = "busy"


class ItemsInvalid(AnnotationError):
    """Item creation or an item import failed; ``errors`` lists (line, field, message); ``file`` names
    the imported file, when there is one (messages then read ``file:line: field 'f': message``)."""

    code = "items_invalid"

    def __init__(self, errors: list[tuple[int, str, str]], *, file: str = ""):
        self.errors = list(errors)
        self.file = file
        super().__init__("\n".join(self._where(line, field) + message for line, field, message in self.errors))

    def _where(self, line: int, field: str) -> str:
        if not self.file:
            # line 0 is no line of a file (a form's or a setting's field): the field alone names it
            return f"line {line}: {field}: " if line else (f"{field}: " if field else "")
        where = f"{self.file}:{line}" if line else self.file
        return f"{where}: field '{field}': " if field else f"{where}: "


class AblationInvalid(AnnotationError):
    """The Novelty ablation cannot be started for this campaign or judge (the message says why)."""

    code = "ablation_invalid"


class CampaignNameTaken(AnnotationError):
    """Another campaign already has this name (names are unique), also when it was created by a request
    running at the same time; ``errors`` names the field."""

    status = 409
    code = "conflict"

    def __init__(self, name: str):
        super().__init__(f"a campaign named {name!r} exists already")
        self.errors = {"name": self.message}


class LaunchGatesFailed(AnnotationError):
    """Human validation may not start: the judge run it launches from failed its App. D.3 gates and no
    admin recorded an override (the message names the run and the failed gates)."""

    status = 409
    code = "launch_gates_failed"


class LabelNotRevisable(AnnotationError):
    """A change of a label the annotator may not make now: not their most recent label, the item's
    content changed, or the item is in adjudication (the message says which)."""

    status = 409
    code = "label_not_revisable"


class ImageNotShown(AnnotationError):
    """An assigned image that cannot be shown: changed since hand-out, undecodable, or over the pixel budget."""

    status = 409
    code = "image_not_shown"
