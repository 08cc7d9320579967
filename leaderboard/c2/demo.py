"""The C² demo: a small task set with a few items of every task type, and runs of four simulated subjects
rated by the simulated rater under the standard and the creative template (so the ablation shows).

Everything here is **demo data** (``TaskSet.is_demo``) and every run is **simulated**. The items are
written here in each dataset's published record format (``demo_data/``) and imported through the same
importer as real data; the visual items use scikit-image's shipped photographs (astronaut, chelsea,
coffee, rocket …) with hand-written questions and ten hand-written answers each.
"""

from __future__ import annotations

import io
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.models import TaskSet

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_TASK_SET = "c2-demo"
DEMO_VERSION = "1"
DEMO_SAMPLES = 5
DEMO_SEED = 42

# Simulated profiles (accuracy, diversity, confidence, quality), chosen so that the four models differ in
# shape, as Table 1's rows do: aurora accurate and over-confident, basalt diverse, cirrus imaginative on
# open-ended tasks, delta weak throughout.
DEMO_SUBJECTS = {
    "simulated-aurora": {"accuracy": 0.85, "diversity": 0.2, "confidence": 0.9, "quality": 0.55},
    "simulated-basalt": {"accuracy": 0.65, "diversity": 0.6, "confidence": 0.6, "quality": 0.45},
    "simulated-cirrus": {"accuracy": 0.55, "diversity": 0.4, "confidence": 0.5, "quality": 0.85},
    "simulated-delta": {"accuracy": 0.35, "diversity": 0.3, "confidence": 0.75, "quality": 0.25},
}
DEMO_RATER_SKILL = 0.8

# (image function of skimage.data, COCO-style image id, question, ten answers) in OK-VQA's shape.
DEMO_VQA = (
    ("astronaut", 1, "What job does the person in this photo do?",
     ["astronaut", "astronaut", "astronaut", "astronaut", "astronaut", "pilot", "astronaut", "nasa astronaut", "astronaut", "space"]),
    ("chelsea", 2, "What kind of animal is this?",
     ["cat", "cat", "cat", "cat", "tabby cat", "cat", "kitten", "cat", "cat", "tabby"]),
    ("coffee", 3, "What drink is in the cup?",
     ["coffee", "coffee", "coffee", "latte", "coffee", "cappuccino", "coffee", "espresso", "coffee", "coffee"]),
    ("rocket", 4, "What is this vehicle used for?",
     ["space travel", "space", "launching satellites", "space travel", "space", "space travel", "space exploration",
      "space", "going to space", "space travel"]),
)
# (image function, file name, Creation-MMBench-style item)
DEMO_VISUAL_STORY = (
    ("hubble_deep_field", "deep_field.jpg", {"index": "demo_vs_1", "task_name": "story_continue",
     "question": "Write a short story in which one of the lights in this picture is somebody's home."}),
    ("immunohistochemistry", "stain.jpg", {"index": "demo_vs_2", "task_name": "creative_caption",
     "role": "You are a novelist writing for curious teenagers.",
     "question": "Imagine this image is a map of an invented country. Tell the legend of how its borders were drawn."}),
    ("coffee", "coffee.jpg", {"index": "demo_vs_3", "task_name": "story_continue",
     "question": "Tell the story of the morning this cup was poured, from the cup's point of view."}),
)
IMAGE_SIDE = 256  # demo images are downscaled: the data URLs stay small


@dataclass
class DemoC2:
    task_set: TaskSet
    runs: list[C2Run]


def _save_photo(name: str, path: Path) -> None:
    from PIL import Image
    from skimage import data

    image = Image.fromarray(getattr(data, name)()).convert("RGB")
    image.thumbnail((IMAGE_SIDE, IMAGE_SIDE))
    image.save(path, format="JPEG", quality=85)


def _import_all(folder: Path) -> TaskSet:
    common = {"task_set_name": DEMO_TASK_SET, "version": DEMO_VERSION, "is_demo": True,
              "description": "C²-Eval demo data: hand-written items in each dataset's format (not the real datasets)."}
    for fmt, file_name in (("triviaqa", "triviaqa.json"), ("livecodebench", "livecodebench.jsonl"),
                           ("writingprompts", "writingprompts.wp_source"), ("macgyver", "macgyver.jsonl")):
        path = DEMO_DIR / file_name
        task_set, _ = c2_tasks_import(fmt=fmt, name=f"demo_data/{file_name}", raw=path.read_bytes(), **common)
    questions, annotations = [], []
    for image_name, image_id, question, answers in DEMO_VQA:
        _save_photo(image_name, folder / f"COCO_val2014_{image_id:012d}.jpg")
        questions.append({"image_id": image_id, "question": question, "question_id": image_id * 10})
        annotations.append({"question_id": image_id * 10, "image_id": image_id, "question_type": "other",
                            "answers": [{"answer": a, "answer_id": k + 1} for k, a in enumerate(answers)]})
    c2_tasks_import(
        fmt="okvqa", name="demo:okvqa-questions.json", raw=json.dumps({"questions": questions}).encode(),
        annotations_name="demo:okvqa-annotations.json", annotations_raw=json.dumps({"annotations": annotations}).encode(),
        images_dir=folder, **common,
    )
    lines = io.StringIO()
    for image_name, file_name, record in DEMO_VISUAL_STORY:
        _save_photo(image_name, folder / file_name)
        lines.write(json.dumps({**record, "image": file_name}) + "\n")
    task_set, _ = c2_tasks_import(fmt="creation_mmbench", name="demo:creation-mmbench.jsonl",
                                  raw=lines.getvalue().encode(), images_dir=folder, **common)
    return task_set


def _demo_run(task_set: TaskSet, template: str) -> C2Run:
    """The demo run of a template: the existing finished one, or a new one run to the end here."""
    existing = C2Run.objects.filter(task_set=task_set, template=template, seed=DEMO_SEED, rater_name="simulated",
                                    status=C2Run.Status.DONE).first()
    if existing is not None:
        return existing
    run = runs.c2_run_create(
        task_set=task_set, model_names=list(DEMO_SUBJECTS), n_samples=DEMO_SAMPLES, template=template,
        rater_name="simulated", seed=DEMO_SEED,
        config={"simulated_subjects": DEMO_SUBJECTS, "simulated_rater": {"skill": DEMO_RATER_SKILL}, "demo": True},
    )
    return runs.c2_run_execute_inline(run=run)


def demo_c2_load() -> DemoC2:
    """Import the demo task set and run the standard and creative demo runs (idempotent)."""
    with tempfile.TemporaryDirectory(prefix="c2-demo-") as folder, transaction.atomic():
        task_set = _import_all(Path(folder))
    return DemoC2(task_set=task_set, runs=[_demo_run(task_set, t) for t in C2Run.Template.values])
