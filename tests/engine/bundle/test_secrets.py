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
