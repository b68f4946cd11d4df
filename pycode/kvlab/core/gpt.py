"""Numpy reference of the kvlab tiny GPT, nanoGPT order, with and without a KV cache.

The same weights (models/tiny/weights.npz, float32) and the same maths as the
ONNX export that runs in the browser; tests check that the logits agree within
1e-4. Runs in CPython and in Pyodide (numpy >= 2.0, nothing newer).

Two paths through `GPT.forward`:

- no cache (nanoGPT's `generate`): feed the whole sequence, every step.
- cache: feed only the new tokens; each layer appends their k, v of shape
  (B, nh, T_new, hs) to the cached ones and attends over all of them.

A cache is a list with one `(k, v)` pair per layer, each (B, nh, T_past, hs):
the layout of the ONNX `past_key_values.{i}.key|value`. Keys are stored after
the rotary embedding, so a cache can be cut (evicted) along axis 2 and the kept
entries stay valid; pass the new tokens' true `position_ids` afterwards.

Smeared keys (`smear_keys`): attention mixes each cached key with the key of the
slot before it, inside attention; the cache itself holds the plain keys, so its
layout is the usual one. After a cut, the first slot after the gap mixes with
its new neighbour: the one place where an eviction changes a kept entry's meaning.

Importing this module loads nothing; weights are read by `GPT.from_npz`.

Why a second transformer next to `decoding.ToyDecoder`: this one reproduces one
trained model exactly (RoPE, smeared keys, its GELU, float32), so the site can
hold numpy and onnxruntime-web equal; ToyDecoder is the textbook decoder the cost
figures reason about (any size, MHA/GQA, random weights, work counted per step).
Both use the one softmax, `kvlab.core.attention.softmax`.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, fields

import numpy as np

from kvlab.core.attention import softmax

__all__ = ["GPTConfig", "GPT", "PastKeyValues", "gelu", "layer_norm", "rope_cos_sin", "smear_keys"]

PastKeyValues = list  # list[tuple[np.ndarray, np.ndarray]]: per layer (k, v), each (B, nh, T_past, hs)


@dataclass
class GPTConfig:
    block_size: int = 512  # training context; RoPE itself has no hard limit
    vocab_size: int = 768  # 256 bytes + 512 BPE merges
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    rope_base: float = 10000.0
    rope_pairs: int = 0  # rotated (q, k) pairs per head, 0 = all; the rest stay position-free
    smear_keys: bool = False  # attention keys mixed with the previous slot's key (see smear_keys)

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to ~1e-7 (Abramowitz & Stegun 7.1.26); numpy has no erf and Pyodide has no scipy."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-a * a)
    return (s * y).astype(x.dtype)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, 0.5 x (1 + erf(x / sqrt 2)), as torch's default and the ONNX graph's Erf."""
    return 0.5 * x * (1.0 + _erf(x * np.float32(1 / math.sqrt(2))))


def rope_inv_freq(head_dim: int, base: float, rope_pairs: int = 0) -> np.ndarray:
    """Rotation speed of each of the hs/2 pairs; pairs from `rope_pairs` on are not rotated."""
    inv_freq = (1.0 / (base ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))).astype(np.float32)
    if rope_pairs:
        inv_freq[rope_pairs:] = 0.0
    return inv_freq


def rope_cos_sin(
    position_ids: np.ndarray, head_dim: int, base: float, rope_pairs: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin of shape (B, T, hs) for integer positions (B, T); rotate-half layout."""
    inv_freq = rope_inv_freq(head_dim, base, rope_pairs)  # (hs/2,)
    freqs = position_ids.astype(np.float32)[..., None] * inv_freq  # (B, T, hs/2)
    emb = np.concatenate([freqs, freqs], axis=-1)  # (B, T, hs)
    return np.cos(emb), np.sin(emb)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x (B, nh, T, hs) -> x*cos + rotate_half(x)*sin."""
    h = x.shape[-1] // 2
    rot = np.concatenate([-x[..., h:], x[..., :h]], axis=-1)  # rotate_half
    return x * cos[:, None] + rot * sin[:, None]


def smear_keys(k: np.ndarray, smear: np.ndarray) -> np.ndarray:
    """Smeared keys k'_j = g k_j + (1 - g) k_{j-1} (g = sigmoid(smear), one per head; k_{-1} = 0).

    k is the whole key sequence of a layer, cached + new, (B, nh, K, hs). The cache
    stores the plain keys; the mix is made here, inside attention, so a key that
    also "remembers" the token before it lets one head find "where did the current
    token occur before, and what came next" (induction, Olsson et al. 2022).
    After an eviction, the first kept slot mixes with the slot now before it.
    """
    g = (1.0 / (1.0 + np.exp(-smear.astype(np.float32))))[None, :, None, None].astype(np.float32)
    prev = np.concatenate([np.zeros_like(k[:, :, :1]), k[:, :, :-1]], axis=2)  # k_{j-1}
    return g * k + (np.float32(1) - g) * prev


class GPT:
    """The tiny GPT. `weights` maps the PyTorch state_dict names to float32 arrays."""

    def __init__(self, config: GPTConfig, weights: dict[str, np.ndarray]):
        self.config = config
        self.w = {k: np.asarray(v, dtype=np.float32) for k, v in weights.items()}

    @classmethod
    def from_npz(cls, source) -> GPT:
        """Load from a path, a file object, or the bytes of weights.npz (e.g. fetched in Pyodide)."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            source = io.BytesIO(bytes(source))
        with np.load(source, allow_pickle=False) as z:
            weights = {k: z[k] for k in z.files if k != "config_json"}
            cfg = json.loads(str(z["config_json"]))
        names = {f.name for f in fields(GPTConfig)}
        return cls(GPTConfig(**{k: v for k, v in cfg.items() if k in names}), weights)

    def num_params(self) -> int:
        return sum(v.size for v in self.w.values())

    # --- one block -----------------------------------------------------------

    def _qkv(self, i: int, x, cos, sin):
        """Layer i's queries, keys and values of the (normed) input x, each (B, nh, T, hs); q and k rotated."""
        B, T, C = x.shape  # batch, new tokens, embedding dim
        nh, hs = self.config.n_head, self.config.head_dim
        p = f"transformer.h.{i}.attn."
        qkv = x @ self.w[p + "c_attn.weight"].T + self.w[p + "c_attn.bias"]  # (B, T, 3C)
        q, k, v = np.split(qkv, 3, axis=-1)  # each (B, T, C)
        q = q.reshape(B, T, nh, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
        k = k.reshape(B, T, nh, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
        v = v.reshape(B, T, nh, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def _attention(self, i: int, x, cos, sin, past):
        B, T, C = x.shape  # batch, new tokens, embedding dim
        hs = self.config.head_dim
        p = f"transformer.h.{i}.attn."
        q, k, v = self._qkv(i, x, cos, sin)
        if past is not None:  # the cached path: append the new k, v to the old ones
            k = np.concatenate([past[0], k], axis=2)  # (B, nh, P+T, hs)
            v = np.concatenate([past[1], v], axis=2)  # (B, nh, P+T, hs)
        K = k.shape[2]  # keys: past + new
        P = K - T
        ks = smear_keys(k, self.w[p + "smear"]) if self.config.smear_keys else k  # keys as attention sees them
        att = (q @ ks.transpose(0, 1, 3, 2)) * np.float32(
            1.0 / math.sqrt(hs)
        )  # (B, nh, T, hs) x (B, nh, hs, K) -> (B, nh, T, K)
        causal = np.arange(K)[None, :] <= (P + np.arange(T))[:, None]  # (T, K): new token t sees cache slots <= P+t
        att = np.where(causal, att, np.float32(-np.inf))
        att = softmax(att, axis=-1).astype(np.float32)  # (B, nh, T, K)
        y = att @ v  # (B, nh, T, K) x (B, nh, K, hs) -> (B, nh, T, hs)
        y = y.transpose(0, 2, 1, 3).reshape(B, T, C)  # re-assemble all head outputs
        y = y @ self.w[p + "c_proj.weight"].T + self.w[p + "c_proj.bias"]
        return y, (k, v), att

    def _block(self, i: int, x, cos, sin, past):
        p = f"transformer.h.{i}."
        a, kv, att = self._attention(
            i, layer_norm(x, self.w[p + "ln_1.weight"], self.w[p + "ln_1.bias"]), cos, sin, past
        )
        x = x + a
        h = layer_norm(x, self.w[p + "ln_2.weight"], self.w[p + "ln_2.bias"])
        h = gelu(h @ self.w[p + "mlp.c_fc.weight"].T + self.w[p + "mlp.c_fc.bias"])  # (B, T, 4C)
        x = x + h @ self.w[p + "mlp.c_proj.weight"].T + self.w[p + "mlp.c_proj.bias"]
        return x, kv, att

    # --- the model -----------------------------------------------------------

    def forward(self, idx, cache: PastKeyValues | None = None, position_ids=None, return_attention: bool = False):
        """idx (B, T) int token ids -> (logits (B, T, vocab), new cache[, attentions]).

        cache=None: the whole sequence is computed (no cache). With a cache, idx holds only
        the new tokens. position_ids (B, T) default to past_length + arange(T).
        attentions: per layer (B, nh, T, past+T).
        """
        idx = np.asarray(idx, dtype=np.int64)
        if idx.ndim == 1:
            idx = idx[None]
        B, T = idx.shape
        P = 0 if cache is None else cache[0][0].shape[2]
        if position_ids is None:
            position_ids = np.broadcast_to(P + np.arange(T), (B, T))
        position_ids = np.asarray(position_ids, dtype=np.int64).reshape(B, T)
        cos, sin = rope_cos_sin(position_ids, self.config.head_dim, self.config.rope_base, self.config.rope_pairs)
        wte = self.w["transformer.wte.weight"]
        x = wte[idx]  # (B, T, C); no position embedding: RoPE inside attention
        new_cache, atts = [], []
        for i in range(self.config.n_layer):
            x, kv, att = self._block(i, x, cos, sin, None if cache is None else cache[i])
            new_cache.append(kv)
            atts.append(att)
        x = layer_norm(x, self.w["transformer.ln_f.weight"], self.w["transformer.ln_f.bias"])
        logits = x @ wte.T  # (B, T, vocab): lm_head tied to wte
        if return_attention:
            return logits, new_cache, atts
        return logits, new_cache

    def layer_qkv(self, idx, layer: int):
        """The queries, keys and values layer `layer` computes for the whole sequence idx (B, T), each
        (B, nh, T, hs): what attention compares and mixes there (keys and values are what the cache keeps)."""
        idx = np.asarray(idx, dtype=np.int64).reshape(1, -1) if np.ndim(idx) == 1 else np.asarray(idx, dtype=np.int64)
        B, T = idx.shape
        cos, sin = rope_cos_sin(
            np.broadcast_to(np.arange(T), (B, T)), self.config.head_dim, self.config.rope_base, self.config.rope_pairs
        )
        x = self.w["transformer.wte.weight"][idx]
        for i in range(layer):
            x = self._block(i, x, cos, sin, None)[0]
        p = f"transformer.h.{layer}."
        return self._qkv(layer, layer_norm(x, self.w[p + "ln_1.weight"], self.w[p + "ln_1.bias"]), cos, sin)

    def generate(self, idx, max_new_tokens: int, use_cache: bool = True) -> list[int]:
        """Greedy decoding of one sequence; returns only the new token ids.

        use_cache=False re-feeds the whole sequence at every step (the "before" picture).
        """
        ids = [int(t) for t in np.asarray(idx).reshape(-1)]
        out: list[int] = []
        cache = None
        feed = ids
        for _ in range(max_new_tokens):
            if use_cache:
                logits, cache = self.forward(np.array([feed]), cache)
            else:
                logits, _ = self.forward(np.array([ids + out]))
            nxt = int(np.argmax(logits[0, -1]))
            out.append(nxt)
            feed = [nxt]
        return out
