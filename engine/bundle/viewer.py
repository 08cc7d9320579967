"""The static viewer of a bundle: ``index.html`` and ``data.js``, opened from disk with no server.

Browsers refuse ``fetch`` of a local JSON file from a ``file://`` page (Chromium treats every file as
its own origin), so the data is a script, ``data.js``, assigning one object to ``window.BUNDLE``; the
page reads it and draws the board table and, per instance (task, episode or prompt), its drill-down
table. Text is inserted as text nodes, never as HTML, so a model's output cannot script the page.

The data's shape is protocol-neutral: ``{"title", "kind", "labels": [...], "board": Table,
"instances": [{"id", "label", "table": Table}]}`` with ``Table = {"caption", "columns", "rows"}``; a cell
``{"image": "media/<sha256>.png", "alt": …}`` is drawn as that image of the bundle.

Both files are functions of the bundle's own files: the header (title, labels, summary) of the manifest
(:func:`viewer_header`), the board and instance tables of ``board/board.json`` and the records (each
protocol's ``viewer_data``). So the verifier rebuilds them and compares the bytes: ``data.js`` is also
the board an imported site shows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["VIEWER_DATA", "VIEWER_PAGE", "viewer_files", "viewer_header"]

VIEWER_PAGE = "index.html"
VIEWER_DATA = "data.js"

_PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Atelier bundle viewer</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.label { display: inline-block; background: #fde68a; border: 1px solid #b45309; padding: 0.1rem 0.4rem;
         margin-right: 0.4rem; font-weight: 600; }
#instances li { cursor: pointer; color: #1d4ed8; text-decoration: underline; margin: 0.15rem 0; }
#drilldown { border-top: 2px solid #888; padding-top: 0.5rem; }
</style>
</head>
<body>
<h1 id="title">Atelier bundle</h1>
<p id="labels"></p>
<p id="summary"></p>
<h2>Board</h2>
<div id="board"></div>
<h2>Per instance</h2>
<p>Choose an instance to see its records.</p>
<ul id="instances"></ul>
<section id="drilldown" aria-live="polite"></section>
<script src="data.js"></script>
<script>
(function () {
  "use strict";
  var data = window.BUNDLE;
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function cell(value) {
    if (value === null || value === undefined) return el("td", "—");
    if (typeof value === "number") return el("td", Number.isInteger(value) ? value : value.toFixed(4), "num");
    if (typeof value === "object" && typeof value.image === "string" && /^media\/[0-9a-f]{64}\.(png|jpeg|webp|gif)$/.test(value.image)) {
      var td = el("td");
      var img = el("img");
      img.src = value.image;
      img.alt = value.alt || value.image;
      img.width = 128;
      td.appendChild(img);
      return td;
    }
    if (typeof value === "object") return el("td", JSON.stringify(value));
    return el("td", value);
  }
  function table(spec) {
    var t = el("table");
    if (spec.caption) t.appendChild(el("caption", spec.caption));
    var head = el("tr");
    spec.columns.forEach(function (c) { head.appendChild(el("th", c)); });
    t.appendChild(head);
    spec.rows.forEach(function (row) {
      var tr = el("tr");
      row.forEach(function (v) { tr.appendChild(cell(v)); });
      t.appendChild(tr);
    });
    return t;
  }
  if (!data) { document.getElementById("summary").textContent = "data.js is missing: this bundle cannot be shown."; return; }
  document.getElementById("title").textContent = data.title;
  document.title = data.title;
  var labels = document.getElementById("labels");
  (data.labels || []).forEach(function (l) { labels.appendChild(el("span", l, "label")); });
  document.getElementById("summary").textContent = data.summary || "";
  document.getElementById("board").appendChild(table(data.board));
  var list = document.getElementById("instances");
  var drill = document.getElementById("drilldown");
  (data.instances || []).forEach(function (inst) {
    var item = el("li", inst.label);
    item.setAttribute("data-instance", inst.id);
    item.tabIndex = 0;
    function show() {
      drill.textContent = "";
      drill.appendChild(el("h3", inst.label));
      drill.appendChild(table(inst.table));
    }
    item.addEventListener("click", show);
    item.addEventListener("keydown", function (e) { if (e.key === "Enter") show(); });
    list.appendChild(item);
  });
})();
</script>
</body>
</html>
"""


def viewer_header(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The viewer's title, kind, labels (simulated, demo) and summary line, from the manifest."""
    labels = (["SIMULATED components"] if manifest.get("simulated") else []) + (["DEMO data"] if manifest.get("demo") else [])
    summary = (f"{manifest['protocol']}. Task set {manifest['task_set']['name']} v{manifest['task_set']['version']}. "
               f"Recompute every number with: manage.py verify_bundle <this folder>.")
    return {"title": manifest["title"], "kind": manifest["kind"], "labels": labels, "summary": summary}


def viewer_files(data: dict[str, Any]) -> dict[str, str]:
    """The viewer's two files (name → text) for the protocol-neutral ``data``."""
    # "</" is escaped so that no string in the data can close the script element early.
    payload = json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False).replace("</", "<\\/")
    return {VIEWER_PAGE: _PAGE, VIEWER_DATA: f"window.BUNDLE = {payload};\n"}
