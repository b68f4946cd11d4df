"""A KV cache with explicit phases: prefill, then decode.

    step 0  prefill  the whole prompt at once   cache: 0 entries before, prompt_len after
    step k  decode   one new token (k >= 1)     cache: prompt_len + k - 1 before, prompt_len + k after

Every readout says whether a length is *before* or *after* the step
(`cache_len_before`, `cache_len_after`): "cache_len = prompt_len + steps" is only
right when read after the step.

Each layer holds its own K and V, shaped (G, S, d): G key/value heads, S cached
positions, d head dimension. With grouped-query attention several query heads
read the same KV head, so the cache stores G (not H) vectors per position.
"""

from __future__ import annotations

import numpy as np

PREFILL = "prefill"
DECODE = "decode"


def cache_lengths(prompt_len: int, step: int) -> dict:
    """Phase and cache length before/after `step` of a generation (no eviction).

    >>> cache_lengths(5, 0)
    {'step': 0, 'phase': 'prefill', 'n_new': 5, 'cache_len_before': 0, 'cache_len_after': 5}
    >>> cache_lengths(5, 3)
    {'step': 3, 'phase': 'decode', 'n_new': 1, 'cache_len_before': 7, 'cache_len_after': 8}
    """
    if prompt_len < 1:
        raise ValueError(f"prompt_len must be >= 1, got {prompt_len}")
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if step == 0:
        return {"step": 0, "phase": PREFILL, "n_new": prompt_len, "cache_len_before": 0, "cache_len_after": prompt_len}
    return {
        "step": step,
        "phase": DECODE,
        "n_new": 1,
        "cache_len_before": prompt_len + step - 1,
        "cache_len_after": prompt_len + step,
    }


class KVCache:
    """Append-only per-layer K/V storage, driven one step at a time.

    Use it as: `begin_step(n_new)`, then `update(layer, k_new, v_new)` once per
    layer (returns the full K, V that layer attends to), then `end_step()`,
    which returns the step's readout (also kept in `readouts`).

    >>> cache = KVCache(n_layers=1, n_kv_heads=1, head_dim=2)
    >>> cache.begin_step(3)
    >>> k, v = cache.update(0, np.ones((1, 3, 2)), np.ones((1, 3, 2)))
    >>> r = cache.end_step()
    >>> r["phase"], r["cache_len_before"], r["cache_len_after"], k.shape
    ('prefill', 0, 3, (1, 3, 2))
    """

    def __init__(self, n_layers: int, n_kv_heads: int, head_dim: int, bytes_per_value: int = 2):
        if min(n_layers, n_kv_heads, head_dim, bytes_per_value) < 1:
            raise ValueError("n_layers, n_kv_heads, head_dim and bytes_per_value must all be >= 1")
        self.n_layers = n_layers
        self.n_kv_heads = n_kv_heads
        self.head_dim = head_dim
        self.bytes_per_value = bytes_per_value
        self.k = [np.zeros((n_kv_heads, 0, head_dim)) for _ in range(n_layers)]  # each (G, S, d)
        self.v = [np.zeros((n_kv_heads, 0, head_dim)) for _ in range(n_layers)]  # each (G, S, d)
        self.readouts: list[dict] = []
        self._pending: dict | None = None

    def __len__(self) -> int:
        """Cached positions (the same in every layer between steps)."""
        return self.k[0].shape[1]

    @property
    def bytes_per_position(self) -> int:
        """K and V, every layer, every KV head: 2 · layers · G · d · bytes."""
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * self.bytes_per_value

    @property
    def nbytes(self) -> int:
        """Bytes the cache holds now (at `bytes_per_value` per number)."""
        return len(self) * self.bytes_per_position

    def begin_step(self, n_new: int) -> None:
        """Open step len(readouts): step 0 is the prefill, later steps decode one token."""
        if self._pending is not None:
            raise RuntimeError("begin_step: the previous step was not ended")
        step = len(self.readouts)
        if step == 0:
            phase = PREFILL
            if n_new < 1:
                raise ValueError(f"prefill needs at least one prompt token, got n_new={n_new}")
        else:
            phase = DECODE
            if n_new != 1:
                raise ValueError(f"decode steps add exactly one token, got n_new={n_new}")
        self._pending = {"step": step, "phase": phase, "n_new": n_new, "cache_len_before": len(self), "layers": {}}

    def update(self, layer: int, k_new: np.ndarray, v_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Append this step's K, V for `layer` (each (G, n_new, d)); return the layer's full K, V (G, S, d)."""
        p = self._pending
        if p is None:
            raise RuntimeError("update: call begin_step first")
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"layer must be in [0, {self.n_layers}), got {layer}")
        if layer in p["layers"]:
            raise RuntimeError(f"update: layer {layer} was already updated in step {p['step']}")
        want = (self.n_kv_heads, p["n_new"], self.head_dim)
        if k_new.shape != want or v_new.shape != want:
            raise ValueError(f"k_new and v_new must be {want}, got {k_new.shape} and {v_new.shape}")
        before = self.k[layer].shape[1]
        self.k[layer] = np.concatenate([self.k[layer], k_new], axis=1)  # (G, S, d) + (G, n_new, d) -> (G, S + n_new, d)
        self.v[layer] = np.concatenate([self.v[layer], v_new], axis=1)
        p["layers"][layer] = {"layer": layer, "read": [0, before], "computed": [before, before + p["n_new"]]}
        return self.k[layer], self.v[layer]

    def end_step(self) -> dict:
        """Close the step; every layer must have been updated. Returns the readout.

        Bytes read are the entries that were already cached (the past the new
        tokens attend to); bytes written are the new entries.
        """
        p = self._pending
        if p is None:
            raise RuntimeError("end_step: no step in progress")
        if len(p["layers"]) != self.n_layers:
            missing = sorted(set(range(self.n_layers)) - set(p["layers"]))
            raise RuntimeError(f"end_step: layers {missing} were not updated")
        self._pending = None
        before, after = p["cache_len_before"], len(self)
        readout = {
            "step": p["step"],
            "phase": p["phase"],
            "n_new": p["n_new"],
            "cache_len_before": before,
            "cache_len_after": after,
            "bytes_read": before * self.bytes_per_position,
            "bytes_written": (after - before) * self.bytes_per_position,
            "cache_bytes_after": after * self.bytes_per_position,
            "layers": [p["layers"][i] for i in range(self.n_layers)],
        }
        self.readouts.append(readout)
        return readout
