"""Failed logins are throttled per account and per address (django-axes, evalsite/settings.py):
after the limit the right password is refused too, with HTTP 429."""

from __future__ import annotations

import pytest

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


@pytest.fixture(autouse=True)
def _throttling_on(settings):
    settings.AXES_ENABLED = True


def attempt(client, username, password, address="10.0.0.1"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_the_right_password_is_refused_after_the_failure_limit(client, settings):
    UserFactory(username="mallory-target")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(client, "mallory-target", "wrong").status_code == 200  # the form, with its error
    assert attempt(client, "mallory-target", "wrong").status_code == 429  # the limit-th failure locks
    locked = attempt(client, "mallory-target", PASSWORD)
    assert locked.status_code == 429
    assert not logged_in(client)


def test_an_account_is_locked_from_every_address(client, settings):
    UserFactory(username="target")
    for i in range(settings.AXES_FAILURE_LIMIT):
        attempt(client, "target", "wrong", address=f"10.0.1.{i}")
    assert attempt(client, "target", PASSWORD, address="10.0.2.1").status_code == 429
    assert not logged_in(client)


def test_an_address_is_locked_for_every_account(client, settings):
    UserFactory(username="bystander")
    for i in range(settings.AXES_FAILURE_LIMIT):
        attempt(client, f"guess-{i}", "wrong", address="10.0.3.3")
    assert attempt(client, "bystander", PASSWORD, address="10.0.3.3").status_code == 429
    assert attempt(client, "bystander", PASSWORD, address="10.0.3.4").status_code == 302  # another address is not


def test_failures_below_the_limit_still_let_the_right_password_in(client, settings):
    UserFactory(username="forgetful")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        attempt(client, "forgetful", "wrong")
    assert attempt(client, "forgetful", PASSWORD).status_code == 302
    assert logged_in(client)


def test_the_limit_and_cool_off_are_the_stated_defaults(settings):
    assert settings.AXES_FAILURE_LIMIT == 5
    assert settings.AXES_COOLOFF_TIME.total_seconds() == 15 * 60
    assert settings.AXES_LOCKOUT_PARAMETERS == ["username", "ip_address"]


def test_admins_see_the_lockouts_in_the_admin(client, settings, adam):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        attempt(client, "locked-name", "wrong")
    client.force_login(adam)
    page = client.get("/admin/axes/accessattempt/")
    assert page.status_code == 200 and b"locked-name" in page.content
