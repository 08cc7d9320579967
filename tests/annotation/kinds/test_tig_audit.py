"""TIG checklist audit (annotation/kinds/tig_audit.py): the two candidates' order says nothing of the models."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation import item_creation
from annotation.choices import CampaignKind
from annotation.models import Item
from tests.annotation.factories import Catalogue, campaign_for
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_which_candidate_is_a_follows_the_items_random_bit_not_the_models_names():
    # Shown in the order of the models' names, the model whose name sorts first was Candidate A on every
    # item: an annotator who knows the models in the study (or recognises one once) knew which was which.
    users = annotators(2)
    catalogue = Catalogue(n_tasks=1)
    task = catalogue.tasks[0]
    first, second = sorted((catalogue.response(task, 0), catalogue.response(task, 1)),
                           key=lambda response: response.subject_model.display_name)
    campaign = campaign_for(CampaignKind.TIG_AUDIT, catalogue, annotators=users, k=1)
    key = f"{first.subject_model.display_name}|{second.subject_model.display_name}"
    specs = [item_creation.ItemSpec(task=task, key=f"audit-{n}", payload={
        "checklist_text": f"Which response avoids a lighthouse cliché number {n}?", "cluster_summary": "lighthouses as hope",
        "provenance": {"models_sharing": 3}, "meta": {"comparison_key": key}}) for n in (0, 1)]
    item_creation.items_create(campaign=campaign, specs=specs)
    for n, flipped in enumerate((False, True)):  # one item each way (as drawn when an item is created)
        Item.objects.filter(campaign=campaign, key=f"audit-{n}").update(orientation=flipped)

    shown = {}
    for user in users:  # k = 1: each annotator is handed one of the two items
        client = Client()
        assert client.login(username=user.username, password=PASSWORD)
        assignment = client.post(reverse("annotation:api_next", args=[campaign.pk]), {},
                                 content_type="application/json").json()["assignment"]
        content = assignment["content"]
        shown[content["checklist_text"]] = [(c["label"], c["core_idea"]) for c in content["candidates"]]
    assert shown == {
        "Which response avoids a lighthouse cliché number 0?": [("Candidate A", first.core_idea), ("Candidate B", second.core_idea)],
        "Which response avoids a lighthouse cliché number 1?": [("Candidate A", second.core_idea), ("Candidate B", first.core_idea)],
    }
