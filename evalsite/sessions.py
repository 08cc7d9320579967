"""The site's session engine: Django's database sessions (same table, same rows, same signing), with
the one read every request makes sent as SQL written once instead of an ORM query compiled per
request (issue 16: session and user loading were a fifth of an annotator request's CPU), and prepared
on PostgreSQL (:func:`evalsite.prepared_statements.statement_cursor`, issue 30): every request of every
page sends it, so PostgreSQL parses and plans it once per connection instead of once per request."""

from __future__ import annotations

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone

from evalsite.prepared_statements import statement_cursor


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self):
        """The unexpired session row with this key, or None (then the key is dropped, as Django does)."""
        model = self.model
        key = self.session_key
        row = None
        if key is not None:
            connection = connections[router.db_for_read(model)]
            with statement_cursor(connection) as cursor:
                cursor.execute(
                    f"SELECT session_data, expire_date FROM {model._meta.db_table} "
                    f"WHERE session_key = %s AND expire_date > %s",
                    [key, timezone.now()],
                )
                row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return model(session_key=key, session_data=row[0], expire_date=row[1])
