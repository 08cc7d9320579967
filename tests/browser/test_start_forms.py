"""The Start forms of the judge runs (``/leaderboards/``) and the EASEL runs (``/easel/``), and every other form of
several fields, in Chromium at 1280 and 390 px: every field has its caption and the room its control needs, inside
its form, over no other field.

They were one flex line (``.row``) of up to ten fields: at 1280 px each control got 98 px, which cut the selects'
text ("as the la", "Budget-aligned (Ta") and wrapped the budget's caption on four lines. So did the other forms
with the names a real catalogue has (provider model ids, two models in a pair, a whole run): the TIG build's
extractor, a task's drill-down pair and the compare pages' runs. Measured with bounding boxes: a select's need is
the width Chromium gives the same select sized to its widest option."""

from __future__ import annotations

import json
import uuid

import pytest

from annotation import services as annotation_services
from leaderboard.c2.services import runs as c2_runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.easel import services as easel_services
from leaderboard.ekphrasis import judge_runs, tig
from leaderboard.models import SubjectModel
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.browser.conftest import log_in
from tests.factories import UserFactory
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {1280: 900, 390: 844}  # viewport width → height
FORMS = {"/leaderboards/": "form[action='/runs/new/']", "/easel/": "form[action='/easel/runs/new/']"}
#: A caption may wrap once (the judge form's "Budget (judge calls per task and dimension)"), not more.
CAPTION_LINES = 2

#: Names as a real catalogue has them (the demo's are a few letters): subject models' and a judge's provider ids.
SUBJECT_NAMES = ["claude-3-5-sonnet-20241022", "gpt-4o-2024-08-06", "gemini-1.5-pro-002", "llama-3.1-405b-instruct"]
JUDGE_NAME = "meta-llama/Llama-3.1-405B-Instruct-Turbo"

#: What is wrong with the form's fields, in words ([] when nothing is): a field (a label, or the box holding
#: the button) outside the form or over another, a control outside its field or narrower than its content
#: (unless it has the whole width of the form's card: at 390 px a run's name is wider than the screen, nothing
#: more can be given), an input or select without a caption, a caption on more than CAPTION_LINES lines.
FIELD_FAULTS = """([form, captionLines]) => {
  const box = (el) => el.getBoundingClientRect();
  const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
                            && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const needed = (control) => {  // the width the control's content takes when it is not squeezed
    if (control.tagName !== 'SELECT') return control.scrollWidth;
    const free = control.cloneNode(true);
    free.style.width = 'auto'; free.style.minWidth = '0'; free.style.maxWidth = 'none'; free.style.position = 'absolute';
    document.body.appendChild(free);
    const width = free.getBoundingClientRect().width;
    free.remove();
    return width;
  };
  const faults = [];
  const formBox = box(form);
  const card = form.closest('.card') || form.parentElement;  // the room the page has for the form
  const room = card.clientWidth - parseFloat(getComputedStyle(card).paddingLeft)
               - parseFloat(getComputedStyle(card).paddingRight);
  const fields = [...form.children].filter((el) => el.tagName !== 'INPUT' || el.type !== 'hidden');
  // A control straight in the form (no label around it) is a field of its own, with no caption.
  const controls = (field) => (field.matches('input, select, button') ? [field]
                               : [...field.querySelectorAll('input, select, button')]);
  const name = (field) => (field.matches('[name]') ? field : field.querySelector('[name]') || {}).name
                          || field.textContent.trim().slice(0, 20);
  fields.forEach((field, k) => {
    if (!inside(box(field), formBox)) faults.push(`${name(field)}: outside the form`);
    fields.slice(k + 1).forEach((other) => {
      if (overlap(box(field), box(other))) faults.push(`${name(field)}: over ${name(other)}`);
    });
    for (const control of controls(field)) {
      if (!inside(box(control), box(field))) faults.push(`${name(field)}: control outside its field`);
      if (needed(control) > box(control).width + 1 && box(control).width < room - 1) {
        faults.push(`${name(field)}: ${Math.round(box(control).width)} px for ${Math.round(needed(control))} px of content`);
      }
    }
    if (controls(field).every((control) => control.tagName === 'BUTTON')) return;  // the box holding the button
    const caption = [...field.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    if (!caption.length) { faults.push(`${name(field)}: no caption`); return; }
    const range = document.createRange();
    range.selectNodeContents(caption[0]);
    const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    if (lines > captionLines) faults.push(`${name(field)}: caption on ${lines} lines`);
  });
  return faults;
}"""


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_every_start_field_has_its_caption_and_room_inside_its_form(live_server, browser, width):
    population(n_models=3, n_tasks=2, name="ekphrasis-demo")
    easel_services.easel_suite_create(seed=0, per_category={"programmatic": 1, "spatial_geometry": 0,
                                                            "abstract_cartoon": 0, "natural": 0},
                                      name="easel-demo", version="1", is_demo=True)
    UserFactory(username="rita", role="researcher")
    page = browser.new_page(viewport={"width": width, "height": WIDTHS[width]})
    log_in(page, live_server.url, "rita")
    faults = {}
    for url, selector in FORMS.items():
        page.goto(f"{live_server.url}{url}")
        form = page.locator(selector)
        assert form.locator("select, input:not([type=hidden])").count() >= 4, url
        faults[url] = form.evaluate(f"(form) => ({FIELD_FAULTS})([form, {CAPTION_LINES}])")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width, url
    assert faults == {url: [] for url in FORMS}


def _adjudication_waiting(researcher):
    """A text-pairwise campaign whose item three annotators split A, B and tie, sent to adjudication."""
    users = annotators(3, prefix="split")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=1)
    for user, choice in zip(users, ["A", "B", "tie"], strict=True):
        assignment = annotation_services.assignment_next(campaign=campaign, annotator=user)
        shown = choice if not assignment.swapped or choice == "tie" else {"A": "B", "B": "A"}[choice]
        annotation_services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                                         answer={"choice": shown})
    annotation_services.adjudication_request(item=campaign.items.get(), researcher=researcher)
    return campaign


@pytest.fixture
def several_field_forms(settings, tmp_path) -> list[tuple[str, str]]:
    """Every other form of several fields, on a catalogue with real names: (page, the form's selector)."""
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"
    task_set, models = population(n_models=4, n_tasks=2, name="forms")
    for model, name in zip(models, SUBJECT_NAMES, strict=True):
        SubjectModel.objects.filter(pk=model.pk).update(display_name=name)
    SubjectModel.objects.create(display_name=JUDGE_NAME, role=SubjectModel.Role.JUDGE,
                                base_url="https://api.together.xyz/v1")
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=12, dimensions="UEN"))
    tig.tig_build_execute(build_id=tig.tig_build_create(task_set=task_set).pk)  # the viewer offers finished builds
    task = task_set.tasks.first()
    trivia = {"Data": [{"Question": f"Question {k}?", "QuestionId": f"q{k}",
                        "Answer": {"Value": "yes", "NormalizedAliases": ["yes", "aye"]}} for k in range(3)]}
    c2_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                task_set_name="triviaqa-writingprompts", version="1")
    for template in ("standard", "creative"):
        c2_runs.c2_run_execute_inline(run=c2_runs.c2_run_create(
            task_set=c2_set, model_names=["simulated-one", "simulated-two"], n_samples=2, template=template,
            rater_name="simulated", rerate_share=0.5))
    suite, _ = easel_services.easel_suite_create(seed=0, per_category={"programmatic": 1, "spatial_geometry": 0,
                                                                       "abstract_cartoon": 0, "natural": 0},
                                                 name="easel-demo", version="1", is_demo=True)
    for seed in (0, 1):
        easel_services.easel_run_execute_inline(
            run=easel_services.easel_run_create(task_set=suite, agent="simulated", seed=seed))
    campaign = _adjudication_waiting(UserFactory(username="rita", role="researcher"))
    return [
        (f"/task-sets/{task_set.pk}/", "form:has(select[name=extractor])"),  # the TIG build
        (f"/task-sets/{task_set.pk}/tig/{task.pk}/", "form:has(select[name=pair])"),  # the viewer's build and pair
        (f"/leaderboards/{snapshot.pk}/tasks/{task.pk}/", "form:has(select[name=judge])"),  # the drill-down's filters
        (f"/annotate/campaigns/{campaign.pk}/", "#novelty-ablation-start"),
        (f"/annotate/campaigns/{campaign.pk}/", "form[action$='/adjudication/resolve']"),  # in a table cell
        ("/c2/compare/", "#compare-form"),
        ("/easel/compare/", "#compare-form"),
    ]


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_every_field_of_the_other_several_field_forms_has_its_caption_and_room(
    live_server, browser, several_field_forms, width
):
    page = browser.new_page(viewport={"width": width, "height": WIDTHS[width]})
    log_in(page, live_server.url, "rita")
    faults = {}
    for url, selector in several_field_forms:
        page.goto(f"{live_server.url}{url}")
        form = page.locator(selector)
        assert form.locator("select, input:not([type=hidden])").count() >= 2, selector
        faults[f"{url} {selector}"] = form.evaluate(f"(form) => ({FIELD_FAULTS})([form, {CAPTION_LINES}])")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width, url
    assert faults == {f"{url} {selector}": [] for url, selector in several_field_forms}
