"""SGLang's KV budget, as SGLang computes it (the shared result shape: kvlab.memory.engine_budget).

SGLang sizes one token pool for the KV cache before it serves anything:

1. `mem_fraction_static` (server_args.py, _handle_gpu_memory_settings), when not given:
   chunked_prefill_size and the decode CUDA graph's max batch size are picked by the card's
   memory (gpu_mem, MiB, as the device reports it), then

       reserved_mem = 512 + max(chunked_prefill_size, 2048) x 1.5 + tp x pp / 8 x 1024
                      + decode max_bs x 2 + (prefill CUDA graph: 8 per captured size; 1.5 GiB under MLA)
       reserved_mem = max(reserved_mem, 10 GiB) on a card of more than 60 GiB
       mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3)           (all in MiB)

2. The pool (model_runner_kv_cache_mixin.py, profile_max_num_token):

       rest = (free memory after the weights load) - (free memory before they load) x (1 - mem_fraction_static)
       max_total_num_tokens = rest // (K + V bytes per token per GPU over the attention layers)

   then // page_size x page_size. rest <= 0 is a refusal.

3. The request pool (init_memory): max_num_reqs = min(max(tokens / context_len x 512, 2048), 4096);
   the scheduler runs min(max_total_num_tokens // 2, that) requests, each at most
   min(context_len - 1, max_total_num_tokens - 1) input tokens.

Hybrid linear-attention (Mamba / Gated DeltaNet) models: the recurrent states take
mamba_full_memory_ratio / (1 + ratio) of rest (0.9 by default) and the token pool counts only the
full-attention layers (handle_max_mamba_cache). Sliding-window layers: see UNSURE.

kvlab measures nothing: the free memory before loading is the driver's total less a CUDA
context estimate (and, at tp > 1, the NCCL and custom all-reduce memory SGLang's distributed init takes:
`pre_load_overhead`), the weights come from kvlab.memory.weights, split evenly over tp.
"""

from __future__ import annotations

import math

from kvlab.inputs import finite_number
from kvlab.memory.architecture import FULL, LINEAR, SLIDING, Architecture
from kvlab.memory.engine_budget import (
    checked_inputs,
    deployment_budget,
    GIB,
    MIB,
    attention_layers,
    budget_result,
    budget_step,
    engine_kv_dtype,
    layer_bytes_per_token,
    setting,
)
from kvlab.memory.engines import driver_memory, has_nvlink
from kvlab.memory.weights import model_weights_bytes, weight_format

SERVER_ARGS = "sgl-project/sglang python/sglang/srt/server_args.py@001067fffe33"
MIXIN = "sgl-project/sglang python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py@001ccef0072a"
CUDA_GRAPH_CONFIG = "sgl-project/sglang python/sglang/srt/model_executor/cuda_graph_config.py@08d6c0169a56"
SCHEDULER = "sgl-project/sglang python/sglang/srt/managers/scheduler.py (max_running_requests, max_req_input_len)"
VERSION = (
    "SGLang main as of 2026 (server_args.py at 001067f, model_runner_kv_cache_mixin.py at 001ccef): "
    "the reserve formula of the v0.5 line, without the post-capture KV sizing (off by default)"
)

# kvlab estimate: memory the CUDA context and NCCL take before the weights load (SGLang's
# pre_model_load_memory is the free memory at that point). The CUDA context, read off a tp-1 log:
# H200 139.81 - (131.08 + 8.13) = 0.60 GiB (sglang_gemma3_tp1_h200.txt; 139.81 GiB is an H200's
# device total as TensorRT-LLM prints it, in a public Dynamo log-parser test).
CONTEXT_GIB = 0.6
# At tp > 1 SGLang reads pre_model_load_memory after init_torch_distributed has run init_distributed_environment and
# initialize_model_parallel (model_runner.py, e.g. at v0.4.9.post2: the NCCL communicators and, on NVLink cards, the
# custom all-reduce buffers), and prints what that took as "Init torch distributed ends. mem usage=X GB".
# NVLink / NVSwitch data-centre cards (kvlab.memory.engines.has_nvlink): one amount for any tp > 1, the median of the
# real logs below (it does not grow with the GPU count: vLLM's tp-2 log already shows 1.79 GiB, SGLang's tp-8 logs
# 1.31-2.01). Not used: https://github.com/sgl-project/sglang/pull/5390 (8 x 180 GB Blackwell cards, the Cutlass MLA
# backend's test, 2.38-2.50 GB), which runs DP attention (its "DP6 TP6" ranks), whose extra process groups take more.
NVLINK_DIST_INIT_LOGS = (
    (
        1.31,
        "8 x H200, tp 8: 139.81 - (12.25 + 125.65) = 1.91 GiB before the weights, less the 0.60 GiB context "
        "(sglang_deepseek_v4_pro_fp8_h200_tp8_error.txt; the log prints no distributed-init line)",
        "https://github.com/SemiAnalysisAI/InferenceX/issues/2128",
    ),
    (
        2.01,
        "8 x 141 GB Hopper cards (H200 class; 137.29 GB free at 'Load weight begin'), tp 8: 'Init torch distributed "
        "ends. mem usage=2.01 GB' on the ranks that set the minimum (1.96 on TP0, 1.77 on TP7), 2025-10-16",
        "https://github.com/sgl-project/sglang/pull/11716",
    ),
    (
        1.79,
        "vLLM, same NCCL and custom all-reduce set-up (SGLang's parallel_state is vLLM's): Llama-3-8B on H100, "
        "non_torch_memory 3.58 GiB at tp 2 against 1.79 GiB at tp 1 (kvlab/data/engines.json tensor_parallel_extra_gib)",
        "https://github.com/vllm-project/vllm/pull/10511",
    ),
)
# the median (an odd count of logs)
NVLINK_TP_GIB = sorted(g for g, _, _ in NVLINK_DIST_INIT_LOGS)[len(NVLINK_DIST_INIT_LOGS) // 2]
# GPUs on PCIe (no custom all-reduce buffers, kvlab.memory.engines.PCIE_ONLY_CARDS): 0.19 GiB per extra GPU, the
# slope the two H200 logs above gave before the NVLink amount was split out; checked on a PCIe pair:
# sglang_qwen35_397b_fp8_rtx4090_tp2_ktransformers.txt frees 3.76 + 19.08 = 22.84 GB before its weights, 0.83 GiB
# under kvlab's 23.67 GiB estimate of an RTX 4090's total, against 0.6 + 0.19 = 0.79.
CONTEXT_PER_EXTRA_GPU_GIB = 0.19

# AITER attention backend (AMD): its paged-decode workspace (aiter_backend.py AiterAttnBackend.__init__ at
# 003c5589, the same formula PR 18263 cites at 495ae9aa L270-277): fp32 partial outputs plus two fp32
# reduction planes per request slot, head and 256-token partition of the context.
AITER_BACKEND = (
    "sgl-project/sglang python/sglang/srt/layers/attention/aiter_backend.py@003c5589f7d3 "
    "(AiterAttnBackend.__init__: workspace_buffer)"
)
AITER_PR_18263 = (
    "https://github.com/sgl-project/sglang/pull/18263 (open: KVCacheConfigurator charges the AITER workspace "
    "against the KV budget and drops main's mem_fraction_static x 0.85 for context_len > 8192)"
)
AITER_PARTITION_SIZE = 256  # aiter_backend.py _AITER_PARTITION_SIZE_ROCM
MAMBA_FULL_MEMORY_RATIO = 0.9  # server_args.py: mamba_full_memory_ratio
MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3  # mixin: requests per mamba cache slot ratio
MAMBA_SSM_BYTES = 4  # server_args.py: mamba_ssm_dtype "float32"
MAMBA_CONV_BYTES = 2  # the conv state in the model dtype (bf16)

# (upper bound MiB, chunked_prefill_size, decode max_bs if tp < 4, decode max_bs if tp >= 4), CUDA / ROCm
GPU_MEMORY_TIERS = (
    (20 * 1024, 2048, 8, 8, "T4, 4080"),
    (35 * 1024, 2048, 24, 80, "A10, 4090, 5090"),
    (60 * 1024, 4096, 32, 160, "A100 (40GB), L40"),
    (90 * 1024, 8192, 256, 512, "H100, A100"),
    (160 * 1024, 8192, 256, 512, "H20, H200"),
    (math.inf, 16384, 512, 512, "B200, MI300"),
)

STORED_WEIGHTS = (
    "the weights are the checkpoint's bytes as stored, split evenly over tp; SGLang measures what it loaded"
)
UNSURE = [
    "the free memory before the weights load is the driver's total less a CUDA context estimate "
    f"({CONTEXT_GIB} GiB, read off a tp-1 log; at tp > 1 + {NVLINK_TP_GIB} GiB of NCCL and custom all-reduce on "
    f"NVLink cards, the median of {len(NVLINK_DIST_INIT_LOGS)} logs that ranged "
    f"{min(g for g, _, _ in NVLINK_DIST_INIT_LOGS)}-{max(g for g, _, _ in NVLINK_DIST_INIT_LOGS)} GiB, or "
    f"{CONTEXT_PER_EXTRA_GPU_GIB} GiB per extra GPU on PCIe); SGLang measures it",
    "the weights are kvlab's formula (parameters x bits) split evenly over tp, not the checkpoint's bytes",
    "multimodal models: SGLang lowers mem_fraction_static by its vision tower's size (adjust_mem_fraction_for_vlm) "
    "and keeps the breakable prefill CUDA graph off; kvlab's architectures carry no vision config, so neither is "
    "modelled",
    "sliding-window layers get every token, as a full layer does: SGLang's separate SWA pool (SWAKVPool, "
    "swa_full_tokens_ratio 0.8) is used only for the architectures SGLang registers as hybrid SWA, a list kvlab "
    "does not keep (Gemma 3's log shows one pool for every layer)",
    "speculative decoding, DP attention, DeepEP, PD disaggregation, LoRA, hierarchical cache and the post-capture "
    "KV sizing (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING, off by default) each change the reserve or the pool; none is "
    "modelled",
    "hybrid linear-attention models: the recurrent state per request is counted from kvlab's layer widths "
    "(conv in bf16, SSM in float32) split over tp; SGLang's own mamba_cache_per_req may differ a little",
    "NPU and MLX tiers of the defaults are left out; the DeepSeek sparse-attention indexer is counted at the KV "
    "dtype, not SGLang's fp8 + scale layout",
    "SGLang's GB in its logs are GiB; a pool row per page of padding (size + page_size rows) is allocated on top of "
    "max_total_num_tokens and is not counted in the budget",
]


def pre_load_overhead(card: dict | None, tp: int) -> dict:
    """GiB in use before the weights load: the CUDA context, plus at tp > 1 what SGLang's distributed init takes
    (NVLink cards: NVLINK_TP_GIB for any tp > 1; PCIe cards: CONTEXT_PER_EXTRA_GPU_GIB per extra GPU).

    >>> pre_load_overhead({"id": "h100-sxm"}, 4)["gib"], pre_load_overhead({"id": "rtx-4090"}, 2)["gib"]
    (2.39, 0.79)
    """
    if tp <= 1:
        return {"gib": CONTEXT_GIB, "how": f"{CONTEXT_GIB:g} GiB CUDA context"}
    if has_nvlink(card):
        return {
            "gib": round(CONTEXT_GIB + NVLINK_TP_GIB, 2),
            "how": f"{CONTEXT_GIB:g} GiB CUDA context + {NVLINK_TP_GIB:g} GiB NCCL and custom all-reduce at tp {tp} "
            f"(NVLink: median of {len(NVLINK_DIST_INIT_LOGS)} logs' distributed init)",
        }
    extra = CONTEXT_PER_EXTRA_GPU_GIB * (tp - 1)
    return {
        "gib": round(CONTEXT_GIB + extra, 2),
        "how": f"{CONTEXT_GIB:g} GiB CUDA context + {extra:.2f} GiB NCCL ({CONTEXT_PER_EXTRA_GPU_GIB:g} GiB per extra "
        "GPU on PCIe, no custom all-reduce)",
    }


def platform(card: dict | None) -> str:
    """'rocm' for an AMD card (SGLang keeps the prefill CUDA graph off there), else 'cuda'."""
    text = f"{(card or {}).get('id', '')} {(card or {}).get('name', '')}".lower()
    return "rocm" if "amd" in text or "instinct" in text or text.strip().startswith("mi") else "cuda"


def memory_tier(gpu_mem_mib: float, tp: int) -> dict:
    """SGLang's chunked_prefill_size and decode CUDA graph max_bs for a card of gpu_mem MiB."""
    for upper, chunked, bs_small, bs_large, cards in GPU_MEMORY_TIERS:
        if gpu_mem_mib < upper:
            return {
                "chunked_prefill_size": chunked,
                "cuda_graph_max_bs": bs_small if tp < 4 else bs_large,
                "tier": f"gpu_mem < {upper / 1024:g} GiB ({cards})" if upper != math.inf else f"larger ({cards})",
            }
    raise AssertionError("unreachable")


def prefill_graph_sizes(max_bs: int) -> list[int]:
    """server_args.py _generate_prefill_cuda_graph_batch_sizes: the token counts the prefill graph captures."""
    sizes = (
        list(range(4, 33, 4))
        + list(range(48, 257, 16))
        + list(range(288, 513, 32))
        + list(range(576, 1024 + 1, 64))
        + list(range(1280, 4096 + 1, 256))
        + list(range(4608, max_bs + 1, 512))
    )
    return [s for s in sizes if s <= max_bs]


def default_mem_fraction_static(
    gpu_mem_mib: float,
    *,
    tp: int = 1,
    chunked_prefill_size: int | None = None,
    cuda_graph_max_bs: int | None = None,
    mla: bool = False,
    prefill_graph: bool = True,
) -> dict:
    """SGLang's mem_fraction_static for a card of `gpu_mem_mib` (server_args.py _handle_gpu_memory_settings).

    `prefill_graph`: whether the prefill CUDA graph is captured (CUDA's default breakable backend;
    ROCm and multimodal models keep it off). Returns the fraction, the reserve in MiB and its terms.

    >>> default_mem_fraction_static(288 * 1024, prefill_graph=False)["mem_fraction_static"]
    0.911
    """
    gpu_mem_mib = finite_number("gpu_mem_mib", gpu_mem_mib, minimum=1)
    tier = memory_tier(gpu_mem_mib, tp)
    chunked = tier["chunked_prefill_size"] if chunked_prefill_size is None else chunked_prefill_size
    max_bs = tier["cuda_graph_max_bs"] if cuda_graph_max_bs is None else cuda_graph_max_bs
    terms = {
        "constant": 512.0,
        "activations": max(chunked, 2048) * 1.5,
        "parallel": tp * 1 / 8 * 1024,
        "decode_graph": max_bs * 2.0,
        "prefill_graph": 0.0,
    }
    if prefill_graph and chunked > 0:
        terms["prefill_graph"] = 1.5 * 1024 if mla else len(prefill_graph_sizes(2048 if mla else chunked)) * 8.0
    reserved = sum(terms.values())
    floor = gpu_mem_mib > 60 * 1024 and reserved < 10 * 1024
    if floor:
        reserved = 10 * 1024.0
    return {
        "mem_fraction_static": round((gpu_mem_mib - reserved) / gpu_mem_mib, 3),
        "reserved_mib": reserved,
        "terms_mib": terms,
        "floor_10gib": floor,
        "chunked_prefill_size": chunked,
        "cuda_graph_max_bs": max_bs,
        "tier": tier["tier"],
    }


def pool_tokens(avail_after_weights: float, pre_load: float, mem_fraction_static: float, cell_size: int) -> dict:
    """profile_max_num_token: rest = avail - pre_load x (1 - fraction); tokens = rest // cell_size (bytes in)."""
    rest = avail_after_weights - pre_load * (1 - mem_fraction_static)
    tokens = int(rest) // cell_size if rest > 0 else 0
    return {"rest_bytes": int(rest), "tokens": tokens, "minimum_fraction": 1 - avail_after_weights / pre_load}


def aiter_workspace_bytes(max_num_reqs: int, num_head: int, head_dim: int, context_len: int) -> int:
    """Bytes of SGLang's AITER paged-decode workspace (aiter_backend.py, AiterAttnBackend.__init__).

    max_bs (the request pool) x query heads per GPU x ceil(context_len / 256) partitions x
    (head_dim fp32 partial outputs + 2 fp32 reduction values):

    >>> aiter_workspace_bytes(3261, 32, 128, 262144) / 2**30  # the 51.75 GB PR 18263 prints
    51.749267578125
    """
    partitions = -(-context_len // AITER_PARTITION_SIZE)
    return max_num_reqs * num_head * partitions * (head_dim * 4 + 2 * 4)


def aiter_charged_tokens(rest: int, cell: int, per_req_workspace: int, context: int, fixed_reqs: int | None) -> dict:
    """PR 18263's pool: the most tokens whose K + V and the AITER workspace of the request pool they imply
    (init_memory's min(max(tokens / context x 512, 2048), 4096), or --max-running-requests) fit in `rest`."""
    if fixed_reqs is not None:
        cases = [(fixed_reqs, (rest - fixed_reqs * per_req_workspace) // cell)]
    else:
        linear = int(rest // (cell + 512 / context * per_req_workspace))
        cases = [
            (2048, (rest - 2048 * per_req_workspace) // cell),
            (None, linear),
            (4096, (rest - 4096 * per_req_workspace) // cell),
        ]
    for reqs, tokens in cases:
        tokens = max(int(tokens), 0)
        if fixed_reqs is not None:
            return {"tokens": tokens, "max_num_reqs": fixed_reqs, "workspace": fixed_reqs * per_req_workspace}
        unclamped = int(tokens / context * 512)
        implied = min(max(unclamped, 2048), 4096)
        if implied == (reqs if reqs is not None else unclamped):
            return {"tokens": tokens, "max_num_reqs": implied, "workspace": implied * per_req_workspace}
    # no case is self-consistent only at a kink of the clamp: take the fewest tokens of the three
    tokens = max(min(int(t) for _, t in cases), 0)
    implied = min(max(int(tokens / context * 512), 2048), 4096)
    return {"tokens": tokens, "max_num_reqs": implied, "workspace": implied * per_req_workspace}


def running_requests_default(tokens: int, context: int, mamba_slots: int | None = None) -> dict:
    """init_memory's request pool and the scheduler's cap on running requests (default settings)."""
    reqs = min(max(int(tokens / context * 512), 2048), 4096)
    if mamba_slots is not None:
        reqs = min(reqs, mamba_slots // MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO)
    return {"req_pool": reqs, "running": min(tokens // 2, reqs)}


def _state_bytes_per_request(arch: Architecture, tp: int) -> int:
    """Recurrent state of one request on one GPU: conv state in bf16, SSM state in float32, split over tp."""
    total = 0
    for la in arch.layers:
        if la.kind == LINEAR or la.parallel_hybrid:
            total += la.conv_state_values * MAMBA_CONV_BYTES + la.ssm_state_values * MAMBA_SSM_BYTES
    return -(-total // tp)


def sglang_budget(
    arch: Architecture,
    card: dict,
    *,
    context: int,
    n_gpus: int = 1,
    weights_format: str = "BF16",
    weights_counted: dict | None = None,
    kv: str = "auto",
    mem_fraction_static: float | None = None,
    chunked_prefill_size: int | None = None,
    cuda_graph_max_bs: int | None = None,
    max_running_requests: int | None = None,
    page_size: int = 1,
    charge_aiter_workspace: bool = False,
) -> dict:
    """SGLang's KV pool for `arch` on `n_gpus` (tensor parallel) x `card`, in the shared budget shape.

    `context` is --context-length; the other keywords are SGLang's flags of the same names
    (None: SGLang's default, named in `settings`). `charge_aiter_workspace`: the build of PR 18263
    (open, not in a release), where the AITER backend's decode workspace is taken out of the KV budget;
    main allocates it after the pool instead.
    """
    context, tp = checked_inputs(arch, card, context, n_gpus)
    fmt = weight_format(weights_format)
    k = engine_kv_dtype(kv)
    if mem_fraction_static is not None:
        mem_fraction_static = finite_number("mem_fraction_static", mem_fraction_static, minimum=0.01, maximum=1)
    if chunked_prefill_size is not None:
        chunked_prefill_size = finite_number(
            "chunked_prefill_size", chunked_prefill_size, minimum=1, maximum=1 << 20, integer=True
        )
    if cuda_graph_max_bs is not None:
        cuda_graph_max_bs = finite_number(
            "cuda_graph_max_bs", cuda_graph_max_bs, minimum=1, maximum=1 << 16, integer=True
        )
    if max_running_requests is not None:
        max_running_requests = finite_number(
            "max_running_requests", max_running_requests, minimum=1, maximum=1 << 20, integer=True
        )
    page_size = finite_number("page_size", page_size, minimum=1, maximum=1024, integer=True)

    settings: dict = {
        "tp_size": setting(tp, "you" if n_gpus != 1 else "default"),
        "context_length": setting(context, "you"),
        "kv_cache_dtype": setting(k, "you" if kv != "auto" else "default (auto: the model's dtype)"),
        "weights": setting(fmt, "you" if weights_format != "BF16" else "default"),
        "page_size": setting(page_size, "you" if page_size != 1 else "default"),
    }
    steps: list = []
    unsure = list(UNSURE)
    if weights_counted and weights_counted.get("stored"):
        unsure = [STORED_WEIGHTS if u.startswith("the weights are") else u for u in unsure]
    mla = arch.attention == "mla"
    where = platform(card)

    total = driver_memory(card)
    steps.append(budget_step("GPU memory the device reports (gpu_mem)", total["bytes"], total["how"], SERVER_ARGS))
    overhead = pre_load_overhead(card, tp)
    context_bytes = int(overhead["gib"] * GIB)
    pre_load = total["bytes"] - context_bytes
    steps.append(
        budget_step(
            "free before the weights load (pre_model_load_memory)",
            pre_load,
            f"gpu_mem - {context_bytes / GIB:.2f} GiB: {overhead['how']} (kvlab estimate; SGLang measures it)",
            "kvlab estimate",
        )
    )

    gpu_mem_mib = total["bytes"] / MIB
    if mem_fraction_static is None:
        d = default_mem_fraction_static(
            gpu_mem_mib,
            tp=tp,
            chunked_prefill_size=chunked_prefill_size,
            cuda_graph_max_bs=cuda_graph_max_bs,
            mla=mla,
            prefill_graph=where == "cuda",
        )
        fraction = d["mem_fraction_static"]
        t = d["terms_mib"]
        how = (
            f"reserved {d['reserved_mib']:,.0f} MiB = 512 + {t['activations']:,.0f} (chunked prefill "
            f"{d['chunked_prefill_size']} x 1.5) + {t['parallel']:,.0f} (tp {tp} / 8 x 1024) + "
            f"{t['decode_graph']:,.0f} (decode graph max_bs {d['cuda_graph_max_bs']} x 2) + "
            f"{t['prefill_graph']:,.0f} (prefill graph"
            + (", off on ROCm" if where == "rocm" else ", MLA: 1.5 GiB" if mla else ": 8 per captured size")
            + ")"
            + (", raised to the 10 GiB floor" if d["floor_10gib"] else "")
            + f"; round(({gpu_mem_mib:,.0f} - reserved) / {gpu_mem_mib:,.0f}, 3) = {fraction}"
        )
        steps.append(budget_step("mem_fraction_static (default)", None, how, SERVER_ARGS))
        settings["mem_fraction_static"] = setting(fraction, "default (server_args.py _handle_gpu_memory_settings)")
        settings["chunked_prefill_size"] = setting(
            d["chunked_prefill_size"],
            "you" if chunked_prefill_size is not None else f"default ({d['tier']})",
        )
        settings["cuda_graph_max_bs"] = setting(
            d["cuda_graph_max_bs"], "you" if cuda_graph_max_bs is not None else f"default ({d['tier']})"
        )
    else:
        fraction = mem_fraction_static
        settings["mem_fraction_static"] = setting(fraction, "you")
        steps.append(budget_step("mem_fraction_static (given)", None, f"--mem-fraction-static {fraction:g}", "you"))
        tier = memory_tier(gpu_mem_mib, tp)
        settings["chunked_prefill_size"] = setting(
            chunked_prefill_size or tier["chunked_prefill_size"],
            "you" if chunked_prefill_size is not None else f"default ({tier['tier']})",
        )

    w = weights_counted or model_weights_bytes(arch, fmt)
    weights = -(-w["bytes"] // tp)
    steps.append(
        budget_step(
            "weights per GPU",
            weights,
            w["how"] + (f" / tp {tp}" if tp > 1 else ""),
            "the checkpoint as stored" if w.get("stored") else "kvlab.memory.weights (kvlab estimate)",
        )
    )
    avail = pre_load - weights
    steps.append(budget_step("free after the weights load", avail, "pre_model_load_memory - weights", MIXIN))
    reserve = pre_load * (1 - fraction)
    steps.append(
        budget_step(
            "kept back for activations and CUDA graphs",
            reserve,
            f"pre_model_load_memory x (1 - {fraction:g})",
            MIXIN + " profile_max_num_token",
        )
    )
    pool = pool_tokens(avail, pre_load, fraction, 1)
    rest = pool["rest_bytes"]
    steps.append(budget_step("KV pool (rest_memory)", rest, "free after weights - kept back", MIXIN))

    mamba_slots = None
    if any(la.kind == LINEAR or la.parallel_hybrid for la in arch.layers) and rest > 0:
        per_req = _state_bytes_per_request(arch, tp)
        raw = rest * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO)
        mamba_slots = int(raw // per_req) if per_req else 0
        states = mamba_slots * per_req
        rest -= states
        steps.append(
            budget_step(
                "recurrent states (mamba cache)",
                -states,
                f"{MAMBA_FULL_MEMORY_RATIO} / (1 + {MAMBA_FULL_MEMORY_RATIO}) of the pool: {mamba_slots:,} "
                f"slots x {per_req:,} B",
                MIXIN + " handle_max_mamba_cache",
            )
        )

    layers = [la for la in attention_layers(arch) if la.kind in (FULL, SLIDING) or not la.state_values]
    cell = sum(layer_bytes_per_token(la, k, tp, replicate_floor=True) for la in layers)
    if cell <= 0:
        raise ValueError(f"{arch.name} has no attention layer: SGLang's token pool would be empty")
    steps.append(
        budget_step(
            "K + V per token per GPU (cell_size)",
            cell,
            f"{len(layers)} attention layers, KV heads max(1, heads // tp {tp}), "
            f"{'2 B (auto)' if k == 'auto' else k} per value",
            MIXIN + " get_cell_size_per_token",
        )
    )
    tokens = max(rest, 0) // cell // page_size * page_size
    if charge_aiter_workspace:
        if mla:
            raise ValueError("charge_aiter_workspace: the AITER MLA path allocates no paged-decode workspace")
        heads = max(1, arch.n_heads // tp)
        head_dim = max(la.head_dim_k or la.k_values // max(la.kv_heads, 1) for la in layers)
        per_req = aiter_workspace_bytes(1, heads, head_dim, context)
        charged = aiter_charged_tokens(max(rest, 0), cell, per_req, context, max_running_requests)
        tokens = charged["tokens"] // page_size * page_size
        steps.append(
            budget_step(
                "AITER decode workspace (charged to the KV budget)",
                -charged["workspace"],
                f"{charged['max_num_reqs']:,} request slots x {heads} heads x ceil({context:,} / "
                f"{AITER_PARTITION_SIZE}) partitions x ({head_dim} x 4 + 8) B, solved with the tokens it implies",
                AITER_PR_18263 + "; size: " + AITER_BACKEND,
            )
        )
        settings["charge_aiter_workspace"] = setting(True, "you (PR 18263's build)")
    steps.append(
        budget_step(
            "max_total_num_tokens",
            tokens * cell,
            f"{max(rest, 0):,} B // {cell:,} B = {tokens:,} tokens (page-aligned to {page_size})",
            MIXIN + " init_memory",
        )
    )

    req = running_requests_default(tokens, context, mamba_slots)
    running = max_running_requests if max_running_requests is not None else req["running"]
    settings["max_running_requests"] = setting(
        running,
        "you"
        if max_running_requests is not None
        else "default: min(max_total_num_tokens // 2, request pool min(max(tokens / context x 512, 2048), 4096)"
        + (f", mamba slots // {MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO}" if mamba_slots is not None else "")
        + ")",
    )

    refusal = None
    if tokens <= 0:
        refusal = (
            f"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={fraction:g}. "
            f"(the fraction would need to be at least {pool['minimum_fraction']:.4f})"
            if avail > 0
            else f"the weights ({weights / GIB:.1f} GiB per GPU) are more than the GPU's free memory "
            f"({pre_load / GIB:.1f} GiB): loading fails before the pool is sized"
        )
    elif tokens < context:
        refusal = (
            f"SGLang starts, but caps each request at max_req_input_len = min(context_len - 1, "
            f"max_total_num_tokens - 1) = {tokens - 1:,} tokens: a {context:,}-token sequence does not fit "
            f"(kvlab's words; SGLang rejects such a request when it arrives)"
        )
    fits = refusal is None
    per_seq = -(-context // page_size) * page_size
    sequences = min(tokens // per_seq, running) if tokens else 0
    longest = min(tokens, context)  # one request: at most context_len tokens, and the pool's
    rule = (
        "keeps mem_fraction_static of the memory free before loading for weights + KV, so the KV pool is "
        "what the weights leave of it; the fraction's default is the card's memory less a reserve for activations "
        "and CUDA graphs."
    )
    return budget_result(
        engine="sglang",
        engine_name="SGLang",
        version_modelled=VERSION,
        fits=fits,
        refusal=refusal,
        kv_budget_bytes=max(rest, 0),
        kv_bytes_per_token=cell,
        max_tokens=int(tokens),
        max_sequences_at_context=int(sequences),
        longest_context=int(longest),
        settings=settings,
        steps=steps,
        unsure=unsure,
        rule=rule,
    )


budget = deployment_budget(sglang_budget)
