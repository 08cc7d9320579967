from engine.bundle.c2 import PROTOCOL as C2_PROTOCOL
from engine.bundle.labels import label_checks


def test_a_c2_manifest_claiming_human_labels_is_named():
    # only an Ekphrasis snapshot's calibrated views read human labels; a C² board has nothing behind the claim
    manifest = {"kind": "c2", "protocol": C2_PROTOCOL, "simulated": True, "demo": False,
                "components": [{"role": "rater", "name": "simulated", "simulated": True}],
                "configuration": {"simulated": True, "demo": False}, "task_set": {"is_demo": False},
                "human_labels": {"used": True, "labels": "records/tasks.jsonl", "campaigns": []}}
    differing = [c.path for c in label_checks(".", manifest) if not c.identical]
    assert differing == ["manifest.human_labels.used (no human label enters a c2 board)"]
