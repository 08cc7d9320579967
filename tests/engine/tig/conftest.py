"""Fixtures shared by the TIG tests."""

import pytest


@pytest.fixture(scope="module")
def embedder():
    """The offline MiniLM embedder (engine.embed), made once per test module."""
    from engine.embed import text_embedder

    return text_embedder("minilm")
