"""Items checked again after the catalogue changes (annotation.blinding_recheck): a model added or renamed
after an item was made, whose name the item's text already shows, never reaches an annotator through that
item — on any hand-out path — and the admin's report of refused items names the item and the name."""

from __future__ import annotations

import json
import random
import uuid

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation import blinding_recheck, item_creation, label_export, participants, selectors, services
from annotation.annotator_reads import campaign_progress
from annotation.blinding import catalogue_identities, item_identity_problems
from annotation.choices import CampaignKind, Dimension
from annotation.dashboard_tallies import campaign_dashboard_tallied
from annotation.errors import CAMPAIGN_PAUSED_MESSAGE, ItemsInvalid
from annotation.kinds import kind_for
from annotation.models import Assignment, BlindingRefusal, Campaign, CampaignProgress, Item, ItemSlot
from annotation.panel_models import Participant
from annotation.progress import campaign_progress_recount
from annotation.tasks import recheck_blinding
from leaderboard.models import SubjectModel
from leaderboard.selectors import catalogue_revision
from tests.annotation.factories import Catalogue, campaign_for
from tests.factories import PASSWORD, ResponseFactory, SubjectModelFactory, UserFactory

pytestmark = pytest.mark.django_db

#: The name a response already shows before any model of that name is in the catalogue.
LATER_NAME = "Demo Atlas"


class World:
    """A text pairwise campaign (k = 1) open to alice: the first item in the queue shows LATER_NAME in a
    response's Core Idea (accepted: no model has that name yet), two more show nothing of the kind."""

    def __init__(self, *, k: int = 1, gold_rate: float = 0.0, instructions: str = ""):
        self.alice = UserFactory(username="alice", role="annotator")
        self.bob = UserFactory(username="bob", role="annotator")
        self.catalogue = Catalogue(n_tasks=2)
        first, second = self.catalogue.tasks
        self.leaky_response = ResponseFactory(
            task=first,
            subject_model=self.catalogue.models[0],
            sample=2,
            core_idea=f"A lantern folded the way {LATER_NAME} would fold it.",
        )
        self.campaign = campaign_for(
            CampaignKind.TEXT_PAIRWISE,
            self.catalogue,
            k=k,
            annotators=[self.alice, self.bob],
            gold_rate=gold_rate,
            instructions=instructions,
        )
        pair = self.catalogue.response

        def spec(key, task, a, b):
            return item_creation.ItemSpec(
                task=task, dimension=Dimension.NOVELTY, response_a=a, response_b=b, key=key
            )

        item_creation.items_create(
            campaign=self.campaign,
            rng=random.Random(3),
            specs=[
                spec("leaky", first, self.leaky_response, pair(first, 1)),
                spec("clean-1", first, pair(first, 2), pair(first, 3)),
                spec("clean-2", second, pair(second, 0), pair(second, 1)),
            ],
        )
        self.leaky = Item.objects.get(campaign=self.campaign, key="leaky")

    def client(self, user) -> Client:
        client = Client()
        assert client.login(username=user.username, password=PASSWORD)
        return client

    def next_item(self, client) -> dict | None:
        """The annotation API's next item, as the labelling page asks for it."""
        response = client.post(
            reverse("annotation:api_next", args=[self.campaign.pk]), {}, content_type="application/json"
        )
        assert response.status_code == 200, response.content
        return response.json()["assignment"]

    def shown_items(self, client) -> list[str]:
        """The items the annotator is handed, one after the other, each labelled, until none is left."""
        shown = []
        while (assignment := self.next_item(client)) is not None:
            shown.append(Assignment.objects.get(token=assignment["token"]).item.key)
            answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}}
            url = reverse("annotation:api_submit", args=[assignment["token"]])
            assert client.post(url, answer, content_type="application/json").status_code == 201
        return shown


@pytest.fixture
def world(db):
    return World()


def _add_model(token_client, **fields):
    response = token_client(_admin()).post("/api/v1/subject-models/create", fields, format="json")
    assert response.status_code == 201, response.content


def _edit_model(token_client, model, **fields):
    response = token_client(_admin()).patch(f"/api/v1/subject-models/{model.pk}/", fields, format="json")
    assert response.status_code == 200, response.content


def _admin():
    return UserFactory(username="adam", role="admin")


#: Catalogue changes that make the leaky item's text name a model: (change, the identity string found).
CHANGES = {
    "a model added": (lambda tc, world: _add_model(tc, display_name=LATER_NAME), LATER_NAME),
    "a model renamed": (
        lambda tc, world: _edit_model(tc, world.catalogue.models[3], display_name=LATER_NAME),
        LATER_NAME,
    ),
    "a provider id changed": (
        lambda tc, world: _edit_model(tc, world.catalogue.models[3], provider_id="acme/demo-atlas"),
        "demo-atlas",
    ),
    "a family set": (lambda tc, world: _edit_model(tc, world.catalogue.models[3], family="Atlas"), "Atlas"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_an_item_showing_a_name_the_catalogue_gained_later_is_not_handed_out_and_is_reported(
    world, token_client, change
):
    make_change, found = CHANGES[change]
    make_change(token_client, world)
    alice = world.client(world.alice)
    assert world.shown_items(alice) == ["clean-1", "clean-2"]
    refusal = BlindingRefusal.objects.get(campaign=world.campaign, item_key="leaky")
    assert (refusal.identity, refusal.field, refusal.response) == (found, "response_a", world.leaky_response)
    # the admin's report names the item and the name found
    report = world.client(_admin()).get("/admin/annotation/blindingrefusal/").content.decode()
    assert "leaky" in report and found in report


def test_items_that_do_not_show_the_new_name_are_still_handed_out(world, token_client):
    _add_model(token_client, display_name="Quiet Harbour")  # a name no item shows
    assert world.shown_items(world.client(world.alice)) == ["leaky", "clean-1", "clean-2"]
    assert not BlindingRefusal.objects.exists()


def test_an_annotator_holding_the_item_when_the_name_arrives_gets_another_and_cannot_save_it(
    world, token_client
):
    bob = world.client(world.bob)
    held = world.next_item(bob)
    assert Assignment.objects.get(token=held["token"]).item.key == "leaky"
    _add_model(token_client, display_name=LATER_NAME)
    again = world.next_item(bob)
    assert Assignment.objects.get(token=again["token"]).item.key == "clean-1"
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}}
    refused = bob.post(
        reverse("annotation:api_submit", args=[held["token"]]), answer, content_type="application/json"
    )
    assert refused.status_code == 409
    assert Assignment.objects.get(token=held["token"]).status == Assignment.Status.STALE


def test_a_crowd_participant_is_not_handed_the_item_either(world, token_client):
    study = participants.panel_study_open(
        campaign=world.campaign, panel="prolific", consent_text="You agree."
    )
    client = Client()
    client.get(
        reverse("annotation:panel_entry", args=[study.entry_token]),
        {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "X"},
    )
    participant = Participant.objects.get()
    participants.participant_consent(participant=participant)
    participants.participant_instructions_read(participant=participant)
    _add_model(token_client, display_name=LATER_NAME)
    response = client.post(
        reverse("annotation:panel_api_next", args=[study.entry_token]), content_type="application/json"
    )
    assert response.status_code == 200
    assert Assignment.objects.get(token=response.json()["assignment"]["token"]).item.key == "clean-1"
    assert LATER_NAME not in response.content.decode()


def test_a_gold_item_showing_the_name_is_not_handed_out_as_gold(token_client):
    world = World(gold_rate=0.5)
    item_creation.item_gold_set(item=world.leaky, answer="A")
    _add_model(token_client, display_name=LATER_NAME)
    assert "leaky" not in world.shown_items(world.client(world.alice))
    assert BlindingRefusal.objects.filter(item_key="leaky", identity=LATER_NAME).exists()


def test_the_previous_label_of_a_withheld_item_is_not_shown_again(world, token_client):
    alice = world.client(world.alice)
    assignment = world.next_item(alice)
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}
    assert (
        alice.post(
            reverse("annotation:api_submit", args=[assignment["token"]]),
            answer,
            content_type="application/json",
        ).status_code
        == 201
    )
    _add_model(token_client, display_name=LATER_NAME)
    response = alice.get(reverse("annotation:api_previous", args=[world.campaign.pk]))
    previous = response.json()["previous"]
    assert (previous["revisable"], previous["content"], previous["answer"]) == (False, None, None)
    assert LATER_NAME not in response.content.decode()


def test_next_item_costs_no_query_more_unless_the_catalogue_changed(world, token_client):
    """When nothing changed, the blinding check is one integer comparison (issue 30: the labelling path's
    cost); the first hand-out of an item after a change checks it again; once checked, it costs as before."""

    def next_item_queries(user) -> int:
        client = world.client(user)
        with CaptureQueriesContext(connection) as queries:
            token = world.next_item(client)["token"]
        services.assignment_skip(token=token, annotator=user)  # the next ask hands out another item
        return len(queries)

    world.leaky.delete()  # withholding costs a pass of its own: not what this measures
    before = next_item_queries(world.alice)  # clean-1, checked against the current catalogue
    _add_model(token_client, display_name="Quiet Harbour")  # a name no item shows
    assert next_item_queries(world.alice) > before  # clean-2, checked against the old names: checked again
    blinding_recheck.items_recheck()  # what the sweep does once the change commits: clean-1 checked too
    assert next_item_queries(world.bob) == before  # clean-1, checked at the current revision


def test_the_sweep_withholds_the_item_before_anyone_asks(
    world, token_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _add_model(token_client, display_name=LATER_NAME)  # the sweep is sent once the change commits
    world.leaky.refresh_from_db()
    assert world.leaky.withheld_at is not None
    assert not ItemSlot.objects.filter(item=world.leaky, is_free=True).exists()
    assert BlindingRefusal.objects.filter(item=world.leaky, identity=LATER_NAME).count() == 1
    others = Item.objects.filter(campaign=world.campaign, withheld_at__isnull=True)
    assert others.count() == 2 and not others.exclude(blinding_revision=catalogue_revision()).exists()
    assert recheck_blinding() == 0  # run again: nothing more to withhold, nothing reported twice
    assert BlindingRefusal.objects.count() == 1


def test_an_item_handed_out_as_it_was_withheld_takes_no_label_and_the_sweep_withdraws_it(world):
    """The taker read the catalogue's revision before the change, and the item before the withholding
    committed: the hand-out went through. Its label is refused, and the sweep ends the assignment."""
    alice = world.client(world.alice)
    held = world.next_item(alice)
    Item.objects.filter(pk=world.leaky.pk).update(withheld_at=timezone.now())  # withheld meanwhile
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}}
    refused = alice.post(
        reverse("annotation:api_submit", args=[held["token"]]), answer, content_type="application/json"
    )
    assert refused.status_code == 409 and not world.leaky.pairwiselabels.exists()
    assert blinding_recheck.items_recheck().ended == 1
    assert Assignment.objects.get(token=held["token"]).status == Assignment.Status.STALE


def test_a_model_written_around_the_services_is_caught_by_the_periodic_sweep(world):
    SubjectModelFactory(display_name=LATER_NAME)  # a shell or fixture: no service moved the revision
    assert recheck_blinding() == 1
    assert world.shown_items(world.client(world.alice)) == ["clean-1", "clean-2"]


def test_labels_already_given_stay_stored_and_the_item_leaves_the_progress_figures(token_client):
    world = World(k=2)
    alice = world.client(world.alice)
    first = world.next_item(alice)  # the leaky item, one of its two labels
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}}
    assert (
        alice.post(
            reverse("annotation:api_submit", args=[first["token"]]), answer, content_type="application/json"
        ).status_code
        == 201
    )
    bob = world.client(world.bob)
    held = world.next_item(bob)  # bob holds the leaky item's other slot
    assert Assignment.objects.get(token=held["token"]).item_id == world.leaky.pk
    _add_model(token_client, display_name=LATER_NAME)
    assert blinding_recheck.items_recheck().withheld == 1
    label = world.leaky.pairwiselabels.get()
    assert (label.annotator, label.is_stale) == (world.alice, False)
    assert Assignment.objects.get(token=held["token"]).status == Assignment.Status.STALE
    progress = CampaignProgress.objects.get(pk=world.campaign.pk)
    assert (progress.labels, progress.slots) == (0, 4)  # two items left, k = 2: the withheld one is no work
    assert campaign_progress(campaign=world.campaign, annotator=world.alice).items_total == 2
    recounted = campaign_progress_recount(campaign_id=world.campaign.pk)
    assert (recounted.labels, recounted.slots) == (0, 4)
    rows = [json.loads(line) for line in label_export.labels_export(campaign=world.campaign).splitlines()]
    assert [(row["item_key"], row["item_withheld"]) for row in rows] == [("leaky", True)]
    # bob and alice label the two other items, each with k = 2, and the campaign is complete
    assert sorted(world.shown_items(bob)) == ["clean-1", "clean-2"]
    assert world.shown_items(alice) == ["clean-1", "clean-2"]
    progress.refresh_from_db()
    assert (progress.labels, progress.slots) == (4, 4)


def test_a_withheld_item_stays_withheld_when_the_name_leaves_the_catalogue(world, token_client):
    _add_model(token_client, display_name=LATER_NAME)
    assert blinding_recheck.items_recheck().withheld == 1
    _edit_model(token_client, SubjectModel.objects.get(display_name=LATER_NAME), display_name="Renamed Again")
    assert blinding_recheck.items_recheck().withheld == 0
    assert world.shown_items(world.client(world.alice)) == ["clean-1", "clean-2"]


def test_two_requests_finding_the_same_item_withhold_it_once(world, token_client):
    _add_model(token_client, display_name=LATER_NAME)
    leaks = item_identity_problems(
        item=world.leaky, kind=kind_for(world.campaign.kind), matcher=catalogue_identities()
    )
    assert blinding_recheck.item_withhold(item=world.leaky, leaks=leaks) is True
    assert blinding_recheck.item_withhold(item=Item.objects.get(pk=world.leaky.pk), leaks=leaks) is False
    assert BlindingRefusal.objects.count() == 1
    assert CampaignProgress.objects.get(pk=world.campaign.pk).slots == 2


#: Both ways the dashboard is computed: from tallies (the pairwise kinds' page) and from label rows.
DASHBOARDS = {"from tallies": campaign_dashboard_tallied, "from label rows": selectors.campaign_dashboard}


def _label(world, client, expected_key):
    assignment = world.next_item(client)
    assert Assignment.objects.get(token=assignment["token"]).item.key == expected_key
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}}
    url = reverse("annotation:api_submit", args=[assignment["token"]])
    assert client.post(url, answer, content_type="application/json").status_code == 201


@pytest.mark.parametrize("dashboard", sorted(DASHBOARDS))
def test_an_unfinished_withheld_item_is_no_item_of_table_17_and_its_labels_still_count(token_client, dashboard):
    world = World(k=2)
    _label(world, world.client(world.alice), "leaky")  # one of its two labels: it will never finish
    _add_model(token_client, display_name=LATER_NAME)
    assert blinding_recheck.items_recheck().withheld == 1
    (row,) = DASHBOARDS[dashboard](campaign=world.campaign).rows
    assert (row.n_items, row.n_complete, row.n_judgments, row.n_annotators) == (2, 0, 1, 1)
    for user in (world.alice, world.bob):
        world.shown_items(world.client(user))
    (row,) = DASHBOARDS[dashboard](campaign=world.campaign).rows
    assert (row.n_items, row.n_complete, row.n_judgments, row.completion) == (2, 2, 5, 1.0)


@pytest.mark.parametrize("dashboard", sorted(DASHBOARDS))
def test_a_withheld_item_finished_before_is_a_complete_item_of_table_17(world, token_client, dashboard):
    _label(world, world.client(world.alice), "leaky")  # k = 1: finished
    _add_model(token_client, display_name=LATER_NAME)
    assert blinding_recheck.items_recheck().withheld == 1
    (row,) = DASHBOARDS[dashboard](campaign=world.campaign).rows
    assert (row.n_items, row.n_complete, row.n_judgments, row.completion) == (3, 1, 1, 1 / 3)


# ---------------------------------------------------------------- the campaign's own texts


def _study(world, **settings):
    return participants.panel_study_open(campaign=world.campaign, panel="prolific", **settings)


def _participant_client(study) -> Client:
    """A crowd participant who entered the study, consented and read the instructions (the labelling step
    once there is no training)."""
    client = Client()
    client.get(
        reverse("annotation:panel_entry", args=[study.entry_token]),
        {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "X"},
    )
    participant = Participant.objects.get(study=study)
    participants.participant_consent(participant=participant)
    participants.participant_instructions_read(participant=participant)
    return client


#: Where a campaign's text shows LATER_NAME before the catalogue has it: written (and checked) then.
SHOWN_TEXTS = {
    "the instructions": lambda world: Campaign.objects.filter(pk=world.campaign.pk).update(
        instructions=f"Judge as {LATER_NAME} would."
    ),
    "the name": lambda world: Campaign.objects.filter(pk=world.campaign.pk).update(name=f"{LATER_NAME} ideas"),
    "a calibration example": lambda world: services.calibration_example_add(
        campaign=world.campaign, title="A close call", body=f"{LATER_NAME} wrote B.", expected="B"
    ),
    "the crowd study's consent text": lambda world: _study(world, consent_text=f"Run with {LATER_NAME}."),
    "a training question": lambda world: participants.training_item_add(
        study=_study(world), question=f"Is {LATER_NAME} a lantern?", choices=["yes", "no"], answer="no"
    ),
}


def _paused_world(token_client, where: str) -> World:
    world = World()
    SHOWN_TEXTS[where](world)
    _add_model(token_client, display_name=LATER_NAME)
    return world


@pytest.mark.parametrize("where", sorted(SHOWN_TEXTS))
def test_a_campaign_whose_text_shows_a_name_the_catalogue_gained_later_hands_out_no_item(token_client, where):
    world = _paused_world(token_client, where)
    response = world.client(world.alice).post(
        reverse("annotation:api_next", args=[world.campaign.pk]), {}, content_type="application/json"
    )
    assert response.status_code == 409
    assert response.json() == {"error": "campaign_paused", "detail": CAMPAIGN_PAUSED_MESSAGE}
    assert not Assignment.objects.exists()
    world.campaign.refresh_from_db()
    assert world.campaign.texts_paused_at is not None and LATER_NAME in world.campaign.texts_paused_reason


def test_the_labelling_page_of_a_paused_campaign_shows_a_neutral_message_and_no_text_of_it(token_client):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    _add_model(token_client, display_name=LATER_NAME)
    response = world.client(world.alice).get(reverse("annotation:work", args=[world.campaign.pk]), follow=True)
    page = response.content.decode()
    assert response.status_code == 200 and response.redirect_chain[-1][0] == reverse("annotation:queue")
    assert CAMPAIGN_PAUSED_MESSAGE in page
    assert LATER_NAME not in page and world.campaign.name not in page  # nor the campaign in the queue


def test_an_annotator_holding_an_item_of_a_paused_campaign_cannot_save_it(world, token_client):
    world.leaky.delete()  # the item held is one that stays clean
    alice = world.client(world.alice)
    held = world.next_item(alice)
    Campaign.objects.filter(pk=world.campaign.pk).update(instructions=f"Judge as {LATER_NAME} would.")
    _add_model(token_client, display_name=LATER_NAME)
    assert blinding_recheck.items_recheck().paused == 1
    answer = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}}
    refused = alice.post(reverse("annotation:api_submit", args=[held["token"]]), answer, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["error"] == "campaign_paused"


@pytest.mark.parametrize("page", ["panel_entry", "panel_work"])
def test_a_crowd_participant_sees_only_a_neutral_message_once_the_consent_text_shows_the_name(token_client, page):
    world = World()
    study = _study(world, consent_text=f"Run with {LATER_NAME}.")
    client = _participant_client(study)
    _add_model(token_client, display_name=LATER_NAME)
    response = client.get(reverse(f"annotation:{page}", args=[study.entry_token]))
    body = response.content.decode()
    assert response.status_code == 409 and CAMPAIGN_PAUSED_MESSAGE in body
    assert LATER_NAME not in body and world.campaign.name not in body
    refused = client.post(reverse("annotation:panel_api_next", args=[study.entry_token]), content_type="application/json")
    assert refused.status_code == 409 and LATER_NAME not in refused.content.decode()


def test_the_sweep_pauses_the_campaign_before_anyone_asks(token_client, django_capture_on_commit_callbacks):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    with django_capture_on_commit_callbacks(execute=True):
        _add_model(token_client, display_name=LATER_NAME)  # the sweep is sent once the change commits
    world.campaign.refresh_from_db()
    assert world.campaign.texts_paused_at is not None
    assert "instructions" in world.campaign.texts_paused_reason
    assert blinding_recheck.items_recheck().paused == 0  # run again: paused once


def test_a_campaign_whose_texts_do_not_show_the_new_name_is_not_paused(world, token_client):
    _add_model(token_client, display_name="Quiet Harbour")
    assert world.shown_items(world.client(world.alice)) == ["leaky", "clean-1", "clean-2"]
    world.campaign.refresh_from_db()
    assert world.campaign.texts_paused_at is None
    assert world.campaign.texts_blinding_revision == catalogue_revision()


def test_the_researcher_dashboard_says_why_the_campaign_is_paused(token_client):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    _add_model(token_client, display_name=LATER_NAME)
    blinding_recheck.items_recheck()
    researcher = UserFactory(username="rita", role="researcher")
    page = world.client(researcher).get(reverse("annotation:campaign_dashboard", args=[world.campaign.pk]))
    assert page.status_code == 200
    assert 'id="texts-paused"' in page.content.decode() and LATER_NAME in page.content.decode()


def test_the_crowd_study_page_warns_that_its_entry_link_leads_to_the_paused_page(token_client):
    world = World()
    study = _study(world, consent_text=f"Run with {LATER_NAME}.")
    researcher = world.client(UserFactory(username="rita", role="researcher"))
    url = reverse("annotation:panel_study", args=[world.campaign.pk])
    assert 'id="texts-paused"' not in researcher.get(url).content.decode()
    _add_model(token_client, display_name=LATER_NAME)
    blinding_recheck.items_recheck()
    page = researcher.get(url).content.decode()
    assert 'id="texts-paused"' in page and LATER_NAME in page and "consent" in page
    assert page.index('id="texts-paused"') < page.index('id="panel-link"')  # read before the link is copied
    assert "entry link below" in page and "Resume after review" in page and study.entry_token in page


def test_a_paused_campaign_stays_paused_until_its_texts_are_edited_and_it_is_resumed(token_client):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    _add_model(token_client, display_name=LATER_NAME)
    blinding_recheck.items_recheck()
    campaign = Campaign.objects.get(pk=world.campaign.pk)
    with pytest.raises(ItemsInvalid, match="instructions"):
        blinding_recheck.campaign_texts_resume(campaign=campaign)  # still names it: refused
    _edit_model(token_client, SubjectModel.objects.get(display_name=LATER_NAME), display_name="Renamed Again")
    blinding_recheck.items_recheck()
    assert Campaign.objects.get(pk=campaign.pk).texts_paused_at is not None  # the name left: still paused
    Campaign.objects.filter(pk=campaign.pk).update(instructions="Judge the idea, not its author.")
    campaign.refresh_from_db()
    blinding_recheck.campaign_texts_resume(campaign=campaign)
    assert world.shown_items(world.client(world.alice)) == ["clean-1", "clean-2"]  # its leaky item stays withheld


def test_next_item_costs_no_query_more_for_the_campaign_texts_unless_the_catalogue_changed(world, token_client):
    """The campaign's texts, like its items, are checked with one integer comparison when nothing
    changed; after a change the first hand-out checks them again, then costs as before."""

    def next_item_queries(user) -> int:
        client = world.client(user)
        with CaptureQueriesContext(connection) as queries:
            token = world.next_item(client)["token"]
        services.assignment_skip(token=token, annotator=user)
        return len(queries)

    world.leaky.delete()
    Item.objects.filter(campaign=world.campaign).update(blinding_revision=10**6)  # items: never checked again
    before = next_item_queries(world.alice)
    _add_model(token_client, display_name="Quiet Harbour")
    assert next_item_queries(world.alice) > before  # the texts, checked against the old names: checked again
    assert next_item_queries(world.bob) == before


def test_the_admin_shows_why_a_campaign_is_paused_and_resumes_it_once_its_texts_are_edited(token_client):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    _add_model(token_client, display_name=LATER_NAME)
    blinding_recheck.items_recheck()
    admin = world.client(_admin())
    change = admin.get(reverse("admin:annotation_campaign_change", args=[world.campaign.pk])).content.decode()
    assert "instructions names a model" in change and LATER_NAME in change
    Campaign.objects.filter(pk=world.campaign.pk).update(instructions="Judge the idea, not its author.")
    admin.post(reverse("admin:annotation_campaign_changelist"),
               {"action": "resume_texts", "_selected_action": [world.campaign.pk]})
    assert Campaign.objects.get(pk=world.campaign.pk).texts_paused_at is None


def _api_client(user):
    from rest_framework.test import APIClient

    from leaderboard.api_tokens.services import api_token_create

    _, secret = api_token_create(user=user, name="script")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_the_researcher_api_says_that_and_why_a_campaign_is_paused(token_client):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    researcher = _api_client(UserFactory(username="rita", role="researcher"))
    (listed,) = researcher.get("/api/v1/campaigns/").json()["results"]
    assert (listed["texts_paused"], listed["texts_paused_at"], listed["texts_paused_reason"]) == (False, None, "")
    _add_model(token_client, display_name=LATER_NAME)
    blinding_recheck.items_recheck()
    (listed,) = researcher.get("/api/v1/campaigns/").json()["results"]
    detail = researcher.get(f"/api/v1/campaigns/{world.campaign.pk}/").json()
    for body in (listed, detail):
        assert body["texts_paused"] is True and body["texts_paused_at"]
        assert "instructions" in body["texts_paused_reason"] and LATER_NAME in body["texts_paused_reason"]
        assert body["name"] == world.campaign.name and body["status"] == world.campaign.status  # the rest as before
    # read-only: a script cannot lift the pause through the API
    assert researcher.patch(f"/api/v1/campaigns/{world.campaign.pk}/", {"texts_paused_reason": ""},
                            format="json").status_code == 405


def test_the_annotator_api_never_says_why_a_campaign_is_paused(token_client):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    _add_model(token_client, display_name=LATER_NAME)
    blinding_recheck.items_recheck()
    annotator = _api_client(world.alice)
    answers = [
        annotator.post(f"/api/v1/annotate/campaigns/{world.campaign.pk}/next", {}, format="json"),
        annotator.get(f"/api/v1/annotate/campaigns/{world.campaign.pk}/progress"),
        annotator.get(f"/api/v1/annotate/campaigns/{world.campaign.pk}/previous"),
        annotator.get("/api/v1/campaigns/"),
        annotator.get(f"/api/v1/campaigns/{world.campaign.pk}/"),
    ]
    assert answers[0].status_code == 409 and answers[0].json()["message"] == CAMPAIGN_PAUSED_MESSAGE
    assert [a.status_code for a in answers[3:]] == [403, 403]  # the campaigns' routes are the researchers'
    for answer in answers:
        body = answer.content.decode()
        assert LATER_NAME not in body and "texts_paused" not in body and "names a model" not in body, body


def test_the_api_schema_documents_the_pause_as_read_only():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    fields = schema["components"]["schemas"]["CampaignOutput"]["properties"]
    for name in ("texts_paused", "texts_paused_at", "texts_paused_reason"):
        assert fields[name].get("readOnly") is True, name
    assert {"id", "name", "kind", "task_set", "status", "k", "created_at"} <= set(fields)


#: A campaign text written (and checked) while the catalogue gains the name it shows: (module whose check is
#: interrupted, the write).
WRITES_DURING_A_CHANGE = {
    "a calibration example": (services, lambda world: services.calibration_example_add(
        campaign=world.campaign, title="A close call", body=f"{LATER_NAME} wrote B.", expected="B")),
    "the crowd study's consent text": (participants, lambda world: _study(world, consent_text=f"Run with {LATER_NAME}.")),
    "a training question": (participants, lambda world: participants.training_item_add(
        study=world.study, question=f"Is {LATER_NAME} a lantern?", choices=["yes", "no"], answer="no")),
}


@pytest.mark.parametrize("where", sorted(WRITES_DURING_A_CHANGE))
def test_a_text_checked_against_the_names_before_a_change_is_checked_again_after_it(token_client, where, monkeypatch):
    """The interleaving, made deterministic: the text is checked against the catalogue's names (clean), the
    model whose name it shows is added and the sweep checks the campaign's texts (without the text, not yet
    written: the campaign is recorded as checked at the new revision), then the text is saved. The write
    records the revision its text was checked against, so the campaign is checked again, and paused."""
    module, write = WRITES_DURING_A_CHANGE[where]
    world = World()
    world.study = _study(world)
    checked = module.texts_identity_problems

    def check_then_change(texts, **kwargs):
        problems = checked(texts, **kwargs)
        if any(LATER_NAME in text for text in texts.values()):
            _add_model(token_client, display_name=LATER_NAME)
            assert blinding_recheck.items_recheck().paused == 0  # the text is not written yet
            assert Campaign.objects.get(pk=world.campaign.pk).texts_blinding_revision == catalogue_revision()
        return problems

    monkeypatch.setattr(module, "texts_identity_problems", check_then_change)
    write(world)
    campaign = Campaign.objects.get(pk=world.campaign.pk)
    assert campaign.texts_blinding_revision < catalogue_revision()  # checked against the older names
    assert blinding_recheck.items_recheck().paused == 1
    campaign.refresh_from_db()
    assert campaign.texts_paused_at is not None and LATER_NAME in campaign.texts_paused_reason


def test_an_admin_edit_checked_against_the_names_before_a_change_is_checked_again_after_it(token_client, monkeypatch):
    """The same interleaving for the admin's campaign form: its instructions are checked in the form, the
    model is added and the sweep runs, then the admin saves the campaign."""
    from annotation import forms

    world = World()
    checked = forms.texts_identity_problems

    def check_then_change(texts, **kwargs):
        problems = checked(texts, **kwargs)
        _add_model(token_client, display_name=LATER_NAME)
        assert blinding_recheck.items_recheck().paused == 0
        return problems

    monkeypatch.setattr(forms, "texts_identity_problems", check_then_change)
    campaign = world.campaign
    response = world.client(_admin()).post(reverse("admin:annotation_campaign_change", args=[campaign.pk]), {
        "name": campaign.name, "kind": campaign.kind, "task_set": campaign.task_set_id, "status": campaign.status,
        "instructions": f"Judge as {LATER_NAME} would.", "k": campaign.k, "gold_rate": campaign.gold_rate,
        "open_to_all_annotators": "on", "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0",
        "calibration_examples-TOTAL_FORMS": "0", "calibration_examples-INITIAL_FORMS": "0",
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    assert blinding_recheck.items_recheck().paused == 1
    campaign.refresh_from_db()
    assert campaign.texts_paused_at is not None and LATER_NAME in campaign.texts_paused_reason


def _admin_action_messages(admin: Client, ids) -> list[str]:
    response = admin.post(reverse("admin:annotation_campaign_changelist"),
                          {"action": "resume_texts", "_selected_action": list(ids)}, follow=True)
    assert response.status_code == 200
    return [str(message) for message in response.context["messages"]]


def test_the_admins_resume_says_what_to_do_when_it_refuses_and_when_a_campaign_is_not_paused(token_client):
    world = World(instructions=f"Judge as {LATER_NAME} would.")
    running = campaign_for(CampaignKind.TEXT_PAIRWISE, world.catalogue, k=1, annotators=[world.alice])
    _add_model(token_client, display_name=LATER_NAME)
    blinding_recheck.items_recheck()
    admin = world.client(_admin())
    said = _admin_action_messages(admin, [world.campaign.pk, running.pk])
    (refused,) = [m for m in said if m.startswith(f"{world.campaign}:")]
    (not_paused,) = [m for m in said if m.startswith(f"{running}:")]
    assert "still paused: instructions names a model ('Demo Atlas')" in refused
    assert "line 0" not in refused and "Edit that text" in refused  # no import jargon; what to do next
    assert not_paused == f"{running}: not paused for review; nothing to resume."
    Campaign.objects.filter(pk=world.campaign.pk).update(instructions="Judge the idea, not its author.")
    assert _admin_action_messages(admin, [world.campaign.pk]) == [f"{world.campaign}: resumed; its texts name no model."]
    assert _admin_action_messages(admin, [world.campaign.pk]) == [
        f"{world.campaign}: not paused for review; nothing to resume."]  # resumed twice: said so, no error


@pytest.mark.parametrize("page", ["panel_entry", "panel_consent", "panel_work"])
def test_a_participant_who_finished_before_the_pause_is_sent_to_their_code_not_the_paused_page(token_client, page):
    world = World()
    study = _study(world, consent_text=f"Run with {LATER_NAME}.", completion_code="DONE1234")
    client = _participant_client(study)
    Participant.objects.filter(study=study).update(state=Participant.State.COMPLETED)
    _add_model(token_client, display_name=LATER_NAME)
    response = client.get(reverse(f"annotation:{page}", args=[study.entry_token]), follow=True)
    body = response.content.decode()
    assert response.status_code == 200 and response.redirect_chain[-1][0] == reverse(
        "annotation:panel_done", args=[study.entry_token])
    assert "DONE1234" in body and LATER_NAME not in body and world.campaign.name not in body


def test_a_participant_who_finished_before_the_pause_gets_their_code_from_the_entry_link_in_a_fresh_browser(
        token_client):
    """Only for the entry the panel gave them (the same PROLIFIC_PID, STUDY_ID and SESSION_ID as stored):
    another session id, or an id that has not finished, gets the paused page and no code."""
    world = World()
    study = _study(world, consent_text=f"Run with {LATER_NAME}.", completion_code="DONE1234")
    _participant_client(study)  # PROLIFIC_PID 5f1a…, STUDY_ID S, SESSION_ID X
    Participant.objects.filter(study=study).update(state=Participant.State.COMPLETED)
    working = Client()
    working.get(reverse("annotation:panel_entry", args=[study.entry_token]),
                {"PROLIFIC_PID": "6a1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "Y"})
    _add_model(token_client, display_name=LATER_NAME)
    url = reverse("annotation:panel_entry", args=[study.entry_token])
    response = Client().get(url, {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "X"},
                            follow=True)
    body = response.content.decode()
    assert response.status_code == 200 and response.redirect_chain[-1][0] == reverse(
        "annotation:panel_done", args=[study.entry_token])
    assert "DONE1234" in body and LATER_NAME not in body and world.campaign.name not in body
    for params in ({"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "other"},
                   {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "T", "SESSION_ID": "X"},
                   {"PROLIFIC_PID": "6a1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "Y"},
                   {"PROLIFIC_PID": "7b1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "Z"}):
        fresh = Client()
        refused = fresh.get(url, params)
        assert refused.status_code == 409 and CAMPAIGN_PAUSED_MESSAGE in refused.content.decode(), params
        assert "DONE1234" not in refused.content.decode()
        assert fresh.get(reverse("annotation:panel_done", args=[study.entry_token])).status_code == 403  # not signed in
    assert Participant.objects.filter(study=study).count() == 2  # nobody created while paused


def test_a_generic_panels_finished_id_alone_gives_a_fresh_browser_no_code_while_paused(token_client):
    """A generic link carries no attempt id, so nothing but the id itself would be presented: a panel id is not a
    secret, so a stranger holding it gets the paused page, not the participant's session and code. (The
    participant's own browser keeps its session and is sent to their code.)"""
    world = World()
    study = participants.panel_study_open(campaign=world.campaign, panel="generic", completion_code="DONE1234",
                                          consent_text=f"Run with {LATER_NAME}.")
    own = Client()
    own.get(reverse("annotation:panel_entry", args=[study.entry_token]), {"pid": "G1"})
    Participant.objects.filter(study=study).update(state=Participant.State.COMPLETED)
    _add_model(token_client, display_name=LATER_NAME)
    stranger = Client()
    refused = stranger.get(reverse("annotation:panel_entry", args=[study.entry_token]), {"pid": "G1"})
    assert refused.status_code == 409 and "DONE1234" not in refused.content.decode()
    assert stranger.get(reverse("annotation:panel_done", args=[study.entry_token])).status_code == 403
    mine = own.get(reverse("annotation:panel_entry", args=[study.entry_token]), {"pid": "G1"}, follow=True)
    assert "DONE1234" in mine.content.decode()


@pytest.mark.parametrize("check", ["the gatekeeper", "the sweep"])
def test_instructions_written_after_the_campaign_was_read_are_the_ones_checked(world, token_client, check):
    """The gatekeeper's campaign comes from next-item's facts and the sweep's from its list, both read
    before the row's lock: instructions naming the new model that an admin saved in between (its write
    lowered the campaign's revision) must be the ones checked, not the clean ones read earlier."""
    _add_model(token_client, display_name=LATER_NAME)
    stale = Campaign.objects.get(pk=world.campaign.pk)
    Campaign.objects.filter(pk=stale.pk).update(instructions=f"Compare what {LATER_NAME} wrote.",
                                                texts_blinding_revision=0)
    if check == "the gatekeeper":
        assert blinding_recheck.campaign_texts_current(campaign=stale) is False
    else:
        real_list = Campaign.objects.exclude
        with pytest.MonkeyPatch.context() as patch:  # the sweep's list was read before the admin's write
            patch.setattr(Campaign.objects, "exclude", lambda *a, **k: _Listed(real_list(*a, **k), stale))
            assert blinding_recheck.items_recheck().paused == 1
    world.campaign.refresh_from_db()
    assert world.campaign.texts_paused_at is not None and LATER_NAME in world.campaign.texts_paused_reason


class _Listed:
    """A queryset whose rows are the instances given (read before a concurrent write), whatever is filtered."""

    def __init__(self, queryset, *instances):
        self.queryset, self.instances = queryset, instances

    def filter(self, *args, **kwargs):
        return self

    def order_by(self, *args):
        return list(self.instances)
