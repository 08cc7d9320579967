"""EASEL services: suites stored exactly, runs planned per task."""

from __future__ import annotations

import pytest

from engine.easel import trajectory
from leaderboard.easel import services
from leaderboard.easel.models import NATIVE_BUDGET, EaselImage, EaselRun
from leaderboard.runs.errors import RunConfigurationError
from tests.leaderboard.easel.conftest import SMALL

pytestmark = pytest.mark.django_db


def test_a_suite_is_a_frozen_easel_task_set_with_one_image_per_task(suite):
    assert suite.frozen and suite.benchmark.kind == "easel"
    assert suite.tasks.count() == 2 + 5
    assert EaselImage.objects.filter(task__task_set=suite).count() == 7


def test_a_stored_task_rebuilds_the_engine_task_exactly(suite):
    from engine.easel.references import generate_suite

    original = generate_suite(0, per_category=SMALL)[0]
    rebuilt = services.engine_task_of(suite.tasks.get(external_id=original.id))
    assert rebuilt.budget == original.budget and rebuilt.size == original.size
    assert (rebuilt.reference == original.reference).all()


def test_creating_the_same_suite_again_writes_nothing_and_returns_it(suite):
    again, created = services.easel_suite_create(seed=0, per_category=SMALL, name="easel-test")
    assert not created and again.pk == suite.pk


def test_a_suite_name_taken_by_other_references_is_refused(suite):
    with pytest.raises(services.SuiteConflict):
        services.easel_suite_create(seed=1, per_category=SMALL, name="easel-test", version=suite.version)


def test_a_simulated_run_plans_one_episode_per_task_and_is_labelled(suite):
    run = services.easel_run_create(task_set=suite, agent="simulated", skill=0.7)
    assert run.is_simulated and run.agent_kind == EaselRun.AgentKind.SIMULATED
    assert run.episodes.count() == suite.tasks.count() == run.episodes_total
    assert run.steps_planned == sum(t.constraints["budget"] for t in suite.tasks.all())


def test_painter_and_anchor_runs_plan_reconstruction_episodes_only(suite):
    for agent in ("painter", "mean_colour_fill"):
        run = services.easel_run_create(task_set=suite, agent=agent)
        assert set(run.episodes.values_list("kind", flat=True)) == {"reconstruction"}


def test_a_native_run_gives_reconstruction_episodes_the_long_budget(suite):
    run = services.easel_run_create(task_set=suite, agent="painter", budget_setting="native")
    assert set(run.episodes.values_list("budget", flat=True)) == {NATIVE_BUDGET}


def test_an_unknown_agent_is_a_configuration_error_naming_it(suite):
    with pytest.raises(RunConfigurationError, match="no agent 'gpt-imaginary'"):
        services.easel_run_create(task_set=suite, agent="gpt-imaginary")
    assert not EaselRun.objects.exists()


def test_skill_is_refused_for_an_agent_that_is_not_simulated(suite):
    with pytest.raises(RunConfigurationError, match="simulated agent only"):
        services.easel_run_create(task_set=suite, agent="painter", skill=0.5)


def test_a_progress_curve_starts_at_s0_and_ends_at_the_final_s():
    curve = trajectory.progress_curve([0.5, 0.6, 0.7, 0.65], 0.4, points=5)
    assert curve[0] == 0.4 and curve[-1] == 0.65 and len(curve) == 5
    assert curve[2] == pytest.approx(0.6)  # fraction 0.5 = step 2 of 4


# ---------------------------------------------------------------- stepping and resuming


class SeededStrokes:
    """A deterministic policy of the engine's contract: each action is drawn from (task, step) alone, and one
    step in seven is unparseable text."""

    name = "seeded-strokes"
    is_simulated = True

    def act(self, observation) -> str:
        import json

        import numpy as np

        from engine.seeding import derived_seed

        rng = np.random.default_rng(derived_seed("seeded-strokes", observation.task.id, observation.step))
        if observation.step % 7 == 3:
            return "I would paint a circle here."
        keys = ("xs", "ys", "xc", "yc", "xe", "ye")
        if observation.task.kind == "semantic":
            return json.dumps({"action": "brush_stroke", **{k: round(float(rng.uniform()), 3) for k in keys}})
        keys += ("rs", "alpha_s", "re", "alpha_e", "cr", "cg", "cb")
        return json.dumps({"action": "brush_stroke", **{k: round(float(rng.uniform(0.05, 0.95)), 3) for k in keys}})


class Killed(Exception):
    pass


def kill_after(steps: int):
    seen = [0]

    def progress(k: int) -> None:
        seen[0] += k
        if seen[0] >= steps:
            raise Killed(f"worker killed after {seen[0]} stored steps")

    return progress


def step_fingerprint(run):
    from leaderboard.easel.models import EaselStep

    return list(EaselStep.objects.filter(episode__run=run).order_by("episode__position", "index").values_list(
        "episode__task__external_id", "index", "raw", "valid", "kind", "s", "canvas_png"))


@pytest.fixture
def seeded_policy(monkeypatch):
    from leaderboard.easel import agents

    monkeypatch.setattr(agents, "policy_for", lambda run: (SeededStrokes(), None))


@pytest.fixture
def reconstruction_only(suite, monkeypatch):
    suite.tasks.filter(subtype="semantic").delete()
    # writes every 8 steps, so that a kill after 16 stored steps falls in the middle of the first 32-step episode
    monkeypatch.setattr(services, "OFFLINE_FLUSH_STEPS", 8)
    return suite


MID_EPISODE = 16


def test_a_run_stores_every_step_with_s_and_a_canvas_and_summarises_each_episode(reconstruction_only, seeded_policy):
    run = services.easel_run_create(task_set=reconstruction_only, agent="simulated")
    run = services.easel_run_execute_inline(run=run)
    assert run.status == EaselRun.Status.DONE and run.steps_done == run.steps_planned
    for episode in run.episodes.all():
        steps = list(episode.steps.order_by("index"))
        assert [s.index for s in steps] == list(range(1, episode.budget + 1))
        assert all(s.canvas_png for s in steps)
        invalid = [s for s in steps if not s.valid]
        assert invalid and all(s.kind == "invalid" and s.action is None and s.raw for s in invalid)
        assert episode.final_s == steps[-1].s and episode.best == max(s.s for s in steps)
        assert episode.invalid_rate == pytest.approx(len(invalid) / len(steps))
        assert len(episode.progress_curve) == trajectory.PROGRESS_GRID_POINTS


def test_a_killed_run_resumes_at_the_next_unstored_step_to_the_identical_episode(reconstruction_only, seeded_policy):
    uninterrupted = services.easel_run_execute_inline(
        run=services.easel_run_create(task_set=reconstruction_only, agent="simulated"))
    killed = services.easel_run_create(task_set=reconstruction_only, agent="simulated")
    with pytest.raises(Killed):
        services.easel_run_execute_inline(run=killed, progress=kill_after(MID_EPISODE))
    killed.refresh_from_db()
    assert killed.status == EaselRun.Status.RUNNING and killed.steps_done == MID_EPISODE
    assert killed.episodes.order_by("position").first().steps.count() == MID_EPISODE  # killed mid-episode
    resumed = services.easel_run_execute_inline(run=killed)
    assert resumed.status == EaselRun.Status.DONE and resumed.steps_done == resumed.steps_planned
    assert [row[1:] for row in step_fingerprint(resumed)] == [row[1:] for row in step_fingerprint(uninterrupted)]


def test_a_second_worker_on_a_finished_episode_changes_nothing(reconstruction_only, seeded_policy):
    run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=reconstruction_only, agent="simulated"))
    before = step_fingerprint(run)
    episode = run.episodes.first()
    assert services.easel_episode_execute(run_id=run.pk, episode_id=episode.pk) is False
    assert step_fingerprint(run) == before


@pytest.mark.parametrize("agent, config", [("simulated", {"simulated": {"drift": 0.3}}),
                                           ("painter", {"painter": {"candidates": 4, "refinements": 2}})])
def test_a_killed_engine_agent_run_resumes_to_the_identical_episode(reconstruction_only, agent, config):
    uninterrupted = services.easel_run_execute_inline(
        run=services.easel_run_create(task_set=reconstruction_only, agent=agent, seed=3, config=config))
    killed = services.easel_run_create(task_set=reconstruction_only, agent=agent, seed=3, config=config)
    with pytest.raises(Killed):
        services.easel_run_execute_inline(run=killed, progress=kill_after(MID_EPISODE))
    resumed = services.easel_run_execute_inline(run=killed)
    assert resumed.steps_done == resumed.steps_planned
    assert [row[1:] for row in step_fingerprint(resumed)] == [row[1:] for row in step_fingerprint(uninterrupted)]


def test_a_native_episode_stores_every_fifth_canvas_and_the_final_one(reconstruction_only):
    from leaderboard.easel.models import LONG_EPISODE_CANVAS_STRIDE

    reconstruction_only.tasks.exclude(external_id="programmatic-000").delete()
    run = services.easel_run_execute_inline(run=services.easel_run_create(
        task_set=reconstruction_only, agent="simulated", budget_setting="native"))
    episode = run.episodes.get()
    stored = list(episode.steps.exclude(canvas_png=None).values_list("index", flat=True))
    assert episode.steps.count() == NATIVE_BUDGET and episode.steps.filter(s__isnull=True).count() == 0
    assert stored == list(range(LONG_EPISODE_CANVAS_STRIDE, NATIVE_BUDGET + 1, LONG_EPISODE_CANVAS_STRIDE))
    assert bytes(episode.final_canvas_png).startswith(b"\x89PNG")


@pytest.mark.parametrize("skill", [3.0, -0.1])
def test_a_skill_outside_the_engines_range_is_refused_before_the_run_row(suite, skill):
    with pytest.raises(RunConfigurationError, match=r"skill must lie in \[0, 1\]"):
        services.easel_run_create(task_set=suite, agent="simulated", skill=skill)
    assert not EaselRun.objects.exists()


def test_a_suite_with_no_reference_is_refused_and_nothing_is_stored():
    from leaderboard.models import TaskSet

    with pytest.raises(services.SuiteConflict, match="at least one reference"):
        services.easel_suite_create(seed=0, per_category={"programmatic": 0}, name="nothing")
    assert not TaskSet.objects.filter(name="nothing").exists()


class UnstorableNumbers:
    """A model that answers with numbers JSON has no place for: NaN, Infinity, 1e400 (json reads inf)."""

    name = "unstorable-numbers"
    is_simulated = True
    REPLIES = (
        '{"action": "brush_stroke", "xs": NaN, "ys": 0.5, "xc": 0.5, "yc": 0.5, "xe": 0.5, "ye": 0.5, "rs": 0.5, '
        '"alpha_s": 1, "re": 0.5, "alpha_e": 1, "cr": 0, "cg": 0, "cb": 0}',
        '{"action": "brush_stroke", "xs": 0.1, "ys": 0.1, "xc": 0.5, "yc": 0.5, "xe": 0.9, "ye": 0.9, "rs": 0.2, '
        '"alpha_s": 1, "re": 0.2, "alpha_e": 1, "cr": 0, "cg": 0, "cb": Infinity}',
        '{"action": "brush_stroke", "xs": 1e400, "ys": 0.5, "xc": 0.5, "yc": 0.5, "xe": 0.5, "ye": 0.5}',
        '{"action": "undo", "why": -Infinity}',
    )

    def act(self, observation) -> str:
        return self.REPLIES[observation.step % len(self.REPLIES)]


def test_a_reply_with_nan_or_infinity_is_stored_as_an_invalid_step_and_the_run_finishes(suite, monkeypatch, rita):
    # The parsed action, NaN and all, went into the step's JSON column: SQLite's JSON_VALID check refused the
    # row, the IntegrityError was reported as "steps already stored" (another worker), and the run failed;
    # its cached replies failed every resume the same way.
    from leaderboard.easel import agents
    from leaderboard.easel.models import EaselStep
    from tests.leaderboard.easel.test_api import token_client

    monkeypatch.setattr(agents, "policy_for", lambda run: (UnstorableNumbers(), None))
    run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent="simulated"))
    assert run.status == EaselRun.Status.DONE, run.error
    steps = EaselStep.objects.filter(episode__run=run)
    assert steps.count() == run.steps_planned
    assert set(steps.values_list("kind", flat=True)) == {"invalid"} and not steps.filter(valid=True).exists()
    assert not steps.exclude(action=None).exists()  # "empty for an invalid one" (the column's help text)
    assert all(raw in UnstorableNumbers.REPLIES for raw in steps.values_list("raw", flat=True))
    episode = run.episodes.filter(kind="reconstruction").first()
    response = token_client(rita).get(f"/api/v1/easel/episodes/{episode.pk}/steps/")
    assert response.status_code == 200 and all(s["action"] is None for s in response.json()["results"])


def test_a_run_on_easel_tasks_without_a_reference_image_is_refused_naming_the_task(suite):
    # An EASEL task set holding a task the engine cannot rebuild (no image, no record: made by another path)
    # gave a 500 on "start run" (KeyError 'budget') or a run failing on its first episode.
    from leaderboard.models import Task

    broken = Task.objects.create(task_set=suite, external_id="by-hand", family="natural", subtype="reconstruction",
                                 brief="Paint it.", position=99)
    with pytest.raises(RunConfigurationError, match="by-hand.*no reference image"):
        services.easel_run_create(task_set=suite, agent="simulated")
    broken.constraints = {"budget": 5, "size": 64}
    broken.save()
    with pytest.raises(RunConfigurationError, match="by-hand.*no reference image"):
        services.easel_run_create(task_set=suite, agent="simulated")
    assert not EaselRun.objects.exists()


# ---------------------------------------------------------------- imported images, as Pillow decodes them


def _encoded(image, fmt="PNG", **options) -> bytes:
    import io

    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def _imported_reference(name, data):
    (task,) = services.imported_tasks([(name, data)])
    return task.reference


def test_a_16_bit_grey_png_keeps_its_greys():
    # Pillow opens it as I;16, and convert("RGB") clips at 255: mid-grey 32768 was imported as white
    import numpy as np
    from PIL import Image

    data = _encoded(Image.fromarray(np.full((64, 64), 32768, np.uint16)))
    assert Image.open(__import__("io").BytesIO(data)).mode.startswith("I;16")
    assert np.allclose(_imported_reference("grey16.png", data), 128 / 255, atol=0.5 / 255)


def test_a_transparent_png_background_is_white():
    import numpy as np
    from PIL import Image

    image = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    image.paste((200, 40, 10, 255), (16, 16, 48, 48))
    reference = _imported_reference("logo.png", _encoded(image))
    assert np.all(reference[0, 0] == 1.0) and np.allclose(reference[64, 64], np.array([200, 40, 10]) / 255)
    palette = Image.new("P", (64, 64), 0)  # index 0 (black) transparent, index 1 red
    palette.putpalette([0, 0, 0, 200, 40, 10] + [0] * 762)
    palette.paste(1, (16, 16, 48, 48))
    reference = _imported_reference("logo.gif", _encoded(palette, "GIF", transparency=0))
    assert np.all(reference[0, 0] == 1.0) and np.allclose(reference[64, 64], np.array([200, 40, 10]) / 255)


def test_an_exif_rotated_photo_is_imported_the_way_up_it_is_shown():
    # A camera stores the sensor's pixels and an EXIF orientation; Pillow does not apply it, so a portrait
    # photo was imported lying on its side.
    from PIL import Image

    stored = Image.new("RGB", (80, 40), (220, 20, 20))
    stored.paste((20, 20, 220), (40, 0, 80, 40))  # red left half, blue right half, as stored
    exif = stored.getexif()
    exif[0x0112] = 6  # shown rotated 90° clockwise: red on top, blue at the bottom
    reference = _imported_reference("portrait.jpg", _encoded(stored, "JPEG", exif=exif.tobytes(), quality=95))
    top, bottom = reference[8, 64], reference[120, 64]
    assert top[0] > 0.7 > top[2] and bottom[2] > 0.7 > bottom[0]


@pytest.mark.parametrize("mode,values", [("F", 0.5), ("I", 70000)], ids=["32-bit float", "32-bit integer"])
def test_an_image_without_a_known_colour_scale_is_refused_naming_the_file(mode, values):
    # convert("RGB") clipped them: a float image in [0, 1] became black, 32-bit integers white
    import numpy as np
    from PIL import Image

    dtype = np.float32 if mode == "F" else np.int32
    data = _encoded(Image.fromarray(np.full((32, 32), values, dtype)), "TIFF")
    with pytest.raises(services.ImageImportError, match=f"scan.tif.*{mode}"):
        services.imported_tasks([("scan.tif", data)])


class OneStrokeTwoSpellings:
    """Paints one stroke every step, its integers written as 1 and as 1.0 by turns: one action repeated."""

    name = "one-stroke"
    is_simulated = True

    def act(self, observation) -> str:
        import json

        one = 1 if observation.step % 2 else 1.0
        return json.dumps({"action": "brush_stroke", "xs": 0.2, "ys": 0.2, "xc": 0.5, "yc": 0.5, "xe": 0.8, "ye": 0.8,
                           "rs": 0.3, "alpha_s": one, "re": 0.3, "alpha_e": one, "cr": 0.1, "cg": 0.2, "cb": 0.3})


def test_a_stroke_repeated_in_another_spelling_counts_as_a_repeat_by_the_method_the_run_recorded(
        reconstruction_only, monkeypatch):
    from leaderboard.easel import agents

    monkeypatch.setattr(agents, "policy_for", lambda run: (OneStrokeTwoSpellings(), None))
    run = services.easel_run_create(task_set=reconstruction_only, agent="simulated",
                                    config={"repeat_rate_method_version": 1})  # a caller cannot choose it
    assert run.config["repeat_rate_method_version"] == trajectory.REPEAT_RATE_METHOD_VERSION
    old = services.easel_run_create(task_set=reconstruction_only, agent="simulated")
    del old.config["repeat_rate_method_version"]  # a run made before runs recorded it
    EaselRun.objects.filter(pk=old.pk).update(config=old.config)
    for made in (run, old):
        services.easel_run_execute_inline(run=made)
    assert {e.repeat_rate for e in run.episodes.all()} == {1.0}
    assert {e.repeat_rate for e in old.episodes.all()} == {0.0}  # as it was computed when the run was made


@pytest.mark.parametrize("recorded", [99, "2", [2], True])
def test_a_repeat_rate_method_this_code_does_not_know_fails_the_run_as_a_configuration_error_naming_it(
        reconstruction_only, recorded):
    # resuming cannot teach the code the method, so the run is not retried nor offered a resume; a string "2"
    # is not method 2 (the bundle's verifier does not read it so either), and a JSON list is no TypeError
    from leaderboard.runs.lifecycle import run_may_resume, run_pending_units
    from leaderboard.runs.tasks import run_unit

    run = services.easel_run_create(task_set=reconstruction_only, agent="simulated")
    EaselRun.objects.filter(pk=run.pk).update(config={**run.config, "repeat_rate_method_version": recorded})
    episode_id = run_pending_units(services.EASEL_RUN_JOB, run.pk)[0]
    run_unit(services.EASEL_RUN_JOB.name, run.pk, episode_id)
    run.refresh_from_db()
    assert run.status == EaselRun.Status.FAILED and not run.resumable and not run_may_resume(run)
    assert f"repeat_rate_method_version {recorded!r}, which this code does not know (it knows 1, 2)" in run.error
    assert run.steps_done == 0  # refused before the agent was asked for a step


@pytest.mark.parametrize("recogniser", [None, False, ""])
def test_a_run_read_by_tesseract_records_and_compares_no_recogniser_prompt_whatever_its_config_says(suite, recogniser):
    # {"recogniser": null} (a form or API client sending the empty field as null) is read by Tesseract, which
    # reads no prompt: the run recorded the model recogniser's version and would be refused once it moved
    from leaderboard.runs.lifecycle import run_fail, run_may_resume, run_prompt_versions

    run = services.easel_run_create(task_set=suite, agent="simulated", config={"recogniser": recogniser})
    assert "recogniser_prompt_version" not in run.config
    EaselRun.objects.filter(pk=run.pk).update(config={**run.config, "recogniser_prompt_version": "easel-recogniser-v0"})
    run_fail(EaselRun, run.pk, "cancelled")
    run.refresh_from_db()
    assert run_prompt_versions(services.EASEL_RUN_JOB, run) == {} and run_may_resume(run)
