import json
from pathlib import Path

import numpy as np
import pytest

from engine.embed import (
    MINILM_DIM,
    CachedEmbedder,
    EmbeddingCache,
    MiniLMEmbedder,
    OpenAIEmbedder,
    embed_texts,
    l2_normalise,
    minilm_model_dir,
    text_embedder,
)

REFERENCE = Path(__file__).parent / "reference_data" / "minilm_reference.json"
# The fidelity bar for the numpy runtime against sentence-transformers
MIN_COSINE = 0.999
# float32 forward passes of the same text in different batches differ only by summation order
BATCH_TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def minilm():
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def reference():
    return json.loads(REFERENCE.read_text())


class CountingEmbedder:
    """Deterministic 4-d vectors from the text; counts how many texts it was asked for."""

    backend = "counting"
    model = "hash-4"
    dim = 4

    def __init__(self):
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        rows = [[len(t) + 1.0, sum(map(ord, t)) % 7 + 1.0, 1.0, t.count("a") + 0.5] for t in texts]
        return l2_normalise(np.asarray(rows, dtype=np.float32).reshape(-1, 4))


def test_minilm_matches_committed_sentence_transformers_vectors(minilm, reference):
    ours = minilm.embed(reference["texts"])
    theirs = np.asarray(reference["vectors"], dtype=np.float32)
    cosines = (ours * theirs).sum(axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosines.min() >= MIN_COSINE, dict(zip(reference["texts"], cosines.round(6)))


def test_minilm_matches_sentence_transformers_where_installed(minilm):
    st = pytest.importorskip("sentence_transformers")
    model = st.SentenceTransformer(str(minilm_model_dir()), device="cpu")
    texts = ["", "a lighthouse beam in fog", "Ünïcödé façade — 東京", "spiral " * 300, "plants and leaves"]
    theirs = model.encode(texts, normalize_embeddings=True)
    ours = minilm.embed(texts)
    assert ((ours * theirs).sum(axis=1)).min() >= MIN_COSINE


def test_embed_texts_returns_unit_rows_of_384(minilm):
    vectors = embed_texts(["one", "two words", ""])
    assert vectors.shape == (3, MINILM_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embed_texts_of_nothing_is_an_empty_384_column_array():
    assert embed_texts([]).shape == (0, MINILM_DIM)


def test_embed_texts_rejects_a_bare_string():
    with pytest.raises(TypeError):
        embed_texts("a lighthouse")


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown embeddings backend"):
        embed_texts(["x"], backend="word2vec")


def test_text_beyond_256_tokens_is_truncated(minilm):
    base = "tide " * 300
    ids = minilm.token_ids([base])[0]
    assert len(ids) == 256
    a, b = minilm.embed([base, base + " completely different ending about volcanoes"])
    assert float(a @ b) > 1 - 1e-6


def test_a_text_embeds_the_same_alone_and_in_a_padded_batch(minilm):
    texts = [
        "short",
        "a much longer phrase about a lighthouse standing on a cliff above the sea",
        "mid length",
    ]
    together = minilm.embed(texts)
    alone = np.stack([minilm.embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=BATCH_TOLERANCE)


def test_batches_keep_input_order(minilm):
    small = MiniLMEmbedder(batch_size=2)
    texts = ["zebra crossing", "a", "the longest text of them all by quite a margin", "moon"]
    np.testing.assert_allclose(small.embed(texts), minilm.embed(texts), atol=BATCH_TOLERANCE)


def test_cached_embedder_embeds_each_distinct_text_once():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner)
    first = cached.embed(["sun", "moon", "sun"])
    second = cached.embed(["moon", "star"])
    assert inner.seen == ["sun", "moon", "star"]
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(first[1], second[0])


def test_persistent_cache_serves_a_new_process_without_embedding(tmp_path):
    CachedEmbedder(CountingEmbedder(), EmbeddingCache(tmp_path)).embed(["sun", "moon"])
    inner = CountingEmbedder()
    again = CachedEmbedder(inner, EmbeddingCache(tmp_path)).embed(["moon", "sun"])
    assert inner.seen == []
    np.testing.assert_allclose(again, CountingEmbedder().embed(["moon", "sun"]))


def test_cache_keys_keep_backends_and_models_apart(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put_many("minilm", "m1", [("h", np.ones(3, np.float32))])
    assert cache.get_many("minilm", "m2", ["h"]) == {}
    assert cache.get_many("openai", "m1", ["h"]) == {}
    assert list(cache.get_many("minilm", "m1", ["h"])) == ["h"]


def test_the_default_minilm_is_not_loaded_while_every_text_is_in_the_cache(tmp_path, minilm, monkeypatch):
    """A judge run's Novelty contexts read a built TIG's embeddings from the cache: the MiniLM weights (~0.5 s
    of CPU to load) are loaded only when a text misses it, not whenever a "minilm" embedder is made."""
    import engine.embed as embed_module

    texts = ["a lighthouse beam in fog", "plants and leaves"]
    EmbeddingCache(tmp_path).put_many("minilm", minilm.model, zip(
        [embed_module.text_sha256(t) for t in texts], minilm.embed(texts)))
    monkeypatch.setattr(embed_module, "_DEFAULT_MINILM", None)
    embedder = text_embedder("minilm", cache_dir=tmp_path)
    cached = embedder.embed(texts)
    assert embed_module._DEFAULT_MINILM is None and embedder.calls == 0
    np.testing.assert_array_equal(cached, minilm.embed(texts))
    fresh = embedder.embed(["a text the cache has never seen"])  # a miss loads it, once
    assert embed_module._DEFAULT_MINILM is not None and embedder.calls == 1
    np.testing.assert_array_equal(fresh, minilm.embed(["a text the cache has never seen"]))
    assert (embedder.backend, embedder.model) == ("minilm", minilm.model)  # the cache's key, as before
    assert text_embedder("minilm").embed([]).shape == (0, MINILM_DIM)


def test_embed_texts_with_a_cache_dir_writes_the_cache(tmp_path):
    vectors = embed_texts(["harbour", "harbour crane"], cache_dir=tmp_path)
    assert EmbeddingCache(tmp_path).count("minilm") == 2
    np.testing.assert_allclose(embed_texts(["harbour crane"], cache_dir=tmp_path)[0], vectors[1], atol=1e-6)


class FakeEmbeddingsClient:
    def __init__(self, dim=8):
        self.calls = []
        self.dim = dim

    def embed(self, texts):
        self.calls.append(list(texts))
        return np.asarray([[float(len(t)) + i for i in range(self.dim)] for t in texts])


def test_openai_backend_normalises_rows_and_leaves_batching_to_the_client():
    client = FakeEmbeddingsClient()
    embedder = OpenAIEmbedder(client, model="text-embedding-3-large")
    vectors = embedder.embed(["a", "bb", "ccc"])
    assert [len(c) for c in client.calls] == [3]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_openai_backend_refuses_a_short_answer():
    class Short(FakeEmbeddingsClient):
        def embed(self, texts):
            return super().embed(texts)[:-1]

    with pytest.raises(ValueError, match="returned shape"):
        OpenAIEmbedder(Short()).embed(["a", "b"])


def test_openai_backend_needs_a_client():
    with pytest.raises(ValueError, match="needs a provider client"):
        text_embedder("openai")


def test_openai_backend_through_the_fake_server_is_cached_per_text(tmp_path):
    from engine.providers.client import OpenAICompatibleClient, ProviderConfig
    from tests.fakes import FakeOpenAIServer

    with FakeOpenAIServer(embedding_dim=12) as server:
        client = OpenAICompatibleClient(
            ProviderConfig(base_url=server.base_url, model="text-embedding-3-large")
        )
        first = embed_texts(["fog", "beacon", "fog"], backend="openai", client=client, cache_dir=tmp_path)
        again = embed_texts(["beacon"], backend="openai", client=client, cache_dir=tmp_path)
        sent = [r.body["input"] for r in server.embedding_requests]
    assert first.shape == (3, 12)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_allclose(again[0], first[1])
    assert sent == [["fog", "beacon"]]
    assert EmbeddingCache(tmp_path).count("openai", "text-embedding-3-large") == 2
