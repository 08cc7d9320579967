"""A fake multimodal EASEL agent for the fake OpenAI server (tests/fakes/openai_server.py).

``EaselAgentHandler()`` is a chat handler: for a vision request (messages with ``image_url`` parts in
the EASEL prompt's shape) it answers a valid EASEL action as JSON, deterministically from the step
and the prompt text: reconstruction strokes take their colour from the reference image it was sent
(decoded from the PNG data URL), semantic tasks get path-only strokes and a ``submit`` after
``submit_after`` steps. ``invalid_every=k`` makes every k-th step an unparseable prose answer and
``fenced_every=k`` wraps every k-th answer in prose and a code fence, so tests cover invalid actions
and JSON extraction. A request without images gets a plain refusal (not an action).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import threading
from typing import Any

from PIL import Image

__all__ = ["EaselAgentHandler", "image_parts"]

_STEP = re.compile(r"Step (\d+) of (\d+)")
_PATH_KEYS = ("xs", "ys", "xc", "yc", "xe", "ye")


def image_parts(request: dict[str, Any]) -> list[str]:
    """The image URLs of a chat request, in order."""
    urls = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            urls += [p["image_url"]["url"] for p in content if isinstance(p, dict) and p.get("type") == "image_url"]
    return urls


def _texts(request: dict[str, Any]) -> list[str]:
    out = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return out


def _decode_png(url: str) -> Image.Image:
    header, _, data = url.partition(",")
    if header != "data:image/png;base64":
        raise ValueError(f"not a PNG data URL: {header[:40]}")
    return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")


class EaselAgentHandler:
    """Deterministic EASEL actions for vision chat requests (module docstring)."""

    def __init__(self, *, invalid_every: int = 0, fenced_every: int = 0, submit_after: int = 6) -> None:
        self.invalid_every = invalid_every
        self.fenced_every = fenced_every
        self.submit_after = submit_after
        self._lock = threading.Lock()
        self.answers: list[str] = []

    def _numbers(self, key: str, count: int) -> list[float]:
        digest = hashlib.sha256(key.encode()).digest()
        return [round(digest[i] / 255.0, 3) for i in range(count)]

    def __call__(self, request: dict[str, Any]) -> str:
        urls = image_parts(request)
        texts = _texts(request)
        if not urls:
            return "I need to see the canvas to paint."
        joined = "\n".join(texts)
        steps = _STEP.findall(joined)
        step = int(steps[-1][0]) if steps else 1
        key = f"{texts[1] if len(texts) > 1 else texts[0]}|{step}"
        if self.invalid_every and step % self.invalid_every == 0:
            answer = "I think a stroke near the top would help."
        elif "Task: semantic" in joined:
            if step > self.submit_after:
                answer = json.dumps({"action": "submit"})
            else:
                values = self._numbers(key, 6)
                answer = json.dumps({"action": "brush_stroke", **dict(zip(_PATH_KEYS, values, strict=True))})
        else:
            reference = _decode_png(urls[0])
            xs, ys, xc, yc, xe, ye, rs, re_ = self._numbers(key, 8)
            w, h = reference.size
            colour = reference.getpixel((min(w - 1, int(xs * w)), min(h - 1, int(ys * h))))
            action = {"action": "brush_stroke", "xs": xs, "ys": ys, "xc": xc, "yc": yc, "xe": xe, "ye": ye,
                      "rs": rs, "alpha_s": 1.0, "re": re_, "alpha_e": 1.0,
                      "cr": round(colour[0] / 255, 3), "cg": round(colour[1] / 255, 3), "cb": round(colour[2] / 255, 3)}
            answer = json.dumps(action)
        if self.fenced_every and step % self.fenced_every == 0 and answer.startswith("{"):
            answer = f"Here is my next stroke:\n```json\n{answer}\n```"
        with self._lock:
            self.answers.append(answer)
        return answer
