"""The human labels of an Ekphrasis snapshot's calibrated views, for its reproducibility bundle.

Registered from :meth:`annotation.apps.AnnotationConfig.ready` as a contents extension of
``leaderboard.bundles`` (which may not import this app). For every text-pairwise campaign on the
snapshot's task set that has labels, the bundle carries:

* the calibrated views as the site recorded them for the campaign's current label version
  (``board/calibration-<campaign>.json``, the :class:`~annotation.models.CalibrationRecord` payload;
  computed and recorded now if that version has no record yet);
* every label the views were computed from, one line each, in the order the site reads them
  (``records/human_labels.jsonl``: item, task, dimension, the two responses and their models, the
  label), with the annotator as a keyed hash — HMAC-SHA256 under a key drawn for this bundle and then
  forgotten — so one person's labels can be told apart within the bundle and nowhere else: no
  username, no user id, no hash that a dictionary of usernames could reverse.

``verify_bundle`` recomputes the views from those lines and the bundle's judge comparisons and
responses (:mod:`engine.bundle.calibration`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from annotation import calibration, selectors
from annotation.judge_join import LEADERBOARD_DIMENSION
from engine.bundle.manifest import BundleWriter
from engine.calibration_views import ALPHA, STYLE_BOOTSTRAP
from leaderboard.ekphrasis.models import LeaderboardSnapshot

LABELS = "records/human_labels.jsonl"
#: Hex digits of an annotator's keyed hash: 64 bits, no collision among any campaign's annotators.
ANNOTATOR_HEX = 16


def annotator_blinder():
    """``blind(username) -> id``: HMAC-SHA256 under a fresh random key (never stored)."""
    key = secrets.token_bytes(32)
    return lambda who: hmac.new(key, str(who).encode("utf-8"), hashlib.sha256).hexdigest()[:ANNOTATOR_HEX]


def ekphrasis_human_labels(snapshot: LeaderboardSnapshot, writer: BundleWriter) -> dict:
    """Write the calibrated views and their labels; the manifest's ``human_labels`` (nothing when no
    campaign on the task set has labels: the exporter's "none used" stays)."""
    payload = snapshot.payload
    model_ids = [int(m) for m in payload["model_ids"]]
    names = list(payload["models"]) if isinstance(payload.get("models"), list) else [str(m) for m in model_ids]
    name_of = dict(zip(model_ids, names))
    blind = annotator_blinder()
    rows, campaigns = [], []
    for campaign in calibration.text_campaigns_for(snapshot):
        labels = selectors._label_rows(campaign)
        if not labels:
            continue
        record = calibration.calibration_record_ensure(snapshot=snapshot, campaign=campaign)
        by_item: dict[int, list] = {}
        for label in labels:
            by_item.setdefault(label.item_id, []).append(label)
        items = selectors.item_rows(campaign=campaign)
        for item in items.values():
            for label in by_item.pop(item.id, ()):
                rows.append({"campaign": campaign.pk, "item": item.id, "task": item.task_external_id,
                             "dimension": str(item.dimension), "is_gold": bool(item.is_gold),
                             "response_a": item.response_a_id, "response_b": item.response_b_id,
                             "model_a": name_of.get(item.model_a_id), "model_b": name_of.get(item.model_b_id),
                             "annotator": blind(label.annotator), "label": label.category,
                             "simulated": bool(label.is_simulated)})
        board = writer.json(f"board/calibration-{campaign.pk}.json", record.payload)
        campaigns.append({"campaign": campaign.pk, "name": campaign.name, "k": campaign.k,
                          "label_version": record.label_version, "method_version": record.method_version,
                          "record": record.pk,
                          "record_code_version": record.code_version, "n_labels": record.n_labels, "board": board})
    if not campaigns:
        return {}
    writer.jsonl(LABELS, rows)
    return {"human_labels": {
        "used": True, "labels": LABELS, "campaigns": campaigns,
        "annotator_ids": f"HMAC-SHA256 (first {ANNOTATOR_HEX} hex digits) of the annotator under a random key drawn "
                         "for this bundle and not stored: the same person has the same id within this bundle only",
        "dimension_codes": {str(d): code for d, code in LEADERBOARD_DIMENSION.items()},
        "style_fields": calibration.STYLE_FIELDS, "alpha": ALPHA, "style_bootstrap": STYLE_BOOTSTRAP,
        "note": "the human-calibrated views of this snapshot (judge only / people only / calibrated by people, "
                "style-controlled), one board per campaign at its label version; verify_bundle recomputes them "
                "from these labels and the judge comparisons",
    }}
