from engine.task_construction.build import build_task_set
from engine.task_construction.demo_pools import demo_pool
from engine.task_construction.grid import TABLE5_GRID, grid_with_quotas
from engine.task_construction.pools import pool_from_rows

# A small Table-5-shaped grid: one or two tasks per cell, so a build takes well under a second.
SMALL = grid_with_quotas({c.cell_id: 1 + (c.family == "combination") for c in TABLE5_GRID.cells}, name="small")


def _build(embedder, seed=0, **kwargs):
    return build_task_set([demo_pool()], grid=SMALL, seed=seed, embedder=embedder, frequency=lambda w: 3.0 + len(w) / 10,
                          **kwargs)


def test_every_cell_reaches_its_quota_from_the_demo_pool(hash_embedder):
    result = _build(hash_embedder)
    assert result.record["achieved"] == SMALL.quotas()
    assert len(result.tasks) == SMALL.total


def test_the_same_seed_gives_the_same_tasks_in_the_same_order(hash_embedder):
    one = _build(hash_embedder).task_records()
    two = _build(hash_embedder).task_records()
    assert one == two


def test_another_seed_samples_other_sources(hash_embedder):
    assert [t.external_id for t in _build(hash_embedder, seed=0).tasks] != [t.external_id for t in _build(hash_embedder, seed=1).tasks]


def test_task_ids_are_unique_and_carry_the_family(hash_embedder):
    tasks = _build(hash_embedder).tasks
    assert len({t.external_id for t in tasks}) == len(tasks)
    assert all(t.external_id.startswith(t.family[:3]) for t in tasks)


def test_abstraction_nouns_stay_inside_their_belt(hash_embedder):
    result = _build(hash_embedder)
    for task in (t for t in result.tasks if t.family == "abstraction"):
        low, high = task.diagnostics["belt"]
        assert low <= task.diagnostics["zipf"] <= high


def test_the_construction_record_names_pools_grid_seed_and_screen(hash_embedder):
    record = _build(hash_embedder, seed=3).record
    assert record["pools"][0]["sha256"] == demo_pool().sha256
    assert record["seed"] == 3 and record["screen"] == "offline" and record["grid"]["name"] == "small"
    assert "screen_prompt_version" not in record  # the offline rules read no prompt
    assert record["is_demo"]
    assert set(record["diagnostics"]) == {"abstraction", "combination", "transformation"}


def test_progress_reports_kept_tasks_against_the_total(hash_embedder):
    seen = []
    _build(hash_embedder, progress=lambda kept, total, cell: seen.append((kept, total)))
    assert seen[-1] == (SMALL.total, SMALL.total)
    assert [k for k, _ in seen] == sorted(k for k, _ in seen)


def test_rejected_candidates_keep_their_reason():
    pool = pool_from_rows("p", [(1, {"concept": "music", "type": "abstract", "subtype": "perceptual/qualia"}),
                                (2, {"concept": "brightness", "type": "abstract", "subtype": "perceptual/qualia"})])
    grid = grid_with_quotas({c.cell_id: 0 for c in TABLE5_GRID.cells if c.cell_id != "abstraction/perceptual/qualia"},
                            name="one-cell")
    grid = grid_with_quotas({"abstraction/perceptual/qualia": 2}, base=grid)
    from tests.engine.task_construction.conftest import HashEmbedder

    result = build_task_set([pool], grid=grid, embedder=HashEmbedder(), frequency=lambda w: 4.0)
    assert [t.source["concept"] for t in result.tasks] == ["brightness"]
    assert [(r.rule, r.candidate.source["concept"]) for r in result.rejected] == [("screen", "music")]
    assert result.record["achieved"]["abstraction/perceptual/qualia"] == 1  # short of its quota, and says so


def test_a_repeated_brief_is_rejected_as_a_duplicate(hash_embedder):
    class Constant:
        backend, model = "constant", "test"

        def embed(self, texts):
            import numpy as np

            return np.tile(np.array([[1.0, 0.0]], np.float32), (len(texts), 1))

    result = build_task_set([demo_pool()], grid=grid_with_quotas({c.cell_id: 0 for c in TABLE5_GRID.cells
                            if c.cell_id != "abstraction/metaphysical"} | {"abstraction/metaphysical": 2}),
                            embedder=Constant(), frequency=lambda w: 4.0)
    assert len(result.tasks) == 1
    assert result.rejected and all(r.rule == "duplicate" for r in result.rejected)
