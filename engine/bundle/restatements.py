"""The manifest's restatements checked against the value each restates.

A manifest says some facts twice: the seed the fit read (``configuration.seed``) again in ``seeds``, the
judge's budget in ``judge`` and in the ``board_facts`` the CSV and LaTeX print, the scored settings again
in ``engine_components`` and ``rater``, the run models' names in ``models`` and ``configuration.models``,
the SHA-256 of ``records/tasks.jsonl`` in ``task_set.content_sha256``, each EASEL run's seed and agent in
``seeds.runs`` and ``agents`` and in ``records/runs.jsonl``. The recomputation reads one copy; the other
was shown to a reader unchecked, so a reviewer could be handed a bundle whose ``seeds.bootstrap`` (or
printed budget, or task-file digest, or model list) was not the one the numbers came from, and it
verified. Each restatement is compared here with the value the recomputation reads (or the file's own
digest), and a difference is named like any differing number.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.bundle.manifest import read_jsonl, sha256_bytes
from engine.bundle.numbers import NumberCheck

__all__ = ["TASKS", "restatement_checks"]

TASKS = "records/tasks.jsonl"
_ABSENT = "(absent)"


def _get(value: Any, *path: str | int) -> Any:
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return _ABSENT
    return value


def _check(manifest: Mapping[str, Any], restated: tuple, source: tuple, why: str) -> NumberCheck:
    def name(path: tuple) -> str:
        return "".join(f"[{p}]" if isinstance(p, int) else ("." if k else "") + str(p) for k, p in enumerate(path))
    return NumberCheck(f"manifest.{name(restated)} (restates {name(source)}: {why})", _get(manifest, *restated),
                       _get(manifest, *source))


def _common(root: Path, manifest: Mapping[str, Any]) -> list[NumberCheck]:
    path = Path(root) / TASKS
    digest = sha256_bytes(path.read_bytes()) if path.is_file() else "(no records/tasks.jsonl)"
    return [NumberCheck(f"manifest.task_set.content_sha256 (the SHA-256 of {TASKS})",
                        _get(manifest, "task_set", "content_sha256"), digest)]


def _models(manifest: Mapping[str, Any]) -> list[NumberCheck]:
    models = manifest.get("models")
    names = [_get(m, "display_name") for m in models] if isinstance(models, list) else models
    return [NumberCheck("manifest.models[].display_name (restates configuration.models, in order: the models the "
                        "numbers belong to)", names, _get(manifest, "configuration", "models"))]


def _ekphrasis(manifest: Mapping[str, Any]) -> list[NumberCheck]:
    seed = ("configuration", "seed")
    return [
        *(_check(manifest, ("seeds", s), seed, "the seed the fit read") for s in ("run", "bootstrap", "rank_draws")),
        _check(manifest, ("board_facts", "budget_per_task"), ("judge", "budget_per_task"), "the budget the CSV prints"),
        _check(manifest, ("board_facts", "judge"), ("judge", "name"), "the judge the CSV prints"),
        _check(manifest, ("board_facts", "simulated"), ("judge", "simulated"), "the snapshot's flag is its judge's"),
        _check(manifest, ("board_facts", "task_set_version"), ("task_set", "version"), "the version the CSV prints"),
        _check(manifest, ("board_facts", "code_version"), ("board_code_version",), "the code version the CSV prints"),
        _check(manifest, ("judge", "config", "n_boot"), ("configuration", "n_boot"), "the bootstrap size the fit read"),
        *_models(manifest),
    ]


def _c2(manifest: Mapping[str, Any]) -> list[NumberCheck]:
    seed, settings = ("configuration", "seed"), ("configuration", "settings")
    versions = _get(manifest, "engine_components", "versions")
    return [
        *(_check(manifest, ("seeds", s), seed, "the seed the results were scored with") for s in ("run", "bootstrap")),
        _check(manifest, ("engine_components", "tau"), (*settings, "tau"), "the Originality threshold scored with"),
        _check(manifest, ("engine_components", "embedder"), (*settings, "embedder"), "the embedder of the run"),
        *(_check(manifest, ("engine_components", "versions", name), (*settings, name), "the run's version")
          for name in (sorted(versions) if isinstance(versions, Mapping) else ())),
        _check(manifest, ("rater", "name"), ("configuration", "rater"), "the rater scored with"),
        _check(manifest, ("rater", "second"), ("configuration", "second_rater"), "the second rater scored with"),
        _check(manifest, ("rater", "rerate_share"), (*settings, "rerate_share"), "the run's re-rating share"),
        _check(manifest, ("board_facts", "run"), ("source", "run"), "the run the CSV prints"),
        _check(manifest, ("board_facts", "code_version"), ("board_code_version",), "the code version the CSV prints"),
        *_models(manifest),
    ]


def _easel(root: Path, manifest: Mapping[str, Any]) -> list[NumberCheck]:
    runs = {str(r.get("id")): r for r in read_jsonl(root, "records/runs.jsonl")} \
        if (Path(root) / "records/runs.jsonl").is_file() else {}
    out = [_check(manifest, ("configuration", "task_set", f), ("task_set", f), "the task set the board is of")
           for f in ("id", "name", "version")]
    seeds = _get(manifest, "seeds", "runs")
    for run_id, seed in sorted(seeds.items()) if isinstance(seeds, Mapping) else ():
        out.append(NumberCheck(f"manifest.seeds.runs[{run_id}] (restates records/runs.jsonl run {run_id}.seed)", seed,
                               _get(runs.get(run_id, {}), "seed")))
    agents = manifest.get("agents")
    for k, agent in enumerate(agents if isinstance(agents, list) else ()):
        run = runs.get(str(_get(agent, "run")), {})
        for field, source in (("name", "agent_name"), ("kind", "agent_kind"), ("simulated", "is_simulated"),
                              ("budget", "budget_setting"), ("config", "config")):
            out.append(NumberCheck(f"manifest.agents[{k}].{field} (restates records/runs.jsonl run "
                                   f"{_get(agent, 'run')}.{source})", _get(agent, field), _get(run, source)))
    board_runs = sorted((r for r in runs.values() if r.get("on_board")), key=lambda r: r.get("board_position") or 0)
    out.append(NumberCheck("manifest.source.runs (restates the runs on the board, records/runs.jsonl)",
                           _get(manifest, "source", "runs"), [r.get("id") for r in board_runs]))
    return out


def restatement_checks(root: Path, manifest: Mapping[str, Any]) -> list[NumberCheck]:
    """Each restated fact of the manifest beside the value it restates."""
    kind = manifest.get("kind")
    specific = (_ekphrasis(manifest) if kind == "ekphrasis" else _c2(manifest) if kind == "c2"
                else _easel(root, manifest) if kind == "easel" else [])
    return _common(root, manifest) + specific
