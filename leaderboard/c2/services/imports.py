"""Importing C² datasets into the catalogue (issue 12 "Tasks and imports").

Each dataset's published record format is read by the engine's parser (:mod:`engine.c2.tasks`); the
items become catalogue tasks through :func:`leaderboard.services.catalogue.tasks_import`, the one writer of tasks,
so the catalogue's contract holds: every error names file, line and field; nothing is written on any
error (one transaction, images included); re-importing the same file changes nothing.

A task's ``family`` is its task type, ``subtype`` the dataset, ``brief`` the prompt the model sees and
``constraints`` the grading reference (never shown to a model). Images of visual tasks go to
:class:`~leaderboard.c2.models.C2TaskImage` rows in the same transaction.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
from pathlib import Path

from django.db import transaction

from engine.c2 import tasks as c2_tasks
from engine.text_lines import line_at
from leaderboard.c2.models import C2TaskImage
from leaderboard.import_contract import ImportFailed, RecordError, other_encoding
from leaderboard.models import Benchmark, Task, TaskSet
from leaderboard.protocols import task_set_runs
from leaderboard.services.catalogue import ImportSummary, tasks_import

#: --format → (task type, parser needs an image folder, parser needs an annotations file)
FORMATS: dict[str, tuple[str, bool, bool]] = {
    "triviaqa": ("qa", False, False),
    "livecodebench": ("code", False, False),
    "okvqa": ("vqa", True, True),
    "writingprompts": ("story", False, False),
    "macgyver": ("idea", False, False),
    "creation_mmbench": ("visual_story", True, False),
}
IMAGE_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}


def _text(name: str, raw: bytes) -> str:
    encoding = other_encoding(raw)
    if encoding is not None:
        raise ImportFailed([RecordError(name, 0, "", f"the file is not UTF-8: it is {encoding}; save it as UTF-8")])
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # the import contract drops a leading byte-order mark (json.loads refuses one)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = line_at(raw, exc.start)
        raise ImportFailed([RecordError(name, line, "", f"not valid UTF-8 (byte {exc.start})")]) from exc


def _parse(fmt: str, name: str, text: str, *, annotations_name: str, annotations_text: str | None,
           images_dir: Path | None) -> list:
    """The engine's items, or ImportFailed naming file:line:field."""
    try:
        if fmt == "okvqa":
            return list(c2_tasks.parse_okvqa(text, annotations_text or "", images_dir))
        if fmt == "creation_mmbench":
            return list(c2_tasks.parse_creation_mmbench(text, images_dir))
        return list(c2_tasks.parse_records(FORMATS[fmt][0], text))
    except c2_tasks.RecordError as exc:
        # every bad record of the file (RecordErrors), or the one error that stops a file as a whole; the
        # OK-VQA parser marks errors of the annotations file by their field prefix
        raise ImportFailed([
            RecordError(annotations_name, e.line, e.field.removeprefix("annotations."), e.message)
            if e.field.startswith("annotations.") else RecordError(name, e.line, e.field, e.message)
            for e in getattr(exc, "errors", [exc])
        ]) from exc


def _plain(value):
    """A JSON-ready copy of an engine value (the code tests are a dataclass)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _task_record(fmt: str, item) -> dict:
    constraints: dict = {}
    if item.answers:
        constraints["answers"] = list(item.answers)
    if item.tests is not None:
        constraints["tests"] = item.tests.as_json()  # LiveCodeBench's input_output shape
    if item.starter_code:
        constraints["starter_code"] = item.starter_code
    if item.reference:
        constraints["reference"] = item.reference
    source = {"dataset": fmt, **_plain(dict(item.metadata))}
    if item.image_path:
        source["image"] = Path(item.image_path).name
    return {
        "id": item.external_id, "family": str(item.task_type), "subtype": fmt, "brief": item.prompt,
        "constraints": constraints, "source": source,
    }


def _image_of(name: str, item) -> tuple[bytes, str, int, int]:
    """(bytes, content type, width, height) of a visual item's image, or ImportFailed at its line."""
    from PIL import Image, UnidentifiedImageError

    from engine.image_limits import ImageTooLarge, image_size_checked

    path = Path(item.image_path)
    try:
        data = path.read_bytes()
        image_size_checked(data)  # the pixel budget, from the header: nothing decoded yet
        with Image.open(io.BytesIO(data)) as image:
            kind, (width, height) = image.format, image.size
    except ImageTooLarge as exc:
        raise ImportFailed([RecordError(name, item.line, "image", f"{path.name} is {exc}")]) from exc
    except (OSError, UnidentifiedImageError) as exc:
        raise ImportFailed([RecordError(name, item.line, "image", f"{path.name}: not a readable image ({exc})")]) from exc
    if kind not in IMAGE_TYPES:
        raise ImportFailed([RecordError(name, item.line, "image", f"{path.name}: {kind} images are not supported")])
    return data, IMAGE_TYPES[kind], width, height


def _check_task_types(name: str, task_set: TaskSet | None, records: list[dict], items: list) -> None:
    """An id already used by a task of another type is an error, never a silent replacement."""
    if task_set is None:
        return
    families = dict(task_set.tasks.values_list("external_id", "family"))
    errors = [
        RecordError(name, item.line, "id", f"task {record['id']!r} already exists in {task_set} as a {families[record['id']]} task")
        for record, item in zip(records, items, strict=True)
        if record["id"] in families and families[record["id"]] != record["family"]
    ]
    if errors:
        raise ImportFailed(errors)


@transaction.atomic
def c2_tasks_import(
    *,
    fmt: str,
    name: str,
    raw: bytes,
    task_set_name: str,
    version: str,
    annotations_name: str = "",
    annotations_raw: bytes | None = None,
    images_dir: str | Path | None = None,
    description: str = "",
    is_demo: bool = False,
) -> tuple[TaskSet, ImportSummary]:
    """Import one dataset file (``fmt`` one of :data:`FORMATS`) into a C² task set (created if new)."""
    if fmt not in FORMATS:
        raise ImportFailed([RecordError(name, 0, "", f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")])
    _, needs_images, needs_annotations = FORMATS[fmt]
    if needs_annotations and annotations_raw is None:
        raise ImportFailed([RecordError(name, 0, "", f"{fmt} needs its annotations file (--annotations FILE)")])
    if needs_images and (images_dir is None or not Path(images_dir).is_dir()):
        raise ImportFailed([RecordError(name, 0, "", f"{fmt} needs an image folder (--images DIR); {images_dir!s} is not one")])
    text = _text(name, raw)
    annotations_text = _text(annotations_name, annotations_raw) if annotations_raw is not None else None
    items = _parse(fmt, name, text, annotations_name=annotations_name, annotations_text=annotations_text,
                   images_dir=Path(images_dir) if images_dir is not None else None)
    records = [_task_record(fmt, item) for item in items]
    images = {item.external_id: _image_of(name, item) for item in items if item.image_path}
    _check_task_types(name, TaskSet.objects.filter(name=task_set_name, version=version).first(), records, items)
    # ASCII escapes: a lone surrogate the dataset wrote as \ud800 stays an escape for the catalogue's
    # decoder to name (as raw text it cannot be encoded as UTF-8 at all)
    jsonl = "".join(json.dumps(r) + "\n" for r in records).encode()
    try:
        task_set, summary = tasks_import(
            name=name, raw=jsonl, task_set_name=task_set_name, version=version, benchmark_kind=Benchmark.Kind.C2,
            description=description, fmt="jsonl", is_demo=is_demo,
        )
    except ImportFailed as exc:
        # the catalogue reads the items as lines 1..n: name the dataset file's own lines instead
        raise ImportFailed([
            dataclasses.replace(e, line=items[e.line - 1].line if 0 < e.line <= len(items) else e.line) for e in exc.errors
        ]) from exc
    _images_store(task_set, images, summary, name=name, lines={item.external_id: item.line for item in items})
    return task_set, summary


def _images_store(task_set: TaskSet, images: dict[str, tuple[bytes, str, int, int]], summary: ImportSummary, *,
                  name: str, lines: dict[str, int]) -> None:
    tasks = {t.external_id: t for t in Task.objects.filter(task_set=task_set, external_id__in=images)}
    current = {i.task_id: i for i in C2TaskImage.objects.filter(task__in=tasks.values())}
    used_by = task_set_runs(task_set) if current and not task_set.frozen else []
    for external_id, (data, content_type, width, height) in images.items():
        task = tasks[external_id]
        digest = hashlib.sha256(data).hexdigest()
        existing = current.get(task.pk)
        if existing is not None and existing.sha256 == digest:
            continue
        if existing is not None and task_set.frozen:
            raise ImportFailed([RecordError(name, lines[external_id], "image",
                                            f"the image of task {external_id!r} differs but {task_set} is frozen: import a new version")])
        if existing is not None and used_by:
            raise ImportFailed([RecordError(name, lines[external_id], "image", (
                f"the image of task {external_id!r} differs, but {task_set} has runs ({', '.join(used_by)}) whose "
                f"results were computed on it: import a new version"))])
        C2TaskImage.objects.update_or_create(
            task=task,
            defaults={"file_name": task.source.get("image", ""), "content_type": content_type, "data": data,
                      "sha256": digest, "width": width, "height": height},
        )
        if existing is not None:
            summary.notes.append(f"image of task {external_id} replaced")
