import json

from engine.bundle.exchanges import REQUESTS, request_checks
from engine.providers.cache import chat_request_key, request_key


def _write(root, rows):
    (root / "records").mkdir(exist_ok=True)
    (root / REQUESTS).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_chat_request_key_of_the_body_as_sent_is_the_clients_key():
    messages = [{"role": "user", "content": "Describe one static image."}]
    body = {"model": "m", "messages": messages, "temperature": 0.2, "max_tokens": 30}
    assert chat_request_key(body, 3) == request_key("m", messages, {"temperature": 0.2, "max_tokens": 30}, 3)


def test_each_request_is_checked_against_its_key_and_an_edit_is_named_by_line(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}
    good = {"cache": "judge", "key": chat_request_key(body, 0), "model": "m", "sample_index": 0, "request": body,
            "reply": {"text": "ok"}}
    edited = {**good, "request": {**body, "temperature": 0.5}}
    _write(tmp_path, [good, edited])
    first, second = request_checks(tmp_path)
    assert first.identical and not second.identical
    assert second.path.startswith(f"{REQUESTS} line 2 (judge cache, model m)")


def test_a_sample_index_changed_no_longer_hashes_to_the_key(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    _write(tmp_path, [{"cache": "c2", "key": chat_request_key(body, 1), "model": "m", "sample_index": 2,
                       "request": body, "reply": {}}])
    (check,) = request_checks(tmp_path)
    assert not check.identical


def test_a_bundle_without_the_file_has_no_request_checks(tmp_path):
    assert request_checks(tmp_path) == []
