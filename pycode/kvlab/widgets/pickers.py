"""The pickers and input limits several pages share: the model, GPU, cache-type and weight-format
pickers (rendered at build time into <option>s), the context slider's steps, the numbers the memory
and serving widgets take (INPUTS) and the checks on them, and the trained-context notice.

kv-memory and gpu-fit (kvlab.widgets.memory), serving, the RAM calculator, engine-log, offload,
disaggregated serving and the engines table all offer these same choices; this module holds them
once, so that a page's module imports its pickers from here and not from another page's.
"""

from __future__ import annotations

import math

from kvlab.dtypes import bits_per_value, kv_type
from kvlab.inputs import Param, Spec, short_repr
from kvlab.memory.catalogue import get_model, list_gpus, list_models
from kvlab.memory.kv_bytes import VLLM_BLOCK_SIZES
from kvlab.memory.verdict import ENGINE_NAMES, PIPELINE_STAGES, TENSOR_PARALLEL, long_context_check
from kvlab.memory.weights import list_weight_formats
from kvlab.wording import params_billions, trim

# Context steps for the log-scale sliders and the curves: 1k, 1.5k, 2k, 3k ... 1M tokens.
# Each is a multiple of 256, so llama.cpp's padding does not move it.
CONTEXT_STEPS = sorted({k * 2**e for e in range(10, 21) for k in (1, 3 / 2) if k * 2**e <= 2**20})
CONTEXT_STEPS = [int(c) for c in CONTEXT_STEPS]
CONTEXT_LIMITS = (1, 2**20)
CONTEXT_TICKS = {
    "values": [2**10, 2**12, 2**14, 2**16, 2**18, 2**20],
    "labels": ["1k", "4k", "16k", "64k", "256k", "1M"],
}
N_SEQ_LIMITS = (1, 256)
BATCH_LIMITS = (1, 1024)
ANSWER_LIMITS = (1, 32768)
# vLLM's --gpu-memory-utilization is a fraction in (0, 1] (default 0.9, kvlab.memory.kv_bytes); below 0.1
# not even a small model's weights fit on the catalogue's GPUs, so the control starts there.
GPU_MEMORY_UTILIZATION_LIMITS = (0.1, 1.0)
GPU_MEMORY_UTILIZATION_STEP = 0.01
BLOCK_SIZE_LIMITS = (min(VLLM_BLOCK_SIZES), max(VLLM_BLOCK_SIZES))
# The numbers the memory and serving widgets take, declared once: the checks (Spec.check) and the
# controls' min, max and step in the templates (options.limits) both read this.
INPUTS = Spec(
    context=Param(*CONTEXT_LIMITS),
    n_seq=Param(*N_SEQ_LIMITS),
    batch=Param(*BATCH_LIMITS),
    answer=Param(*ANSWER_LIMITS),
    gpu_memory_utilization=Param(*GPU_MEMORY_UTILIZATION_LIMITS, step=GPU_MEMORY_UTILIZATION_STEP, digits=2),
    block_size=Param(*BLOCK_SIZE_LIMITS, choices=VLLM_BLOCK_SIZES),
    n_gpus=Param(1, max(TENSOR_PARALLEL), choices=TENSOR_PARALLEL),
    pipeline_parallel=Param(1, max(PIPELINE_STAGES), choices=PIPELINE_STAGES),
)

# How a model's cache is built, for grouping the model picker and the comparison table.
CACHE_KINDS = {
    "mha": "MHA: one KV head per query head",
    "gqa": "GQA: groups of query heads share a KV head",
    "mqa": "MQA: one KV head for all query heads",
    "mla": "MLA: one compressed latent per layer",
    "interleaved": "Sliding-window layers + full layers",
    "sliding": "Sliding window on every layer",
    "hybrid": "Hybrid: linear-attention layers + full layers",
}

# Cache types a reader can pick, and the engines that accept them.
KV_CHOICES = (
    ("f16", ("llamacpp", "vllm", "exact")),
    ("bf16", ("llamacpp", "vllm", "exact")),
    ("q8_0", ("llamacpp", "exact")),
    ("q4_0", ("llamacpp", "exact")),
    ("fp8", ("vllm", "exact")),
)
MODE_LABELS = {
    "llamacpp": "llama.cpp (what it allocates and logs)",
    "vllm": "vLLM (PagedAttention blocks)",
    "exact": "exact (what the model needs, no padding)",
}
WEIGHT_CHOICES = ("BF16", "FP8", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "IQ2_XS", "MXFP4", "INT4")
# the two engines gpu-fit and serving offer, as their engine picker labels them
ENGINE_LABELS = {"llamacpp": MODE_LABELS["llamacpp"], "vllm": MODE_LABELS["vllm"]}


# ---------------------------------------------------------------------------
# Pickers (rendered at build time into <option>s)
# ---------------------------------------------------------------------------


def cache_kind(row: dict) -> str:
    """'mha' | 'gqa' | 'mqa' | 'mla' | 'interleaved' | 'sliding' | 'hybrid' for a list_models row."""
    layers = row["layers_by_kind"]
    if layers["linear"]:
        return "hybrid"
    if layers["sliding"]:
        return "interleaved" if layers["full"] else "sliding"
    return row["attention"]


def model_groups() -> list[dict]:
    """Catalogue models grouped by how their cache is built (empty groups left out)."""
    rows = list_models()
    groups = []
    for kind, label in CACHE_KINDS.items():
        models = [
            {
                "id": r["id"],
                "label": f"{r['hf_id']} · {params_billions(r['params'])}"
                + ("" if r["confirmed"] else " (unconfirmed)"),
            }
            for r in rows
            if cache_kind(r) == kind
        ]
        if models:
            groups.append({"kind": kind, "label": label, "models": models})
    return groups


def gpu_options() -> list[dict]:
    return [
        {"id": g["id"], "label": f"{g['name']} · {trim(g.get('gpu_usable_gib') or g['memory_gib'])} GiB"}
        for g in list_gpus()
    ]


def kv_options() -> list[dict]:
    return [
        {"id": t, "label": f"{t} ({trim(bits_per_value(t))} bits per value)", "modes": list(modes)}
        for t, modes in KV_CHOICES
    ]


def weight_options() -> list[dict]:
    known = {w["format"]: w for w in list_weight_formats()}
    return [{"id": f, "label": f"{f} ({trim(known[f]['bits_per_weight'])} bits per weight)"} for f in WEIGHT_CHOICES]


def input_limits() -> dict:
    """Input limits for the templates (min, max and step of each number field, and its choices)."""
    return INPUTS.limits()


def check_kv_mode(kv: str, mode: str) -> str:
    if mode not in MODE_LABELS:
        raise ValueError(f"mode must be one of {', '.join(MODE_LABELS)}, got {short_repr(mode)}")
    kv = kv_type(kv)
    for t, modes in KV_CHOICES:
        if t == kv and mode not in modes:
            engines = " or ".join(MODE_LABELS[m].split(" (")[0] for m in modes)
            raise ValueError(
                f"kv type {kv} is not a {MODE_LABELS[mode].split(' (')[0]} cache type; use it with {engines}"
            )
    return kv


def model_info(model_id: str | None) -> dict | None:
    if model_id is None:
        return None
    entry = get_model(model_id)
    return {
        "id": entry["id"],
        "hf_id": entry["hf_id"],
        "source": entry["source"],
        "confirmed": entry["confirmed"],
        "note": entry["note"],
        "unconfirmed_fields": entry.get("unconfirmed_fields", []),
        "params": entry["params"],
        "params_human": params_billions(entry["params"]),
    }


# ---------------------------------------------------------------------------
# The context slider and the trained-context notice
# ---------------------------------------------------------------------------


def context_step(context: int) -> int:
    """Index of the slider step nearest to `context` (on a log scale).

    >>> CONTEXT_STEPS[context_step(131072)], CONTEXT_STEPS[context_step(40000)]
    (131072, 32768)
    """

    return min(range(len(CONTEXT_STEPS)), key=lambda i: abs(math.log(CONTEXT_STEPS[i] / context)))


def curve_contexts(limit: int | None = None) -> list[int]:
    return [c for c in CONTEXT_STEPS if limit is None or c <= limit]


def context_flag(arch, context: int, engine: str | None = None) -> dict | None:
    """The verdict's trained-context check, as the widgets show it."""
    check = long_context_check(arch, context)
    if not check:
        return None
    engines = [engine] if engine in ENGINE_NAMES else list(ENGINE_NAMES)
    return dict(check, message=check["text"] + ": " + "; ".join(check[e] for e in engines) + ".")
