"""The site's session engine: Django's database sessions (same table, same rows, same signing), with
the one read every request makes sent as SQL written once instead of an ORM query compiled per
request (issue 16: session and user loading were a fifth of an annotator request's CPU), and prepared
on PostgreSQL (:func:`evalsite.prepared_statements.statement_cursor`, issue 30): every request of every
page sends it, so PostgreSQL parses and plans it once per connection instead of once per request.

The session's user in the same statement (PostgreSQL, issue 30): the user id a session key held when this
process last decoded it is remembered, and the next read of that session also reads that user's row
(``LEFT JOIN LATERAL``, the statement :func:`evalsite.precompiled.row_by_pk` sends). When the decoded
session names that same user, the row is handed to the login backend's ``get_user``
(:func:`prefetched_user`) for this request only, instead of a second round trip; the backend applies
Django's checks to it as to one it read (``is_active``, then the session's auth hash). A session whose user
changed, or was never seen by this process, reads its user as before.

Decoding (issue 30: the signature check and JSON were ~2 % of a worker's CPU a label): a stored session string
this process has already verified and decoded, under the same secret key, fallback keys, salt and serializer,
is not verified again: its decoded dictionary is remembered (bounded) and each read gets its own copy. Any
string not seen — a tampered, forged or re-signed one, or one under other keys — is checked by Django's
``signing.loads`` as before, and only strings that pass are remembered; a failure is never remembered. A
modified session is saved as a new string, so what is remembered never changes. Expiry is the row's
``expire_date``, checked by the statement above on every read, and is not part of decoding.
"""

from __future__ import annotations

import copy
import functools
import threading

from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.signals import request_started
from django.db import connections, router
from django.utils import timezone

from evalsite.precompiled import instance_new, row_by_pk_sql, row_from
from evalsite.prepared_statements import statement_cursor

#: The user id (primary key) each session key held when this process last decoded it; bounded.
_SESSION_USERS: dict[str, object] = {}
_SESSION_USERS_KEPT = 10_000
#: Decoded session data by (stored string, secret key, fallback keys, salt, serializer); bounded.
_DECODED: dict[tuple, dict] = {}
_DECODED_KEPT = 10_000
_SCALARS = (str, int, float, bool, type(None))
#: The user row read with this request's session, when the session names that user: (user id, instance).
_handed = threading.local()


def _forget_handed(**kwargs) -> None:
    _handed.user = None


# A user read with one request's session is never handed to another request (nor kept past this one).
request_started.connect(_forget_handed, dispatch_uid="evalsite.sessions.forget_handed")


def prefetched_user(user_id):
    """The user row read with this request's session if it is user ``user_id``'s (once), else None."""
    handed, _handed.user = getattr(_handed, "user", None), None
    if handed is not None and handed[0] == user_id:
        return handed[1]
    return None


class SessionStore(DatabaseSessionStore):
    _user_row = None

    def _get_session_from_db(self):
        """The unexpired session row with this key, or None (then the key is dropped, as Django does)."""
        model = self.model
        key = self.session_key
        row = None
        self._user_row = None
        if key is not None:
            connection = connections[router.db_for_read(model)]
            guess = _SESSION_USERS.get(key) if connection.vendor == "postgresql" else None
            with statement_cursor(connection) as cursor:
                if guess is None:
                    cursor.execute(
                        f"SELECT session_data, expire_date FROM {model._meta.db_table} "
                        f"WHERE session_key = %s AND expire_date > %s",
                        [key, timezone.now()],
                    )
                else:
                    cursor.execute(_session_and_user_sql(model._meta.db_table), [guess, key, timezone.now()])
                row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        if guess is not None:
            self._user_row = (guess, row_from(get_user_model(), row[2:]))
        return instance_new(model, session_key=key, session_data=row[0], expire_date=row[1])

    def decode(self, session_data):
        """Django's decoding, done once per process for each stored string under the same keys (see the
        module docstring); every call returns a dictionary of its own."""
        key = (
            session_data,
            settings.SECRET_KEY,
            tuple(settings.SECRET_KEY_FALLBACKS),
            self.key_salt,
            self.serializer,
        )
        known = _DECODED.get(key)
        if known is None:
            data = super().decode(session_data)
            if not data:  # refused, corrupt or empty: nothing to remember, decoded again next time
                return data
            if len(_DECODED) >= _DECODED_KEPT:
                _DECODED.clear()
            _DECODED[key] = copy.deepcopy(data)
            return data
        # The request may change its session: a copy, shallow when every value is immutable (the usual case)
        if all(type(value) in _SCALARS for value in known.values()):
            return dict(known)
        return copy.deepcopy(known)

    def load(self):
        _handed.user = None
        session = self._get_session_from_db()
        data = self.decode(session.session_data) if session else {}
        if session is not None and SESSION_KEY in data:
            try:
                user_id = get_user_model()._meta.pk.to_python(data[SESSION_KEY])
            except Exception:  # noqa: BLE001 — Django's get_user decides about a malformed id
                return data
            if self._user_row is not None and self._user_row[0] == user_id and self._user_row[1] is not None:
                _handed.user = self._user_row
            if len(_SESSION_USERS) >= _SESSION_USERS_KEPT:
                _SESSION_USERS.clear()
            _SESSION_USERS[session.session_key] = user_id
        self._user_row = None
        return data


def _session_and_user_sql(table: str) -> str:
    """The session row and, beside it, the user with the id given first (NULL columns when there is none).
    Written once per session table, user model and the user's database (issue 30: it was written anew at
    every request); :func:`row_by_pk_sql`'s SQL depends on nothing else (its compiled query is kept by
    the same model, alias and vendor)."""
    user_model = get_user_model()
    connection = connections[router.db_for_read(user_model)]
    return _session_and_user_sql_of(table, user_model, connection.alias, connection.vendor)


@functools.cache
def _session_and_user_sql_of(table: str, user_model: type, alias: str, vendor: str) -> str:
    user_sql, _ = row_by_pk_sql(user_model, "%s")
    return (
        f"SELECT s.session_data, s.expire_date, u.* FROM {table} s LEFT JOIN LATERAL ({user_sql}) u ON true "
        f"WHERE s.session_key = %s AND s.expire_date > %s"
    )
