"""Revoke every API token held by an account that has a crowd participant's row.

Such a token was made before the token service refused participants' accounts (a participant's account is made
at its first entry, so any token of it was made for the participant): sign-in now refuses it while the account
is a participant's (:func:`leaderboard.api_tokens.selectors.api_token_for_secret`), but an account given a
password later would count as no participant's and its old token would act for it with whatever role it got.
Revoked here, it never signs in again. A token made for such an account after it was given a password is
revoked too (its owner makes a new one on the tokens page): the migration cannot tell when it was made.
"""

from django.db import migrations
from django.utils import timezone


def participants_tokens_revoke(apps, schema_editor) -> None:
    ApiToken = apps.get_model("api_tokens", "ApiToken")
    ApiToken.objects.filter(revoked_at__isnull=True, user__panel_participant__isnull=False).update(
        revoked_at=timezone.now())


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0018_panelstudy_entry_signing_secret"),
        ("api_tokens", "0001_api_token"),
    ]

    operations = [
        migrations.RunPython(participants_tokens_revoke, migrations.RunPython.noop),
    ]
