"""The one gatekeeper of the annotator endpoints, line by line, and a held token that loses its
access: after the campaign closes, the membership goes or the user leaves the annotator group,
submit and skip are refused with a JSON error and nothing is written."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import AnonymousUser, Group

from annotation import services
from annotation.access import annotator_access_check
from annotation.errors import AssignmentClosed, CampaignNotOpen, NotAllowed, NotFound
from annotation.label_models import PairwiseLabel
from annotation.models import Assignment, Campaign, CampaignAnnotator
from tests.annotation.factories import Catalogue, faithfulness_campaign, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def held():
    """(campaign, annotator, assignment): bob holds an active item of an open campaign he belongs to."""
    bob = UserFactory(username="bob", role="annotator")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[bob], n_items=2)
    assignment = services.assignment_next(campaign=campaign, annotator=bob)
    return campaign, bob, assignment


def close_campaign(campaign, user):
    services.campaign_status_set(campaign=campaign, status=Campaign.Status.CLOSED)


def remove_membership(campaign, user):
    CampaignAnnotator.objects.filter(campaign=campaign, annotator=user).delete()


def leave_annotator_group(campaign, user):
    user.groups.remove(Group.objects.get(name="annotator"))


REVOCATIONS = {
    "campaign closed": (close_campaign, 409, "campaign_not_open"),
    "membership removed": (remove_membership, 403, "not_allowed"),
    "left the annotator group": (leave_annotator_group, 403, "not_allowed"),
}


# -- the gatekeeper, one condition at a time -----------------------------------------------------


def test_the_gatekeeper_lets_a_member_act_on_their_own_held_assignment(held):
    campaign, bob, assignment = held
    annotator_access_check(user=bob, campaign=campaign)
    annotator_access_check(user=bob, assignment=assignment)


def test_the_gatekeeper_refuses_an_anonymous_user(held):
    _, _, assignment = held
    with pytest.raises(NotAllowed, match="Log in"):
        annotator_access_check(user=AnonymousUser(), assignment=assignment)


def test_the_gatekeeper_refuses_a_user_outside_the_annotator_group(held):
    campaign, bob, _ = held
    leave_annotator_group(campaign, bob)
    with pytest.raises(NotAllowed, match="Annotators only"):
        annotator_access_check(user=bob)


def test_the_gatekeeper_refuses_someone_elses_assignment(held):
    _, _, assignment = held
    with pytest.raises(NotFound):
        annotator_access_check(user=UserFactory(username="carol", role="annotator"), assignment=assignment)


def test_the_gatekeeper_refuses_an_assignment_withdrawn_as_stale(held):
    _, bob, assignment = held
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.STALE)
    assignment.refresh_from_db()
    with pytest.raises(AssignmentClosed, match="withdrawn"):
        annotator_access_check(user=bob, assignment=assignment)


def test_the_gatekeeper_refuses_a_campaign_that_is_not_open(held):
    campaign, bob, _ = held
    close_campaign(campaign, bob)
    with pytest.raises(CampaignNotOpen):
        annotator_access_check(user=bob, campaign=campaign)


def test_the_gatekeeper_refuses_a_non_member(held):
    campaign, bob, _ = held
    remove_membership(campaign, bob)
    with pytest.raises(NotAllowed, match="not open to you"):
        annotator_access_check(user=bob, campaign=campaign)


def test_the_gatekeeper_lets_any_annotator_into_a_campaign_open_to_all(held):
    campaign, _, _ = held
    campaign.open_to_all_annotators = True
    campaign.save(update_fields=["open_to_all_annotators"])
    annotator_access_check(user=UserFactory(username="dora", role="annotator"), campaign=campaign)


# -- a held token after its access went ---------------------------------------------------------


@pytest.mark.parametrize("revocation", sorted(REVOCATIONS))
def test_submit_with_a_held_token_is_refused_once_access_is_revoked(client, held, revocation):
    campaign, bob, assignment = held
    revoke, status, code = REVOCATIONS[revocation]
    client.force_login(bob)
    revoke(campaign, bob)
    response = client.post(f"/annotate/api/assignments/{assignment.token}/submit",
                           {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}},
                           content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (status, code)
    assert PairwiseLabel.objects.count() == 0
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ACTIVE and assignment.finished_at is None


@pytest.mark.parametrize("revocation", sorted(REVOCATIONS))
def test_skip_with_a_held_token_is_refused_once_access_is_revoked(client, held, revocation):
    campaign, bob, assignment = held
    revoke, status, code = REVOCATIONS[revocation]
    client.force_login(bob)
    revoke(campaign, bob)
    response = client.post(f"/annotate/api/assignments/{assignment.token}/skip", {"reason": "x"},
                           content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (status, code)
    assignment.refresh_from_db()
    assert (assignment.status, assignment.skip_reason, assignment.finished_at) == (Assignment.Status.ACTIVE, "", None)


@pytest.mark.parametrize("revocation", sorted(REVOCATIONS))
def test_next_and_progress_are_refused_once_access_is_revoked(client, held, revocation):
    campaign, bob, _ = held
    revoke, status, code = REVOCATIONS[revocation]
    client.force_login(bob)
    revoke(campaign, bob)
    before = Assignment.objects.count()
    nxt = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json")
    progress = client.get(f"/annotate/api/campaigns/{campaign.pk}/progress")
    assert (nxt.status_code, nxt.json()["error"]) == (status, code)
    assert (progress.status_code, progress.json()["error"]) == (status, code)
    assert Assignment.objects.count() == before


@pytest.mark.parametrize("revocation", sorted(REVOCATIONS))
def test_the_labelling_page_is_closed_once_access_is_revoked(client, held, revocation):
    campaign, bob, _ = held
    revoke, _, _ = REVOCATIONS[revocation]
    client.force_login(bob)
    revoke(campaign, bob)
    response = client.get(f"/annotate/c/{campaign.pk}/")
    assert response.status_code in (302, 403)  # closed: back to the queue with a message; otherwise forbidden
    assert b"annotate-config" not in response.content


@pytest.mark.parametrize("revocation", sorted(REVOCATIONS))
def test_an_image_of_a_held_assignment_is_not_served_once_access_is_revoked(client, media_root, revocation):
    bob = UserFactory(username="bob", role="annotator")
    campaign, _ = faithfulness_campaign(Catalogue(n_tasks=1), annotators=[bob])
    client.force_login(bob)
    image = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json").json()["assignment"]["content"]["image"]
    assert client.get(image).status_code == 200
    revoke, _, _ = REVOCATIONS[revocation]
    revoke(campaign, bob)
    assert client.get(image).status_code in (403, 404)
