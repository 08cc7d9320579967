"""leaderboard/roles.py: who may hold an API token when no participant rule is registered."""

import pytest
from django.contrib.auth.models import Group

from leaderboard import roles
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_with_no_participant_rule_registered_an_account_without_a_password_or_role_is_not_a_token_holder(
        monkeypatch):
    monkeypatch.setattr(roles, "_participant_accounts_rule", None)
    bare = UserFactory()
    bare.set_unusable_password()
    bare.save()
    with_role = UserFactory()
    with_role.set_unusable_password()
    with_role.save()
    with_role.groups.add(Group.objects.get_or_create(name=roles.RESEARCHER)[0])
    with_password = UserFactory()
    holders = set(roles.token_holder_accounts().values_list("pk", flat=True))
    assert bare.pk not in holders
    assert {with_role.pk, with_password.pk} <= holders
