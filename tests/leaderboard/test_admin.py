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


def _admin_model_form(display_name: str) -> dict:
    return {"display_name": display_name, "role": "subject", "max_tokens": 4096, "reasoning": "unknown",
            "price_input_per_mtok": 0, "price_output_per_mtok": 0}


@pytest.mark.parametrize("look_alike,fragment", [
    ("GP\u0422-4o", "differs from the existing model 'GPT-4o'"),  # Cyrillic capital Te
    ("gpt-4O", "differs from the existing model 'GPT-4o'"),
    ("GPT-4o\u200b", "invisible character (U+200B"),
])
def test_the_admin_refuses_a_model_named_as_an_existing_one_reads(client, adam, look_alike, fragment):
    SubjectModel.objects.create(display_name="GPT-4o")
    assert client.login(username=adam.username, password=PASSWORD)

    response = client.post("/admin/leaderboard/subjectmodel/add/", _admin_model_form(look_alike))

    assert response.status_code == 200  # the form again, with its error
    errors = response.context["adminform"].form.errors["display_name"]
    assert fragment in errors[0]
    assert list(SubjectModel.objects.values_list("display_name", flat=True)) == ["GPT-4o"]


def test_the_admin_renames_a_model_to_a_look_alike_of_its_own_name(client, adam):
    model = SubjectModel.objects.create(display_name="Claude")
    assert client.login(username=adam.username, password=PASSWORD)

    response = client.post(f"/admin/leaderboard/subjectmodel/{model.pk}/change/", _admin_model_form("Cl\u0430ude"))

    assert response.status_code == 302
    model.refresh_from_db()
    assert model.display_name == "Cl\u0430ude"


def test_a_look_alike_name_saved_by_another_admin_after_this_forms_check_is_refused_on_the_page_not_as_a_500(
        client, adam, monkeypatch):
    # the form checks the name when it is cleaned, the save checks again under the catalogue lock: a name another
    # admin saved in between reached the save's refusal, which the admin did not catch (a 500)
    from leaderboard import forms

    assert client.login(username=adam.username, password=PASSWORD)
    client.raise_request_exception = False
    monkeypatch.setattr(forms, "subject_model_name_check", lambda *args, **kwargs: None)  # checked before the other save
    SubjectModel.objects.create(display_name="GPT-4o")

    response = client.post("/admin/leaderboard/subjectmodel/add/", _admin_model_form("GP\u0422-4o"), follow=True)

    assert response.status_code == 200
    assert "differs from the existing model &#x27;GPT-4o&#x27;" in response.content.decode()
    assert list(SubjectModel.objects.values_list("display_name", flat=True)) == ["GPT-4o"]
