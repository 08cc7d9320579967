"""Gold (attention-check) items are silent: nothing an annotator or crowd participant can load after a
step depends on whether the item of that step was gold. The walks below take an annotator (and a
participant) through a campaign with gold mixed in and compare, field by field, every figure of every
response and page between consecutive steps: the change after a gold item must be the change after a
regular one. And where gold falls is drawn for each annotator, so comparing notes tells nothing, while
the share of gold stays within one item of the campaign's rate."""

from __future__ import annotations

import re
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotation import item_creation, participants, services
from annotation.gold_schedule import gold_due
from annotation.models import Assignment
from annotation.panel_models import Participant
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

STEPS = 8  # items submitted in each walk; fewer than the campaign holds, so "assigned" stays 1
#: Fields that are the wall clock's (the active time clamped to the time the item was held): compared by type.
MEASURED = {"active_ms"}


def _campaign(users=(), *, k=3):
    campaign = pairwise_campaign(Catalogue(n_tasks=5), annotators=list(users), k=k, gold_rate=0.3)
    for item in campaign.items.order_by("position")[:4]:
        item_creation.item_gold_set(item=item, answer="A")
    assert campaign.items.filter(is_gold=False).count() > STEPS
    return campaign


def _flat(prefix: str, value, out: dict) -> dict:
    """``value`` as {dotted key: leaf}; an assignment's own content (which item) is reduced to its keys."""
    if isinstance(value, dict):
        if prefix.endswith("assignment") and "token" in value:
            out[prefix] = ("assignment", tuple(sorted(value)), value.get("kind"), tuple(sorted(value["content"])))
            return out
        if not value:
            out[prefix] = {}
        for key, sub in value.items():
            _flat(f"{prefix}.{key}", sub, out)
    elif prefix.rsplit(".", 1)[-1] in MEASURED:
        out[prefix] = type(value).__name__
    else:
        out[prefix] = value
    return out


_VARYING = [
    (re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"'), 'name="csrfmiddlewaretoken"'),
    (re.compile(r'nonce="[^"]*"'), "nonce"),
    (re.compile(r'"csrf[^"]*":\s*"[^"]*"'), '"csrf"'),
]


def _page(prefix: str, response, out: dict) -> dict:
    """A page as its text with every number taken out (``<prefix>.text``) and its numbers in order."""
    assert response.status_code == 200, (prefix, response.status_code)
    html = response.content.decode()
    for pattern, replacement in _VARYING:
        html = pattern.sub(replacement, html)
    out[f"{prefix}.text"] = re.sub(r"\d+", "#", html)
    for i, number in enumerate(re.findall(r"\d+", html)):
        out[f"{prefix}.n{i}"] = int(number)
    return out


def _json(prefix: str, response, out: dict) -> dict:
    out[f"{prefix}.status"] = response.status_code
    return _flat(prefix, response.json(), out)


def _change(before: dict, after: dict) -> dict:
    """Field by field: how a number moved, or what a non-number is now."""
    assert set(before) == set(after), set(before) ^ set(after)
    return {key: (after[key] - before[key]) if isinstance(after[key], int) and not isinstance(after[key], bool)
            else after[key] for key in after}


def _gold_and_regular_steps_look_alike(snapshots: list[dict], gold: list[bool]) -> None:
    assert any(gold) and not all(gold), gold  # the walk saw both kinds
    changes = [_change(before, after) for before, after in zip(snapshots, snapshots[1:])]
    after_gold = [c for c, g in zip(changes, gold) if g]
    after_regular = [c for c, g in zip(changes, gold) if not g]
    for change in after_gold:
        differing = {key: (change[key], after_regular[0][key]) for key in change if change[key] != after_regular[0][key]}
        assert not differing, f"after a gold item vs after a regular one: {differing}"
    assert all(change == after_regular[0] for change in after_regular)


def _submit_body() -> dict:
    return {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "time_on_item_ms": 4000}


def test_nothing_an_annotator_loads_tells_a_gold_step_from_a_regular_one():
    (ann,) = annotators(1)
    campaign = _campaign([ann])
    client = Client()
    assert client.login(username=ann.username, password=PASSWORD)
    pk = campaign.pk

    def post(url, body=None):
        return client.post(url, body or {}, content_type="application/json")

    def snapshot(submitted) -> dict:
        out: dict = {}
        _json("submit", submitted, out)
        _json("next", post(reverse("annotation:api_next", args=[pk])), out)
        _json("progress", client.get(reverse("annotation:api_progress", args=[pk])), out)
        _json("v1.next", post(f"/api/v1/annotate/campaigns/{pk}/next"), out)
        _json("v1.progress", client.get(f"/api/v1/annotate/campaigns/{pk}/progress"), out)
        _page("work", client.get(reverse("annotation:work", args=[pk])), out)
        _page("queue", client.get(reverse("annotation:queue")), out)
        return out

    token = post(reverse("annotation:api_next", args=[pk])).json()["assignment"]["token"]
    snapshots, gold = [], []
    for step in range(STEPS + 1):
        # The page's own path: save and take the next item in one request (issue 30); the first
        # snapshot is after a re-send of nothing new, so every later one compares like with like.
        submitted = post(reverse("annotation:api_submit", args=[token]) + "?next=1", _submit_body())
        assert submitted.status_code == 201
        gold.append(Assignment.objects.get(token=token).item.is_gold)
        snapshots.append(snapshot(submitted))
        token = submitted.json()["assignment"]["token"]
    _gold_and_regular_steps_look_alike(snapshots, gold[1:])


def test_the_annotators_api_v1_submit_answers_alike_after_gold_and_regular_items():
    (ann,) = annotators(1)
    campaign = _campaign([ann])
    client = Client()
    assert client.login(username=ann.username, password=PASSWORD)
    snapshots, gold = [], []
    for _ in range(STEPS + 1):
        token = client.post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {},
                            content_type="application/json").json()["assignment"]["token"]
        submitted = client.post(f"/api/v1/annotate/assignments/{token}/submit", _submit_body(),
                                content_type="application/json")
        assert submitted.status_code == 201
        gold.append(Assignment.objects.get(token=token).item.is_gold)
        snapshots.append(_json("submit", submitted, {}))
    _gold_and_regular_steps_look_alike(snapshots, gold[1:])


def test_nothing_a_crowd_participant_loads_tells_a_gold_step_from_a_regular_one():
    campaign = _campaign()
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    client = Client()
    client.get(reverse("annotation:panel_entry", args=[study.entry_token]),
               {"PROLIFIC_PID": "P1", "STUDY_ID": "S", "SESSION_ID": "X"})
    participant = Participant.objects.get()
    participants.participant_consent(participant=participant)
    participants.participant_instructions_read(participant=participant)
    entry = study.entry_token

    def post(url, body=None):
        return client.post(url, body or {}, content_type="application/json")

    snapshots, gold = [], []
    for _ in range(STEPS + 1):
        token = post(reverse("annotation:panel_api_next", args=[entry])).json()["assignment"]["token"]
        submitted = post(reverse("annotation:panel_api_submit", args=[entry, token]), {**_submit_body(), "active_ms": 3000})
        assert submitted.status_code == 201
        gold.append(Assignment.objects.get(token=token).item.is_gold)
        out = _json("submit", submitted, {})
        _json("next", post(reverse("annotation:panel_api_next", args=[entry])), out)
        _page("work", client.get(reverse("annotation:panel_work", args=[entry])), out)
        snapshots.append(out)
    _gold_and_regular_steps_look_alike(snapshots, gold[1:])


def _gold_shares_within_one_item(served: list[bool], rate: float) -> None:
    for n in range(1, len(served) + 1):
        assert abs(sum(served[:n]) - n * rate) < 1, (n, sum(served[:n]), served)


def test_two_annotators_get_gold_at_different_positions_and_the_share_stays_within_one_item_of_the_rate():
    users = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=10), annotators=users, k=2, gold_rate=0.3)
    for item in campaign.items.order_by("position")[:10]:
        item_creation.item_gold_set(item=item, answer="A")
    served = {}
    for user in users:
        while (assignment := services.assignment_next(campaign=campaign, annotator=user)) is not None:
            services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                                  answer={"choice": "A"})
        served[user.pk] = list(Assignment.objects.filter(annotator=user).order_by("created_at", "pk")
                               .values_list("item__is_gold", flat=True))
    first, second = served.values()
    assert sum(first[:20]) >= 5 and sum(second[:20]) >= 5  # gold was mixed in for both
    assert first[:20] != second[:20]  # ...at positions of their own
    for sequence in (first, second):
        _gold_shares_within_one_item(sequence, 0.3)


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.25, 0.3, 0.5])
def test_the_drawn_schedule_keeps_the_rate_is_reproducible_and_is_not_a_fixed_pattern(rate):
    sequences = []
    for annotator_id in range(1, 21):
        served = []
        for _ in range(200):
            served.append(gold_due(campaign_id=7, annotator_id=annotator_id, rate=rate, shown=len(served),
                                   shown_gold=sum(served)))
        _gold_shares_within_one_item(served, rate)
        again = [gold_due(campaign_id=7, annotator_id=annotator_id, rate=rate, shown=n, shown_gold=sum(served[:n]))
                 for n in range(200)]
        assert again == served  # the same draw for the same position (a re-handed item does not re-roll)
        sequences.append(tuple(served))
    assert len(set(sequences)) == len(sequences)  # every annotator's positions are their own
    first_gold = {seq.index(True) for seq in sequences}
    assert len(first_gold) > 1  # the first gold item is not at the same position for everyone
