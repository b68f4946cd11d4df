"""Decoding without and with a KV cache, on a toy decoder with seeded weights.

Without a cache (nanoGPT's `generate`), step t pushes the whole sequence so far
through every layer again: K and V of every earlier token are recomputed.
With a cache, the prompt goes through once (prefill) and each later step
pushes only the newest token, appends its K and V to the cache and attends to
everything cached. The outputs are identical; the work is not.

Every cost below is counted from the arrays the code actually multiplies
(`ToyDecoder` keeps a running `Cost`), and `step_cost` gives the same numbers
in closed form so figures can go to thousands of tokens without running the
model. Tests check that the two agree.

Names: L layers, H query heads, G key/value heads, d head dim, C model width,
F MLP width, V vocabulary, T tokens processed this step, S cached + new positions.

ToyDecoder is not the site's tiny model (that is `gpt.GPT`, an exact numpy copy of
trained weights): it is a decoder of any shape with seeded random weights, built on
`attention.multi_head_attention`, so the cost figures can count work for any size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvlab.core.attention import causal_mask, multi_head_attention
from kvlab.core.cache import KVCache


@dataclass(frozen=True)
class DecoderConfig:
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2  # G < H: grouped-query attention; G == H is plain multi-head
    head_dim: int = 8
    d_model: int = 32
    d_ff: int = 64
    vocab_size: int = 64
    max_positions: int = 512  # learned position embeddings, nanoGPT style
    bytes_per_value: int = 2  # cache accounting as fp16; the arrays are float64 so both paths agree exactly
    seed: int = 0

    def __post_init__(self) -> None:
        for name in (
            "n_layers",
            "n_heads",
            "n_kv_heads",
            "head_dim",
            "d_model",
            "d_ff",
            "vocab_size",
            "max_positions",
            "bytes_per_value",
        ):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads ({self.n_kv_heads}) must divide n_heads ({self.n_heads})")


# ----------------------------------------------------------------------------
# Cost accounting


@dataclass
class Cost:
    """Work done by one step (or summed over steps)."""

    tokens_processed: int = 0  # token positions pushed through all layers
    kv_vectors_computed: int = 0  # one K and one V vector per token, layer and KV head
    projection_macs: int = 0  # multiply-adds of the Q, K, V and output projections
    mlp_macs: int = 0  # multiply-adds of the MLP
    attention_macs: int = 0  # q·k scores plus weighted sum of v, causal pairs only
    lm_head_macs: int = 0  # logits for the last position only
    cache_bytes_read: int = 0  # cached K/V entries read (the past the step attends to)
    cache_bytes_written: int = 0  # new K/V entries appended

    # __dict__ holds exactly the fields (no slots, no extras): summing and copying it is
    # 3-4x faster than getattr/setattr per field, which the widgets feel (a long race in
    # Pyodide spends most of its time here)
    def __iadd__(self, other: Cost) -> Cost:
        mine = self.__dict__
        for k, v in other.__dict__.items():
            mine[k] += v
        return self

    def to_dict(self) -> dict:
        d = {k: int(v) for k, v in self.__dict__.items()}
        d["total_macs"] = d["projection_macs"] + d["mlp_macs"] + d["attention_macs"] + d["lm_head_macs"]
        return d


def causal_pairs(n_past: int, n_new: int) -> int:
    """(query, key) pairs a causal step computes: new token i sees n_past + i + 1 keys.

    >>> causal_pairs(0, 3), causal_pairs(3, 1)
    (6, 4)
    """
    return n_new * n_past + n_new * (n_new + 1) // 2


def step_cost(config: DecoderConfig, seq_len_before: int, n_new: int, use_cache: bool) -> Cost:
    """Closed-form cost of one step that extends a `seq_len_before`-token sequence by `n_new`.

    Without a cache all seq_len_before + n_new tokens are processed; with one,
    only the n_new new tokens, reading seq_len_before cached entries.
    """
    c = config
    n_past = seq_len_before if use_cache else 0  # positions whose K, V come from the cache
    t = n_new if use_cache else seq_len_before + n_new  # positions pushed through the layers
    q_width, kv_width = c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim
    per_entry = 2 * c.n_layers * c.n_kv_heads * c.head_dim * c.bytes_per_value
    return Cost(
        tokens_processed=t,
        kv_vectors_computed=2 * c.n_layers * c.n_kv_heads * t,
        projection_macs=c.n_layers * t * c.d_model * (2 * q_width + 2 * kv_width),
        mlp_macs=c.n_layers * t * 2 * c.d_model * c.d_ff,
        attention_macs=c.n_layers * c.n_heads * 2 * c.head_dim * causal_pairs(n_past, t),
        lm_head_macs=c.d_model * c.vocab_size,
        cache_bytes_read=n_past * per_entry if use_cache else 0,
        cache_bytes_written=n_new * per_entry if use_cache else 0,
    )


def positions_processed(prompt_len: int, step: int, use_cache: bool) -> range:
    """Token positions (0-based) that step `step` pushes through the layers.

    >>> list(positions_processed(1, 2, use_cache=False)), list(positions_processed(1, 2, use_cache=True))
    ([0, 1, 2], [2])
    """
    if step == 0:
        return range(prompt_len)
    end = prompt_len + step
    return range(end - 1, end) if use_cache else range(end)


def decoding_steps(prompt_len: int, n_steps: int) -> list[tuple[int, int]]:
    """(tokens before the step, tokens it adds) for each step of generating `n_steps`
    tokens after a prompt: step 0 is the prefill, step k adds one token.

    >>> decoding_steps(3, 3)
    [(0, 3), (3, 1), (4, 1)]
    """
    return [(0, prompt_len)] + [(prompt_len + step - 1, 1) for step in range(1, n_steps)]


def decoding_costs(config: DecoderConfig, prompt_len: int, n_steps: int, use_cache: bool) -> list[dict]:
    """Per-step and cumulative cost of generating `n_steps` tokens after a prompt (closed form).

    Step 0 is the prefill; step k extends the sequence from prompt_len + k - 1
    to prompt_len + k tokens. JSON-able.
    """
    if prompt_len < 1 or n_steps < 1:
        raise ValueError(f"prompt_len and n_steps must be >= 1, got {prompt_len} and {n_steps}")
    out, total = [], Cost()
    for step, (before, n_new) in enumerate(decoding_steps(prompt_len, n_steps)):
        cost = step_cost(config, before, n_new, use_cache)
        total += cost
        out.append(
            {"step": step, "seq_len_after": before + n_new, "step_cost": cost.to_dict(), "cumulative": total.to_dict()}
        )
    return out


def times_processed(n_tokens: int, use_cache: bool, prompt_len: int = 1) -> list[int]:
    """How often each token position was pushed through the model by the time the
    sequence has `n_tokens` tokens (counted by replaying the steps).

    >>> times_processed(4, use_cache=False)
    [4, 3, 2, 1]
    """
    if not 1 <= prompt_len <= n_tokens:
        raise ValueError(f"need 1 <= prompt_len <= n_tokens, got {prompt_len} and {n_tokens}")
    counts = [0] * n_tokens
    for step in range(n_tokens - prompt_len + 1):
        for pos in positions_processed(prompt_len, step, use_cache):
            counts[pos] += 1
    return counts


# ----------------------------------------------------------------------------
# The toy decoder


def rms_norm(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


@dataclass
class DecodeRun:
    """Result of `ToyDecoder.generate`: tokens, the logits each step produced, costs."""

    tokens: list[int]  # prompt + generated
    logits: np.ndarray  # (n_steps, V): logits of the last position at each step
    steps: list[dict] = field(default_factory=list)  # per step: phase, positions, cost, cumulative
    cache_readouts: list[dict] = field(default_factory=list)  # KVCache.readouts (cached runs only)

    def to_dict(self) -> dict:
        return {"tokens": list(self.tokens), "steps": self.steps}


class ToyDecoder:
    """A tiny decoder-only transformer (pre-norm, RMSNorm, GELU MLP, GQA, tied LM head).

    Weights come from `config.seed`; nothing is trained. Its job is to show
    that caching K and V changes the work, not the answer.

    >>> model = ToyDecoder(DecoderConfig())
    >>> a = model.generate([1, 2, 3], 4, use_cache=False)
    >>> b = model.generate([1, 2, 3], 4, use_cache=True)
    >>> a.tokens == b.tokens, bool(np.allclose(a.logits, b.logits))
    (True, True)
    """

    def __init__(self, config: DecoderConfig):
        self.config = c = config
        rng = np.random.default_rng(c.seed)
        s = 1.0 / np.sqrt(c.d_model)
        self.wte = rng.standard_normal((c.vocab_size, c.d_model))  # (V, C)
        self.wpe = rng.standard_normal((c.max_positions, c.d_model)) * 0.5  # (P, C)
        self.layers = [
            {
                "wq": rng.standard_normal((c.d_model, c.n_heads * c.head_dim)) * s,  # (C, H*d)
                "wk": rng.standard_normal((c.d_model, c.n_kv_heads * c.head_dim)) * s,  # (C, G*d)
                "wv": rng.standard_normal((c.d_model, c.n_kv_heads * c.head_dim)) * s,  # (C, G*d)
                "wo": rng.standard_normal((c.n_heads * c.head_dim, c.d_model))
                / np.sqrt(c.n_heads * c.head_dim),  # (H*d, C)
                "w1": rng.standard_normal((c.d_model, c.d_ff)) * s,  # (C, F)
                "w2": rng.standard_normal((c.d_ff, c.d_model)) / np.sqrt(c.d_ff),  # (F, C)
            }
            for _ in range(c.n_layers)
        ]
        self.cost = Cost()  # running count, reset by generate()

    # -- counted matmul: every multiply-add against a weight goes through here
    def _linear(self, x: np.ndarray, w: np.ndarray, kind: str) -> np.ndarray:
        macs = x.shape[0] * w.shape[0] * w.shape[1]  # (T, in) x (in, out)
        setattr(self.cost, kind, getattr(self.cost, kind) + macs)
        return x @ w

    def _block(self, x: np.ndarray, i: int, cache: KVCache | None) -> np.ndarray:
        c, w = self.config, self.layers[i]
        T = x.shape[0]
        h = rms_norm(x)  # (T, C)
        q = (
            self._linear(h, w["wq"], "projection_macs").reshape(T, c.n_heads, c.head_dim).transpose(1, 0, 2)
        )  # (H, T, d)
        k = (
            self._linear(h, w["wk"], "projection_macs").reshape(T, c.n_kv_heads, c.head_dim).transpose(1, 0, 2)
        )  # (G, T, d)
        v = (
            self._linear(h, w["wv"], "projection_macs").reshape(T, c.n_kv_heads, c.head_dim).transpose(1, 0, 2)
        )  # (G, T, d)
        self.cost.kv_vectors_computed += k.shape[0] * k.shape[1] + v.shape[0] * v.shape[1]
        if cache is not None:
            k, v = cache.update(i, k, v)  # (G, S, d): everything cached, this step's entries last
        y, _ = multi_head_attention(q, k, v, causal=True)  # (H, T, d)
        # causal kernels skip masked pairs; count only the pairs a query may see (numpy computes and discards the rest)
        self.cost.attention_macs += c.n_heads * int(causal_mask(T, k.shape[1]).sum()) * 2 * c.head_dim
        y = y.transpose(1, 0, 2).reshape(T, c.n_heads * c.head_dim)  # (H, T, d) -> (T, H*d)
        x = x + self._linear(y, w["wo"], "projection_macs")  # (T, C)
        m = gelu(self._linear(rms_norm(x), w["w1"], "mlp_macs"))  # (T, F)
        return x + self._linear(m, w["w2"], "mlp_macs")  # (T, C)

    def forward(self, tokens: list[int], start: int = 0, cache: KVCache | None = None) -> np.ndarray:
        """Hidden states (T, C) for `tokens` sitting at positions start..start+T-1.

        Without a cache `start` must be 0 (the whole sequence is given); with one,
        `tokens` are the new tokens and the cache holds positions 0..start-1.
        """
        c = self.config
        T = len(tokens)
        if start + T > c.max_positions:
            raise ValueError(f"sequence of {start + T} tokens exceeds max_positions={c.max_positions}")
        if cache is None and start != 0:
            raise ValueError("without a cache the whole sequence must be given (start=0)")
        if cache is not None and len(cache) != start:
            raise ValueError(f"cache holds {len(cache)} positions but start={start}")
        x = self.wte[np.asarray(tokens)] + self.wpe[start : start + T]  # (T, C)
        self.cost.tokens_processed += T
        for i in range(c.n_layers):
            x = self._block(x, i, cache)
        return rms_norm(x)  # (T, C)

    def logits(self, hidden_last: np.ndarray) -> np.ndarray:
        """LM head (tied to the token embedding) on one position: (C,) -> (V,)."""
        return self._linear(hidden_last[None, :], self.wte.T, "lm_head_macs")[0]

    def generate(self, prompt: list[int], n_steps: int, use_cache: bool) -> DecodeRun:
        """Greedy decoding for `n_steps` steps (step 0 = prompt, each step emits one token)."""
        c = self.config
        prompt = [int(t) for t in prompt]
        if not prompt:
            raise ValueError("prompt must hold at least one token")
        if any(not 0 <= t < c.vocab_size for t in prompt):
            raise ValueError(f"prompt tokens must be in [0, {c.vocab_size})")
        if n_steps < 1:
            raise ValueError(f"n_steps must be >= 1, got {n_steps}")
        cache = KVCache(c.n_layers, c.n_kv_heads, c.head_dim, c.bytes_per_value) if use_cache else None
        tokens, all_logits, steps, total = list(prompt), [], [], Cost()
        for step in range(n_steps):
            self.cost = Cost()
            if cache is None:
                new, start = tokens, 0  # recompute everything
            else:
                new, start = (tokens, 0) if step == 0 else (tokens[-1:], len(tokens) - 1)
                cache.begin_step(len(new))
            hidden = self.forward(new, start=start, cache=cache)
            readout = cache.end_step() if cache is not None else None
            logits = self.logits(hidden[-1])
            if readout is not None:
                self.cost.cache_bytes_read += readout["bytes_read"]
                self.cost.cache_bytes_written += readout["bytes_written"]
            total += self.cost
            all_logits.append(logits)
            steps.append(
                {
                    "step": step,
                    "phase": "prefill" if step == 0 else "decode",
                    "positions": [start, start + len(new)],
                    "cache_len_before": readout["cache_len_before"] if readout else 0,
                    "cache_len_after": readout["cache_len_after"] if readout else 0,
                    "step_cost": self.cost.to_dict(),
                    "cumulative": total.to_dict(),
                }
            )
            tokens.append(int(np.argmax(logits)))
        readouts = cache.readouts if cache is not None else []
        return DecodeRun(tokens=tokens, logits=np.stack(all_logits), steps=steps, cache_readouts=readouts)
