"""The media storage: Django's file system storage that leaves no partial file when the disk is full.

Django's ``FileSystemStorage`` writes a new file in place; if the disk fills (``ENOSPC``), a quota is
reached or the folder is read-only half way through, the partial file stays behind. This storage
removes it and raises :class:`MediaUnwritable`, which the site answers as HTTP 507 with a clear message
(``evalsite/error_pages.py``); the writes around it are in the caller's transaction, so no row is left
either.
"""

from __future__ import annotations

import errno
import os

from django.core.files.storage import FileSystemStorage
from django.core.files.uploadhandler import TemporaryFileUploadHandler

__all__ = ["MediaStorage", "MediaUnwritable"]

#: The errors that say "this disk will not take the file", not "this request is wrong".
UNWRITABLE = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


class MediaUnwritable(OSError):
    """The media folder is full or not writable; nothing of the file was kept."""


class MediaStorage(FileSystemStorage):
    def _save(self, name, content):
        try:
            return super()._save(name, content)
        except OSError as exc:
            if exc.errno not in UNWRITABLE or isinstance(exc, MediaUnwritable):
                raise
            try:
                os.remove(self.path(name))  # what was written before the disk filled
            except OSError:
                pass
            raise MediaUnwritable(exc.errno, f"The media folder is full or not writable ({os.strerror(exc.errno)}); "
                                  "nothing was saved. Free space in MEDIA_ROOT and try again.") from exc


class SpooledUploadHandler(TemporaryFileUploadHandler):
    """Django's upload handler that spools a large upload to ``FILE_UPLOAD_TEMP_DIR``, except that a disk that
    fills while the file streams in removes the partial temporary file at once (Django's leaves it open and on
    the disk until the request is collected) before the error is answered (507, evalsite.error_pages)."""

    def receive_data_chunk(self, raw_data, start):
        try:
            return super().receive_data_chunk(raw_data, start)
        except OSError:
            self.file.close()  # a NamedTemporaryFile: closing it deletes it
            raise
