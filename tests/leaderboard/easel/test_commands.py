"""The EASEL commands: easel_suite, run_easel, export_easel_sft, load_demo_easel."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from leaderboard.easel import demo
from leaderboard.easel.models import EaselImage, EaselRun
from leaderboard.models import TaskSet

pytestmark = pytest.mark.django_db

SMALL = "programmatic=2"


def images_of(name: str) -> dict[str, bytes]:
    return {e: bytes(p) for e, p in EaselImage.objects.filter(task__task_set__name=name).values_list("task__external_id", "png")}


def run_command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_suite_command_gives_byte_identical_references_for_a_seed():
    run_command("easel_suite", "--seed", "5", "--per-category", SMALL, "--name", "first")
    run_command("easel_suite", "--seed", "5", "--per-category", SMALL, "--name", "second")
    first, second = images_of("first"), images_of("second")
    assert len(first) == 2 + 5 and first == second
    assert TaskSet.objects.get(name="first").frozen


def test_another_seed_gives_other_references():
    run_command("easel_suite", "--seed", "5", "--per-category", SMALL, "--name", "five")
    run_command("easel_suite", "--seed", "6", "--per-category", SMALL, "--name", "six")
    five, six = images_of("five"), images_of("six")
    assert five["programmatic-000"] != six["programmatic-000"]


def test_running_the_suite_command_again_reports_the_existing_identical_set():
    run_command("easel_suite", "--seed", "5", "--per-category", SMALL, "--name", "again")
    assert "already present, byte-identical" in run_command("easel_suite", "--seed", "5", "--per-category", SMALL, "--name", "again")
    assert TaskSet.objects.filter(name="again").count() == 1


def test_a_malformed_per_category_option_is_a_clear_error():
    with pytest.raises(CommandError, match="'planets=2' is not CATEGORY=COUNT"):
        run_command("easel_suite", "--per-category", "planets=2")


def test_run_easel_runs_an_anchor_and_prints_its_scores(suite):
    out = run_command("run_easel", "--task-set", suite.name, "--agent", "mean_colour_fill")
    run = EaselRun.objects.get()
    assert run.status == EaselRun.Status.DONE and f"run {run.pk} done" in out and "programmatic Final S" in out


def test_run_easel_labels_a_simulated_agent_and_resumes_by_id(suite):
    out = run_command("run_easel", "--task-set", suite.name, "--agent", "simulated", "--skill", "0.7", "--seed", "2")
    run = EaselRun.objects.get()
    assert "(SIMULATED agent)" in out and run.is_simulated and run.config["skill"] == 0.7 and run.seed == 2
    again = run_command("run_easel", "--resume", str(run.pk))
    assert f"run {run.pk} done" in again and EaselRun.objects.count() == 1


def test_run_easel_names_an_unknown_agent(suite):
    with pytest.raises(CommandError, match="no agent 'nobody'"):
        run_command("run_easel", "--task-set", suite.name, "--agent", "nobody")


def test_the_sft_export_writes_samples_whose_prior_actions_replay_to_their_canvas(suite, tmp_path):
    from engine.easel.episode import Environment
    from engine.easel.task import image_from_png, png_bytes
    from leaderboard.easel import services
    from leaderboard.easel.services import engine_task_of

    run = services.easel_run_execute_inline(run=services.easel_run_create(
        task_set=suite, agent="painter", config={"painter": {"candidates": 4, "refinements": 2}}))
    out = run_command("export_easel_sft", "--run", str(run.pk), "-o", str(tmp_path))
    assert "C1" in out and "C2" in out
    records = [json.loads(line) for line in (tmp_path / "c1.jsonl").read_text().splitlines()]
    assert records and all(isinstance(records[0]["target"][k], int) for k in ("xs", "ys", "xc", "yc", "xe", "ye"))
    assert (tmp_path / records[0]["reference"]).is_file()
    sample = records[len(records) // 2]
    task = engine_task_of(suite.tasks.get(external_id=sample["task_id"]))
    env = Environment(task, budget=task.budget)
    env.replay(sample["prior_actions"])
    assert np.array_equal(image_from_png((tmp_path / sample["canvas"]).read_bytes()), image_from_png(png_bytes(env.canvas)))


def test_the_sft_export_of_a_run_without_trajectories_is_an_error(suite, tmp_path):
    run_command("run_easel", "--task-set", suite.name, "--agent", "blank_fill")
    with pytest.raises(CommandError, match="no finished reconstruction episode"):
        run_command("export_easel_sft", "--run", str(EaselRun.objects.get().pk), "-o", str(tmp_path))


def test_the_demo_is_labelled_and_idempotent(monkeypatch):
    monkeypatch.setattr(demo, "DEMO_PER_CATEGORY", {"programmatic": 1})
    monkeypatch.setattr(demo, "DEMO_AGENTS", (demo.DemoAgent("mean_colour_fill"),
                                              demo.DemoAgent("simulated", label="simulated · keen", skill=0.8)))
    run_command("load_demo_easel")
    steps = EaselRun.objects.get(agent_kind="simulated").steps_done
    out = run_command("load_demo_easel")
    task_set = TaskSet.objects.get(name=demo.DEMO_SUITE_NAME)
    assert task_set.is_demo and EaselRun.objects.count() == 2 and "[SIMULATED]" in out
    assert EaselRun.objects.get(agent_kind="simulated").steps_done == steps
    assert set(EaselRun.objects.values_list("status", flat=True)) == {"done"}


def test_user_images_are_imported_as_natural_references(tmp_path):
    from PIL import Image

    folder = tmp_path / "photos"
    folder.mkdir()
    Image.new("RGB", (300, 200), (200, 40, 10)).save(folder / "red barn.png")
    run_command("easel_suite", "--seed", "1", "--per-category", "programmatic=1", "--name", "imported", "--images", str(folder))
    task = TaskSet.objects.get(name="imported").tasks.get(external_id="imported-red-barn")
    assert task.family == "natural" and task.easel_image.width == 128
    assert task.source["spec"]["provenance"]["source"] == "imported:red barn.png"


def test_an_unreadable_image_is_an_error_naming_the_file_and_writes_nothing(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "notes.txt").write_text("not an image")
    with pytest.raises(CommandError, match="notes.txt: not a readable image"):
        run_command("easel_suite", "--seed", "1", "--per-category", "programmatic=1", "--name", "broken", "--images", str(folder))
    assert not TaskSet.objects.filter(name="broken").exists()


def test_an_image_over_the_pixel_budget_is_an_error_naming_the_file_and_writes_nothing(tmp_path):
    from tests.hostile_images import huge_png

    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "huge.png").write_bytes(huge_png())
    with pytest.raises(CommandError, match="huge.png is 64,000,000 pixels, over the budget"):
        run_command("easel_suite", "--seed", "1", "--per-category", "programmatic=1", "--name", "huge", "--images", str(folder))
    assert not TaskSet.objects.filter(name="huge").exists()



def test_an_image_file_over_the_byte_limit_is_refused_by_its_size_naming_it(tmp_path):
    # the file was read whole before any check: a sparse file of 129 MiB costs no disk but was 129 MiB of memory
    from PIL import Image

    from engine.image_limits import IMAGE_FILE_BYTES

    folder = tmp_path / "photos"
    folder.mkdir()
    Image.new("RGB", (8, 8), (200, 40, 10)).save(folder / "big.png")
    with open(folder / "big.png", "r+b") as file:
        file.truncate(IMAGE_FILE_BYTES + 1)  # a valid PNG, then zeros Pillow ignores
    with pytest.raises(CommandError, match=f"big.png is {IMAGE_FILE_BYTES + 1:,} bytes, over the limit"):
        run_command("easel_suite", "--seed", "1", "--per-category", "programmatic=1", "--name", "big", "--images", str(folder))
    assert not TaskSet.objects.filter(name="big").exists()


#: Most Python memory (bytes, tracemalloc's peak) the command may take to refuse an image by its header:
#: the parsing of the command and the header, far below the file's 64 MiB.
HEADER_REFUSAL_PEAK = 8 * 2**20


def test_an_image_over_the_pixel_budget_is_refused_from_its_header_without_reading_the_file(tmp_path):
    # the pixel budget was checked on the file's bytes, so all of a large file was read first
    import tracemalloc

    from tests.hostile_images import huge_png

    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "huge.png").write_bytes(huge_png())
    with open(folder / "huge.png", "r+b") as file:
        file.truncate(64 * 2**20)  # under the byte limit: only the header can refuse it before the read
    tracemalloc.start()
    try:
        with pytest.raises(CommandError, match="huge.png is 64,000,000 pixels, over the budget"):
            run_command("easel_suite", "--seed", "1", "--per-category", "programmatic=1", "--name", "huge", "--images",
                        str(folder))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < HEADER_REFUSAL_PEAK


def _png_with_a_wrong_chunk_length() -> bytes:
    import struct

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGBA", (30, 30), (1, 2, 3, 0)).save(buffer, "PNG")
    data = buffer.getvalue()
    at = data.find(b"IDAT") - 4
    return data[:at] + struct.pack(">I", 5) + data[at + 4:]  # the next chunk header is read from inside IDAT


def test_a_corrupt_png_is_an_error_naming_the_file_and_writes_nothing(tmp_path):
    # Pillow opens it, then raises SyntaxError ("broken PNG file") while decoding: no ValueError or OSError,
    # so the command ended in a traceback
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "broken.png").write_bytes(_png_with_a_wrong_chunk_length())
    with pytest.raises(CommandError, match="broken.png: not a readable image"):
        run_command("easel_suite", "--seed", "1", "--per-category", "programmatic=1", "--name", "corrupt",
                    "--images", str(folder))
    assert not TaskSet.objects.filter(name="corrupt").exists()


def test_an_unreadable_file_is_an_error_naming_it_and_writes_nothing(tmp_path, monkeypatch):
    # opening's PermissionError (or any OSError) is no ValueError: the command ended in a traceback
    from pathlib import Path

    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "locked.png").write_bytes(b"\x89PNG")
    real = Path.open

    def path_open(path, *args, **kwargs):
        if path.name == "locked.png":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", path_open)
    with pytest.raises(CommandError, match="locked.png: not a readable file .Permission denied."):
        run_command("easel_suite", "--seed", "1", "--per-category", "programmatic=1", "--name", "locked",
                    "--images", str(folder))
    assert not TaskSet.objects.filter(name="locked").exists()

def test_run_easel_queue_without_a_broker_runs_eagerly_and_follows_to_done(suite):
    out = run_command("run_easel", "--task-set", suite.name, "--agent", "blank_fill", "--queue")
    run = EaselRun.objects.get()
    assert run.status == EaselRun.Status.DONE and f"run {run.pk} done" in out


def test_a_refused_skill_leaves_no_run_row_and_names_the_allowed_range(suite):
    with pytest.raises(CommandError, match=r"skill must lie in \[0, 1\]; got 3.0"):
        run_command("run_easel", "--task-set", suite.name, "--agent", "simulated", "--skill", "3")
    assert not EaselRun.objects.exists()


def test_a_negative_seed_is_refused_before_a_run_row(suite):
    with pytest.raises(CommandError, match="a seed is an integer ≥ 0"):
        run_command("run_easel", "--task-set", suite.name, "--seed", "-1")
    assert not EaselRun.objects.exists()


def test_run_easel_refuses_a_task_set_of_another_protocol(suite):
    other = TaskSet.objects.create(benchmark=_benchmark("ekphrasis"), name="not-easel", version="1")
    with pytest.raises(CommandError, match="not-easel v1 is a task set of Ekphrasis; the EASEL run needs one of EASEL"):
        run_command("run_easel", "--task-set", other.name)
    assert not EaselRun.objects.exists()


def _benchmark(kind):
    from leaderboard.services.catalogue import benchmark_get_or_create

    return benchmark_get_or_create(kind=kind)


@pytest.mark.parametrize("counts", ["0", "programmatic=0,natural=0"])
def test_a_suite_without_references_is_refused_and_nothing_is_stored(counts):
    with pytest.raises(CommandError, match="a suite needs at least one reference"):
        run_command("easel_suite", "--per-category", counts, "--name", "empty")
    assert not TaskSet.objects.filter(name="empty").exists()


def test_easel_suite_takes_the_task_set_version_as_version():
    run_command("easel_suite", "--per-category", SMALL, "--name", "versioned", "--version", "v2")
    assert TaskSet.objects.filter(name="versioned").get().version == "v2"


def test_piped_progress_is_plain_lines_and_the_summary_has_intervals(suite, capsys):
    out = run_command("run_easel", "--task-set", suite.name, "--agent", "simulated", "--skill", "0.6")
    progress = capsys.readouterr().err
    assert "\r" not in progress
    lines = [line for line in progress.splitlines() if line.startswith("EASEL run")]
    assert 2 <= len(lines) <= 22 and lines[-1].startswith("EASEL run") and "100%" in lines[-1]
    final_s = [line for line in out.splitlines() if "Final S" in line]
    assert final_s and all("[" in line and "]" in line for line in final_s)
    assert "intervals: 90% bootstrap over references" in out


def test_a_run_stopped_by_a_configuration_error_is_not_resumable_and_no_resume_is_offered(suite, monkeypatch):
    from leaderboard.easel import services
    from leaderboard.runs.errors import RunConfigurationError

    def refuse(**_):
        raise RunConfigurationError("reference programmatic-000 has no image")

    monkeypatch.setattr(services, "easel_episode_execute", refuse)
    with pytest.raises(CommandError) as refused:
        run_command("run_easel", "--task-set", suite.name, "--agent", "simulated")
    run = EaselRun.objects.get()
    assert (run.status, run.resumable) == (EaselRun.Status.FAILED, False)
    assert "resuming cannot change that" in str(refused.value) and "--resume" not in str(refused.value)


def test_a_run_stopped_by_a_provider_outage_offers_its_resume(suite, monkeypatch):
    from leaderboard.easel import services
    from leaderboard.runs.errors import ProviderStopped

    def outage(**_):
        raise ProviderStopped(who="agent 'vision'", error="HTTP 503", still_needed=12)

    monkeypatch.setattr(services, "easel_episode_execute", outage)
    with pytest.raises(CommandError) as stopped:
        run_command("run_easel", "--task-set", suite.name, "--agent", "simulated")
    run = EaselRun.objects.get()
    assert (run.status, run.resumable) == (EaselRun.Status.FAILED, True)
    assert "12 call(s) still needed" in str(stopped.value) and f"resume it with --resume {run.pk}" in str(stopped.value)
