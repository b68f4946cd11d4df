"""Separate draft models under vLLM speculative decoding (DFlash): their weights and their KV layers.

A checkpoint's own MTP layers are modelled elsewhere (Architecture.draft_layers, kv_bytes.vllm_with_draft_layers).
A separate drafter is another model vLLM loads beside the target (`--speculative-config '{"method": "dflash",
"model": ...}'`). It costs the KV budget twice over:

- its weights load inside the same memory profiler as the target's, so "Model loading took" includes them and the
  KV budget loses them (vllm/v1/worker/gpu_model_runner.py, load_model);
- its attention layers get KV cache specs of their own, in the same pool as the target's. In a hybrid model
  (Qwen3.6-27B: 16 full-attention and 48 Gated DeltaNet layers) they are a cache type of their own, and vLLM's
  group size is the smallest type's layer count: 5 drafter layers make groups of 5 layers instead of 16, so each
  block holds 5 pages and every request needs blocks in 15 groups instead of 4.

The drafters kvlab knows are in kvlab/data/drafters.json, each field with its source.

>>> d = get_drafter("z-lab/Qwen3.6-27B-DFlash")
>>> [(la.kind, la.kv_heads, la.head_dim_k) for la in drafter_layers(d)][:1], len(drafter_layers(d))
([('full', 8, 128)], 5)
>>> round(drafter_weights(d, tp=2)["bytes_per_gpu"] / 2**30, 2)
1.78
"""

from __future__ import annotations

import json
from functools import cache

from kvlab.inputs import short_repr
from kvlab.memory.architecture import FULL, Architecture, LayerSpec, attention_layer
from kvlab.memory.weights import DATA_DIR

GIB = 2**30
DRAFT_VALUE_BYTES = 2  # bf16: the drafters kvlab knows store and run in bf16 (their configs' torch_dtype)


@cache
def _data() -> dict:
    return json.loads((DATA_DIR / "drafters.json").read_text(encoding="utf-8"))


def drafter_ids() -> list[str]:
    return [d["id"] for d in _data()["drafters"]]


def get_drafter(name) -> dict:
    """The drafter named by its Hugging Face id (any case), or a ValueError naming the field."""
    if isinstance(name, dict):
        return name
    key = str(name or "").strip().lower()
    for d in _data()["drafters"]:
        if d["id"].lower() == key:
            return d
    raise ValueError(f"drafter must be one of {', '.join(drafter_ids())}, got {short_repr(name)}")


def known_drafter(name: str | None) -> dict | None:
    """The drafter a speculative config's model names, or None: its Hugging Face id, or a local path whose last part
    is the id's name (vLLM logs print the path the server was given, "~/.cache/huggingface/qwen3.6-27b-dflash")."""
    if not name:
        return None
    tail = str(name).rstrip("/").rsplit("/", 1)[-1].lower()
    for d in _data()["drafters"]:
        if str(name).lower() == d["id"].lower() or tail == d["id"].rsplit("/", 1)[-1].lower():
            return d
    return None


def drafter_layers(d: dict) -> tuple[LayerSpec, ...]:
    """The drafter's attention layers as vLLM caches them: full attention, num_key_value_heads x head_dim K and V."""
    c = d["config"]
    return tuple(attention_layer(FULL, c["num_key_value_heads"], c["head_dim"]) for _ in range(c["num_hidden_layers"]))


def with_drafter(arch: Architecture, d: dict | None) -> Architecture:
    """`arch` with the drafter's attention layers appended (their own cache type in vLLM's layout)."""
    if not d:
        return arch
    from dataclasses import replace

    return replace(arch, layers=arch.layers + drafter_layers(d))


def _params(c: dict) -> dict:
    """The drafter's parameters counted from its config: its layers (sharded under tensor parallel), the fc that
    projects the target's hidden states (replicated), and its K and V projections (vLLM keeps a second, fused copy)."""
    h, heads, kv, hd = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    q, k_v = h * heads * hd, 2 * h * kv * hd
    attention = q + k_v + heads * hd * h + 2 * hd  # q, k, v, o and the q / k norms
    mlp = 3 * h * c["intermediate_size"]
    layer = attention + mlp + 2 * h  # + the two layer norms
    n = c["num_hidden_layers"]
    aux = len(c.get("target_layer_ids") or [])
    return {
        "sharded": n * layer,
        "replicated": aux * h * h + 2 * h,  # fc, its norm and the final norm
        "kv_copy": n * k_v,
        "aux_layers": aux,
    }


def drafter_weights(d: dict, tp: int = 1) -> dict:
    """Bytes of the drafter's weights on each GPU as vLLM loads them (bf16), with how they were counted."""
    p = _params(d["config"])
    per_gpu = (p["sharded"] + p["kv_copy"]) * DRAFT_VALUE_BYTES // tp + p["replicated"] * DRAFT_VALUE_BYTES
    total = p["sharded"] + p["replicated"]
    return {
        "bytes_per_gpu": per_gpu,
        "params": total,
        "how": f"+ the {d['method']} drafter {d['id']}: {total / 1e9:.2f}B parameters in bf16 counted from its config "
        f"({d['config']['num_hidden_layers']} layers"
        + (f" / {tp} GPUs" if tp > 1 else "")
        + f", an fc of {p['replicated'] / 1e6:.0f}M not sharded, and vLLM's fused copy of its K and V projections): "
        f"{per_gpu / GIB:.2f} GiB per GPU",
    }


def drafter_profile_bytes(d: dict, max_num_batched_tokens: int) -> dict:
    """What the drafter's dummy run adds to the profiling pass's peak: the target's aux hidden states it reads
    (len(target_layer_ids) x max_num_batched_tokens x hidden_size, bf16). An estimate, not fitted."""
    c = d["config"]
    aux = len(c.get("target_layer_ids") or [])
    nbytes = aux * max_num_batched_tokens * c["hidden_size"] * DRAFT_VALUE_BYTES
    return {
        "bytes": nbytes,
        "how": f"the drafter's profile run: the target's {aux} aux hidden states x {max_num_batched_tokens:,} tokens "
        f"x {c['hidden_size']} in bf16, {nbytes / GIB:.2f} GiB (an estimate)",
    }


def check_drafter(d: dict, arch: Architecture) -> None:
    """A drafter drafts for the target whose hidden states it reads: refuse another model, naming the field."""
    if arch.hidden_size != d["target_hidden_size"]:
        raise ValueError(
            f"drafter: {d['id']} reads a target's hidden states of {d['target_hidden_size']}; "
            f"{arch.name}'s are {arch.hidden_size}"
        )
