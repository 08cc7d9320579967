"""A login with a username longer than any column is refused like any wrong login, never a 500
(django-axes records the attempt with the name cut to its column)."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt

from evalsite.login_attempts import USERNAME_COLUMN_LENGTH

pytestmark = pytest.mark.django_db


def test_an_overlong_username_is_a_failed_login_not_a_server_error(client, settings):
    settings.AXES_ENABLED = True
    response = client.post("/accounts/login/", {"username": "x" * 1000, "password": "wrong"})
    assert response.status_code == 200  # the login form again, with its error
    assert list(AccessAttempt.objects.values_list("username", flat=True)) == ["x" * USERNAME_COLUMN_LENGTH]


def test_a_failed_login_keeps_the_username_typed_escaped_and_asks_only_for_the_password_again(client):
    response = client.post("/accounts/login/", {"username": 'ann"><script>x</script>', "password": "wrong"})
    page = response.content.decode()
    assert response.status_code == 200 and "didn't match" in page
    assert 'value="ann&quot;&gt;&lt;script&gt;x&lt;/script&gt;"' in page and "<script>x" not in page
    assert 'type="password" autocomplete="current-password" required>' in page  # the password is not echoed
