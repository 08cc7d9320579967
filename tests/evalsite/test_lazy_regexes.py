"""Django's lazily compiled module patterns used by every request are the compiled patterns themselves after
start-up (evalsite/lazy_regexes.py), the same patterns the lazy objects would compile."""

from __future__ import annotations

import importlib
import re

import pytest
from django.utils.regex_helper import _lazy_re_compile

from evalsite.lazy_regexes import MODULES, lazy_regexes_compiled

#: Each replaced global with the source Django compiles it from (django/…, Django 5.2).
EXPECTED = {
    "django.core.signing._SEP_UNSAFE": r"^[A-z0-9-_=]*$",
    "django.middleware.csrf.invalid_token_chars_re": "[^a-zA-Z0-9]",
    "django.utils.cache.cc_delim_re": r"\s*,\s*",
}


def test_every_lazy_pattern_of_the_modules_is_compiled_at_start_up():
    for name in MODULES:
        module = importlib.import_module(name)
        assert not [attribute for attribute, value in vars(module).items()
                    if type(value).__name__ == "SimpleLazyObject"], name
    for dotted, source in EXPECTED.items():
        module, attribute = dotted.rsplit(".", 1)
        pattern = getattr(importlib.import_module(module), attribute)
        assert type(pattern) is re.Pattern and pattern.pattern == source
    host = importlib.import_module("django.http.request").host_validation_re
    assert type(host) is re.Pattern and host.match("127.0.0.1:18300")
    assert lazy_regexes_compiled() == []  # idempotent


@pytest.mark.parametrize("token", ["a" * 32, "a" * 64, "a" * 31, "!" * 32, "é" * 32])
def test_the_csrf_format_check_answers_as_with_the_lazy_pattern(token, monkeypatch):
    from django.middleware import csrf

    def outcome():
        try:
            csrf._check_token_format(token)
        except csrf.InvalidTokenFormat as exc:
            return exc.reason
        return None

    compiled = outcome()
    monkeypatch.setattr(csrf, "invalid_token_chars_re", _lazy_re_compile("[^a-zA-Z0-9]"))
    assert outcome() == compiled
