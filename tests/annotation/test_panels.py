"""Each panel's parameter contract (annotation/panels.py): what an entry request must carry."""

from __future__ import annotations

import pytest

from annotation.panels import (
    PanelParamsInvalid,
    entry_params_parse,
    entry_query,
    entry_signature,
    entry_signature_valid,
    mturk_submit_url,
    panel_id_key,
    prolific_completion_url,
)


def test_prolific_needs_its_three_ids():
    entry = entry_params_parse(panel="prolific", params={"PROLIFIC_PID": "5f1a", "STUDY_ID": "s1", "SESSION_ID": "x_1-2"})
    assert (entry.panel_id, entry.study_id, entry.session_id, entry.preview) == ("5f1a", "s1", "x_1-2", False)
    with pytest.raises(PanelParamsInvalid) as refused:
        entry_params_parse(panel="prolific", params={"PROLIFIC_PID": "5f1a"})
    assert refused.value.problems == ["STUDY_ID is missing", "SESSION_ID is missing"]


@pytest.mark.parametrize("value", ["{{%PROLIFIC_PID%}}", "a" * 65, "-leading-dash", "é", "a b", "a/b", "a\nb"])
def test_an_id_of_the_wrong_shape_is_refused(value):
    with pytest.raises(PanelParamsInvalid, match="PROLIFIC_PID is malformed"):
        entry_params_parse(panel="prolific", params={"PROLIFIC_PID": value, "STUDY_ID": "s", "SESSION_ID": "x"})


def test_mturk_preview_needs_no_worker():
    assert entry_params_parse(panel="mturk", params={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}).preview


@pytest.mark.parametrize("where", ["http://www.mturk.com", "https://www.mturk.com.evil.org", "https://evil.org",
                                   "https://www.mturk.com/other/path", "https://user@www.mturk.com", "javascript:alert(1)"])
def test_mturk_submit_address_must_be_mturks(where):
    params = {"workerId": "A1", "assignmentId": "AS1", "hitId": "H1", "turkSubmitTo": where}
    with pytest.raises(PanelParamsInvalid, match="turkSubmitTo"):
        entry_params_parse(panel="mturk", params=params)


@pytest.mark.parametrize("where", ["https://www.mturk.com:abc", "https://www.mturk.com:99999", "https://www.mturk.com:-1",
                                   "https://www.mturk.com:²", "https://[www.mturk.com", "https://["])
def test_mturk_submit_address_that_urlsplit_cannot_read_is_refused(where):
    # urlsplit raises ValueError on an unclosed "[" and .port on a port that is not 0-65535 in ASCII digits:
    # the entry page gave a 500 instead of its "incomplete link" page.
    params = {"workerId": "A1", "assignmentId": "AS1", "hitId": "H1", "turkSubmitTo": where}
    with pytest.raises(PanelParamsInvalid) as refused:
        entry_params_parse(panel="mturk", params=params)
    assert refused.value.problems == ["turkSubmitTo is not an MTurk address"]


def test_mturk_worker_posts_back_to_the_address_they_came_from():
    entry = entry_params_parse(panel="mturk", params={"workerId": "A1", "assignmentId": "AS1", "hitId": "H1",
                                                      "turkSubmitTo": "https://workersandbox.mturk.com/"})
    assert mturk_submit_url(entry.turk_submit_to) == "https://workersandbox.mturk.com/mturk/externalSubmit"


def test_generic_panel_reads_its_own_parameter():
    assert entry_params_parse(panel="generic", params={"sona": "S123"}, id_param="sona").panel_id == "S123"
    with pytest.raises(PanelParamsInvalid):
        entry_params_parse(panel="generic", params={"pid": "S123"}, id_param="sona")


def test_entry_query_carries_the_panels_placeholders():
    assert entry_query(panel="prolific") == ("?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
                                             "&SESSION_ID={{%SESSION_ID%}}")
    assert entry_query(panel="mturk") == ""
    assert entry_query(panel="generic", id_param="sona") == "?sona={{PARTICIPANT_ID}}"


#: HMAC-SHA256 of "TOKEN-abc_123:P1" keyed with "secret-of-the-study", from
#: printf '%s' 'TOKEN-abc_123:P1' | openssl dgst -sha256 -hmac 'secret-of-the-study' -r   (OpenSSL 3)
SIGNED_P1 = "daa18f42b803ef70695ca77b6b324667df6074a19d9efcdeecd41b5a69d2dc31"


def test_an_entry_signature_is_the_hmac_sha256_of_the_entry_token_and_the_id():
    assert entry_signature(secret="secret-of-the-study", entry_token="TOKEN-abc_123", panel_id="P1") == SIGNED_P1


@pytest.mark.parametrize(("signature", "valid"), [
    (SIGNED_P1, True),
    (SIGNED_P1.upper(), True),  # hex in either case
    ("", False),
    (SIGNED_P1[:-1], False),  # wrong length
    (SIGNED_P1 + "0", False),
    ("z" * 64, False),  # not hex
    ("é" * 64, False),  # not ASCII: refused before compare_digest, which would raise on such a str
    (SIGNED_P1[:-1] + ("0" if SIGNED_P1[-1] != "0" else "1"), False),
])
def test_an_entry_signature_is_valid_only_as_64_hex_digits_of_the_right_hmac(signature, valid):
    assert entry_signature_valid(secret="secret-of-the-study", entry_token="TOKEN-abc_123", panel_id="P1",
                                 signature=signature) is valid


@pytest.mark.parametrize(("secret", "token", "panel_id"), [
    ("another-secret", "TOKEN-abc_123", "P1"), ("secret-of-the-study", "TOKEN-other", "P1"),
    ("secret-of-the-study", "TOKEN-abc_123", "P2"), ("secret-of-the-study", "TOKEN-abc_123", "p1"),
    ("", "TOKEN-abc_123", "P1"),  # no secret validates nothing
])
def test_an_entry_signature_binds_the_secret_the_study_and_the_id(secret, token, panel_id):
    assert not entry_signature_valid(secret=secret, entry_token=token, panel_id=panel_id, signature=SIGNED_P1)


def test_a_generic_panels_signature_is_read_and_never_a_problem_of_the_link():
    entry = entry_params_parse(panel="generic", params=_query(f"pid=P1&sig={SIGNED_P1}"))
    assert (entry.panel_id, entry.signature) == ("P1", SIGNED_P1)
    assert entry_params_parse(panel="generic", params=_query("pid=P1&sig=<junk>")).signature == "<junk>"
    assert entry_params_parse(panel="generic", params=_query(f"pid=P1&sig={SIGNED_P1}&sig={SIGNED_P1}")).signature \
        == SIGNED_P1
    assert entry_params_parse(panel="generic", params=_query(f"pid=P1&sig={SIGNED_P1}&sig=00")).signature == ""
    prolific = _query(f"PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X&sig={SIGNED_P1}")
    assert entry_params_parse(panel="prolific", params=prolific).signature == ""  # only a generic panel signs


def test_a_signing_generic_studys_entry_query_carries_the_signatures_placeholder():
    assert entry_query(panel="generic", signed=True) == "?pid={{PARTICIPANT_ID}}&sig={{SIGNATURE}}"


def test_prolific_completion_url_carries_the_code():
    assert prolific_completion_url("AB12") == "https://app.prolific.com/submissions/complete?cc=AB12"


def _query(text: str):
    from django.http import QueryDict

    return QueryDict(text)


@pytest.mark.parametrize("panel, query, name", [
    ("prolific", "PROLIFIC_PID=5f1a&PROLIFIC_PID=6b2c&STUDY_ID=s&SESSION_ID=x", "PROLIFIC_PID"),
    ("prolific", "PROLIFIC_PID=5f1a&STUDY_ID=s&SESSION_ID=x&SESSION_ID=y", "SESSION_ID"),
    ("mturk", "workerId=A1&workerId=A2&assignmentId=AS1&hitId=H1&turkSubmitTo=https://www.mturk.com", "workerId"),
    ("mturk", "workerId=A1&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&assignmentId=AS1&hitId=H1"
              "&turkSubmitTo=https://www.mturk.com", "assignmentId"),
    ("mturk", "workerId=A1&assignmentId=AS1&hitId=H1&turkSubmitTo=https://www.mturk.com"
              "&turkSubmitTo=https://workersandbox.mturk.com", "turkSubmitTo"),
    ("generic", "pid=S1&pid=S2", "pid"),
])
def test_a_parameter_given_twice_with_different_ids_is_refused(panel, query, name):
    """Django's QueryDict answers a repeated parameter with its last value: one participant could be
    entered as another by appending the other's id, and which of two ids a link meant was silently
    decided by their order. Two different well-formed values are refused; neither is taken."""
    with pytest.raises(PanelParamsInvalid) as refused:
        entry_params_parse(panel=panel, params=_query(query))
    assert f"{name} is given more than once, with different values" in refused.value.problems


def test_a_parameter_repeated_with_the_same_id_or_beside_its_placeholder_is_that_id():
    entry = entry_params_parse(panel="prolific", params=_query(
        "PROLIFIC_PID=5f1a&PROLIFIC_PID=5f1a&STUDY_ID=s&SESSION_ID=x"))
    assert entry.panel_id == "5f1a"
    # a panel that appends its id to a link that still carries the placeholder
    entry = entry_params_parse(panel="generic", params=_query("pid={{PARTICIPANT_ID}}&pid=S123"))
    assert entry.panel_id == "S123"
    assert entry_params_parse(panel="mturk", params=_query(
        "assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")).preview
    with pytest.raises(PanelParamsInvalid, match="PROLIFIC_PID is malformed"):
        entry_params_parse(panel="prolific", params=_query("PROLIFIC_PID=a b&PROLIFIC_PID=<x>&STUDY_ID=s&SESSION_ID=x"))


def test_surrounding_whitespace_of_an_id_is_trimmed():
    entry = entry_params_parse(panel="mturk", params={"workerId": " A1B2C3\t", "assignmentId": "ASG1 ",
                                                      "hitId": "HIT1", "turkSubmitTo": " https://www.mturk.com"})
    assert (entry.panel_id, entry.session_id, entry.turk_submit_to) == ("A1B2C3", "ASG1", "https://www.mturk.com")


def test_a_panel_ids_key_is_the_same_in_every_case():
    assert panel_id_key("A1B2C3") == panel_id_key("a1b2c3") == panel_id_key(" a1B2c3 ") == "a1b2c3"
