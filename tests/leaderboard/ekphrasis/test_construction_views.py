"""The Build-a-task-set pages: admins only, live status, diagnostics and rejected candidates."""

import pytest

from engine.task_construction.grid import TABLE5_GRID, grid_with_quotas
from leaderboard.ekphrasis import task_construction as construction
from leaderboard.ekphrasis.models import TaskSetBuild
from tests.engine.task_construction.conftest import HashEmbedder
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_the_build_page_is_for_admins(client, rita, adam):
    assert login(client, rita).get("/task-sets/build/").status_code == 403
    response = login(client, adam).get("/task-sets/build/")
    assert response.status_code == 200
    assert b"ekphrasis-demo-pools" in response.content and b'value="20"' in response.content  # Table 5 prefilled


def test_posting_the_form_builds_a_frozen_task_set(client, adam, django_capture_on_commit_callbacks):
    pool = construction.demo_source_pool_ensure()
    data = {"name": "from-page", "version": "1", "pools": [pool.pk], "seed": "0", "screen": "offline"}
    data |= {f"quota_{k}": "0" for k in range(len(TABLE5_GRID.cells))}
    data["quota_0"] = "2"  # two emotional/psychological Abstraction tasks
    with django_capture_on_commit_callbacks(execute=True):
        response = login(client, adam).post("/task-sets/build/", data)
    build = TaskSetBuild.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/task-sets/builds/{build.pk}/"
    build.refresh_from_db()
    assert build.status == "done" and build.task_set.tasks.count() == 2 and build.task_set.frozen


def test_a_form_with_no_pool_is_refused_without_a_build(client, adam):
    data = {"name": "x", "version": "1", "seed": "0", "screen": "offline"}
    data |= {f"quota_{k}": "1" for k in range(len(TABLE5_GRID.cells))}
    response = login(client, adam).post("/task-sets/build/", data)
    assert response.status_code == 200 and not TaskSetBuild.objects.exists()


@pytest.mark.parametrize("pool_id", [str(2**63), str(10**30)])
def test_a_pool_id_past_every_id_column_is_a_form_error_not_a_500(client, adam, pool_id):
    data = {"name": "x", "version": "1", "pools": [pool_id], "seed": "0", "screen": "offline"}
    data |= {f"quota_{k}": "1" for k in range(len(TABLE5_GRID.cells))}
    response = login(client, adam).post("/task-sets/build/", data)
    assert response.status_code == 200 and not TaskSetBuild.objects.exists()
    assert f"{pool_id} is not one of the available choices" in response.content.decode()


def _finished_build():
    grid = grid_with_quotas({c.cell_id: 1 for c in TABLE5_GRID.cells}, name="small")
    build = construction.task_set_build_create(name="b", version="1", pools=[construction.demo_source_pool_ensure()],
                                               grid=grid)
    return construction.task_set_build_execute(build_id=build.pk, embedder=HashEmbedder())


def test_the_detail_page_shows_figures_6_to_8_and_the_quotas(client, rita):
    build = _finished_build()
    page = login(client, rita).get(f"/task-sets/builds/{build.pk}/").content.decode()
    for title in ("Abstraction · metaphysical", "Combination: selected pairs by type and distance band",
                  "Transformation: selected tasks by subtype and bucket", "Achieved counts against the grid"):
        assert title in page
    assert "frequency belt" in page and "<script>" not in page.replace('<script src=', '')


def test_the_detail_page_names_a_cell_the_pool_could_not_fill(client, rita):
    """Algorithm 1 (App. A) adds instances until each cell's quota is met; the demo pool holds far fewer than 500
    metaphysical nouns, so that cell stops short and the page says so in words, not only as a bar."""
    grid = grid_with_quotas({c.cell_id: 0 for c in TABLE5_GRID.cells} | {"abstraction/metaphysical": 500}, name="big")
    build = construction.task_set_build_create(name="short", version="1", pools=[construction.demo_source_pool_ensure()],
                                               grid=grid)
    build = construction.task_set_build_execute(build_id=build.pk, embedder=HashEmbedder())
    kept = build.task_set.tasks.count()
    assert 0 < kept < 500
    page = login(client, rita).get(f"/task-sets/builds/{build.pk}/").content.decode()
    assert 'id="short-cells"' in page and f"abstraction/metaphysical {kept}/500" in page
    full = login(client, rita).get(f"/task-sets/builds/{_finished_build().pk}/").content.decode()
    assert 'id="short-cells"' not in full


def test_the_status_json_reports_progress(client, rita):
    build = _finished_build()
    status = login(client, rita).get(f"/task-sets/builds/{build.pk}/status.json").json()
    assert status["status"] == "done" and status["tasks_kept"] == status["tasks_total"] == len(TABLE5_GRID.cells)


def test_an_unknown_build_is_a_404(client, rita):
    assert login(client, rita).get("/task-sets/builds/999/").status_code == 404
