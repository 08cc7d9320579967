"""The catalogue's admin writes subject models through the catalogue's services."""

import pytest

from leaderboard.models import SubjectModel
from leaderboard.selectors import catalogue_revision
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_model_added_or_deleted_in_the_admin_moves_the_catalogue_revision(client, adam):
    assert client.login(username=adam.username, password=PASSWORD)
    before = catalogue_revision()
    response = client.post(
        "/admin/leaderboard/subjectmodel/add/",
        {
            "display_name": "Demo Atlas",
            "role": "subject",
            "max_tokens": 4096,
            "reasoning": "unknown",
            "price_input_per_mtok": 0,
            "price_output_per_mtok": 0,
        },
    )
    assert response.status_code == 302
    assert catalogue_revision() == before + 1
    model = SubjectModel.objects.get(display_name="Demo Atlas")
    assert (
        client.post(f"/admin/leaderboard/subjectmodel/{model.pk}/delete/", {"post": "yes"}).status_code == 302
    )
    assert not SubjectModel.objects.filter(pk=model.pk).exists()
    assert catalogue_revision() == before + 2
