"""Ekphrasis in the researcher's view (leaderboard/ekphrasis/overview.py): a model's profile card reads the
snapshot page's numbers."""

from __future__ import annotations

import re

import pytest

from tests.leaderboard.ekphrasis.test_uncertainty import researcher, snapshot  # noqa: F401 — fixtures reused

pytestmark = pytest.mark.django_db

INTERVAL = r"\[(-?\d+\.\d\d, -?\d+\.\d\d)\]"


def test_a_profiles_family_rows_carry_the_family_tables_interval(researcher, snapshot):  # noqa: F811
    """The profile printed each family's task average bare, while the snapshot page's family table gives it
    with its 90% interval (uncertainty.family_intervals): the same cell, now with the same interval."""
    payload = snapshot.payload
    m = payload["order"][0]
    column = payload["order"].index(m)
    board = researcher.get(f"/leaderboards/{snapshot.pk}/").content.decode()
    profile = researcher.get(f"/models/{payload['model_ids'][m]}/").content.decode()
    card = re.search(r'data-protocol="Ekphrasis">(.*?)</section>', profile, re.S).group(1)
    assert payload["families"]
    for family in payload["families"]:
        row = re.search(rf"<tr><td>{re.escape(family)}</td><td>Task avg\.</td>(.*?)</tr>", board, re.S).group(1)
        table_cell = re.findall(rf"<td[^>]*>(-?\d+\.\d\d)<br><span class=\"ci nowrap\">{INTERVAL}</span></td>", row)[column]
        profile_row = re.search(rf"<td>{re.escape(family)} \(task avg\. z\)</td><td[^>]*>(.*?)</td>", card, re.S).group(1)
        assert re.fullmatch(rf"(-?\d+\.\d\d) <span class=\"ci\">{INTERVAL}</span>", profile_row.strip()), profile_row
        assert re.findall(rf"(-?\d+\.\d\d) <span class=\"ci\">{INTERVAL}</span>", profile_row)[0] == table_cell, family
