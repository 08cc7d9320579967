"""Admins build campaigns in the Django admin: items by JSONL import or App. H.5 sampling, gold
answers; every write goes through the same services."""

from __future__ import annotations

import io
import json
import re

import pytest

from annotation.choices import CampaignKind
from annotation.models import Campaign, Item, ItemSlot
from tests.annotation.factories import Catalogue, campaign_for, pairwise_campaign
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_admin_sees_the_campaign_pages(client, adam):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    login(client, adam)
    assert client.get("/admin/annotation/campaign/").status_code == 200
    body = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    assert "Import items (JSONL)" in body and "Sample validation pairs" in body


def test_admin_imports_items_from_jsonl(client, adam):
    catalogue = Catalogue(n_tasks=1)
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    upload = io.BytesIO(json.dumps({"task_id": catalogue.tasks[0].external_id, "dimension": "usefulness",
                                    "a": {"model": catalogue.models[0].display_name},
                                    "b": {"model": catalogue.models[1].display_name}}).encode())
    upload.name = "items.jsonl"
    response = login(client, adam).post(f"/admin/annotation/campaign/{campaign.pk}/import-items/", {"file": upload})
    assert response.status_code == 302
    assert Item.objects.filter(campaign=campaign, dimension="usefulness").count() == 1


def test_admin_import_shows_line_errors_and_writes_nothing(client, adam):
    catalogue = Catalogue(n_tasks=1)
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    upload = io.BytesIO(b'{"task_id": "missing", "dimension": "usefulness"}\n')
    upload.name = "items.jsonl"
    body = login(client, adam).post(f"/admin/annotation/campaign/{campaign.pk}/import-items/", {"file": upload}).content.decode()
    assert "items.jsonl:1: field &#x27;task_id&#x27;" in body and not campaign.items.exists()


def test_admin_samples_validation_pairs_without_a_judge_run(client, adam):
    catalogue = Catalogue(n_tasks=2)
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    response = login(client, adam).post(f"/admin/annotation/campaign/{campaign.pk}/sample-pairs/",
                                        {"dimensions": ["novelty"], "pairs_per_task": 3})
    assert response.status_code == 302
    assert set(campaign.items.values_list("sampling_stratum", flat=True)) == {"random_order"}
    assert campaign.items.count() == 6


def test_admin_marks_an_item_gold_through_the_service(client, adam):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    item = campaign.items.get()
    login(client, adam).post(f"/admin/annotation/item/{item.pk}/change/", {"is_gold": "on", "gold_answer": '"tie"'})
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answer) == (True, "tie")
    assert not ItemSlot.objects.filter(item=item).exists()  # gold items are shown to everyone, not k


def test_a_researcher_cannot_import_items(client, rita):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    response = login(client, rita).get(f"/admin/annotation/campaign/{campaign.pk}/import-items/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_admin_reads_label_revisions_and_cannot_edit_them(client, adam, alice):
    import uuid

    from annotation.label_models import LabelRevision
    from annotation.label_revision import label_revise
    from tests.annotation.helpers import take_and_label

    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1, annotators=[alice])
    assignment, _ = take_and_label(campaign, alice, {"choice": "A"})
    label_revise(token=assignment.token, annotator=alice, idempotency_key=uuid.uuid4(), answer={"choice": "B"})
    revision = LabelRevision.objects.get()
    login(client, adam)
    listing = client.get("/admin/annotation/labelrevision/").content.decode()
    assert assignment.item.key in listing and "alice" in listing
    page = client.get(f"/admin/annotation/labelrevision/{revision.pk}/change/")
    assert page.status_code == 200 and "shown_choice: A" in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    assert client.post(f"/admin/annotation/labelrevision/{revision.pk}/change/", {"version": "7"}).status_code == 403
    assert client.get("/admin/annotation/labelrevision/add/").status_code == 403
    assert LabelRevision.objects.get().version == 1


@pytest.mark.parametrize("annotator", ["abc", "1\x00", "99999999999999999999", "²"])
def test_an_annotator_choice_that_is_no_id_is_a_form_error_not_a_server_error(client, adam, annotator):
    """The campaign's annotator box (an autocomplete) shows the posted choice again by looking its id up:
    a hand-made POST whose choice is no id raised ValueError there (a 500 on /admin/annotation/campaign/add/)."""
    catalogue = Catalogue(n_tasks=1)
    client.force_login(adam)
    response = client.post("/admin/annotation/campaign/add/", {
        "name": "hand-made", "kind": CampaignKind.TEXT_PAIRWISE, "task_set": catalogue.task_set.pk, "k": 3,
        "status": "draft", "gold_rate": 0.1, "instructions": "Pick one.",
        "memberships-TOTAL_FORMS": 1, "memberships-INITIAL_FORMS": 0, "memberships-0-annotator": annotator,
        "calibration_examples-TOTAL_FORMS": 0, "calibration_examples-INITIAL_FORMS": 0,
    })
    assert response.status_code == 200
    assert response.context["inline_admin_formsets"][0].formset.errors[0]["annotator"]
    assert not Campaign.objects.filter(name="hand-made").exists()


def test_the_admin_lists_panel_studies_under_the_name_the_crowd_study_page_gives(client, adam):
    """The crowd study page and README send admins to the admin's "Panel studies" for training items;
    Django's default plural of the model's name read "Panel studys"."""
    body = login(client, adam).get("/admin/").content.decode()
    assert "Panel studies" in body and "Panel studys" not in body


def test_the_campaigns_creator_is_whoever_adds_it_and_no_form_field_chooses_another(client, adam, rita):
    """The add form offered a Created by select that save_model overwrote with the requester: a choice with no
    effect. It is read-only: shown on the change form, never posted."""
    catalogue = Catalogue(n_tasks=1)
    client.force_login(adam)
    assert "created_by" not in client.get("/admin/annotation/campaign/add/").context["adminform"].form.fields
    response = client.post("/admin/annotation/campaign/add/", {
        "name": "chosen creator", "kind": CampaignKind.TEXT_PAIRWISE, "task_set": catalogue.task_set.pk, "k": 3,
        "status": "draft", "gold_rate": 0.1, "instructions": "Pick one.", "created_by": rita.pk,
        "memberships-TOTAL_FORMS": 0, "memberships-INITIAL_FORMS": 0,
        "calibration_examples-TOTAL_FORMS": 0, "calibration_examples-INITIAL_FORMS": 0,
    })
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="chosen creator")
    assert campaign.created_by == adam
    change = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/")
    assert "created_by" not in change.context["adminform"].form.fields
    body = change.content.decode()
    shown = re.search(r'field-created_by">.*?<div class="readonly">(.*?)</div>', body, re.S)[1]
    assert re.sub(r"<[^>]+>", "", shown) == "adam"


def _crowd_campaign_with_participant(catalogue, panel_id):
    from annotation import participants
    from annotation.panels import PanelEntry

    campaign = pairwise_campaign(catalogue, k=2, n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    return campaign, participants.participant_enter(study=study, entry=PanelEntry(panel_id, "S", "X")).participant


@pytest.fixture
def two_crowd_studies(db):
    """Two crowd campaigns, each with one participant (whose entry listed them among its annotators)."""
    from django.core.cache import cache

    cache.clear()  # the entry rate limit
    catalogue = Catalogue(n_tasks=1)
    return [_crowd_campaign_with_participant(catalogue, pid) for pid in ("P1", "P2")]


def _annotator_search(client, term: str) -> set[str]:
    response = client.get("/admin/autocomplete/", {"app_label": "annotation", "model_name": "campaignannotator",
                                                   "field_name": "annotator", "term": term})
    assert response.status_code == 200
    return {result["text"] for result in response.json()["results"]}


def test_the_annotator_search_offers_no_crowd_participants_account(client, adam, alice, two_crowd_studies):
    """A crowd study's entry makes an account per participant (``panel-<campaign>-<random>``): the campaign's
    annotator box offered them all, so a researcher could list another study's participant."""
    client.force_login(adam)
    assert _annotator_search(client, "") == {"adam", "alice"}
    (campaign, participant), (_, other) = two_crowd_studies
    assert _annotator_search(client, "panel-") == set()
    assert _annotator_search(client, other.user.username) == set()


def test_the_user_list_still_shows_participants_accounts(client, adam, two_crowd_studies):
    client.force_login(adam)
    body = client.get("/admin/auth/user/", {"q": "panel-"}).content.decode()
    assert all(participant.user.username in body for _, participant in two_crowd_studies)


def _change_form_data(response) -> dict:
    """What the change page would post back unchanged: the campaign's fields and each inline's rows."""
    data = {}
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update({f"{formset.prefix}-{name}": value for name, value in formset.management_form.initial.items()})
        forms += formset.forms
    for form in forms:
        for name in form.fields:
            value = form[name].value()
            if value is None or value is False:
                continue
            data[form.add_prefix(name)] = "on" if value is True else value
    return data


def test_saving_a_crowd_campaign_keeps_its_own_participants_among_its_annotators(client, adam, two_crowd_studies):
    (campaign, participant), _ = two_crowd_studies
    client.force_login(adam)
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/change/",
                           _change_form_data(client.get(f"/admin/annotation/campaign/{campaign.pk}/change/")))
    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    assert list(campaign.memberships.values_list("annotator", flat=True)) == [participant.user_id]


def test_another_studys_participant_is_no_valid_annotator_choice(client, adam, two_crowd_studies):
    (campaign, _), (_, other) = two_crowd_studies
    client.force_login(adam)
    data = _change_form_data(client.get(f"/admin/annotation/campaign/{campaign.pk}/change/"))
    data.update({"memberships-TOTAL_FORMS": 2, "memberships-1-annotator": other.user_id,
                 "memberships-1-campaign": campaign.pk})
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/change/", data)
    assert response.status_code == 200
    assert response.context["inline_admin_formsets"][0].formset.errors[1]["annotator"]
    assert not campaign.memberships.filter(annotator=other.user).exists()


@pytest.fixture
def leaked_membership(two_crowd_studies):
    """The second study's participant listed on the first campaign, as the annotator box allowed before it
    left out other studies' participants (the row written directly, as that box wrote it)."""
    from annotation.models import CampaignAnnotator

    (campaign, _), (_, other) = two_crowd_studies
    return CampaignAnnotator.objects.create(campaign=campaign, annotator=other.user)


def _messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_a_campaign_listing_another_studys_participant_saves_its_own_edits(client, adam, two_crowd_studies,
                                                                             leaked_membership):
    """Its annotator box refused the row's own account ("Select a valid choice"): no save of the campaign
    went through until someone found and removed that row."""
    (campaign, participant), (other_campaign, other) = two_crowd_studies
    client.force_login(adam)
    data = _change_form_data(client.get(f"/admin/annotation/campaign/{campaign.pk}/change/"))
    data["instructions"] = "Read both answers, then choose."
    data.pop(next(name for name, value in data.items()
                  if name.endswith("-annotator") and value == other.user_id))  # a browser posts no disabled box
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/change/", data, follow=True)
    assert response.redirect_chain and response.redirect_chain[-1][1] == 302
    campaign.refresh_from_db()
    assert campaign.instructions == "Read both answers, then choose."
    assert set(campaign.memberships.values_list("annotator", flat=True)) == {participant.user_id, other.user_id}
    [warning] = [m for m in _messages(response) if "another study's participant" in m]
    assert other.user.username in warning and f"'{other_campaign.name}'" in warning and "Delete?" in warning


def test_the_change_page_names_a_row_listing_another_studys_participant_and_shows_it_read_only(
        client, adam, two_crowd_studies, leaked_membership):
    (campaign, participant), (_, other) = two_crowd_studies
    client.force_login(adam)
    response = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/")
    assert response.status_code == 200
    [warning] = [m for m in _messages(response) if "another study's participant" in m]
    assert other.user.username in warning and participant.user.username not in warning
    forms = {form.instance.annotator_id: form for form in
             response.context["inline_admin_formsets"][0].formset.forms if form.instance.pk}
    assert forms[other.user_id].fields["annotator"].disabled
    assert not forms[participant.user_id].fields["annotator"].disabled


def test_the_change_page_reads_the_rows_listing_other_studies_participants_once(client, adam, two_crowd_studies,
                                                                                 leaked_membership):
    """The annotator rows' formset and the page's warning name the same rows: one query between them."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    (campaign, _), _ = two_crowd_studies
    client.force_login(adam)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/")
    assert [m for m in _messages(response) if "another study's participant" in m]
    # that query alone reads the memberships with their account's participant's campaign
    foreign_reads = [q["sql"] for q in queries.captured_queries
                     if 'FROM "annotation_campaignannotator"' in q["sql"]
                     and '"annotation_participant"."study_id"' in q["sql"]]
    assert len(foreign_reads) == 1, foreign_reads


def test_a_posted_account_does_not_change_a_read_only_row(client, adam, alice, two_crowd_studies, leaked_membership):
    (campaign, _), (_, other) = two_crowd_studies
    client.force_login(adam)
    data = _change_form_data(client.get(f"/admin/annotation/campaign/{campaign.pk}/change/"))
    row = next(name for name, value in data.items() if name.endswith("-annotator") and value == other.user_id)
    data[row] = alice.pk
    assert client.post(f"/admin/annotation/campaign/{campaign.pk}/change/", data).status_code == 302
    leaked_membership.refresh_from_db()
    assert leaked_membership.annotator_id == other.user_id


def test_ticking_delete_removes_the_row_listing_another_studys_participant(client, adam, two_crowd_studies,
                                                                          leaked_membership):
    (campaign, participant), (_, other) = two_crowd_studies
    client.force_login(adam)
    data = _change_form_data(client.get(f"/admin/annotation/campaign/{campaign.pk}/change/"))
    row = next(name for name, value in data.items() if name.endswith("-annotator") and value == other.user_id)
    data[row.replace("-annotator", "-DELETE")] = "on"
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/change/", data, follow=True)
    assert response.redirect_chain
    assert list(campaign.memberships.values_list("annotator", flat=True)) == [participant.user_id]
    assert not [m for m in _messages(response) if "another study's participant" in m]


def test_a_row_listing_another_studys_participant_gives_them_no_access(client, two_crowd_studies,
                                                                       leaked_membership):
    from annotation.access import annotator_access_check
    from annotation.errors import NotAllowed

    (campaign, _), (_, other) = two_crowd_studies
    campaign.status = Campaign.Status.OPEN
    campaign.save(update_fields=["status"])
    with pytest.raises(NotAllowed):
        annotator_access_check(user=other.user, campaign=campaign)
    client.force_login(other.user)
    assert client.get(f"/annotate/c/{campaign.pk}/").status_code == 403
    assert client.post(f"/annotate/api/campaigns/{campaign.pk}/next").status_code == 403
    assert client.post(f"/annotate/p/{campaign.panel_study.entry_token}/api/next").status_code == 403
