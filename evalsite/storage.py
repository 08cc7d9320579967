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
