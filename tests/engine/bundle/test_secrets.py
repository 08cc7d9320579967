from engine.bundle.secrets import REDACTED, looks_secret, redactor, scrubbed


def test_credential_fields_are_scrubbed_and_key_variable_names_kept():
    record = {"headers": {"Authorization": "Bearer abc", "Accept": "json"}, "api_key": "k", "api_key_env": "OPENAI_KEY",
              "usage": {"prompt_tokens": 12}, "nested": [{"password": "p"}], "token": ""}
    assert scrubbed(record) == {"headers": {"Authorization": REDACTED, "Accept": "json"}, "api_key": REDACTED,
                                "api_key_env": "OPENAI_KEY", "usage": {"prompt_tokens": 12},
                                "nested": [{"password": REDACTED}], "token": ""}


def test_token_counts_are_not_credentials():
    assert not looks_secret("completion_tokens") and looks_secret("access_token") and looks_secret("SECRET_KEY")


def test_the_redactor_replaces_every_secret_value_longest_first():
    redact = redactor(["sk-abcdefgh", "sk-abcdefgh-long", "short"])
    assert redact("a sk-abcdefgh-long b sk-abcdefgh c short") == f"a {REDACTED} b {REDACTED} c short"


def test_a_key_in_a_url_is_redacted_though_no_variable_holds_it():
    redact = redactor([])
    text = ('endpoint https://bob:hunter2-secret@api.example.com/v1/chat?key=AIzaSyFAKE123456&alt=json, '
            'image "https://bucket.s3.amazonaws.com/a.png?X-Amz-Signature=abcdef0123&X-Amz-Expires=60"')
    assert redact(text) == (f'endpoint https://bob:{REDACTED}@api.example.com/v1/chat?key={REDACTED}&alt=json, '
                            f'image "https://bucket.s3.amazonaws.com/a.png?X-Amz-Signature={REDACTED}&X-Amz-Expires=60"')


def test_ordinary_urls_and_prose_are_left_alone():
    text = "see https://example.com/paper?id=42&page=3 and the key idea: tokens=5"
    assert redactor(["sk-abcdefgh"])(text) == text
