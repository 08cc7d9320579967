"""Recompute an Ekphrasis snapshot's human-calibrated views (issue 24) from a bundle's files.

The bundle's ``records/human_labels.jsonl`` holds every label a campaign's views were computed from
(annotators as keyed hashes), ``records/comparisons.jsonl`` the run's judge verdicts and
``records/responses.jsonl`` the texts whose style the style-controlled fits read. The join and the
fits are :func:`engine.calibration_views.joined_inputs` and :func:`~engine.calibration_views.views_by_dimension`,
the functions the site ran (same α, bootstrap size and the engine's fixed seeds), and every number of
each campaign's stored board (``board/calibration-<campaign>.json``) is compared with the recomputation.

Boards list rows ranked; before comparing, every list of model rows becomes a mapping by model (and
budget pairs by "better > worse", coefficients by feature), so a flipped label that reorders a board
is reported as the numbers of the models it moved, not as every position that shifted.

Each campaign of the manifest records the calibration method version its board was computed with
(``method_version``, the site's ``CalibrationRecord.method_version``; a bundle exported before it was
recorded reads as 0, as such a record does). The recomputation runs this verifier's
:data:`~engine.calibration_views.CALIBRATION_METHOD_VERSION` and says so; when the two versions differ
and so do the numbers, the version is named as the reason (the formulas changed between the two, so a
differing number is no evidence of tampering, and no evidence of honesty either: the bundle is refused).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.bundle.manifest import MANIFEST, FieldTypeError, json_type, read_json, read_jsonl
from engine.bundle.numbers import NumberCheck, compare
from engine.calibration_views import (
    CALIBRATION_METHOD_VERSION,
    LABEL_VALUE,
    RANK_SETS,
    HumanItem,
    JudgeVerdict,
    joined_inputs,
    views_by_dimension,
)

__all__ = ["by_name", "label_link_checks", "recompute"]

COMPARISONS = "records/comparisons.jsonl"
RESPONSES = "records/responses.jsonl"


def _list_key(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    if "model" in item:
        return str(item["model"])
    if "better" in item and "worse" in item:
        return f"{item['better']} > {item['worse']}"
    if "feature" in item:
        return str(item["feature"])
    return None


def by_name(value: Any) -> Any:
    """``value`` with every list of named rows turned into a mapping by name (recursively)."""
    if isinstance(value, dict):
        return {k: by_name(v) for k, v in value.items()}
    if isinstance(value, list):
        keys = [_list_key(item) for item in value]
        if value and None not in keys and len(set(keys)) == len(keys):
            return {k: by_name(item) for k, item in zip(keys, value)}
        return [by_name(item) for item in value]
    return value


def _campaign_payload(campaign: Mapping[str, Any], spec: Mapping[str, Any], labels: list[dict],
                      comparisons: list[dict], responses: Mapping[int, Mapping], stored: Mapping[str, Any],
                      models: list[str]) -> dict:
    index = {name: k for k, name in enumerate(models)}
    model_of_response = {pk: r["model"] for pk, r in responses.items()}
    items: dict[int, HumanItem] = {}
    values: dict[int, list[float]] = {}
    for row in labels:
        items.setdefault(row["item"], HumanItem(
            int(row["item"]), row["task"], row["dimension"], bool(row["is_gold"]), row["response_a"],
            row["response_b"], index.get(row["model_a"]), index.get(row["model_b"])))
        if row["label"] in LABEL_VALUE:
            values.setdefault(row["item"], []).append(LABEL_VALUE[row["label"]])
    codes = spec["dimension_codes"]
    board_dims = stored.get("per_dimension", {})
    verdicts = {}
    for dimension, code in codes.items():
        if code not in board_dims:
            continue
        verdicts[dimension] = [
            JudgeVerdict(c["task"], c["shown_a"], c["shown_b"], index.get(model_of_response.get(c["shown_a"])),
                         index.get(model_of_response.get(c["shown_b"])), c["winner"])
            for c in comparisons if c["dimension"] == code and c["kind"] == "primary" and c["status"] == "ok"]
    texts = {pk: {"core_idea": r.get("core_idea"), "visual_description": r.get("visual_description")}
             for pk, r in responses.items()}
    inputs = joined_inputs(model_ids=list(stored["model_ids"]), names=models, items=list(items.values()),
                           labels=values, k=int(campaign["k"]), verdicts=verdicts, texts=texts,
                           n_labels=len(labels), style_fields=spec["style_fields"])
    return {"snapshot": spec["snapshot"], "campaign": campaign["campaign"],
            "campaign_name": campaign["name"], "label_version": campaign["label_version"],
            "n_labels": inputs.n_labels, "alpha": spec["alpha"], "models": inputs.names,
            "dimensions": views_by_dimension(inputs), "rank_sets": RANK_SETS}


def label_link_checks(labels: list[Mapping[str, Any]], responses: Mapping[int, Mapping[str, Any]],
                      name: str) -> list[NumberCheck]:
    """Each labelled item's two responses beside the bundle's responses: the model and task a label line
    says each shown response has against the response of that id in ``records/responses.jsonl``.

    The calibrated fits read a label by its models' names and its response ids; labels of another run
    (same models, other responses) would be fitted without complaint, and a forger who also recomputed
    the calibrated board would verify. One check per item and side (its first label line)."""
    out, seen = [], set()
    for line, row in enumerate(labels, start=1):
        if row.get("item") in seen:
            continue
        seen.add(row.get("item"))
        for side in ("a", "b"):
            pk = row.get(f"response_{side}")
            response = responses.get(pk) if isinstance(pk, int) else None
            actual = ("(no such response in records/responses.jsonl)" if response is None
                      else f"{response.get('model')} on task {response.get('task')}")
            out.append(NumberCheck(f"{name} line {line} (item {row.get('item')}).response_{side} {pk}: model and task",
                                   f"{row.get(f'model_{side}')} on task {row.get('task')}", actual))
    return out


def recompute(root: Path, manifest: Mapping[str, Any], notes: list[str] | None = None) -> list[NumberCheck]:
    """Every number of every campaign's calibrated board beside its recomputation (none when the
    snapshot's bundle carries no human labels); ``notes`` is told which method version each campaign's
    recomputation used beside the bundle's."""
    notes = notes if notes is not None else []
    spec = manifest.get("human_labels") or {}
    if not spec.get("used"):
        return []
    spec = {**spec, "snapshot": manifest.get("source", {}).get("snapshot")}
    stored_board = read_json(root, manifest["board"])
    models = list(manifest["configuration"]["models"])
    comparisons = read_jsonl(root, COMPARISONS)
    responses = {int(r["id"]): r for r in read_jsonl(root, RESPONSES)}
    all_labels = read_jsonl(root, spec["labels"])
    checks: list[NumberCheck] = label_link_checks(all_labels, responses, spec["labels"])
    for campaign in spec["campaigns"]:
        labels = [row for row in all_labels if row["campaign"] == campaign["campaign"]]
        stored = read_json(root, campaign["board"])
        recomputed = _campaign_payload(campaign, spec, labels, comparisons, responses, stored_board, models)
        prefix = f"calibration[campaign {campaign['campaign']}]."
        numbers = compare(by_name(stored), by_name(recomputed), prefix=prefix)
        checks += numbers + _method_version_checks(campaign, numbers, prefix, notes)
    return checks


def _method_version_checks(campaign: Mapping[str, Any], numbers: list[NumberCheck], prefix: str,
                           notes: list[str]) -> list[NumberCheck]:
    """The note of the method version a campaign's board was recomputed with, and a differing check naming
    the bundle's version when it is not the verifier's and a recomputed number differs."""
    version = campaign.get("method_version", 0)  # absent: exported before it was recorded, as a record's 0
    if not isinstance(version, int) or isinstance(version, bool):
        where = f"{MANIFEST}, field human_labels.campaigns[campaign {campaign.get('campaign')}].method_version"
        raise FieldTypeError(f"{where}: expected an integer, got {json_type(version)}")
    notes.append(f"{prefix.rstrip('.')}: recomputed with calibration method version {CALIBRATION_METHOD_VERSION}; the bundle's "
                 f"board was computed with version {version}")
    if version == CALIBRATION_METHOD_VERSION or all(c.identical for c in numbers):
        return []
    return [NumberCheck(f"{prefix}method_version (the board was computed by other formulas than this verifier's, "
                        f"so its {sum(not c.identical for c in numbers)} differing numbers cannot be checked: verify "
                        f"with a verifier of version {version}, or export the board again from a site of version "
                        f"{CALIBRATION_METHOD_VERSION})", version, CALIBRATION_METHOD_VERSION)]
