"""evalsite/storage.py: a full media disk (a real 64 KiB tmpfs) refuses an import clearly and keeps no
partial file and no row."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from evalsite.storage import MediaUnwritable
from leaderboard.ekphrasis.renders import renders_import_manifest
from leaderboard.models import Render
from tests.factories import ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def full_disk(settings, tmp_path):
    """MEDIA_ROOT on a tmpfs of 64 KiB (mounting needs root; skipped without it)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    settings.MEDIA_ROOT = mount
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def noise_png(seed: int) -> bytes:
    """About 49 KB: incompressible pixels, so two do not fit in 64 KiB."""
    pixels = np.random.default_rng(seed).integers(0, 256, size=(128, 128, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def manifest_of_two(tmp_path: Path):
    task_set = TaskSetFactory(name="grounding")
    task = TaskFactory(task_set=task_set, external_id="g1")
    rows = []
    for k, name in enumerate(("Model-One", "Model-Two")):
        ResponseFactory(task=task, subject_model=SubjectModelFactory(display_name=name))
        (tmp_path / f"{k}.png").write_bytes(noise_png(k))
        rows.append({"task_id": "g1", "model": name, "sample": 1, "image": f"{k}.png", "renderer": "r", "seed": 1})
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return task_set, manifest


def test_an_import_onto_a_full_disk_is_refused_with_no_partial_file_or_row(full_disk, tmp_path):
    task_set, manifest = manifest_of_two(tmp_path)
    with pytest.raises(MediaUnwritable, match="full or not writable"):
        renders_import_manifest(name="manifest.jsonl", raw=manifest.read_bytes(), task_set=task_set, base_dir=tmp_path)
    assert Render.objects.count() == 0
    assert [p for p in full_disk.rglob("*") if p.is_file()] == []


def test_a_full_media_disk_is_answered_507_in_the_sites_error_shapes_not_500():
    from django.test import RequestFactory

    from evalsite.error_pages import server_error

    try:  # as Django calls the 500 handler: while the exception is being handled
        raise MediaUnwritable(28, "The media folder is full or not writable (No space left on device); nothing was saved.")
    except MediaUnwritable:
        api = server_error(RequestFactory().post("/api/v1/task-sets/1/renders"))
        page_api = server_error(RequestFactory().post("/annotate/api/campaigns/1/items", HTTP_ACCEPT="application/json"))
        page = server_error(RequestFactory().post("/task-sets/1/renders/import"))
    assert api.status_code == 507 and json.loads(api.content)["error"] == "insufficient_storage"
    assert page_api.status_code == 507 and "No space left" in json.loads(page_api.content)["detail"]
    assert page.status_code == 507 and "No space left on device" in page.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_real_http_upload_onto_a_full_disk_is_answered_507_and_leaves_no_file_or_row(full_disk, live_server, settings):
    """Through the socket: a multipart import whose upload is spooled to a full 64 KiB tmpfs."""
    import requests

    from leaderboard.api_tokens.services import api_token_create
    from leaderboard.models import Task, TaskSet
    from tests.factories import UserFactory

    settings.FILE_UPLOAD_TEMP_DIR = str(full_disk)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024  # spooled to disk, as a large upload is
    _, secret = api_token_create(user=UserFactory(username="adam", role="admin"), name="disk-full")
    rows = "".join(json.dumps({"task_id": f"t{k}", "brief": "x" * 400}) + "\n" for k in range(300))  # ~130 KB
    answer = requests.post(f"{live_server.url}/api/v1/task-sets/import", headers={"Authorization": f"Bearer {secret}"},
                           files={"file": ("tasks.jsonl", rows.encode())},
                           data={"task_set": "full-disk", "version": "1"}, timeout=60)
    assert answer.status_code == 507, answer.text[:500]
    assert answer.json()["error"] == "insufficient_storage" and "No space left" in answer.text
    assert not TaskSet.objects.filter(name="full-disk").exists() and Task.objects.count() == 0
    assert [p for p in full_disk.rglob("*") if p.is_file()] == []
