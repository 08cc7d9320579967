import hashlib

import numpy as np
import pytest


class HashEmbedder:
    """A deterministic stand-in for MiniLM in fast engine tests: a unit vector per text from its hash
    (texts with equal hashes are equal, so a repeated brief is an exact duplicate)."""

    backend = "hash"
    model = "test"

    def __init__(self, dim: int = 32) -> None:
        self.dim = dim
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        rows = []
        for text in texts:
            seed = int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)
            v = np.random.default_rng(seed).normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)


@pytest.fixture
def hash_embedder():
    return HashEmbedder()
