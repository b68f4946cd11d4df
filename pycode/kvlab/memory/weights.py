"""Weights memory: parameters x effective bits per weight.

Pure GGUF block types have exact sizes (ggml type traits: bytes per block /
values per block). The "_M"/"_S" mixes (Q4_K_M, Q5_K_M ...) keep some tensors
at higher precision, so their effective bits per weight depend on the model;
ours are measured on Llama-3.1-8B (GGUF file size / 8.03e9 parameters) and
are within a few percent for other dense models of that shape.

>>> weights_bytes(8.03e9, "Q8_0")["bits_per_weight"]
8.5
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from kvlab.inputs import short_repr

GIB = 2**30
DATA_DIR = Path(__file__).resolve().parents[1] / "data"  # kvlab/data: models.json, checkpoints.json

# name -> (bits per weight, where the number comes from)
WEIGHT_FORMATS: dict[str, tuple[float, str]] = {
    # serving dtypes
    "F32": (32.0, "4 bytes per weight"),
    "F16": (16.0, "2 bytes per weight"),
    "BF16": (16.0, "2 bytes per weight"),
    "FP8": (8.0, "1 byte per weight; block scales (e.g. 128x128) ignored"),
    "INT8": (8.0, "1 byte per weight; per-channel scales ignored"),
    "INT4": (4.15625, "GPTQ/AWQ group 128: 4 bits + fp16 scale/128 + 4-bit zero/128"),
    "MXFP4": (4.25, "OCP MXFP4: 32 x 4-bit values + one 8-bit shared exponent (gpt-oss MoE weights)"),
    # https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/
    # (a per-tensor FP32 scale on top is ignored); ggml's NVFP4 block is 36 B / 64 weights, the same 4.5 bits
    "NVFP4": (4.5, "NVIDIA NVFP4: 16 x 4-bit E2M1 values + one FP8 E4M3 scale per block"),
    # GGUF pure block types (ggml type_traits: type_size * 8 / blck_size)
    "Q8_0": (8.5, "ggml block_q8_0: 34 B / 32 weights"),
    "Q6_K": (6.5625, "ggml block_q6_K: 210 B / 256 weights"),
    "Q5_1": (6.0, "ggml block_q5_1: 24 B / 32 weights"),
    "Q5_0": (5.5, "ggml block_q5_0: 22 B / 32 weights"),
    "Q5_K": (5.5, "ggml block_q5_K: 176 B / 256 weights"),
    "Q4_1": (5.0, "ggml block_q4_1: 20 B / 32 weights"),
    "Q4_0": (4.5, "ggml block_q4_0: 18 B / 32 weights"),
    "Q4_K": (4.5, "ggml block_q4_K: 144 B / 256 weights"),
    "IQ4_NL": (4.5, "ggml block_iq4_nl: 18 B / 32 weights"),
    "IQ4_XS": (4.25, "ggml block_iq4_xs: 136 B / 256 weights"),
    "Q3_K": (3.4375, "ggml block_q3_K: 110 B / 256 weights"),
    "IQ3_S": (3.4375, "ggml block_iq3_s: 110 B / 256 weights"),
    "IQ3_XXS": (3.0625, "ggml block_iq3_xxs: 98 B / 256 weights"),
    "Q2_K": (2.625, "ggml block_q2_K: 84 B / 256 weights"),
    "IQ2_S": (2.5, "ggml block_iq2_s: 82 B / 256 weights"),
    "IQ2_XS": (2.3125, "ggml block_iq2_xs: 74 B / 256 weights"),
    "IQ2_XXS": (2.0625, "ggml block_iq2_xxs: 66 B / 256 weights"),
    "IQ1_S": (1.5625, "ggml block_iq1_s: 50 B / 256 weights"),
    # GGUF mixes: measured on Llama-3.1-8B (llama-bench file size / 8.03 B params)
    "Q4_K_M": (4.89, "mix; Llama-3.1-8B Q4_K_M file 4.58 GiB / 8.03e9 params"),
    "Q5_K_M": (5.70, "mix; Llama-3.1-8B Q5_K_M file 5.33 GiB / 8.03e9 params"),
    "Q4_K_S": (4.67, "mix; llama.cpp quantize README table for Llama-3.1-8B (recalled, not re-verified)"),
    "Q5_K_S": (5.57, "mix; llama.cpp quantize README table for Llama-3.1-8B (recalled, not re-verified)"),
    "Q3_K_M": (3.91, "mix; llama.cpp quantize README table for Llama-3.1-8B (recalled, not re-verified)"),
}
_ALIASES = {"FP16": "F16", "FLOAT16": "F16", "BFLOAT16": "BF16", "FP32": "F32", "AWQ": "INT4", "GPTQ": "INT4"}
MIXES = ("Q4_K_M", "Q5_K_M", "Q4_K_S", "Q5_K_S", "Q3_K_M")


def weight_format(name: str) -> str:
    """Normalise a weights format name ('q4_k_m' -> 'Q4_K_M'); unknown names are a ValueError."""
    key = str(name).strip().upper()
    key = _ALIASES.get(key, key)
    if key not in WEIGHT_FORMATS:
        raise ValueError(f"weights format {short_repr(name)} unknown; choose one of {', '.join(WEIGHT_FORMATS)}")
    return key


def weights_bytes(params: float, fmt: str = "BF16") -> dict:
    """Bytes of `params` weights stored as `fmt`, with the bits-per-weight source."""
    if params is None or params <= 0:
        raise ValueError("params must be a positive parameter count (catalogue entries carry one; else pass --params)")
    fmt = weight_format(fmt)
    bpw, source = WEIGHT_FORMATS[fmt]
    nbytes = int(params * bpw / 8)
    return {
        "format": fmt,
        "params": params,
        "bits_per_weight": bpw,
        "bytes": nbytes,
        "gib": nbytes / GIB,
        "source": source,
        "assumption": ("mixed quantisation: effective bits vary a few percent with the model's embedding/output share")
        if fmt in MIXES
        else "every weight in this format",
    }


def list_weight_formats() -> list[dict]:
    """All formats with their bits per weight and source, for a picker."""
    return [
        {"format": k, "bits_per_weight": v[0], "source": v[1], "mix": k in MIXES} for k, v in WEIGHT_FORMATS.items()
    ]


# Safetensors quantizers leave the token embedding and the output projection in 16 bits: AutoAWQ and GPTQ quantize
# the decoder layers' Linear modules only, llm-compressor's W4A16 / W8A8 / FP8 recipes ignore lm_head and the embedding
# is no Linear, and NVIDIA ModelOpt's NVFP4 exports keep lm_head in BF16. Three vLLM loads agree with params x bits
# once vocab x hidden (twice when untied) is counted at 2 bytes: Llama-3-70B AWQ on 2 GPUs, 18.52 GiB each against
# 'Model loading took 18.55 GiB' (tests/python/data/engine_logs/calibration/vllm_llama3_70b_awq_l40s_tp2_v0160.txt);
# Llama-3.1-70B W8A8, 67.66 GiB against 67.72 GiB (https://github.com/vllm-project/vllm/pull/12569); Qwen3-235B-A22B
# FP8 at TP4, 55.1 GiB each against 'weights memory: 55.13GiB' (https://github.com/vllm-project/vllm/pull/21429).
# GGUF quantizes token_embd and output too (its mixes are measured on whole files), so it is not here.
EMBEDDINGS_AT_16_BITS = ("INT4", "INT8", "FP8", "NVFP4")

# Formats that cover only some tensors: the rest stay in BF16.
# gpt-oss ships its MoE expert weights in MXFP4 and everything else (attention,
# embeddings, router, norms) in BF16 (gpt-oss model card, arXiv 2508.10925,
# "Quantization"; its Table 1 splits the parameters into MLP, attention and
# embedding). MXFP4 on a model without expert weights is not a format anyone ships.
PARTIAL_FORMATS = {"MXFP4": "MoE expert weights"}


@cache
def _stored_sizes() -> dict:
    """{(catalogue hf_id lowercased, format): entry} for every checkpoints.json entry that applies."""
    models = json.loads((DATA_DIR / "models.json").read_text(encoding="utf-8"))["models"]
    catalogue = {m["id"]: (m["hf_id"].lower(), m["params"]) for m in models}
    out = {}
    for entry in json.loads((DATA_DIR / "checkpoints.json").read_text(encoding="utf-8"))["checkpoints"]:
        if entry.get("applies"):
            hf_id, params = catalogue[entry["model"]]
            out[(hf_id, weight_format(entry["format"]))] = entry | {"catalogue_params": params}
    return out


def catalogue_checkpoint(arch, fmt: str) -> dict | None:
    """The published checkpoint's stored size for a catalogue model in `fmt` (kvlab/data/checkpoints.json), or None.

    Only for the catalogue's own model: an Architecture of the same name with another parameter count
    (model_architecture(id, params=...)) is not that checkpoint, and gets params x bits."""
    known = _stored_sizes().get((str(getattr(arch, "name", "")).lower(), weight_format(fmt)))
    if known and getattr(arch, "params", None) == known["catalogue_params"]:
        return known
    return None


def model_weights_bytes(arch, fmt: str = "BF16", as_stored: bool = True) -> dict:
    """Weights of a model (an Architecture with params, maybe expert_params) stored as `fmt`.

    A catalogue model whose published checkpoint in `fmt` kvlab has read (kvlab/data/checkpoints.json)
    gets the bytes that checkpoint stores, with its source (`stored` True); otherwise parameters x bits,
    the labelled fallback (`stored` False), which `as_stored=False` asks for.

    For MXFP4 only the MoE expert weights are 4.25 bits; the other tensors are
    counted in BF16. A model with no expert split in the catalogue is refused
    for MXFP4, naming what is missing.
    """
    fmt = weight_format(fmt)
    known = catalogue_checkpoint(arch, fmt) if as_stored else None
    if known:
        # the MTP head's share of the stored bytes rides along where the checkpoint's file list gives it
        stored = {"bytes": known["total_bytes"], "source": f"{known['how']}; {known['source']}"}
        return stored_weights(stored | {"mtp_bytes": known.get("mtp_bytes")}, fmt, known["hf_id"]) | {
            "params": arch.params,
            "bits_per_weight": known["total_bytes"] * 8 / arch.params if arch.params else None,
            # MXFP4 covers the experts only: the serving model reads the rest every step
            **({"covered_params": arch.expert_params} if fmt in PARTIAL_FORMATS and arch.expert_params else {}),
        }
    if not arch.params:
        raise ValueError(f"params: {arch.name} has no parameter count (pass params, e.g. --params 8.03e9)")
    embedding = _embedding_params(arch) if fmt in EMBEDDINGS_AT_16_BITS else 0
    if fmt not in PARTIAL_FORMATS and embedding and embedding < arch.params:
        quant = weights_bytes(arch.params - embedding, fmt)
        nbytes = quant["bytes"] + embedding * 2
        return dict(
            quant,
            params=arch.params,
            bits_per_weight=nbytes * 8 / arch.params,
            bytes=nbytes,
            gib=nbytes / GIB,
            how=f"{params_text(arch.params - embedding)} params x {quant['bits_per_weight']:g} bits ({quant['source']}) "
            f"+ the embedding and output projection, {params_text(embedding)} params x 16 bits (quantizers leave them "
            "in 16 bits)",
            notes=[],
        )
    if fmt not in PARTIAL_FORMATS:
        w = weights_bytes(arch.params, fmt)
        return dict(
            w,
            how=f"{params_text(arch.params)} params x {w['bits_per_weight']:g} bits ({w['source']})",
            notes=[w["assumption"]] if fmt in MIXES else [],
        )
    covered = getattr(arch, "expert_params", None)
    if not covered:
        raise ValueError(
            f"weights {fmt}: it covers {PARTIAL_FORMATS[fmt]} only, and {arch.name} has no "
            "expert_params in the catalogue; pick another format"
        )
    rest = arch.params - covered
    quant = weights_bytes(covered, fmt)
    other = weights_bytes(rest, "BF16") if rest > 0 else {"bytes": 0}
    nbytes = quant["bytes"] + other["bytes"]
    return {
        "format": fmt,
        "params": arch.params,
        "bits_per_weight": nbytes * 8 / arch.params,
        "bytes": nbytes,
        "gib": nbytes / GIB,
        "source": quant["source"],
        "covered_params": covered,
        "how": (
            f"{params_text(covered)} expert params x {quant['bits_per_weight']:g} bits ({fmt}) + "
            f"{params_text(rest)} other params (attention, embeddings) x 16 bits (BF16)"
        ),
        "assumption": f"{fmt} covers the {PARTIAL_FORMATS[fmt]} only; the rest in BF16",
        "notes": [f"{fmt} covers the {PARTIAL_FORMATS[fmt]} only; attention, embeddings and norms stay BF16"],
    }


def _embedding_params(arch) -> int:
    """vocab x hidden for the token embedding, and again for the output projection unless the config ties them."""
    vocab, hidden = getattr(arch, "vocab_size", None), getattr(arch, "hidden_size", None)
    if not vocab or not hidden:
        return 0
    return vocab * hidden * (1 if getattr(arch, "tied_embeddings", None) else 2)


def embedding_table_bytes(arch, w: dict) -> int:
    """Bytes of the token embedding table a decode step does NOT read in full (it gathers one row per token), for
    weights `w` as counted (model_weights_bytes): vocab x hidden at 16 bits where the format keeps it so, else at the
    format's bits per weight. 0 for a tied embedding, which the output projection reads in full every step."""
    if getattr(arch, "tied_embeddings", None) or not getattr(arch, "vocab_size", None):
        return 0
    table = arch.vocab_size * arch.hidden_size
    fmt = w.get("format")
    if fmt in EMBEDDINGS_AT_16_BITS or fmt in PARTIAL_FORMATS or w.get("stored"):
        return table * 2
    return int(table * (w.get("bits_per_weight") or 16) / 8)


def stored_weights(checkpoint: dict, fmt: str = "BF16", name: str = "") -> dict:
    """The weights as a checkpoint stores them, in model_weights_bytes' shape, with `stored` True.

    `checkpoint` is kvlab.memory.checkpoint's result (or a catalogue checkpoint entry: bytes, source, maybe
    mtp_bytes); the MTP head's bytes (given, or its part in the shards' headers) are kept as `mtp_bytes`;
    `fmt` the format the engine is told the weights are in (its rules key on it); `name` says which
    checkpoint, for the sentence.
    """
    fmt = weight_format(fmt)
    nbytes = int(checkpoint["bytes"])
    if nbytes <= 0:
        raise ValueError(f"weights: the checkpoint stores {nbytes:,} bytes; it has no size to count")
    notes = list(checkpoint.get("notes", []))
    # the MTP head's share, for an engine that loads it only for an MTP drafter (without_mtp): given, or read
    # from the shards' headers; an index alone names the MTP tensors but not their bytes
    mtp = checkpoint.get("mtp_bytes")
    part = (checkpoint.get("parts") or {}).get("mtp") or {}
    if mtp is None and part.get("bytes"):
        mtp = part["bytes"]
    elif mtp is None and part.get("tensors"):
        notes.append(
            f"the checkpoint has {part['tensors']:,} MTP tensors whose bytes its index does not give; vLLM loads "
            "them only for an MTP drafter, so without one the weights are counted high by their size"
        )
    return {
        "format": fmt,
        "bytes": nbytes,
        "gib": nbytes / GIB,
        "stored": True,
        "source": checkpoint["source"],
        "how": f"{nbytes / GIB:.2f} GiB as the checkpoint stores them ({(name + ', ') if name else ''}"
        f"{checkpoint['source']})",
        "notes": notes,
        **({"mtp_bytes": int(mtp)} if mtp else {}),
    }


# vLLM's main-model loaders skip the checkpoint's MTP tensors: the drafter (method "mtp") loads them on its own.
# Qwen3.5/3.6 by name prefix, DeepSeek-V2/V3 (and the models built on its loader) by layer index past
# num_hidden_layers ("skip spec decode layers for main model").
VLLM_SKIPS_MTP = (
    "vLLM loads the MTP head only for an MTP drafter (Qwen3_5Model.load_weights: "
    '`if name.startswith("mtp."): continue`, https://github.com/vllm-project/vllm/blob/'
    "00def4f8421153e037ff6270c0a8c31912a00206/vllm/model_executor/models/qwen3_5.py; DeepseekV2Model.load_weights "
    "skips layers past num_hidden_layers, https://github.com/vllm-project/vllm/blob/"
    "002d6073aa034d4f5545d45021b0e56d1f3c3593/vllm/model_executor/models/deepseek_v2.py)"
)


def without_mtp(w: dict) -> dict:
    """Stored weights less the checkpoint's MTP head (`mtp_bytes`), for an engine that does not load it."""
    mtp = int(w.get("mtp_bytes") or 0)
    if not mtp:
        return w
    n = w["bytes"] - mtp
    return w | {
        "bytes": n,
        "gib": n / GIB,
        "mtp_bytes": 0,
        "mtp_skipped_bytes": mtp,
        "how": f"{w['how']}, less its MTP head's {mtp / GIB:.2f} GiB",
        "notes": [*w.get("notes", []), f"the MTP head's {mtp / GIB:.2f} GiB is not loaded: {VLLM_SKIPS_MTP}"],
    }


def without_vision(w: dict, arch) -> dict:
    """Stored weights less the vision tower's blocks in BF16 (the towers of the quantized Qwen3.5/3.6 checkpoints
    stay in BF16: NVIDIA's NVFP4 exports ignore `model.visual*`, Qwen's FP8 keeps `visual.blocks.*` out of its
    modules to convert), for vLLM's --language-model-only, which does not load the tower. Only for weights counted
    as stored (a parameter count may not include the tower)."""
    params = getattr(arch, "vision_block_params", 0)
    if not params or not w.get("stored"):
        return w
    n = w["bytes"] - 2 * params
    return w | {
        "bytes": n,
        "gib": n / GIB,
        "vision_skipped_bytes": 2 * params,
        "how": f"{w['how']}, less its vision tower's {2 * params / GIB:.2f} GiB (--language-model-only)",
        "notes": [
            *w.get("notes", []),
            f"the vision tower's blocks ({2 * params / GIB:.2f} GiB in BF16) are not loaded with "
            "--language-model-only; its patch and position embeddings and merger are counted as loaded",
        ],
    }


def params_text(p: float) -> str:
    """'8.03B', '114.7B', '600M'."""
    return f"{p / 1e9:.4g}B" if p >= 1e9 else f"{p / 1e6:.4g}M"
