"""Blinding is a security property: crawl every page, API response and image an annotator can
load — following links and working through every item of every kind — and assert that no model
name or provider id, response/render id, file name, score, gold answer or other annotator's label or
note appears. A response whose text names a model is planted and must be refused at item creation
(:mod:`annotation.blinding`), kept in the admin's report and absent from everything the crawl loads."""

from __future__ import annotations

import json
import re
import uuid
from collections import deque
from urllib.parse import urljoin, urlparse

import pytest

from annotation import item_creation, services
from annotation.blinding import IdentityMatcher, catalogue_identities
from annotation.choices import CampaignKind
from annotation.errors import ItemsInvalid
from annotation.models import BlindingRefusal, Item
from leaderboard.models import Render
from tests.annotation.factories import (
    MODEL_NAMES,
    VALID_ANSWERS,
    Catalogue,
    faithfulness_campaign,
    image_campaign,
    pairwise_campaign,
    strategy_campaign,
    tig_campaign,
)
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD, ResponseFactory, UserFactory

pytestmark = pytest.mark.django_db

OTHER_NOTE = "SECRET-NOTE-OF-ANOTHER-ANNOTATOR"
#: Text of the planted response, searched for in everything the crawl loads.
PLANTED = "PLANTED-UNBLINDING-SENTENCE"
#: JSON keys that would carry identities, scores or other people's labels.
FORBIDDEN_KEYS = {"model", "model_id", "response_id", "render_id", "item_id", "subject_model", "score", "scores", "theta",
                  "gold_answer", "annotator", "labels", "judge", "run_id", "winner", "is_simulated", "filename"}


@pytest.fixture
def world(media_root):
    alice = UserFactory(username="alice", role="annotator")
    others = annotators(2, prefix="someone-else-")
    users = [alice, *others]
    catalogue = Catalogue(n_tasks=2)
    faith, renders = faithfulness_campaign(catalogue, annotators=users)
    campaigns = [
        pairwise_campaign(catalogue, annotators=users, gold_rate=0.3),
        tig_campaign(catalogue, annotators=users),
        faith,
        image_campaign(catalogue, renders, annotators=users, show_brief=True),
        strategy_campaign(catalogue, annotators=users),
    ]
    item_creation.item_gold_set(item=campaigns[0].items.order_by("position").first(), answer="B")
    # the other annotators label first, with notes alice must never see
    for campaign in campaigns:
        for other in others:
            for _ in range(2):
                assignment = services.assignment_next(campaign=campaign, annotator=other)
                if assignment is None:
                    break
                answer = dict(VALID_ANSWERS[campaign.kind], flag={"reason": "ambiguous_brief", "note": OTHER_NOTE})
                services.label_submit(token=assignment.token, annotator=other, idempotency_key=uuid.uuid4(), answer=answer)
    return alice, campaigns, catalogue


@pytest.fixture
def planted(world):
    """A response whose Core Idea names another model (in other case), offered as a strategy item:
    (the response, the refusal)."""
    _alice, campaigns, catalogue = world
    strategy = next(c for c in campaigns if c.kind == CampaignKind.STRATEGY)
    task = catalogue.tasks[0]
    response = ResponseFactory(task=task, subject_model=catalogue.models[0], sample=2,
                               core_idea=f"{PLANTED}: a lantern drawn the way {MODEL_NAMES[1].upper()} would draw it.")
    with pytest.raises(ItemsInvalid) as refused:
        item_creation.items_create(campaign=strategy, specs=[item_creation.ItemSpec(task=task, response_a=response, key="planted")])
    return response, refused.value


def forbidden_strings(catalogue) -> list[str]:
    strings = [*MODEL_NAMES, OTHER_NOTE, "someone-else-", PLANTED]
    for model in catalogue.models:
        strings += [model.display_name, model.provider_id]
    for render in Render.objects.all():
        strings.append(render.image.name.rsplit("/", 1)[-1])  # file names
    return [s.lower() for s in strings if s]


def assert_blind(url: str, body: bytes, forbidden: list[str]) -> None:
    lowered = body.lower()
    for s in forbidden:
        assert s.encode() not in lowered, f"{url} leaks {s!r}"


def json_keys(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from json_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from json_keys(inner)


def links(html: str, base: str) -> list[str]:
    found = re.findall(r'(?:href|src|action)="([^"#]+)"', html)
    return [urljoin(base, f) for f in found]


def test_nothing_an_annotator_can_load_carries_identities_scores_or_other_labels(client, world, planted):
    _alice, campaigns, catalogue = world
    response, refusal = planted
    assert f"response {response.pk}" in refusal.message and MODEL_NAMES[1] in refusal.message
    assert not Item.objects.filter(key="planted").exists()
    assert BlindingRefusal.objects.get(item_key="planted").response == response
    forbidden = forbidden_strings(catalogue)
    assert client.login(username="alice", password=PASSWORD)
    seen: set[str] = set()
    queue = deque(["/", "/annotate/"])
    visited_pages = 0
    while queue:
        url = queue.popleft()
        path = urlparse(url).path
        if path in seen or not path.startswith("/") or path.startswith(("/accounts/logout", "/admin")):
            continue
        seen.add(path)
        response = client.get(path)
        if response.status_code != 200:
            continue
        visited_pages += 1
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert_blind(path, body, forbidden)
        if "html" in response.get("Content-Type", ""):
            queue.extend(links(body.decode(), path))
    assert visited_pages >= 2 + len(campaigns)  # home, queue and every labelling page

    api_calls = 0
    for campaign in campaigns:
        for _ in range(50):
            response = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json")
            assert response.status_code == 200
            assert_blind("next", response.content, forbidden)
            payload = response.json()
            assert not FORBIDDEN_KEYS & set(json_keys(payload)), set(json_keys(payload)) & FORBIDDEN_KEYS
            api_calls += 1
            assignment = payload["assignment"]
            if assignment is None:
                break
            # no gold marker of any kind, not even a constant one
            assert not [key for key in json_keys(payload) if "gold" in key.lower()]
            content = assignment["content"]
            for media in [content.get("image"), *(content.get("images") or {}).values()]:
                if not media:
                    continue
                segments = urlparse(media).path.strip("/").split("/")
                # exactly /annotate/media/<token>/<A|B>/: no further segment that could carry an id
                assert segments[:3] == ["annotate", "media", assignment["token"]] and segments[3:] in (["A"], ["B"])
                image = client.get(media)
                assert image.status_code == 200
                assert_blind(media, image.content, forbidden)
                assert "Content-Disposition" not in image
            submitted = client.post(
                f"/annotate/api/assignments/{assignment['token']}/submit",
                {"idempotency_key": str(uuid.uuid4()), "answer": VALID_ANSWERS[campaign.kind], "time_on_item_ms": 900},
                content_type="application/json",
            )
            assert submitted.status_code == 201, submitted.content
            assert_blind("submit", submitted.content, forbidden)
            assert not FORBIDDEN_KEYS & set(json_keys(submitted.json()))
        progress = client.get(f"/annotate/api/campaigns/{campaign.pk}/progress")
        assert_blind("progress", progress.content, forbidden)
        page = client.get(f"/annotate/c/{campaign.pk}/")
        assert_blind("work page", page.content, forbidden)
        assert json.loads(re.search(r'id="annotate-config" type="application/json">(.*?)</script>', page.content.decode()).group(1))
    assert api_calls > len(campaigns)


def test_alice_cannot_reach_any_researcher_page_or_export(client, world):
    _alice, campaigns, _ = world
    assert client.login(username="alice", password=PASSWORD)
    for campaign in campaigns:
        for path in (f"/annotate/campaigns/{campaign.pk}/", f"/annotate/campaigns/{campaign.pk}/labels.jsonl"):
            assert client.get(path).status_code == 403
    assert client.get("/annotate/campaigns/").status_code == 403
    # The renders page names each image's model; its image URLs carry render ids.
    task_set_pk = campaigns[0].task_set_id
    assert client.get(f"/task-sets/{task_set_pk}/renders/").status_code == 403
    for render in Render.objects.all():
        assert client.get(f"/task-sets/{task_set_pk}/renders/{render.pk}/image").status_code == 403


def test_the_image_preference_item_shows_images_and_the_brief_only(client, world):
    _alice, campaigns, _ = world
    image_campaign_ = next(c for c in campaigns if c.kind == CampaignKind.IMAGE_PREFERENCE)
    assert client.login(username="alice", password=PASSWORD)
    content = client.post(f"/annotate/api/campaigns/{image_campaign_.pk}/next", content_type="application/json").json()["assignment"]["content"]
    assert set(content) == {"question", "images", "brief"}


# -- the identity check of shown text ---------------------------------------------------------------


@pytest.mark.parametrize("text", ["drawn like zephyr-secret-alpha.", "(ZEPHYR-SECRET-ALPHA)", "Zephyr-Secret-Alpha's style",
                                  "see provider/zephyr-secret-alpha", "a Fennec-family look"])
def test_an_identity_string_is_found_in_any_case_on_word_boundaries(text):
    matcher = IdentityMatcher(["Zephyr-Secret-Alpha", "provider/zephyr-secret-alpha", "Fennec"])
    assert matcher.find(text) is not None


@pytest.mark.parametrize("text", ["zephyr-secret-alphabet soup", "prezephyr-secret-alpha", "fennecs", "a quiet fox"])
def test_a_longer_word_containing_an_identity_is_not_a_match(text):
    assert IdentityMatcher(["Zephyr-Secret-Alpha", "Fennec"]).find(text) is None


def test_the_catalogue_identities_are_display_name_provider_id_its_last_segment_and_family(db):
    from tests.factories import SubjectModelFactory

    SubjectModelFactory(display_name="Vega Prime", provider_id="acme/vega-prime-2", family="Vegafamily")
    matcher = catalogue_identities()
    assert {"Vega Prime", "acme/vega-prime-2", "vega-prime-2", "Vegafamily"} <= set(matcher.identities)


@pytest.fixture
def small(media_root):
    return Catalogue(n_tasks=1)


def _refused(campaign, spec) -> ItemsInvalid:
    with pytest.raises(ItemsInvalid) as refused:
        item_creation.items_create(campaign=campaign, specs=[spec])
    assert not campaign.items.exists()
    return refused.value


def test_a_pairwise_item_whose_shown_response_names_a_model_is_refused_naming_the_response(small):
    from tests.annotation.factories import campaign_for

    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, small)
    task = small.tasks[0]
    leaky = small.response(task, 1)
    leaky.core_idea = f"What {small.models[2].provider_id.rsplit('/', 1)[-1]} would never dare."
    leaky.save()
    error = _refused(campaign, item_creation.ItemSpec(task=task, dimension="novelty", response_a=small.response(task, 0),
                                                 response_b=leaky, payload={"checklist": ["Avoids lanterns?"]}))
    assert f"response {leaky.pk}" in error.message and "core_idea" in error.message
    assert BlindingRefusal.objects.get(campaign=campaign).field == "response_b"


def test_a_checklist_cue_naming_a_model_family_is_refused(small):
    from tests.annotation.factories import campaign_for

    small.models[0].family = "Lanternfish"
    small.models[0].save()
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, small)
    task = small.tasks[0]
    error = _refused(campaign, item_creation.ItemSpec(task=task, dimension="novelty", response_a=small.response(task, 0),
                                                 response_b=small.response(task, 1),
                                                 payload={"checklist": ["Does it avoid the LANTERNFISH look?"]}))
    assert "payload" in error.message and "'Lanternfish'" in error.message


def test_a_tig_item_whose_cluster_summary_names_a_model_is_refused(small):
    from tests.annotation.factories import campaign_for

    campaign = campaign_for(CampaignKind.TIG_AUDIT, small)
    error = _refused(campaign, item_creation.ItemSpec(task=small.tasks[0], payload={
        "checklist_text": "Avoids glowing lanterns?", "cluster_summary": f"lanterns, as in {MODEL_NAMES[3]}",
        "provenance": {"models_sharing": 2}, "meta": {"source": MODEL_NAMES[0]}}))
    assert MODEL_NAMES[3] in error.message and MODEL_NAMES[0] not in error.message  # meta is never shown


def test_a_brief_naming_a_model_refuses_the_item_naming_the_task(small):
    from tests.annotation.factories import campaign_for

    task = small.tasks[0]
    task.brief = f"Draw a lantern for {MODEL_NAMES[0].lower()} users."
    task.save()
    campaign = campaign_for(CampaignKind.STRATEGY, small)
    error = _refused(campaign, item_creation.ItemSpec(task=task, response_a=small.response(task, 1)))
    assert f"task {task.external_id}" in error.message


def test_an_item_whose_unshown_field_names_a_model_is_accepted(small):
    from tests.annotation.factories import campaign_for

    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, small)
    task = small.tasks[0]
    other = small.response(task, 1)
    other.visual_description = f"In the manner of {MODEL_NAMES[2]}."  # a novelty item shows the Core Idea only
    other.save()
    created, _ = item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(
        task=task, dimension="novelty", response_a=small.response(task, 0), response_b=other, payload={"checklist": []})])
    assert len(created) == 1 and not BlindingRefusal.objects.exists()


def test_admins_see_the_report_of_refused_items(client, small, adam):
    from tests.annotation.factories import campaign_for

    campaign = campaign_for(CampaignKind.STRATEGY, small)
    task = small.tasks[0]
    leaky = small.response(task, 0)
    leaky.core_idea = f"{MODEL_NAMES[1]} inside."
    leaky.save()
    _refused(campaign, item_creation.ItemSpec(task=task, response_a=leaky, key="leaky-item"))
    client.force_login(adam)
    page = client.get("/admin/annotation/blindingrefusal/")
    assert page.status_code == 200
    assert b"leaky-item" in page.content and f"response {leaky.pk}".encode() in page.content


def test_a_campaign_whose_instructions_name_a_model_is_refused(small):
    from tests.annotation.factories import campaign_for

    with pytest.raises(ItemsInvalid, match="instructions: names a model"):
        campaign_for(CampaignKind.STRATEGY, small, instructions=f"Label like {MODEL_NAMES[0]} would.")


def test_a_calibration_example_naming_a_model_is_refused(small):
    from tests.annotation.factories import campaign_for

    campaign = campaign_for(CampaignKind.STRATEGY, small)
    with pytest.raises(ItemsInvalid, match="body: names a model"):
        services.calibration_example_add(campaign=campaign, title="A hard one", body=f"From {MODEL_NAMES[2]}.", expected="B")
    assert not campaign.calibration_examples.exists()


def test_the_admin_form_refuses_a_calibration_example_naming_a_model(small):
    from annotation.forms import CalibrationExampleAdminForm
    from tests.annotation.factories import campaign_for

    campaign = campaign_for(CampaignKind.STRATEGY, small)
    form = CalibrationExampleAdminForm(data={"campaign": campaign.pk, "position": 0, "title": f"{MODEL_NAMES[3]} case",
                                             "body": "A case.", "expected": "B", "explanation": ""})
    assert not form.is_valid() and "names a model" in form.errors["title"][0]
# --- the EASEL/C² validation kinds (issue 13) --------------------------------------------------------


@pytest.fixture
def validation_world(db):
    from tests.annotation.validation_factories import (
        VALID_VALIDATION_ANSWERS,
        C2World,
        EaselWorld,
        canvas_campaign,
        handwriting_campaign,
        uos_campaign,
    )

    alice = UserFactory(username="alice", role="annotator")
    others = annotators(2, prefix="someone-else-")
    users = [alice, *others]
    c2, easel = C2World(), EaselWorld(recognised=("hcllo-recognised", "hel-recognised", "unread-recognised"))
    campaigns = [uos_campaign(c2, annotators=users, n_items=6), canvas_campaign(easel, annotators=users, pairs_per_task=2),
                 handwriting_campaign(easel, annotators=users)]
    for campaign in campaigns:
        for other in others:
            assignment = services.assignment_next(campaign=campaign, annotator=other)
            answer = dict(VALID_VALIDATION_ANSWERS[campaign.kind], flag={"reason": "ambiguous_brief", "note": OTHER_NOTE})
            services.label_submit(token=assignment.token, annotator=other, idempotency_key=uuid.uuid4(), answer=answer)
    return alice, campaigns, c2, easel, VALID_VALIDATION_ANSWERS


def test_validation_items_carry_no_model_agent_rater_score_or_other_label(client, validation_world):
    from leaderboard.easel.models import EaselRun

    _alice, campaigns, c2, _easel, answers = validation_world
    forbidden = [s.lower() for s in (OTHER_NOTE, "someone-else-", "simulated", "tesseract", "recognised", "pic.png",
                                     *[m.display_name for m in c2.models], *[m.provider_id for m in c2.models],
                                     *EaselRun.objects.values_list("agent_name", flat=True))]
    assert client.login(username="alice", password=PASSWORD)
    for campaign in campaigns:
        page = client.get(f"/annotate/c/{campaign.pk}/")
        assert page.status_code == 200
        assert_blind("work page", page.content, forbidden)
        for _ in range(30):
            response = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json")
            assert response.status_code == 200
            assert_blind("next", response.content, forbidden)
            payload = response.json()
            assert not FORBIDDEN_KEYS & set(json_keys(payload)), set(json_keys(payload)) & FORBIDDEN_KEYS
            assignment = payload["assignment"]
            if assignment is None:
                break
            content = assignment["content"]
            expected_keys = {CampaignKind.UOS_RATING: {"question", "prompt", "response", "image", "rubric_version", "components"},
                             CampaignKind.CANVAS_SIMILARITY: {"question", "reference", "images"},
                             CampaignKind.HANDWRITING: {"question", "image", "max_length"}}[campaign.kind]
            assert set(content) == expected_keys
            for media in [content.get("image"), content.get("reference"), *(content.get("images") or {}).values()]:
                if not media:
                    continue
                segments = urlparse(media).path.strip("/").split("/")
                assert segments[:3] == ["annotate", "media", assignment["token"]] and segments[3:] in (["A"], ["B"], ["R"])
                image = client.get(media)
                assert image.status_code == 200 and image["Content-Type"] == "image/png"
                assert_blind(media, image.content, forbidden)
            submitted = client.post(
                f"/annotate/api/assignments/{assignment['token']}/submit",
                {"idempotency_key": str(uuid.uuid4()), "answer": answers[campaign.kind], "time_on_item_ms": 900},
                content_type="application/json",
            )
            assert submitted.status_code == 201, submitted.content
            assert_blind("submit", submitted.content, forbidden)


def test_validation_media_of_someone_elses_assignment_is_404(client, validation_world):
    _alice, campaigns, *_ = validation_world
    bob = UserFactory(username="bob-annotator", role="annotator")
    services.campaign_annotators_add(campaign=campaigns[1], annotators=[bob])
    token = services.assignment_next(campaign=campaigns[1], annotator=bob).token
    assert client.login(username="alice", password=PASSWORD)
    for slot in ("A", "B", "R", "Z"):
        assert client.get(f"/annotate/media/{token}/{slot}").status_code == 404


# -- disguised names (issue 23): every variant the outside probe showed is refused at item creation ----

DISGUISED = {
    "exact": "demo-atlas",
    "case changed": "DEMO-ATLAS",
    "provider id": "acme/demo-atlas",
    "zero-width joiner": "demo\u200d-atlas",
    "zero-width space": "de\u200bmo-at\u200blas",
    "soft hyphen": "demo\u00adatlas",
    "right-to-left override": "\u202esalta-omed\u202c",
    "Cyrillic look-alikes": "dеmо-аtlаs",
    "fullwidth": "ｄｅｍｏ－ａｔｌａｓ",
    "non-breaking hyphen": "demo\u2011atlas",
    "combining accents": "de\u0301mo\u0308-a\u0300tlas",
    "space": "demo atlas",
    "underscore": "demo_atlas",
    "no separator": "demoatlas",
    "spelled out": "d.e.m.o-a.t.l.a.s",
    "en dash": "demo\u2013atlas",
    "em dash": "demo\u2014atlas",
    "camel case": "DemoAtlas",
    # disguises beyond the probe's list
    "mathematical bold": "𝐝𝐞𝐦𝐨-𝐚𝐭𝐥𝐚𝐬",
    "mathematical italic": "𝑑𝑒𝑚𝑜𝑎𝑡𝑙𝑎𝑠",
    "Greek look-alikes": "dеmο-αtlαs",
    "circled letters": "ⓓⓔⓜⓞ-ⓐⓣⓛⓐⓢ",
    "parenthesized letters": "⒟⒠⒨⒪ ⒜⒯⒧⒜⒮",
    "negative squared letters": "🅳🅴🅼🅾 🅰🆃🅻🅰🆂",
    "small capitals": "ᴅᴇᴍᴏ ᴀᴛʟᴀs",
    "letters with hooks and strokes": "ɗemø atlas",
    "newline between the parts": "demo\natlas",
    "mixed case": "DeMo AtLaS",
    "inside a URL": "https://demo-atlas.example.com/page",
    "markdown emphasis": "**Demo** _Atlas_",
    "markdown link": "[Demo Atlas](https://example.com)",
    "HTML character references": "&#100;emo-&#x61;tlas",
    "HTML tags between letters": "de<b></b>mo-at<!-- -->las",
    "URL escapes": "https://example.com/?m=%64emo%2D%61tlas",
    "variation selector": "d\ufe0femo-atlas",
    "tag characters": "demo\U000e0020atlas",
    "Hangul filler": "demo\u3164atlas",
    "combining grapheme joiner": "demo\u034fatlas",
    "override with an isolate inside": "\u202es\u2066alta\u2069-omed",
    "punctuation splitting the parts anywhere": "dem-o_atl.as",
    "line break inside a part": "demo-at\nlas",
    "hyphenated line break inside a part": "de-\nmo atlas",
    "leetspeak digits": "d3mo-at1as",
    "capital I for l": "Demo AtIas",
    "Cyrillic capital I for l": "DEMO-АТІАS",
}


@pytest.fixture
def disguise_world(small):
    from tests.annotation.factories import campaign_for
    from tests.factories import SubjectModelFactory

    SubjectModelFactory(display_name="demo-atlas", provider_id="acme/demo-atlas", family="")
    SubjectModelFactory(display_name="o3", provider_id="openai/o3", family="")
    SubjectModelFactory(display_name="GPT-4o", provider_id="openai/gpt-4o", family="")
    return small, campaign_for(CampaignKind.STRATEGY, small)


def _offer(world, core_idea: str):
    small, campaign = world
    task = small.tasks[0]
    response = ResponseFactory(task=task, subject_model=small.models[0], sample=7, core_idea=core_idea)
    return campaign, item_creation.ItemSpec(task=task, response_a=response, key="offered")


@pytest.mark.parametrize("disguise", DISGUISED.values(), ids=DISGUISED.keys())
def test_a_disguised_model_name_is_refused_at_item_creation(disguise_world, disguise):
    campaign, spec = _offer(disguise_world, f"A lantern drawn the way {disguise} would draw it.")
    error = _refused(campaign, spec)
    assert "names a model" in error.message
    assert BlindingRefusal.objects.get(campaign=campaign, item_key="offered").identity in {"demo-atlas", "acme/demo-atlas"}


@pytest.mark.parametrize("text", ["As o3, an OpenAI model, I propose a lantern.", "A lantern in the GPT\u20114o manner.",
                                  "Drawn as ｏ３ would."])
def test_a_short_model_name_is_refused_too(disguise_world, text):
    campaign, spec = _offer(disguise_world, text)
    assert "names a model" in _refused(campaign, spec).message


@pytest.mark.parametrize("text", ["As an AI developed by OpenAI, I propose a lantern.", "Made by Open\u00adAI: a lantern.",
                                  "An ACME-built lantern."])
def test_a_model_s_maker_named_by_its_provider_id_is_refused(disguise_world, text):
    # the "org" of an "org/name" provider id ("openai/o3", "acme/demo-atlas") names who made the model
    campaign, spec = _offer(disguise_world, text)
    assert "names a model" in _refused(campaign, spec).message
    assert BlindingRefusal.objects.get(campaign=campaign, item_key="offered").identity in {"openai", "acme"}


def test_only_the_org_of_an_org_name_provider_id_is_a_maker():
    from leaderboard.selectors import catalogue_identity_strings
    from tests.factories import SubjectModelFactory

    SubjectModelFactory(display_name="Flash", provider_id="models/gemini-flash", family="")
    SubjectModelFactory(display_name="Fire", provider_id="accounts/fireworks/models/fire-v1", family="")
    SubjectModelFactory(display_name="Solo", provider_id="plain-model", family="")
    strings = catalogue_identity_strings()
    assert not {"models", "accounts", "fireworks", "plain"} & {s.lower() for s in strings}


@pytest.mark.parametrize("text", [
    "Cobalt carbonate, co3, stains the glaze.", "An o30 drill bit.", "Two atlases of maps.", "To demonstrate at last",
    "An Al2O3 crystal.", "A demo of the atlas room.", "We look at las vegas lights.", "Zero-width-free prose.",
    "Smørrebrød in Łódź, a đemonstration.", "Salt &amp; pepper, a <b>demo</b> of the atlas room.",
    "An ɐtlas turned upside down.", "Democracy and atlases.",
])
def test_ordinary_words_with_the_same_letters_raise_no_alarm(disguise_world, text):
    campaign, spec = _offer(disguise_world, text)
    created, _ = item_creation.items_create(campaign=campaign, specs=[spec])
    assert len(created) == 1 and not BlindingRefusal.objects.exists()


def test_identity_mentions_returns_every_name_found_as_given():
    from annotation.blinding import identity_mentions

    names = ["demo-atlas", "o3", "Fennec"]
    assert identity_mentions("Unlike dеmо atlas and o3, nothing of fennecs.", names) == ["demo-atlas", "o3"]
    assert identity_mentions("", names) == []


def test_a_campaign_instruction_with_a_disguised_name_is_refused(disguise_world):
    from tests.annotation.factories import campaign_for

    small, _ = disguise_world
    with pytest.raises(ItemsInvalid, match="instructions: names a model"):
        campaign_for(CampaignKind.STRATEGY, small, instructions="Label like d\u200be\u200bmo_atlas would.")
