"""The site's password backend: Django's ModelBackend, with the user of a logged-in session (read on
every request) loaded by one precompiled statement (:func:`evalsite.precompiled.row_by_pk`) instead of
an ORM query compiled per request (issue 16). Passwords, permissions and ``is_active`` are Django's."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend as DjangoModelBackend

from evalsite.precompiled import row_by_pk
from evalsite.sessions import prefetched_user


class ModelBackend(DjangoModelBackend):
    def get_user(self, user_id):
        UserModel = get_user_model()
        user = prefetched_user(user_id)  # read with the session (evalsite/sessions.py)
        try:
            user = user if user is not None else row_by_pk(UserModel, user_id)
        except UserModel.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
