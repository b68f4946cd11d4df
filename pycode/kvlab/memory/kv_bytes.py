"""KV cache size, exactly, three ways.

1. `kv_bytes_per_token` / `kv_cache_bytes`: the cache a model *needs*
   (every full-attention layer holds every token, a sliding layer its last W
   tokens, a linear-attention layer a fixed state).
2. `llamacpp_kv_cache`: what llama.cpp allocates and prints at load time
   ("llama_kv_cache: size = ... MiB (... cells, ... layers, .../... seqs)").
3. `vllm_kv_cache` / `vllm_capacity`: vLLM's PagedAttention accounting, and how
   many tokens and sequences fit on a GPU.

Worked example (Llama-2-7B, f16; docs/claims.md): 2 (K and V) x 32 layers x 32 KV
heads x 128 head_dim x 2 bytes = 524,288 B = 512 KiB per token.

>>> from kvlab.memory.architecture import uniform_architecture
>>> llama2 = uniform_architecture("Llama-2-7B", n_layers=32, n_heads=32, n_kv_heads=32, head_dim=128)
>>> kv_bytes_per_token(llama2, "f16")["bytes_per_token"]
524288
>>> kv_cache_bytes(llama2, 131072, "f16")["total_bytes"] == 64 * 2**30
True
"""

from __future__ import annotations

import dataclasses

from kvlab.memory.architecture import (
    ATTENTION_KINDS,
    CHUNKED,
    FULL,
    LINEAR,
    NONE,
    SLIDING,
    Architecture,
    LayerSpec,
    dsa_index_bytes,
)
from kvlab.dtypes import (
    GIB,
    HEAD_SCALE_BYTES,
    KIB,
    KV_TYPES,
    LLAMACPP_KV_TYPES,
    MIB,
    QUANTIZED,
    VLLM_KV_TYPES,
    kv_type,
    row_bytes,
)
from kvlab.inputs import finite_number, short_repr
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.drafters import with_drafter
from kvlab.memory.llamacpp import (
    LLAMACPP_MLA_CACHE,
    LLAMACPP_MLA_CACHES,
    gemma3n_cache_layers,
    llamacpp_mla_architecture,
)
from kvlab.wording import plural

# ---------------------------------------------------------------------------
# 1. What the model needs
# ---------------------------------------------------------------------------


def _check_head_scales(arch: Architecture, dtype: str) -> None:
    """vLLM's per-token-head types scale each K and V head of standard attention; an MLA latent is refused (vLLM's
    MLA backends do not list them: TritonMLABackend.supported_kv_cache_dtypes = auto, bfloat16, fp8, fp8_e4m3)."""
    if dtype in HEAD_SCALE_BYTES and arch.attention == "mla":
        raise ValueError(
            f"kv {dtype}: vLLM's per-token-head scales are counted per K and V head; kvlab does not model them "
            f"on {arch.name}'s MLA latent (use auto, fp8 or bf16)"
        )


def _kind_rows(arch: Architecture, k_type: str, v_type: str) -> dict:
    rows = {}
    # chunked layers get a row only where a model has them (Llama-4), so other models' rows stay as they were
    for kind in (FULL, SLIDING) + ((CHUNKED,) if arch.count(CHUNKED) else ()):
        layers = [layer for layer in arch.layers if layer.kind == kind]
        k = sum(row_bytes(k_type, layer.k_values, layer.kv_heads) for layer in layers)
        v = sum(row_bytes(v_type, layer.v_values, layer.kv_heads) for layer in layers if layer.v_values)
        # DeepSeek-V3.2: the DSA indexer key, in its own fp8 + fp32-scale format (architecture.dsa_index_bytes)
        index = sum(dsa_index_bytes(layer.index_values) for layer in layers if layer.index_values)
        rows[kind] = {
            "layers": len(layers),
            "k_bytes_per_token": k,
            "v_bytes_per_token": v,
            "bytes_per_token": k + v + index,
            "windows": sorted({layer.window for layer in layers}) if kind != FULL else [],
        }
        if index:
            rows[kind]["index_bytes_per_token"] = index
    return rows


def kv_formula(arch: Architecture, k_type: str, v_type: str) -> str:
    """The per-token arithmetic, written out: '2 x 32 layers x 32 kv_heads x 128 head_dim x 2 B'."""
    attn = [layer for layer in arch.layers if layer.kind in ATTENTION_KINDS]
    if not attn:
        return "no attention layer: no token adds to the cache (each layer keeps a fixed recurrent state instead)"
    shapes = {(layer.kv_heads, layer.head_dim_k, layer.head_dim_v, layer.v_values == 0) for layer in attn}
    kb = KV_TYPES[k_type][1] / KV_TYPES[k_type][0]
    size = f"{kb:g} B" if k_type == v_type else f"({k_type} K, {v_type} V)"
    scale = HEAD_SCALE_BYTES.get(k_type, 0) if k_type == v_type else 0
    if len(shapes) != 1:
        return f"sum over {len(attn)} attention layers of their own K and V widths x {size}" + (
            f" + {scale} B scale per KV head" if scale else ""
        )
    heads, hk, hv, mla = shapes.pop()
    if mla:
        return f"{len(attn)} layers x {hk} latent values (kv_lora_rank + qk_rope_head_dim) x {size}"
    if hk == hv:
        head = f"({hk} head_dim x {size} + {scale} B scale)" if scale else f"{hk} head_dim x {size}"
        return f"2 (K,V) x {len(attn)} layers x {heads} kv_heads x {head}"
    if scale:
        return f"{len(attn)} layers x {heads} kv_heads x (({hk} + {hv}) head_dim x {size} + 2 x {scale} B scale)"
    return f"{len(attn)} layers x {heads} kv_heads x ({hk} + {hv}) head_dim x {size}"


def kv_bytes_per_token(arch: Architecture, k_type: str = "f16", v_type: str | None = None) -> dict:
    """Bytes each new token adds to the cache, split by layer kind.

    `bytes_per_token` counts every attention layer (true while the context is
    shorter than every window); `bytes_per_token_beyond_windows` counts only
    full-attention layers (once sliding windows are full they stop growing).
    Linear-attention layers add nothing per token; their fixed state is in
    by_kind["linear"]["state_values_per_sequence"], and by_kind["linear"]["layers"] counts every
    layer that keeps a state (Falcon-H1's full layers too: each also runs a Mamba-2 mixer).
    """
    k_type = kv_type(k_type)
    v_type = k_type if v_type is None else kv_type(v_type)
    for t in (k_type, v_type):
        _check_head_scales(arch, t)
    rows = _kind_rows(arch, k_type, v_type)
    linear = arch.state_layers
    total = sum(row["bytes_per_token"] for row in rows.values())
    out = {
        "model": arch.name,
        "k_type": k_type,
        "v_type": v_type,
        "bytes_per_token": total,
        "kib_per_token": total / KIB,
        "bytes_per_token_beyond_windows": rows[FULL]["bytes_per_token"],
        "by_kind": {
            FULL: rows[FULL],
            SLIDING: rows[SLIDING],
            LINEAR: {
                "layers": len(linear),
                "bytes_per_token": 0,
                "state_values_per_sequence": sum(l.conv_state_values + l.ssm_state_values for l in linear),
            },
            **({CHUNKED: rows[CHUNKED]} if CHUNKED in rows else {}),
        },
        "formula": kv_formula(arch, k_type, v_type),
        "type_sources": sorted({KV_TYPES[k_type][2], KV_TYPES[v_type][2]}),
    }
    if arch.mla_expanded_values:
        n_attn = sum(row["layers"] for row in rows.values())
        out["mla_expanded_bytes_per_token"] = n_attn * row_bytes(k_type, arch.mla_expanded_values)
    return out


def kv_cache_bytes(
    arch: Architecture,
    context: int,
    k_type: str = "f16",
    v_type: str | None = None,
    n_seq: int = 1,
    state_type: str = "f32",
) -> dict:
    """The cache `n_seq` sequences of `context` tokens need, with no engine padding.

    Full layers hold `context` tokens, sliding layers min(context, window),
    linear layers their fixed state (stored as `state_type`, f32 by default as
    llama.cpp does).
    """
    if context < 1:
        raise ValueError("context must be at least 1 token")
    if n_seq < 1:
        raise ValueError("n_seq must be at least 1")
    k_type = kv_type(k_type)
    v_type = k_type if v_type is None else kv_type(v_type)
    per_token = kv_bytes_per_token(arch, k_type, v_type)
    full_bytes = per_token["by_kind"][FULL]["bytes_per_token"] * context * n_seq
    sliding_bytes = chunked_bytes = 0
    for layer in arch.layers:
        if layer.kind in (SLIDING, CHUNKED):
            # a chunked layer holds at most one chunk: min(context, attention_chunk_size) tokens at its peak
            tokens = min(context, layer.window)
            per = row_bytes(k_type, layer.k_values, layer.kv_heads) + (
                row_bytes(v_type, layer.v_values, layer.kv_heads) if layer.v_values else 0
            )
            if layer.kind == SLIDING:
                sliding_bytes += per * tokens * n_seq
            else:
                chunked_bytes += per * tokens * n_seq
    state_bytes = sum(l.state_values for l in arch.state_layers) * KV_TYPES[kv_type(state_type)][1] * n_seq
    total = full_bytes + sliding_bytes + chunked_bytes + state_bytes
    by_kind_bytes = {FULL: full_bytes, SLIDING: sliding_bytes, LINEAR: state_bytes}
    if arch.count(CHUNKED):
        by_kind_bytes[CHUNKED] = chunked_bytes
    return {
        "model": arch.name,
        "context": context,
        "n_seq": n_seq,
        "k_type": k_type,
        "v_type": v_type,
        "bytes_per_token": per_token["bytes_per_token"],
        "by_kind_bytes": by_kind_bytes,
        "total_bytes": total,
        "total_mib": total / MIB,
        "total_gib": total / GIB,
        "per_token": per_token,
        "assumptions": [
            "full-attention layers keep every token; sliding layers keep min(context, window) tokens"
            + (
                "; chunked layers keep min(context, attention_chunk_size) tokens (one chunk, at its fullest)"
                if arch.count(CHUNKED)
                else ""
            ),
            f"linear-attention state stored as {kv_type(state_type)}",
            "no engine padding or block rounding (see llamacpp_kv_cache / vllm_kv_cache for those)",
        ],
    }


# ---------------------------------------------------------------------------
# 2. llama.cpp
#
# VERIFIED by reading llama.cpp source (ggml-org/llama.cpp, src/, late 2025 - 2026):
# - llama-context.cpp: `cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256);` (ref PR
#   17046). With kv_unified n_ctx_seq = n_ctx; otherwise
#   n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256) and n_ctx = n_ctx_seq * n_seq_max.
# - llama-model.cpp create_memory: the cache gets kv_size = cparams.n_ctx_seq
#   cells per stream; iSWA models (hparams.swa_type != NONE) get
#   llama_kv_cache_iswa, hybrids (recurrent + attention) llama_memory_hybrid
#   with f32 recurrent state and max(1, n_seq_max) recurrent cells.
# - llama-kv-cache-iswa.cpp: size_swa = GGML_PAD(min(size_base,
#   n_swa * (unified ? n_seq_max : 1) + n_ubatch), 256) ("the SWA cache is
#   always padded to 256", issue 17037); --swa-full makes it size_base.
# - llama-kv-cache.cpp: per layer K = ggml_new_tensor_3d(type_k, n_embd_k_gqa,
#   kv_size, n_stream), V likewise; `has_v = !is_mla` (MLA models keep no V
#   tensor); with v_trans (no flash attention) V rows are padded to the widest
#   layer; the load log line is
#   "size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): ..., V (%s): ...".
# - llama-hparams.cpp: n_embd_r = (d_conv-1)*(d_inner + 2*n_group*d_state),
#   n_embd_s = d_state*d_inner; set_swa_pattern(n): layer il is SWA when
#   il % n < n-1 (the last of each group is full).
# - models/phi3: "Phi SWA is currently disabled" (PR 13676): phi3 gets no SWA.
# - Checked against public load logs: Phi-3-mini f16 -c 32768 -> 12288.00 MiB
#   (32768 cells, 32 layers); a Gemma iSWA model at -c 8192 -np 2 -> SWA cache
#   1536 cells = pad(1024 + 512, 256) per stream (tests/python/test_memory.py).
# INFERRED (not read in source): which families llama.cpp runs with SWA. We
# honour sliding windows only for gemma2/3/3n/4, cohere2 and gpt_oss (all set
# n_swa and a swa pattern in llama-model.cpp; a Gemma-4 log confirms it); mistral/mixtral/qwen2 sliding_window values
# are treated as full attention, as llama.cpp's llama/qwen2 graphs do not mask
# by window.
# ---------------------------------------------------------------------------
LLAMACPP_PAD = 256
LLAMACPP_SWA_FAMILIES = (
    "gemma2",
    "gemma3",
    "gemma3_text",
    "gemma3n",
    "gemma3n_text",  # a Gemma-3n config read through its text_config (issue 39: was counted as full, 4.4x)
    "gemma4",
    "gemma4_text",
    "gpt_oss",
    "cohere2",
)
LLAMACPP_RECURRENT_TYPE = "f32"
# Llama-4's chunked layers: llama.cpp's LLM_ARCH_LLAMA4 sets swa_type = LLAMA_SWA_TYPE_CHUNKED with
# n_swa = attention_chunk_size (8192) and set_swa_pattern(4) ("3 chunked - 1 full"), so they live in the
# iSWA cache's SWA part, sized like any SWA cache (src/llama-model.cpp; the chunk mask in
# src/llama-hparams.cpp is_masked_swa, https://github.com/ggml-org/llama.cpp/blob/master/src/llama-hparams.cpp).
LLAMACPP_CHUNKED_FAMILIES = ("llama4", "llama4_text")


def _pad(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _log_line(
    prefix: str,
    cells: int,
    layers: int,
    n_seq: int,
    n_stream: int,
    k_name: str,
    k_bytes: int,
    v_name: str,
    v_bytes: int,
    k_label: str = "K",
    v_label: str = "V",
) -> str:
    return (
        f"{prefix}: size = {(k_bytes + v_bytes) / MIB:7.2f} MiB ({cells:6d} cells, {layers:3d} layers, "
        f"{n_seq:2d}/{n_stream} seqs), {k_label} ({k_name}): {k_bytes / MIB:7.2f} MiB, "
        f"{v_label} ({v_name}): {v_bytes / MIB:7.2f} MiB"
    )


def llamacpp_kv_cache(
    arch: Architecture,
    n_ctx: int,
    type_k: str = "f16",
    type_v: str | None = None,
    n_seq: int = 1,
    n_ubatch: int = 512,
    kv_unified: bool = True,
    swa_full: bool = False,
    flash_attn: bool = True,
    mla_cache: str = LLAMACPP_MLA_CACHE,
) -> dict:
    """The KV memory llama.cpp allocates for `--ctx-size n_ctx -ctk type_k -ctv type_v`.

    n_seq is --parallel (llama-server slots); kv_unified is --kv-unified (the
    server turns it on when --parallel is left on auto). `mla_cache` is how the build
    and GGUF cache an MLA model (kvlab.memory.llamacpp.LLAMACPP_MLA_CACHES; today's
    "latent" unless said). Returns one entry per cache llama.cpp creates (non-SWA,
    SWA, recurrent) with the log line it prints.
    """
    arch, latent = llamacpp_mla_architecture(arch, mla_cache), arch
    layout_note = (
        [f"MLA cached as {mla_cache!r}: {LLAMACPP_MLA_CACHES[mla_cache]}"]
        if latent.attention == "mla" and mla_cache != LLAMACPP_MLA_CACHE
        else []
    )
    if n_ctx < 1:
        raise ValueError("n_ctx must be at least 1 (llama.cpp's 0 means 'the training context')")
    if n_seq < 1 or n_ubatch < 1:
        raise ValueError("n_seq and n_ubatch must be at least 1")
    type_k = kv_type(type_k)
    type_v = type_k if type_v is None else kv_type(type_v)
    for name, t in (("type_k", type_k), ("type_v", type_v)):
        if t not in LLAMACPP_KV_TYPES:
            raise ValueError(
                f"{name}={short_repr(t)} is a vLLM cache type; llama.cpp accepts {', '.join(LLAMACPP_KV_TYPES)}"
            )
    notes: list[str] = layout_note
    if type_v in QUANTIZED and not flash_attn:
        raise ValueError(f"type_v={type_v}: llama.cpp needs flash attention (-fa on) for a quantized V cache")

    # n_ctx rounding (llama-context.cpp)
    n_ctx_padded = _pad(n_ctx, LLAMACPP_PAD)
    if kv_unified:
        n_ctx_seq, n_stream = n_ctx_padded, 1
    else:
        n_ctx_seq = _pad(n_ctx_padded // n_seq, LLAMACPP_PAD)
        n_ctx_padded, n_stream = n_ctx_seq * n_seq, n_seq
    if n_ctx_padded != n_ctx:
        notes.append(f"n_ctx {n_ctx} -> {n_ctx_padded} (llama.cpp pads to a multiple of {LLAMACPP_PAD})")

    # which layers go in which cache
    uses_swa = arch.family in LLAMACPP_SWA_FAMILIES and arch.count(SLIDING) > 0
    uses_chunked = arch.family in LLAMACPP_CHUNKED_FAMILIES and arch.count(CHUNKED) > 0
    if arch.count(SLIDING) and not uses_swa:
        notes.append(
            f"family {arch.family!r}: llama.cpp runs its sliding-window layers as full attention "
            "(phi3: SWA disabled in source, PR 13676; others inferred)"
        )
    if arch.count(CHUNKED) and not uses_chunked:
        notes.append(f"family {arch.family!r}: chunked layers counted at full length (llama.cpp chunks only Llama-4)")
    if uses_chunked:
        notes.append(
            "Llama-4: llama.cpp keeps the chunked layers in the iSWA cache's SWA part (LLAMA_SWA_TYPE_CHUNKED, "
            "n_swa = attention_chunk_size), the NoPE full-attention layers in the non-SWA part"
        )
    if arch.family in ("gemma3n", "gemma3n_text"):
        # llama.cpp does not read num_kv_shared_layers: src/models/gemma3n.cpp@b10309 hard-codes
        # n_layer_kv_from_start = 20 with a sliding pattern of 5 (kvlab.memory.llamacpp.gemma3n_cache_layers)
        rule = gemma3n_cache_layers(arch.n_layers)
        have = {"full": arch.count(FULL), "sliding": arch.count(SLIDING)}
        if have != {"full": rule["full"], "sliding": rule["sliding"]}:
            notes.append(
                f"gemma-3n: llama.cpp keeps K/V for the first 20 layers ({rule['full']} full, {rule['sliding']} "
                f"sliding; n_layer_kv_from_start = 20, src/models/gemma3n.cpp@b10309), this config for "
                f"{have['full']} full and {have['sliding']} sliding: kvlab counts the config's"
            )
    bounded = (SLIDING,) if uses_swa else ()
    bounded += (CHUNKED,) if uses_chunked else ()
    base_layers = [l for l in arch.layers if l.kind in ATTENTION_KINDS and l.kind not in bounded]
    swa_layers = [l for l in arch.layers if l.kind in bounded]
    # recurrent state: the linear layers, and Falcon-H1's full layers (create_memory's filter_recr
    # accepts every Falcon-H1 layer, as its filter_attn does)
    linear_layers = list(arch.state_layers)

    is_mla = arch.attention == "mla"
    attn_layers = base_layers + swa_layers
    v_widths = {l.v_values for l in attn_layers}
    v_pad = max(v_widths) if (not flash_attn and len(v_widths) > 1) else None
    if v_pad is not None:
        notes.append(f"flash attention off and V widths differ: V rows padded to {v_pad} values")

    def cache_entry(name: str, layers: list[LayerSpec], cells: int) -> dict:
        k = sum(row_bytes(type_k, l.k_values) for l in layers) * cells * n_stream
        # an MLA layer has no V tensor (v_values 0) except in the layout of llama.cpp before PR 19067
        v = sum(row_bytes(type_v, v_pad or l.v_values) for l in layers if l.v_values) * cells * n_stream
        return {
            "cache": name,
            "cells": cells,
            "layers": len(layers),
            "streams": n_stream,
            "k_bytes": k,
            "v_bytes": v,
            "bytes": k + v,
            "mib": (k + v) / MIB,
            "log_line": _log_line("llama_kv_cache", cells, len(layers), n_seq, n_stream, type_k, k, type_v, v),
        }

    caches = []
    if base_layers:
        caches.append(cache_entry("non-SWA" if swa_layers else "kv", base_layers, n_ctx_seq))
    if swa_layers:
        windows = sorted({l.window for l in swa_layers})
        n_swa = windows[-1]
        if len(windows) > 1:
            notes.append(f"several windows {windows}: llama.cpp has one n_swa; using {n_swa}")
        size_swa = (
            n_ctx_seq
            if swa_full
            else _pad(min(n_ctx_seq, n_swa * (n_seq if kv_unified else 1) + n_ubatch), LLAMACPP_PAD)
        )
        entry = cache_entry("SWA", swa_layers, size_swa)
        entry["n_swa"] = n_swa
        caches.append(entry)
    index_layers = [l for l in attn_layers if l.index_values]
    if index_layers:
        # DeepSeek-V3.2: llama_kv_cache_dsa makes a second llama_kv_cache for the lightning indexer's keys,
        # one key head of indexer_head_size per layer, in type_k, with as many cells as the MLA cache
        # (src/llama-kv-cache-dsa.cpp, https://github.com/ggml-org/llama.cpp/blob/master/src/llama-kv-cache-dsa.cpp)
        k = sum(row_bytes(type_k, l.index_values) for l in index_layers) * n_ctx_seq * n_stream
        caches.append(
            {
                "cache": "indexer",
                "cells": n_ctx_seq,
                "layers": len(index_layers),
                "streams": n_stream,
                "k_bytes": k,
                "v_bytes": 0,
                "bytes": k,
                "mib": k / MIB,
                "log_line": _log_line(
                    "llama_kv_cache", n_ctx_seq, len(index_layers), n_seq, n_stream, type_k, k, type_v, 0
                ),
            }
        )
        notes.append(
            "DeepSeek-V3.2: llama.cpp keeps the DSA lightning indexer's keys in a second cache "
            f"({index_layers[0].index_values} values per layer per token, {type_k})"
        )
    if linear_layers:
        rs_cells = max(1, n_seq)
        r = sum(l.conv_state_values for l in linear_layers) * 4 * rs_cells
        s = sum(l.ssm_state_values for l in linear_layers) * 4 * rs_cells
        # src/llama-memory-recurrent.cpp: "size = %7.2f MiB (%6u cells, %3d layers, %2u seqs), R (%s): %7.2f MiB,
        # S (%s): %7.2f MiB" with n_layer = hparams.n_layer: it prints every layer of the model, though only
        # the recurrent ones hold a state (real logs: Qwen3.5-4B "(1 cells, 32 layers, 1 seqs)", 24 of them
        # Gated DeltaNet, S = 24 x 2 MiB = 48.00 MiB)
        caches.append(
            {
                "cache": "recurrent",
                "cells": rs_cells,
                "layers": len(linear_layers),
                "layers_logged": arch.n_layers,
                "streams": 1,
                "k_bytes": r,
                "v_bytes": s,
                "bytes": r + s,
                "mib": (r + s) / MIB,
                "log_line": (
                    f"llama_memory_recurrent: size = {(r + s) / MIB:7.2f} MiB ({rs_cells:6d} cells, "
                    f"{arch.n_layers:3d} layers, {n_seq:2d} seqs), R ({LLAMACPP_RECURRENT_TYPE}): {r / MIB:7.2f} MiB, "
                    f"S ({LLAMACPP_RECURRENT_TYPE}): {s / MIB:7.2f} MiB"
                ),
            }
        )
    if is_mla and not any(l.v_values for l in attn_layers):
        notes.append("MLA: llama.cpp caches only the latent (kv_lora_rank + rope dims) in K; no V tensor")

    total = sum(c["bytes"] for c in caches)
    return {
        "mode": "llamacpp",
        "model": arch.name,
        "n_ctx_requested": n_ctx,
        "n_ctx": n_ctx_padded,
        "n_ctx_seq": n_ctx_seq,
        "n_seq": n_seq,
        "n_ubatch": n_ubatch,
        "kv_unified": kv_unified,
        "type_k": type_k,
        "type_v": type_v,
        "caches": caches,
        "total_bytes": total,
        "total_mib": total / MIB,
        "total_gib": total / GIB,
        "log_lines": [c["log_line"] for c in caches],
        "notes": notes,
        "sources": [
            "llama.cpp src/llama-context.cpp: cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256)",
            "llama.cpp src/llama-kv-cache-iswa.cpp: size_swa = GGML_PAD(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)",
            "llama.cpp src/llama-kv-cache.cpp: K/V tensors [n_embd_k_gqa, kv_size, n_stream]; has_v = !is_mla",
            "ggml type_traits for the bytes per block",
        ],
    }


# ---------------------------------------------------------------------------
# 3. vLLM
#
# VERIFIED in vllm/v1/kv_cache_interface.py (vllm-project/vllm, 2026):
# - FullAttentionSpec page = block_size * num_kv_heads * (head_size + head_size_v) * dtype bytes;
#   max_memory_usage_bytes = cdiv(max_model_len, block_size) * page
# - MLAAttentionSpec page = block_size * num_kv_heads(1) * head_size(kv_lora_rank + rope) * dtype
# - SlidingWindowSpec: (cdiv(min(sliding_window - 1 + max_num_batched_tokens, max_model_len),
#   block_size) + 1) * page
# - MambaSpec (Gated DeltaNet state): one page of the state per sequence (mamba_cache_mode none)
# INFERRED: default block_size 16 on CUDA (vLLM raises the attention block size
# of hybrid Mamba/GDN models so pages line up; we keep 16 and say so); the state
# dtype follows the model dtype; the KV budget is
# total_memory * gpu_memory_utilization - weights - (activation peak + non-torch
# memory), which vLLM measures with a profiling run and logs as
# "Available KV cache memory"; we only estimate it (vllm_activation_reserve).
# ---------------------------------------------------------------------------
VLLM_BLOCK_SIZE = 16
# vLLM's engine arguments (https://docs.vllm.ai/en/latest/configuration/engine_args.html and
# vllm/config/cache.py, https://github.com/vllm-project/vllm/blob/main/vllm/config/cache.py):
# `--block-size` takes one of BlockSize = Literal[1, 8, 16, 32, 64, 128] (16 on CUDA when unset);
# `--gpu-memory-utilization` is a fraction in (0, 1], default 0.9.
VLLM_BLOCK_SIZES = (1, 8, 16, 32, 64, 128)
VLLM_GPU_MEMORY_UTILIZATION = 0.9
# vLLM's default from the release that subtracts its CUDA-graph estimate (0.20.0: vllm/config/cache.py at v0.20.0):
# CacheConfig.gpu_memory_utilization = Field(default=0.92, ...), https://github.com/vllm-project/vllm/blob/
# 002f10e0cfa1373a19a0d2756598a34b700d20e5/vllm/config/cache.py; a real start-up of such a nightly prints
# "The current --gpu-memory-utilization=0.9200" with no utilization among its non-default args
# (tests/python/data/engine_logs/calibration/vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt)
VLLM_GPU_MEMORY_UTILIZATION_RECENT = 0.92
# vLLM's default `--max-num-batched-tokens` for its OpenAI-compatible server
# (vllm/engine/arg_utils.py, EngineArgs' batch defaults: UsageContext.OPENAI_API_SERVER: 2048),
# which also sizes a sliding layer's pages. Newer vLLM raises it to 8192 on GPUs with at least
# 70 GiB that are not A100s (same function): kvlab.memory.engines.vllm_batch_defaults picks per card;
# this is the default where no card is given.
VLLM_MAX_NUM_BATCHED_TOKENS = 2048
# DeepSeek-V3.2's fp8 MLA cache ("fp8_ds_mla"): 512 fp8 latent values + 4 fp32 scales + 64 bf16 RoPE
# values = 656 B per token (vllm/v1/kv_cache_interface.py MLAAttentionSpec.real_page_size_bytes,
# https://github.com/vllm-project/vllm/blob/main/vllm/v1/kv_cache_interface.py)
VLLM_FP8_DS_MLA_BYTES = 656
# What every calculator (memory_report, the verdict of a deployment, and so the CLI's memory, fit and serve) takes:
# far beyond any real model's context (16M tokens per sequence) or batch, low enough that no number
# printed is absurd. The fit's searches for the largest context and the most sequences stop here too.
MAX_CONTEXT = 2**24
MAX_SEQUENCES = 65536


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------------------
# vLLM's KV layout: groups, pages and blocks (vllm/v1/core/kv_cache_utils.py,
# vllm/model_executor/models/config.py HybridAttentionMambaModelConfig)
# ---------------------------------------------------------------------------
VLLM_KERNEL_BLOCK_ALIGNMENT = 16  # attention block sizes stay multiples of 16 when enlarged for a state page
# "if max_num_layers < min_num_layers * 1.5: group_size = max_num_layers" (vllm/v1/core/kv_cache_utils.py in the
# 0.20.1 and 0.23.0 release wheels: "1.5 is a heuristic to avoid too many padding layers while accommodating
# speculative decoding drafters"; kvlab had 1.25 from an earlier reading; 0.10.0 took the smallest count always).
# No catalogue model's types fall between 1.25x and 1.5x, so no figure moved.
VLLM_GROUP_SIZE_SLACK = 1.5


def vllm_kv_layout(
    arch: Architecture,
    max_model_len: int,
    kv_cache_dtype: str = "bf16",
    model_value_bytes: int = 2,
    ssm_value_bytes: int | None = None,
    block_size: int = 16,
    max_num_batched_tokens: int = 2048,
    tp: int = 1,
    stage: tuple[int, int] | None = None,
    state_blocks: int = 1,
) -> dict:
    """How vLLM lays one GPU's KV cache out for `arch`: its groups, page, block size and one request's blocks.

    - Layers with the same cache spec form a type (full, each sliding window, each chunk size, the
      recurrent state). One type: every layer gets its own tensor. Several types ("hybrid"): vLLM
      splits each type into groups of `group_size` layers (the smallest type's count, or the largest's
      when it is within 1.5x of it), pads the last group of a type with empty layers, and lets the
      groups share `group_size` tensors, so every group pays for whole pages of group_size layers.
    - With a recurrent state, pages must be one size: the attention block grows to the smallest
      multiple of 16 tokens whose page holds a state, and the state page is padded to it.
    - A request takes, per group: a full layer's cdiv(max_model_len, block) blocks, a sliding layer's
      cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block) + 1, a chunked layer's
      cdiv(min(chunk + max_num_batched_tokens, max_model_len), block), a state's `state_blocks` blocks
      (MambaSpec.max_memory_usage_bytes: 1 + speculative tokens, 2 + speculative tokens with prefix caching
      in "align" mode; see vllm_state_blocks).
    `tp`: the tensor-parallel size (KV heads split per GPU, replicated below one head each; an MLA
    latent is not split; a state splits by heads).
    `stage`: the [start, end) layers of one pipeline stage. vLLM groups the whole model's layers, a type's
    layers dealt out to its groups in turn (layers[i::n]), and projects the groups onto each stage
    (vllm/v1/core/kv_cache_utils.py: get_kv_cache_configs, _get_kv_cache_groups_uniform_page_size,
    _project_kv_cache_groups_to_worker). A request still takes blocks in every group, from one pool, and a
    stage's block holds as many pages as its fullest projected group has layers: a stage with few layers
    of a type pays for that type's blocks all the same.
    """
    dtype = kv_type(kv_cache_dtype)
    ssm_value_bytes = ssm_value_bytes or model_value_bytes
    types: dict[tuple, dict] = {}
    attn_token = 0
    at: dict[tuple, list[int]] = {}  # each type's layer indices, in order
    for i, layer in enumerate(arch.layers):
        if layer.kind == NONE:
            continue
        if layer.state_values:
            state = (layer.conv_state_values * model_value_bytes + layer.ssm_state_values * ssm_value_bytes) // tp
            t = types.setdefault(("state",), {"kind": LINEAR, "layers": 0, "state_bytes": state})
            t["layers"] += 1
            at.setdefault(("state",), []).append(i)
        if layer.kind == LINEAR:
            continue
        if arch.attention == "mla":
            width, per_rank = layer.k_values + layer.v_values, 1
        else:
            heads = layer.kv_heads or 1
            per_rank = _cdiv(heads, tp)
            width = (layer.k_values + layer.v_values) * per_rank // heads
        # K and V of this GPU's heads; a per-token-head type adds a scale per head to each (row_bytes)
        token = row_bytes(dtype, width, per_rank * (2 if layer.v_values else 1))
        if layer.index_values and dtype == "fp8":
            token = VLLM_FP8_DS_MLA_BYTES  # DeepSeek-V3.2's fp8_ds_mla latent
        if layer.index_values:
            token += dsa_index_bytes(layer.index_values)  # + the DSA indexer key (DeepseekV32IndexerCache)
        attn_token = max(attn_token, token)
        # vLLM groups layers whose cache spec is equal: the kind and window, and the heads and head sizes (a
        # separate drafter's layers are a type of their own even where their bytes per token match the model's)
        window = layer.window if layer.kind in (SLIDING, CHUNKED) else None
        key = (layer.kind, window, layer.kv_heads, layer.head_dim_k, layer.head_dim_v)
        t = types.setdefault(key, {"kind": layer.kind, "window": window, "layers": 0, "token": 0})
        t["layers"] += 1
        t["token"] = max(t["token"], token)
        at.setdefault(key, []).append(i)
    if not types:
        raise ValueError(f"{arch.name} keeps no cache in any layer")

    block = block_size
    state_page = max((t["state_bytes"] for t in types.values() if "state_bytes" in t), default=0)
    if state_page and attn_token:
        a = VLLM_KERNEL_BLOCK_ALIGNMENT
        block = max(block, a * _cdiv(state_page, a * attn_token))
    page = block * attn_token if attn_token else state_page

    counts = [t["layers"] for t in types.values()]
    if len(types) == 1:
        group_size, hybrid = counts[0], False
    else:
        group_size, hybrid = min(counts), True
        if max(counts) < min(counts) * VLLM_GROUP_SIZE_SLACK:
            group_size = max(counts)
    # the layers of each group on this GPU: all of them, or a stage's share of each (see `stage`)
    start, end = stage or (0, arch.n_layers)
    on_gpu = {
        key: [
            sum(start <= i < end for i in at[key][j :: _cdiv(len(at[key]), group_size)])
            for j in range(_cdiv(len(at[key]), group_size))
        ]
        for key in types
    }
    width = max(max(counts) for counts in on_gpu.values())  # pages per block: the fullest group's layers
    if not width:
        raise ValueError(
            f"pipeline stage of layers {start}-{end - 1} keeps no KV cache of its own (its layers reuse others' "
            "or keep none): kvlab cannot size it; use fewer stages or move the boundary (VLLM_PP_LAYER_PARTITION)"
        )
    groups, blocks_per_request, padding = [], 0, 0
    for key, t in types.items():
        n_groups = _cdiv(t["layers"], group_size)
        padding += n_groups * width - sum(on_gpu[key])
        # a type with a narrower token (Gemma 4's sliding layers beside its wider full ones) gets pages of the
        # same size holding more tokens: vLLM raises its block size by the ratio (unify_kv_cache_spec_page_size,
        # vllm/v1/core/kv_cache_utils.py); where the ratio is no whole number, newer releases pad its page instead
        tokens_per_block = block
        if t.get("token") and page % t["token"] == 0 and page // t["token"] > block:
            tokens_per_block = page // t["token"]
        if t["kind"] == FULL:
            need = _cdiv(max_model_len, tokens_per_block)
        elif t["kind"] == SLIDING:
            need = _cdiv(min(t["window"] - 1 + max_num_batched_tokens, max_model_len), tokens_per_block) + 1
        elif t["kind"] == CHUNKED:
            need = _cdiv(min(t["window"] + max_num_batched_tokens, max_model_len), tokens_per_block)
        else:
            need = state_blocks
        blocks_per_request += need * n_groups
        groups.append(
            {
                "kind": t["kind"],
                "window": t.get("window"),
                # only where vLLM enlarged this type's blocks (the layout's block_size is the others')
                **({"block_size": tokens_per_block} if tokens_per_block != block else {}),
                "layers": sum(on_gpu[key]),
                "groups": n_groups,
                "blocks_per_request": need * n_groups,
                "bytes_per_request": need * n_groups * page * width,
            }
        )
    n_groups = sum(g["groups"] for g in groups)
    memory_per_block = page * width
    return {
        "hybrid": hybrid,
        "block_size": block,
        "page_bytes": page,
        "attention_bytes_per_token_per_layer": attn_token,
        "state_page_bytes": state_page,
        "group_size": width,
        "n_groups": n_groups,
        "n_layers": end - start,
        "padding_layers": padding,
        "types": groups,
        "memory_per_block": memory_per_block,
        "blocks_per_request": blocks_per_request,
        "bytes_per_request": blocks_per_request * memory_per_block,
    }


def vllm_pipeline_stages(n_layers: int, pp: int, partition: tuple[int, ...] | None = None) -> list[tuple[int, int]]:
    """The [start, end) layers of each pipeline stage, as vLLM splits them (vllm/distributed/utils.py,
    get_pp_indices, without VLLM_PP_LAYER_PARTITION): n // pp each, the remainder one by one to the stages
    before the last, from the second-to-last backwards (the last also runs the final norm and LM head).
    `partition`: the layers per stage as VLLM_PP_LAYER_PARTITION gives them.

    >>> vllm_pipeline_stages(22, 4)
    [(0, 5), (5, 11), (11, 17), (17, 22)]
    >>> vllm_pipeline_stages(61, 2)
    [(0, 31), (31, 61)]
    """
    if pp < 1 or pp > n_layers:
        raise ValueError(f"pipeline_parallel: {pp} stages for {plural(n_layers, 'layer')}; give 1 to {n_layers}")
    if partition is not None:
        if len(partition) != pp or sum(partition) != n_layers or min(partition) < 1:
            raise ValueError(
                f"VLLM_PP_LAYER_PARTITION {','.join(map(str, partition))}: {pp} stages of at least 1 layer "
                f"summing to {n_layers}"
            )
        sizes = list(partition)
    else:
        sizes = [n_layers // pp] * pp
        for i in range(2, n_layers % pp + 2):
            sizes[-i] += 1
    starts = [sum(sizes[:r]) for r in range(pp)]
    return [(a, a + n) for a, n in zip(starts, sizes)]


def vllm_blocks(layout: dict, available_bytes: float) -> dict:
    """What vLLM prints for an available KV memory: blocks, 'GPU KV cache size' tokens, 'Maximum concurrency'."""
    blocks = int(max(0, available_bytes) // layout["memory_per_block"])
    return {
        "blocks": blocks,
        "tokens": blocks // layout["n_groups"] * layout["block_size"],
        "concurrency": blocks / layout["blocks_per_request"],
    }


def ssm_state_bytes(arch: Architecture) -> int:
    """Bytes per value of a recurrent layer's SSM state in vLLM: the config's mamba_ssm_dtype (float32 in
    Qwen3.5/3.6), else the model dtype (2 B)."""
    return 4 if getattr(arch, "ssm_state_dtype", None) in ("float32", "f32") else 2


def vllm_state_blocks(prefix_caching: bool = False, speculative_tokens: int = 0) -> int:
    """The pages one request's recurrent state takes in vLLM (vllm/v1/kv_cache_interface.py,
    MambaSpec.max_memory_usage_bytes; num_speculative_blocks = num_speculative_tokens, set in
    vllm/model_executor/layers/mamba/abstract.py, MambaBase.get_kv_cache_spec): 1 + speculative tokens, or
    2 + speculative tokens when prefix caching puts the state in "align" mode (HybridAttentionMambaModelConfig:
    "align" for models without Mamba prefix-caching support, as Qwen3.5/3.6's Gated DeltaNet; "all", one state
    per block, is not modelled).

    >>> vllm_state_blocks(), vllm_state_blocks(True), vllm_state_blocks(True, 3)
    (1, 2, 5)
    """
    speculative_tokens = int(speculative_tokens)
    if speculative_tokens < 0:
        raise ValueError(f"speculative_tokens must be 0 or more, got {speculative_tokens}")
    return (2 if prefix_caching else 1) + speculative_tokens


def vllm_with_draft_layers(arch: Architecture, speculative_tokens: int) -> Architecture:
    """`arch` with its MTP draft layers appended (when speculative_tokens > 0): vLLM's MTP proposer runs the
    checkpoint's own draft layers (mtp_num_hidden_layers / num_nextn_predict_layers) in the same worker, and
    their attention caches K and V in the same pool, one full-attention layer each, shaped like the model's
    last full layer."""
    if not speculative_tokens or not arch.draft_layers:
        return arch
    full = [layer for layer in arch.layers if layer.kind == FULL]
    if not full:
        return arch
    return dataclasses.replace(
        arch,
        layers=arch.layers
        + tuple(
            dataclasses.replace(full[-1], conv_state_values=0, ssm_state_values=0) for _ in range(arch.draft_layers)
        ),
    )


def vllm_speculative_state(arch: Architecture, speculative_tokens: int) -> Architecture:
    """`arch` with each Gated DeltaNet / KDA layer's conv state as vLLM keeps it under `speculative_tokens`
    speculative tokens (any method): conv_kernel - 1 + k rows of the conv width instead of conv_kernel - 1
    (vllm/model_executor/layers/mamba/mamba_utils.py, MambaStateShapeCalculator.gated_delta_net_state_shape and
    kda_state_shape: conv_state_shape (conv_dim // tp, conv_kernel_size - 1 + num_spec); num_spec =
    speculative_config.num_speculative_tokens, vllm/model_executor/models/qwen3_next.py). The larger state page
    also enlarges the attention block that must hold it (HybridAttentionMambaModelConfig). Layers whose conv kernel
    kvlab does not know (LayerSpec.conv_kernel 0: Mamba layers) are left as they are.

    >>> from kvlab.memory.architecture import linear_layer
    >>> layer = linear_layer(4, 16, 128, 48, 128)
    >>> a = Architecture("x", "qwen3_5", (layer,), 24, 5120)
    >>> vllm_speculative_state(a, 3).layers[0].conv_state_values == layer.conv_state_values * 2
    True
    """
    if not speculative_tokens:
        return arch
    layers = []
    for layer in arch.layers:
        rows = layer.conv_kernel - 1
        if rows > 0 and layer.conv_state_values:
            conv = layer.conv_state_values // rows * (rows + speculative_tokens)
            layer = dataclasses.replace(layer, conv_state_values=conv)
        layers.append(layer)
    return dataclasses.replace(arch, layers=tuple(layers))


def vllm_kv_cache(
    arch: Architecture,
    max_model_len: int,
    kv_cache_dtype: str = "auto",
    model_dtype: str = "bf16",
    block_size: int = VLLM_BLOCK_SIZE,
    max_num_batched_tokens: int = VLLM_MAX_NUM_BATCHED_TOKENS,
    tp: int = 1,
    pp: int = 1,
    pp_partition: tuple[int, ...] | None = None,
    prefix_caching: bool = False,
    speculative_tokens: int = 0,
    mtp: bool = False,
    drafter: dict | None = None,
) -> dict:
    """vLLM's per-layer pages and the most memory one sequence of max_model_len can take.

    `prefix_caching` (--enable-prefix-caching) and `speculative_tokens` (num_speculative_tokens) change what a
    recurrent state takes per request (vllm_state_blocks); with `mtp` the checkpoint's draft layers
    (Architecture.draft_layers, full attention like the model's) cache K and V beside the model's
    (vllm_with_draft_layers); a separate `drafter` (kvlab.memory.drafters) adds its own attention layers.

    `layout` is the whole model's (one GPU); under `tp`-way tensor and `pp`-way pipeline parallel, `stages`
    lists what each GPU holds: a stage's layers (vllm_pipeline_stages) and their layout with each GPU's share
    of the KV heads (`gpu_stages` gives the list in every case). Under pipeline parallel a hybrid model's
    layers are grouped over the whole model, as vLLM does, and each stage holds its share of every group.
    """
    if max_model_len < 1 or block_size < 1:
        raise ValueError("max_model_len and block_size must be at least 1")
    model_dtype = kv_type(model_dtype)
    dtype = model_dtype if kv_cache_dtype == "auto" else kv_type(kv_cache_dtype)
    if dtype not in VLLM_KV_TYPES:
        raise ValueError(
            f"kv_cache_dtype={short_repr(dtype)} is a llama.cpp type; vLLM takes auto, {', '.join(VLLM_KV_TYPES)}"
        )
    _check_head_scales(arch, dtype)
    state_blocks = vllm_state_blocks(prefix_caching, speculative_tokens)
    arch = vllm_with_draft_layers(arch, speculative_tokens if mtp else 0)
    arch = vllm_speculative_state(with_drafter(arch, drafter), speculative_tokens)
    kinds = (FULL, SLIDING, LINEAR) + ((CHUNKED,) if arch.count(CHUNKED) else ())
    by_kind = {kind: {"layers": 0, "page_bytes": 0, "bytes_per_sequence": 0} for kind in kinds}
    per_token = 0
    for layer in arch.layers:
        if layer.kind == NONE:
            continue
        if layer.state_values:  # a linear layer, or a Falcon-H1 layer's Mamba-2 mixer beside its attention
            state = by_kind[LINEAR]
            state["layers"] += 1
            page = layer.state_values * KV_TYPES[model_dtype][1]
            state["page_bytes"] += page
            state["bytes_per_sequence"] += page * state_blocks
        if layer.kind == LINEAR:
            continue
        row = by_kind[layer.kind]
        row["layers"] += 1
        token_bytes = row_bytes(dtype, layer.k_values, layer.kv_heads) + (
            row_bytes(dtype, layer.v_values, layer.kv_heads) if layer.v_values else 0
        )
        if layer.index_values and dtype == "fp8":
            # DeepSeek-V3.2: --kv-cache-dtype fp8 becomes "fp8_ds_mla", 656 B per token per layer
            # (DeepseekV32ForCausalLM.verify_and_update_config; MLAAttentionSpec.real_page_size_bytes)
            token_bytes = VLLM_FP8_DS_MLA_BYTES
        if layer.index_values:
            # + the DSA indexer key: DeepseekV32IndexerCache's MLAAttentionSpec, uint8, head_size 132
            token_bytes += dsa_index_bytes(layer.index_values)
        page = block_size * token_bytes
        per_token += token_bytes
        row["page_bytes"] += page
        if layer.kind == FULL:
            row["bytes_per_sequence"] += _cdiv(max_model_len, block_size) * page
        elif layer.kind == CHUNKED:
            # ChunkedLocalAttentionSpec: cdiv(min(attention_chunk_size + max_num_batched_tokens, max_model_len),
            # block_size) pages (no extra block, unlike SlidingWindowSpec)
            tokens = min(layer.window + max_num_batched_tokens, max_model_len)
            row["bytes_per_sequence"] += _cdiv(tokens, block_size) * page
        else:
            tokens = min(layer.window - 1 + max_num_batched_tokens, max_model_len)
            row["bytes_per_sequence"] += (_cdiv(tokens, block_size) + 1) * page
    layout = vllm_kv_layout(
        arch,
        max_model_len,
        dtype,
        KV_TYPES[model_dtype][1],
        ssm_state_bytes(arch),
        block_size,
        max_num_batched_tokens,
        state_blocks=state_blocks,
    )
    if layout["hybrid"]:  # vLLM's layer groups: a padded group pays like a full one, blocks may be enlarged
        for row in by_kind.values():
            row["bytes_per_sequence"] = 0
        for t in layout["types"]:
            by_kind[t["kind"]]["bytes_per_sequence"] += t["bytes_per_request"]
    per_seq = sum(row["bytes_per_sequence"] for row in by_kind.values())
    assert per_seq == layout["bytes_per_request"]
    stages = []
    for start, end in vllm_pipeline_stages(arch.n_layers, pp, pp_partition) if pp > 1 else [(0, arch.n_layers)]:
        shape = (max_model_len, dtype, KV_TYPES[model_dtype][1], ssm_state_bytes(arch), block_size)
        stages.append(
            {
                "layers": (start, end),
                "layout": layout
                if (start, end) == (0, arch.n_layers) and tp == 1
                else vllm_kv_layout(
                    arch, *shape, max_num_batched_tokens, tp=tp, stage=(start, end), state_blocks=state_blocks
                ),
            }
        )
    assumptions = [
        f"block_size {layout['block_size']} tokens (PagedAttention); a sequence holds whole blocks",
        f"KV dtype {dtype} ({'model dtype' if kv_cache_dtype == 'auto' else '--kv-cache-dtype'})",
    ]
    if layout["hybrid"]:
        assumptions.append(
            f"vLLM's layer groups: {layout['n_groups']} groups of {plural(layout['group_size'], 'layer')}"
            + (
                f", {layout['padding_layers']} of them padding that costs as much as a real layer"
                if layout["padding_layers"]
                else ""
            )
            + (
                f"; attention blocks enlarged to {layout['block_size']} tokens so a page holds one recurrent state"
                if layout["block_size"] != block_size
                else ""
            )
            + " (vllm/v1/core/kv_cache_utils.py, _get_kv_cache_groups_uniform_page_size)"
        )
    if layout["hybrid"] and pp > 1:
        assumptions.append(
            "pipeline stages: the layers are grouped over the whole model and each stage holds its share of every "
            "group; a request takes blocks in every group (get_kv_cache_configs merges the stages' layers, then "
            "_project_kv_cache_groups_to_worker; releases before that grouped each stage's own layers)"
        )
    if by_kind[SLIDING]["layers"]:
        assumptions.append(
            f"sliding layers hold window-1 + max_num_batched_tokens ({max_num_batched_tokens}) "
            "tokens + 1 block (SlidingWindowSpec)"
        )
    if CHUNKED in by_kind:
        assumptions.append(
            f"chunked layers hold attention_chunk_size + max_num_batched_tokens ({max_num_batched_tokens}) tokens "
            "(ChunkedLocalAttentionSpec), as vLLM does with VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1, "
            "the default in recent vLLM; versions where it defaults to 0 turn the hybrid manager off and give "
            "chunked layers full-length pages (vllm/config/vllm.py, vllm/envs.py)"
        )
    if any(layer.index_values for layer in arch.layers):
        assumptions.append(
            "DeepSeek-V3.2: each MLA layer also caches the DSA indexer key, 132 B per token (fp8 + fp32 scale, "
            "DeepseekV32IndexerCache); fp8 KV is vLLM's fp8_ds_mla format, 656 B per token"
        )
    if by_kind[LINEAR]["layers"]:
        ssm = "f32 (the config's mamba_ssm_dtype)" if ssm_state_bytes(arch) == 4 else model_dtype
        assumptions.append(
            f"recurrent state: one page per sequence, its convolution state in {model_dtype} and its SSM state in "
            f"{ssm}, padded to the attention page (HybridAttentionMambaModelConfig)"
        )
    return {
        "mode": "vllm",
        "model": arch.name,
        "max_model_len": max_model_len,
        "kv_cache_dtype": dtype,
        "block_size": layout["block_size"],
        "layout": layout,
        **({"stages": stages} if tp * pp > 1 else {}),
        "bytes_per_token": per_token,
        "kib_per_token": per_token / KIB,
        "by_kind": by_kind,
        "bytes_per_sequence": per_seq,
        "gib_per_sequence": per_seq / GIB,
        "assumptions": assumptions,
        "sources": [
            "vllm/v1/kv_cache_interface.py: FullAttentionSpec, MLAAttentionSpec, "
            "SlidingWindowSpec, MambaSpec max_memory_usage_bytes"
        ],
    }


def gpu_stages(kv: dict) -> list[dict]:
    """What each GPU of a vllm_kv_cache result holds: its `stages`, or the whole model on one GPU."""
    return kv.get("stages") or [{"layers": (0, kv["layout"]["n_layers"]), "layout": kv["layout"]}]


def vllm_activation_reserve(
    arch: Architecture, max_num_batched_tokens: int = VLLM_MAX_NUM_BATCHED_TOKENS, max_num_seqs: int = 256
) -> dict:
    """An ESTIMATE of what vLLM keeps out of the KV budget besides the weights.

    vLLM measures this at start-up (profiling run); we approximate it as
    activations of one max_num_batched_tokens forward pass in bf16
    (tokens x (4 x hidden + 2 x intermediate) x 2 B), f32 logits for
    max_num_seqs sequences (max_num_seqs x vocab x 4 B), and 1 GiB for the CUDA
    context, cuBLAS workspaces and CUDA graphs.
    """
    hidden = arch.hidden_size
    inter = arch.intermediate_size or 4 * hidden
    vocab = arch.vocab_size or 32000
    acts = max_num_batched_tokens * (4 * hidden + 2 * inter) * 2
    logits = max_num_seqs * vocab * 4
    fixed = GIB
    total = acts + logits + fixed
    return {
        "bytes": total,
        "gib": total / GIB,
        "parts": {"activations": acts, "logits": logits, "cuda_context_and_graphs": fixed},
        "assumption": "estimate: activations of one max_num_batched_tokens step (bf16) + f32 logits for "
        "max_num_seqs + 1 GiB CUDA context/graphs; vLLM measures the real value at start-up",
    }


def vllm_capacity(
    arch: Architecture,
    gpu_memory_bytes: int,
    weights_bytes: int,
    max_model_len: int,
    gpu_memory_utilization: float = VLLM_GPU_MEMORY_UTILIZATION,
    kv_cache_dtype: str = "auto",
    activation_reserve_bytes: int | None = None,
    block_size: int = VLLM_BLOCK_SIZE,
    max_num_batched_tokens: int = VLLM_MAX_NUM_BATCHED_TOKENS,
    max_num_seqs: int = 256,
) -> dict:
    """How many KV tokens and full-length sequences fit on one GPU under vLLM."""
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError("gpu_memory_utilization must be in (0, 1]")
    kv = vllm_kv_cache(
        arch, max_model_len, kv_cache_dtype, block_size=block_size, max_num_batched_tokens=max_num_batched_tokens
    )
    reserve = vllm_activation_reserve(arch, max_num_batched_tokens, max_num_seqs)
    reserve_bytes = reserve["bytes"] if activation_reserve_bytes is None else int(activation_reserve_bytes)
    budget = int(gpu_memory_bytes * gpu_memory_utilization)
    available = budget - weights_bytes - reserve_bytes
    fits = available > 0 and available >= kv["bytes_per_sequence"]
    per_block_all_layers = kv["bytes_per_token"] * block_size
    blocks = max(0, available) // per_block_all_layers if per_block_all_layers else 0
    sequences = max(0, available) // kv["bytes_per_sequence"] if kv["bytes_per_sequence"] else 0
    return {
        "mode": "vllm",
        "model": arch.name,
        "gpu_memory_bytes": gpu_memory_bytes,
        "gpu_memory_utilization": gpu_memory_utilization,
        "budget_bytes": budget,
        "weights_bytes": weights_bytes,
        "activation_reserve_bytes": reserve_bytes,
        "kv_available_bytes": available,
        "kv_available_gib": available / GIB,
        "blocks": blocks,
        "kv_tokens": blocks * block_size,
        "max_concurrent_sequences": sequences,
        "fits_one_sequence": fits,
        "per_sequence": kv,
        "assumptions": [
            f"KV budget = {gpu_memory_utilization} x GPU memory - weights - activation reserve",
            reserve["assumption"] if activation_reserve_bytes is None else "activation reserve given by caller",
            "kv_tokens counts blocks of all attention layers together (exact for models without sliding/linear layers)",
            "max_concurrent_sequences = KV budget // memory of one max_model_len sequence (vLLM's 'Maximum concurrency')",
        ]
        + kv["assumptions"],
    }


# ---------------------------------------------------------------------------
# 3b. Layer by layer: what each layer needs and what the engine allocates for it
# ---------------------------------------------------------------------------
LAYER_KIND_LABELS = {
    "full": "full attention",
    "sliding": "sliding window",
    "chunked": "chunked local attention",
    "linear": "recurrent state",
    "mla": "MLA latent",
    "none": "no cache (MLP only)",
    "hybrid": "attention + recurrent state",
}


def layer_memory_map(
    arch: Architecture,
    context: int,
    kv: str = "f16",
    mode: str = "llamacpp",
    n_seq: int = 1,
    n_ubatch: int = 512,
    block_size: int = VLLM_BLOCK_SIZE,
    max_num_batched_tokens: int = VLLM_MAX_NUM_BATCHED_TOKENS,
) -> dict:
    """Every layer's cache for `n_seq` sequences of `context` tokens: ideal bytes and allocated bytes.

    Ideal: the tokens the layer must hold (full: every token; sliding: min(context, window);
    recurrent: its state) x its row, in the engine's types. Allocated: what the engine reserves
    for it: llama.cpp's cells (context padded to 256, the SWA cache's window + n_ubatch padded to
    256, sliding layers of families it runs without SWA at full length; `-c context*n_seq
    -np n_seq`, one stream per sequence when n_seq > 1, as in kvlab.memory.verdict), vLLM's whole
    blocks (a sliding layer keeps window - 1 + max_num_batched_tokens tokens and one block more),
    or, for "exact", the ideal. The allocated bytes add up to `memory_report`'s total.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {short_repr(mode)}")
    if context < 1 or n_seq < 1:
        raise ValueError("context and n_seq must be at least 1")
    k_type = kv_type(kv)
    _check_head_scales(arch, k_type)
    mla = arch.attention == "mla"
    cells = {}
    if mode == "llamacpp":
        lc = llamacpp_kv_cache(arch, context * n_seq, k_type, n_seq=n_seq, n_ubatch=n_ubatch, kv_unified=n_seq == 1)
        for cache in lc["caches"]:
            cells[cache["cache"]] = cache["cells"] * cache["streams"]
        uses_swa = "SWA" in cells
        state_bytes = KV_TYPES[LLAMACPP_RECURRENT_TYPE][1]
    else:
        uses_swa = True
        state_bytes = KV_TYPES["f32" if mode == "exact" else "bf16"][1]
        if mode == "vllm":
            dtype = "auto" if k_type in ("f16", "bf16") else k_type
            vk = vllm_kv_cache(
                arch, context, dtype, block_size=block_size, max_num_batched_tokens=max_num_batched_tokens
            )
            k_type = vk["kv_cache_dtype"]
            layout = vk["layout"]
            block_size = layout["block_size"]  # enlarged for a hybrid with recurrent state
            # a narrower type's blocks, enlarged to the common page (Gemma 4's full layers beside its sliding ones)
            type_blocks = {(t["kind"], t["window"]): t.get("block_size", block_size) for t in layout["types"]}
    layers = []
    for i, layer in enumerate(arch.layers):
        kind = "mla" if (mla and layer.kind in ATTENTION_KINDS) else layer.kind
        if layer.parallel_hybrid:
            kind = "hybrid"
        state = layer.state_values * state_bytes * (max(1, n_seq) if mode == "llamacpp" else n_seq)
        if mode == "vllm" and layer.state_values:  # SSM part in mamba_ssm_dtype, the page padded to the attention page
            state = (layer.conv_state_values * state_bytes + layer.ssm_state_values * ssm_state_bytes(arch)) * n_seq
        if layer.kind == NONE:
            ideal = alloc = 0
            held = "nothing"
        elif layer.kind == LINEAR:
            ideal = alloc = state
            if mode == "vllm" and layout["hybrid"]:
                alloc = layout["page_bytes"] * n_seq
            held = "its state"
        else:
            row = row_bytes(k_type, layer.k_values, layer.kv_heads) + (
                0 if (mla or not layer.v_values) else row_bytes(k_type, layer.v_values, layer.kv_heads)
            )
            index_row = 0
            if layer.index_values:  # DeepSeek-V3.2's indexer key: type_k in llama.cpp, fp8 + scale otherwise
                if mode == "llamacpp":
                    index_row = row_bytes(k_type, layer.index_values)
                else:
                    index_row = dsa_index_bytes(layer.index_values)
                    if mode == "vllm" and k_type == "fp8":
                        row = VLLM_FP8_DS_MLA_BYTES
            tokens = context if layer.kind == FULL else min(context, layer.window)
            ideal = (row + (0 if mode == "llamacpp" else index_row)) * tokens * n_seq
            held = f"{tokens:,} tokens" + (f" x {n_seq}" if n_seq > 1 else "")
            if mode == "exact":
                alloc = ideal
            elif mode == "llamacpp":
                in_swa = (layer.kind == SLIDING and uses_swa) or (
                    layer.kind == CHUNKED and arch.family in LLAMACPP_CHUNKED_FAMILIES
                )
                name = "SWA" if in_swa else ("non-SWA" if "non-SWA" in cells else "kv")
                alloc = row * cells[name]
                if index_row:  # the indexer cache has as many cells as the MLA cache
                    ideal += index_row * tokens * n_seq
                    alloc += index_row * cells["indexer"]
            else:
                row += index_row
                bs = type_blocks.get((layer.kind, layer.window if layer.kind in (SLIDING, CHUNKED) else None))
                bs = bs or block_size
                if layer.kind == FULL:
                    alloc = _cdiv(context, bs) * bs * row * n_seq
                elif layer.kind == CHUNKED:  # ChunkedLocalAttentionSpec
                    keep = min(layer.window + max_num_batched_tokens, context)
                    alloc = _cdiv(keep, bs) * bs * row * n_seq
                else:
                    keep = min(layer.window - 1 + max_num_batched_tokens, context)
                    alloc = (_cdiv(keep, bs) + 1) * bs * row * n_seq
            if layer.parallel_hybrid:  # Falcon-H1: the Mamba-2 mixer's state beside the KV rows
                ideal, alloc = ideal + state, alloc + state
                held += " + its state"
        layers.append(
            {
                "index": i,
                "kind": kind,
                "label": LAYER_KIND_LABELS[kind],
                "holds": held,
                "ideal_bytes": ideal,
                "allocated_bytes": alloc,
            }
        )
    if mode == "vllm" and layout["padding_layers"]:
        # vLLM's groups: a type's last group is padded with empty layers that cost as much as real ones;
        # their bytes are shown on the type's last layer
        for t in layout["types"]:
            pad = t["groups"] * layout["group_size"] - t["layers"]
            if not pad:
                continue
            same = [
                la
                for la, layer in zip(layers, arch.layers)
                if layer.kind == t["kind"]
                and (layer.window if layer.kind in (SLIDING, CHUNKED) else None) == t["window"]
            ]
            same[-1]["allocated_bytes"] += pad * same[-1]["allocated_bytes"]
            same[-1]["holds"] += f" + {pad} padding layers of its vLLM group"
    total_ideal = sum(la["ideal_bytes"] for la in layers)
    total_alloc = sum(la["allocated_bytes"] for la in layers)
    how = {
        "llamacpp": (
            f"llama.cpp: -c {context * n_seq:,}{f' -np {n_seq}' if n_seq > 1 else ''}; cells: "
            + ", ".join(f"{name} {n:,}" for name, n in cells.items())
        ),
        "vllm": f"vLLM: blocks of {block_size} tokens; sliding layers keep window - 1 + {max_num_batched_tokens:,} tokens + 1 block"
        + (
            f"; {layout['n_groups']} groups of {plural(layout['group_size'], 'layer')}"
            + (f", {layout['padding_layers']} padding layers" if layout["padding_layers"] else "")
            if mode == "vllm" and layout["hybrid"]
            else ""
        ),
        "exact": "no engine: each layer holds exactly what it needs",
    }[mode]
    return {
        "model": arch.name,
        "mode": mode,
        "context": context,
        "n_seq": n_seq,
        "kv_type": k_type,
        "layers": layers,
        "kinds": sorted({la["kind"] for la in layers}, key=list(LAYER_KIND_LABELS).index),
        "ideal_bytes": total_ideal,
        "allocated_bytes": total_alloc,
        "padding_bytes": total_alloc - total_ideal,
        "how": how,
    }


# ---------------------------------------------------------------------------
# 4. The parts of a fit besides the cache (the verdict itself: kvlab.memory.verdict.verdict)
# ---------------------------------------------------------------------------
RUNTIME_RESERVE_BYTES = 512 * MIB  # CUDA context + driver-reserved memory (estimate; ~0.5 GiB on NVIDIA cards)
MODES = ("llamacpp", "vllm", "exact")


def llamacpp_compute_buffer(arch: Architecture, n_ubatch: int = 512) -> dict:
    """An ESTIMATE of llama.cpp's compute buffer: n_ubatch x 4 B x (vocab + n_ff + 4 x hidden).

    The f32 logits of one ubatch dominate, then the FFN and attention
    intermediates (flash attention on, so no n_ctx x n_ubatch score matrix).
    Checked against one public log: Phi-3-mini, -ub 512, FA on: 108 MiB
    printed, this formula gives 102.6 MiB. Expect +-50% across backends.
    """
    vocab = arch.vocab_size or 32000
    n_ff = arch.intermediate_size or 4 * arch.hidden_size
    nbytes = n_ubatch * 4 * (vocab + n_ff + 4 * arch.hidden_size)
    return {
        "bytes": nbytes,
        "mib": nbytes / MIB,
        "assumption": f"estimate: n_ubatch ({n_ubatch}) x 4 B x (vocab + n_ff + 4 x hidden), flash attention on",
    }


# ---------------------------------------------------------------------------
# 5. Widget entry points: a model by name (catalogue id, config) in, plain data out
# ---------------------------------------------------------------------------


def memory_report(
    model,
    context: int,
    kv: str = "f16",
    mode: str = "llamacpp",
    n_seq: int = 1,
    v_kv: str | None = None,
    n_ubatch: int = 512,
    kv_unified: bool = True,
    max_num_batched_tokens: int = VLLM_MAX_NUM_BATCHED_TOKENS,
) -> dict:
    """KV cache of `model` at `context` tokens: per token, per layer kind, total, under one accounting.

    `model`: a catalogue id ("llama-3.1-8b"), a Hugging Face id in the catalogue,
    a config.json path, dict or JSON text, or an Architecture.
    """
    arch = model_architecture(model)
    n_seq = finite_number("n_seq", n_seq, minimum=1, maximum=MAX_SEQUENCES, integer=True)
    # llama.cpp's context is the total of all sequences (-c context x n_seq)
    top = MAX_CONTEXT * n_seq if mode == "llamacpp" else MAX_CONTEXT
    context = finite_number("context", context, minimum=1, maximum=top, integer=True)
    per_token = kv_bytes_per_token(arch, kv, v_kv)
    if mode == "llamacpp":
        detail = llamacpp_kv_cache(arch, context, kv, v_kv, n_seq=n_seq, n_ubatch=n_ubatch, kv_unified=kv_unified)
        names = {"kv": FULL, "non-SWA": FULL, "SWA": SLIDING, "recurrent": LINEAR, "indexer": FULL}
        by_kind = {FULL: 0, SLIDING: 0, LINEAR: 0}
        if arch.count(CHUNKED) and arch.family in LLAMACPP_CHUNKED_FAMILIES:  # Llama-4: the SWA cache is chunked
            names["SWA"], by_kind[CHUNKED] = CHUNKED, 0
        for cache in detail["caches"]:
            by_kind[names[cache["cache"]]] += cache["bytes"]
        total = detail["total_bytes"]
    elif mode == "vllm":
        detail = vllm_kv_cache(
            arch, context, "auto" if kv in ("f16", "bf16") else kv, max_num_batched_tokens=max_num_batched_tokens
        )
        by_kind = {kind: row["bytes_per_sequence"] * n_seq for kind, row in detail["by_kind"].items()}
        total = detail["bytes_per_sequence"] * n_seq
    elif mode == "exact":
        detail = kv_cache_bytes(arch, context, kv, v_kv, n_seq=n_seq)
        by_kind = dict(detail["by_kind_bytes"])
        total = detail["total_bytes"]
    else:
        raise ValueError(f"mode must be one of {MODES}, got {short_repr(mode)}")
    return {
        "model": arch.name,
        "architecture": arch.summary(),
        "mode": mode,
        "context": context,
        "n_seq": n_seq,
        "kv_type": per_token["k_type"],
        "bytes_per_token": per_token["bytes_per_token"],
        "kib_per_token": per_token["kib_per_token"],
        "formula": per_token["formula"],
        "per_token": per_token,
        "by_layer_kind_bytes": by_kind,
        "total_bytes": total,
        "total_mib": total / MIB,
        "total_gib": total / GIB,
        "detail": detail,
        "warnings": _context_warnings(arch, context // n_seq if mode == "llamacpp" else context),
    }


def _context_warnings(arch: Architecture, per_sequence: int) -> list[str]:
    """What every memory answer says when a sequence runs past the model's trained context."""
    trained = arch.max_position_embeddings
    if not trained or per_sequence <= trained:
        return []
    return [
        f"{per_sequence:,} tokens per sequence is beyond the {trained:,} tokens {arch.name} was trained on "
        "(max_position_embeddings): llama.cpp warns and runs; vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    ]
