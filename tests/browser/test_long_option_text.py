"""A select whose option text is wider than a 390 px screen (a run's, suite's or task set's name, a judge's provider
id, at the 100 characters the catalogue holds, with no space to break at): it stays inside its card and the page
does not scroll sideways, its chosen text ends in an ellipsis where it is cut, and the whole text is its title
(shown on hover and read by screen readers) whichever option is chosen. Before, the selects of the forms outside
the ``form.fields`` grid (the EASEL board's suite, a drill-down's filters in a narrow card) took the option's
whole width, and a cut text ended mid-word with no way to read the rest but opening the list."""

from __future__ import annotations

import pytest

from leaderboard.easel import services as easel_services
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import Comparison
from leaderboard.models import SubjectModel
from tests.browser.conftest import log_in
from tests.factories import UserFactory
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 390, 844
#: As long as the catalogue's name columns hold (100 characters), and one word: nothing to wrap at.
LONG_NAME = "meta-llama/Llama-3.1-405B-Instruct-Turbo-with-a-provider-suffix-that-runs-on-and-on-2025-01-01"[:100]
LONG_JUDGE = ("together/" + "x" * 100)[:100]

#: Each select's faults in words ([] when none): outside its card, or its chosen text cut with no title holding it.
SELECT_FAULTS = """() => {
  const faults = [];
  for (const select of document.querySelectorAll('main select')) {
    if (!select.getClientRects().length) continue;  // not shown
    const card = select.closest('.card, main');
    const box = select.getBoundingClientRect(), room = card.getBoundingClientRect();
    const name = select.name || select.id;
    if (box.left < room.left - 1 || box.right > room.right + 1) {
      faults.push(`${name}: ${Math.round(box.left)}–${Math.round(box.right)} px in a card of ${Math.round(room.left)}–${Math.round(room.right)} px`);
    }
    const chosen = select.selectedOptions[0];
    if (chosen && select.title !== chosen.textContent.trim()) {
      faults.push(`${name}: title ${JSON.stringify(select.title)} for ${JSON.stringify(chosen.textContent.trim().slice(0, 30))}`);
    }
    if (getComputedStyle(select).textOverflow !== 'ellipsis') faults.push(`${name}: no ellipsis where its text is cut`);
  }
  return faults;
}"""


#: The page's width when it scrolls sideways, and the outermost elements that reach past the screen ([] when none).
WIDER_THAN_THE_SCREEN = """() => {
  if (document.documentElement.scrollWidth <= innerWidth) return [];
  const past = (el) => el.getBoundingClientRect().right > innerWidth + 1;
  const clipped = (el) => { for (let up = el.parentElement; up; up = up.parentElement) {
    if (getComputedStyle(up).overflowX !== 'visible') return true; } return false; };
  const outermost = [...document.querySelectorAll('body *')].filter((el) => past(el) && !past(el.parentElement)
                                                                   && !clipped(el));
  return [document.documentElement.scrollWidth, ...outermost.slice(0, 5).map((el) => el.tagName.toLowerCase()
    + (el.className ? '.' + el.className : '') + ' ' + el.textContent.trim().slice(0, 30))];
}"""


@pytest.fixture
def long_names(settings, tmp_path) -> list[str]:
    """A catalogue whose names fill their columns; the pages whose selects offer them."""
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"
    task_set, models = population(n_models=3, n_tasks=1, name=LONG_NAME)
    SubjectModel.objects.create(display_name=LONG_JUDGE, role=SubjectModel.Role.JUDGE, base_url="https://api.together.xyz/v1")
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6))
    Comparison.objects.filter(run=snapshot.run).update(judge_name=LONG_JUDGE)  # as a real judge's run has it
    suite, _ = easel_services.easel_suite_create(seed=0, per_category={"programmatic": 1, "spatial_geometry": 0,
                                                                       "abstract_cartoon": 0, "natural": 0},
                                                 name=LONG_NAME, version="2")
    for seed in (0, 1):
        easel_services.easel_run_execute_inline(
            run=easel_services.easel_run_create(task_set=suite, agent="simulated", seed=seed))
    UserFactory(username="rita", role="researcher")
    task = task_set.tasks.get()
    return ["/leaderboards/", f"/leaderboards/{snapshot.pk}/tasks/{task.pk}/", "/easel/", "/easel/compare/"]


def test_a_select_of_long_names_fits_its_card_and_says_its_whole_choice_at_390_px(live_server, browser, long_names):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    log_in(page, live_server.url, "rita")
    faults, widths = {}, {}
    for url in long_names:
        page.goto(f"{live_server.url}{url}")
        assert LONG_NAME[:40] in page.content() or LONG_JUDGE[:40] in page.content(), url
        faults[url] = page.evaluate(SELECT_FAULTS)
        widths[url] = page.evaluate(WIDER_THAN_THE_SCREEN)
    assert faults == {url: [] for url in long_names}
    assert widths == {url: [] for url in long_names}


def test_the_title_follows_the_choice(live_server, browser, long_names):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}{long_names[1]}")
    judge = page.locator("select[name=judge]")
    judge.select_option(LONG_JUDGE)
    assert judge.get_attribute("title") == LONG_JUDGE
    judge.select_option("")
    assert judge.get_attribute("title") == "all"
