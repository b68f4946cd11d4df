"""TensorRT-LLM's KV budget, as its KV cache manager computes it (shape: kvlab.memory.engine_budget).

PyTorch backend (the LLM API's default; tensorrt_llm/_torch/pyexecutor/_util.py, KvCacheCreator):
after the weights load, an estimation pass runs dummy requests of max_num_tokens and the CUDA
graph warm-up; then

    available KV = (total GPU memory - peak memory of that pass + the pass's own temporary KV)
                   x free_gpu_memory_fraction                                   (0.9 unless set)

capped by max_tokens x bytes per token when max_tokens is given (the smaller wins). The C++ KV cache
manager (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, calculateFreeMemBytes /
calculateMaxNumBlocks) turns the bytes into blocks: maxTokens = bytes / bytes per token,
blocks = ceil(maxTokens / tokens_per_block), all ranks take the smallest; with several attention
windows (VSWA) each window size gets an equal share of the memory. The C++ runtime of TensorRT
engines (TrtGptModelInflightBatching) applies the same fraction to the memory free after the
engine loads, which holds the weights and the engine's activation buffers.

When one sequence of max_seq_len does not fit, TensorRT-LLM 1.x lowers max_seq_len (and
max_attention_window) to what fits, with a warning; releases up to ~0.9 refused to start instead
("maxTokensInPagedKvCache (N) must be large enough to process at least 1 sequence to completion").

kvlab measures nothing: the peak of the estimation pass is kvlab's weights plus vLLM's fitted
profiling reserve (kvlab.memory.engines.vllm_reserve) for the same batch, as an estimate.

runtime="cpp" is TensorRT-LLM 0.5's C++ runtime (release/0.5.0: a build.py TensorRT engine under
GptManager, as the Triton backend's inflight_batcher_llm runs it). There is no estimation pass: the
TensorRT engine is loaded first, with its weights and one activation buffer of the engine's device
memory size (TllmRuntime: mEngineBuffer = gpu(ICudaEngine::getDeviceMemorySize()), shared by every
execution context), and the KV cache then takes kv_cache_free_gpu_mem_fraction of the memory still
free (0.85 unless set: tensorrtllm_backend's libtensorrtllm.cc at v0.5.0), or
max_tokens_in_paged_kv_cache alone when only that is set, the smaller when both are
(docs/source/memory.md). TensorRT sizes the activation buffer at build time for the engine's largest
shapes; with packed input (remove_input_padding, which --use_inflight_batching turns on) that is
max_num_tokens, max(max_input_len x max_batch_size, max_beam_width x max_batch_size) when the build
does not set it (tensorrt_llm/models/generation_mixin.py at release/0.5.0), so an engine built for a
large batch of long prompts keeps gigabytes the KV cache cannot have. kvlab estimates that buffer, and
the CUDA context beside it, with the same fitted reserve for that many tokens.
"""

from __future__ import annotations

from kvlab.inputs import finite_number
from kvlab.memory.architecture import BOUNDED_KINDS, LINEAR, Architecture
from kvlab.memory.engine_budget import (
    checked_inputs,
    deployment_budget,
    GIB,
    attention_layers,
    budget_result,
    budget_step,
    engine_kv_dtype,
    layer_bytes_per_token,
    setting,
)
from kvlab.memory.engines import driver_memory, vllm_reserve
from kvlab.memory.weights import model_weights_bytes, weight_format

UTIL = "NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor/_util.py@000439672005"
KV_MANAGER = "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp@b35ac1b64368 (v1.2.0rc2)"
EXECUTOR_H = "NVIDIA/TensorRT-LLM cpp/include/tensorrt_llm/executor/executor.h (KvCacheConfig::kDefaultGpuMemFraction)"
INFLIGHT = "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/batch_manager/trtGptModelInflightBatching.cpp (createKvCacheManager)"
VERSION = "TensorRT-LLM 1.2 (kvCacheManager.cpp at v1.2.0rc2) with the PyTorch backend's KvCacheCreator (main, 2026)"

DEFAULT_FRACTION = 0.9  # KvCacheConfig::kDefaultGpuMemFraction; llm_args.py: "Default is 90%"
DEFAULT_MAX_BATCH_SIZE = 2048  # LLM API default max_batch_size
DEFAULT_MAX_NUM_TOKENS = 8192  # LLM API default max_num_tokens (the estimation pass's batch)
TOKENS_PER_BLOCK = (8, 16, 32, 64, 128)

# TensorRT-LLM 0.5's C++ runtime (runtime="cpp"): the revisions tensorrtllm_backend's release/0.5.0 pinned
# (dcd773ea, 6b32b407; the v0.5.0 tag pins ffd5af34, not stored) and the backend at its v0.5.0 tag
BACKEND_05 = "triton-inference-server/tensorrtllm_backend inflight_batcher_llm/src/libtensorrtllm.cc@v0.5.0"
BUILD_05 = "NVIDIA/TensorRT-LLM examples/llama/build.py@6b32b407 (release/0.5.0)"
MIXIN_05 = "NVIDIA/TensorRT-LLM tensorrt_llm/models/generation_mixin.py@dcd773ea (release/0.5.0) prepare_basic_inputs"
RUNTIME_05 = "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/runtime/tllmRuntime.cpp@027cd518 (TllmRuntime constructor)"
MEMORY_MD = "NVIDIA/TensorRT-LLM docs/source/memory.md@250d9c29"
VERSION_CPP = (
    "TensorRT-LLM 0.5 (release/0.5.0) C++ runtime: a build.py TensorRT engine under GptManager, as "
    "tensorrtllm_backend v0.5.0's inflight_batcher_llm runs it"
)
RUNTIMES = ("pytorch", "cpp")
CPP_DEFAULT_FRACTION = 0.85  # libtensorrtllm.cc@v0.5.0: "will use default value of 0.85"
CPP_DEFAULT_MAX_BATCH_SIZE = 8  # examples/llama/build.py at release/0.5.0
CPP_DEFAULT_MAX_INPUT_LEN = 2048  # examples/llama/build.py at release/0.5.0
CPP_DEFAULT_TOKENS_PER_BLOCK = 64  # examples/llama/build.py at release/0.5.0 (--tokens_per_block)

FORMULA_WEIGHTS = "the weights are kvlab's formula (parameters x bits) split evenly over tp, not the checkpoint's or the engine's bytes"
UNSURE = [
    "the peak memory of TensorRT-LLM's estimation pass (activations of max_num_tokens tokens, CUDA graphs, NCCL, "
    "the CUDA context) is vLLM's fitted profiling reserve for the same batch: an estimate, not TensorRT-LLM's "
    "measurement",
    FORMULA_WEIGHTS + "; a TensorRT engine (C++ runtime) also holds its own activation buffers sized at build time "
    "(max_batch_size x max_input_len), which kvlab does not model",
    "the LLM API defaults (max_batch_size 2048, max_num_tokens 8192) are taken as set; trtllm-build engines and "
    "Triton configs often set others",
    "VSWA: each attention-window size gets an equal share of the memory (TRTLLM_WINDOW_SIZE_SHARES unset); "
    "whether TensorRT-LLM runs a model's sliding layers as VSWA depends on the model's support in TensorRT-LLM",
    "hybrid Mamba / linear-attention models (their recurrent-state pools), draft models (their KV is added per "
    "token), host offload (secondary blocks), the MLA context workspace reserve and KVCacheManagerV2 are not "
    "modelled",
    "the estimation pass's temporary KV is counted in its peak and added back, so it cancels; kvlab leaves both out",
]
UNSURE_CPP = [
    "the TensorRT engine's activation buffer (its device memory, sized at build time for max_num_tokens) and the "
    "CUDA context are vLLM's fitted profiling reserve for the same number of tokens: an estimate; TensorRT's memory "
    "planner, the attention plugin's workspace and the runtime's own buffers are not modelled one by one",
    FORMULA_WEIGHTS + "; the engine file is close to the weights (docs/source/memory.md)",
    "0.5's batch manager (GptManager) was a closed library: that the engine and its activation buffer are in place "
    "before the KV cache is sized is read from TllmRuntime and docs/source/memory.md, not from its code",
    "build settings not given are examples/llama/build.py's at release/0.5.0 (max_batch_size 8, max_input_len 2048, "
    "tokens_per_block 64); other examples, and trtllm-build from 0.7, have other defaults",
    "memory the CUDA memory pool keeps after start-up allocations are freed is not counted as free (later releases "
    "add BufferManager::memoryPoolFree back); sliding windows, draft models and host offload are not modelled",
]


def blocks_for(budget_bytes: int, bytes_per_token: int, tokens_per_block: int, max_tokens: int | None = None) -> dict:
    """kvCacheManager.cpp calculatePrimaryBlocks: tokens = bytes // per token (max_tokens caps), blocks rounded up."""
    tokens = max(int(budget_bytes), 0) // bytes_per_token
    capped = max_tokens is not None and max_tokens < tokens
    if capped:
        tokens = max_tokens
    blocks = -(-tokens // tokens_per_block)
    return {"tokens": tokens, "blocks": blocks, "pool_tokens": blocks * tokens_per_block, "capped": capped}


def window_groups(arch: Architecture, context: int, one_pool: bool = False) -> dict[int, list]:
    """Attention layers grouped by the window they keep (full layers: max_seq_len = context); `one_pool`: every
    layer keeps max_seq_len (0.5's C++ runtime, which had no per-window pools)."""
    groups: dict[int, list] = {}
    for la in attention_layers(arch):
        if la.kind == LINEAR:
            continue
        bounded = la.kind in BOUNDED_KINDS and la.window and not one_pool
        window = min(la.window, context) if bounded else context
        groups.setdefault(window, []).append(la)
    return groups


def trtllm_budget(
    arch: Architecture,
    card: dict,
    *,
    context: int,
    n_gpus: int = 1,
    weights_format: str = "BF16",
    weights_counted: dict | None = None,
    kv: str = "auto",
    free_gpu_memory_fraction: float | None = None,
    max_tokens: int | None = None,
    max_batch_size: int | None = None,
    tokens_per_block: int | None = None,
    max_num_tokens: int | None = None,
    max_input_len: int | None = None,
    runtime: str = "pytorch",
) -> dict:
    """TensorRT-LLM's paged KV cache for `arch` on `n_gpus` (tensor parallel) x `card`, in the shared shape.

    `context` is max_seq_len; the keywords are KvCacheConfig's / the LLM API's fields of the same
    names (None: TensorRT-LLM's default, named in `settings`). `runtime` picks the release's rule:
    "pytorch" (1.x, the PyTorch backend's estimation pass) or "cpp" (0.5's C++ runtime and its TensorRT
    engine, whose build-time max_batch_size, max_input_len and max_num_tokens size the activation buffer;
    free_gpu_memory_fraction is then kv_cache_free_gpu_mem_fraction and max_tokens
    max_tokens_in_paged_kv_cache).
    """
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
    cpp = runtime == "cpp"
    context, tp = checked_inputs(arch, card, context, n_gpus)
    fmt = weight_format(weights_format)
    k = engine_kv_dtype(kv)
    if free_gpu_memory_fraction is not None:
        free_gpu_memory_fraction = finite_number(
            "free_gpu_memory_fraction", free_gpu_memory_fraction, minimum=0.01, maximum=0.99
        )
    if max_tokens is not None:
        max_tokens = finite_number("max_tokens", max_tokens, minimum=1, maximum=1 << 31, integer=True)
    if max_batch_size is not None:
        max_batch_size = finite_number("max_batch_size", max_batch_size, minimum=1, maximum=1 << 20, integer=True)
    if max_num_tokens is not None:
        max_num_tokens = finite_number("max_num_tokens", max_num_tokens, minimum=1, maximum=1 << 31, integer=True)
    if max_input_len is not None:
        if not cpp:
            raise ValueError("max_input_len: a TensorRT engine's build setting, read with runtime='cpp'")
        max_input_len = finite_number("max_input_len", max_input_len, minimum=1, maximum=1 << 24, integer=True)
    default_block = CPP_DEFAULT_TOKENS_PER_BLOCK if cpp else 32
    given_block = tokens_per_block
    tokens_per_block = finite_number(
        "tokens_per_block", default_block if tokens_per_block is None else tokens_per_block, minimum=1, integer=True
    )
    if tokens_per_block not in TOKENS_PER_BLOCK:
        raise ValueError(
            f"tokens_per_block must be one of {', '.join(map(str, TOKENS_PER_BLOCK))}, got {tokens_per_block}"
        )

    if cpp:
        fraction = CPP_DEFAULT_FRACTION if free_gpu_memory_fraction is None else free_gpu_memory_fraction
        batch = CPP_DEFAULT_MAX_BATCH_SIZE if max_batch_size is None else max_batch_size
        input_len = CPP_DEFAULT_MAX_INPUT_LEN if max_input_len is None else max_input_len
        # generation_mixin.py (release/0.5.0), packed input: the engine's largest num_tokens (beam width 1)
        pass_tokens = max(input_len * batch, batch) if max_num_tokens is None else max_num_tokens
    else:
        fraction = DEFAULT_FRACTION if free_gpu_memory_fraction is None else free_gpu_memory_fraction
        batch = DEFAULT_MAX_BATCH_SIZE if max_batch_size is None else max_batch_size
        pass_tokens = DEFAULT_MAX_NUM_TOKENS if max_num_tokens is None else max_num_tokens
    settings = {
        "tp_size": setting(tp, "you" if n_gpus != 1 else "default"),
        "max_seq_len": setting(context, "you"),
        "kv_cache_dtype": setting(k, "you" if kv != "auto" else "default (auto: the model's dtype)"),
        "weights": setting(fmt, "you" if weights_format != "BF16" else "default"),
    }
    if cpp:
        settings |= {
            "free_gpu_memory_fraction": setting(
                fraction,
                "you"
                if free_gpu_memory_fraction is not None
                else "default (kv_cache_free_gpu_mem_fraction 0.85, tensorrtllm_backend v0.5.0)",
            ),
            "max_tokens": setting(
                max_tokens, "you" if max_tokens is not None else "default (max_tokens_in_paged_kv_cache unset)"
            ),
            "max_batch_size": setting(batch, "you" if max_batch_size is not None else "default (build.py 0.5: 8)"),
            "max_input_len": setting(input_len, "you" if max_input_len is not None else "default (build.py 0.5: 2048)"),
            "max_num_tokens": setting(
                pass_tokens,
                "you" if max_num_tokens is not None else "default (the engine's: max_input_len x max_batch_size)",
            ),
            "tokens_per_block": setting(
                tokens_per_block,
                "you" if given_block not in (None, default_block) else "default (build.py 0.5: 64)",
            ),
        }
    else:
        settings |= {
            "free_gpu_memory_fraction": setting(
                fraction, "you" if free_gpu_memory_fraction is not None else "default (kDefaultGpuMemFraction 0.9)"
            ),
            "max_tokens": setting(max_tokens, "you" if max_tokens is not None else "default (unset: no cap)"),
            "max_batch_size": setting(batch, "you" if max_batch_size is not None else "default (LLM API 2048)"),
            "max_num_tokens": setting(pass_tokens, "you" if max_num_tokens is not None else "default (LLM API 8192)"),
            "tokens_per_block": setting(tokens_per_block, "you" if tokens_per_block != 32 else "default (LLM API 32)"),
        }
    steps: list = []

    total = driver_memory(card)
    steps.append(
        budget_step(
            "total GPU memory (cudaMemGetInfo)" if cpp else "total GPU memory (torch.cuda.mem_get_info)",
            total["bytes"],
            total["how"],
            MEMORY_MD if cpp else UTIL,
        )
    )
    w = weights_counted or model_weights_bytes(arch, fmt)
    weights = -(-w["bytes"] // tp)
    steps.append(
        budget_step(
            "weights per GPU (the TensorRT engine's)" if cpp else "weights per GPU",
            weights,
            w["how"] + (f" / tp {tp}" if tp > 1 else ""),
            "the checkpoint as stored" if w.get("stored") else "kvlab.memory.weights",
        )
    )
    if cpp:
        reserve = vllm_reserve(arch, pass_tokens, batch, tp)
        tokens_how = (
            f"{pass_tokens:,} tokens (max_num_tokens)"
            if max_num_tokens is not None
            else f"{pass_tokens:,} tokens = max_input_len {input_len:,} x max_batch_size {batch}"
            + ("" if max_input_len is not None else f" (max_input_len: {BUILD_05}'s default)")
        )
        steps.append(
            budget_step(
                "TensorRT engine's activation buffer and the CUDA context (allocated when the engine loads)",
                reserve["bytes"],
                f"the engine's device memory is sized at build time for its largest input, {tokens_how} ({MIXIN_05}; "
                f"allocated once, {RUNTIME_05}); kvlab estimate, vLLM's fitted profiling reserve for as many tokens: "
                + reserve["how"],
                "kvlab estimate",
            )
        )
        free = total["bytes"] - weights - reserve["bytes"]
        steps.append(
            budget_step(
                "free after the engine loads",
                free,
                "total - weights - activation buffer and context",
                MEMORY_MD + " ('the remaining free GPU memory')",
            )
        )
        fraction_budget = int(max(free, 0) * fraction)
        only_tokens = max_tokens is not None and free_gpu_memory_fraction is None
        steps.append(
            budget_step(
                "KV budget",
                fraction_budget,
                f"free x kv_cache_free_gpu_mem_fraction {fraction:g}"
                + ("; not used: max_tokens_in_paged_kv_cache alone sets the pool" if only_tokens else ""),
                BACKEND_05 + " / " + MEMORY_MD,
            )
        )
    else:
        reserve = vllm_reserve(arch, pass_tokens, min(batch, DEFAULT_MAX_BATCH_SIZE), tp)
        steps.append(
            budget_step(
                "estimation pass peak besides the weights (activations, CUDA graphs, NCCL, context)",
                reserve["bytes"],
                "kvlab estimate, vLLM's fitted profiling reserve for the same batch: " + reserve["how"],
                "kvlab estimate",
            )
        )
        free = total["bytes"] - weights - reserve["bytes"]
        steps.append(
            budget_step("free at the peak (total - peak)", free, "total - weights - peak besides the weights", UTIL)
        )
        fraction_budget = int(max(free, 0) * fraction)
        only_tokens = False
        steps.append(
            budget_step(
                "KV budget",
                fraction_budget,
                f"(total - peak) x free_gpu_memory_fraction {fraction:g}",
                UTIL + " _cal_max_memory",
            )
        )
    budget = fraction_budget

    groups = window_groups(arch, context, one_pool=cpp)
    if not groups:
        raise ValueError(f"{arch.name} has no attention layer: TensorRT-LLM's KV cache would be empty")
    share = 1 / len(groups)
    per_group = {
        win: sum(layer_bytes_per_token(la, k, tp, replicate_floor=False) for la in layers)
        for win, layers in groups.items()
    }
    per_token = sum(per_group.values())
    steps.append(
        budget_step(
            "K + V per token per GPU",
            per_token,
            f"{sum(len(v) for v in groups.values())} attention layers, KV heads ceil(heads / tp {tp}), "
            f"{'2 B (auto)' if k == 'auto' else k} per value",
            KV_MANAGER + " calculateCacheSizePerTokenForSingleWindowSize",
        )
    )
    if max_tokens is not None:
        steps.append(
            budget_step(
                "max_tokens cap",
                max_tokens * per_token,
                f"{max_tokens:,} tokens x {per_token:,} B: "
                + (
                    "set alone, it is the pool (the fraction is not applied)"
                    if only_tokens
                    else "the smaller of this and the fraction's budget wins"
                ),
                MEMORY_MD if cpp else UTIL + " configure_kv_cache_capacity",
            )
        )
    if only_tokens:
        budget = max_tokens * per_token
    pools = {}
    for win, nbytes in per_group.items():
        pools[win] = blocks_for(int(budget * share), nbytes, tokens_per_block, max_tokens)
    full = max(groups)  # the widest window (max_seq_len for full layers)
    pool = pools[full]
    steps.append(
        budget_step(
            "tokens in the paged KV cache",
            pool["pool_tokens"] * per_group[full],
            f"{int(budget * share):,} B // {per_group[full]:,} B = {pool['tokens']:,} tokens"
            + (" (max_tokens)" if pool["capped"] else "")
            + f" -> ceil(/ {tokens_per_block}) = {pool['blocks']:,} blocks = {pool['pool_tokens']:,} tokens"
            + (f"; {len(groups)} window sizes share the memory equally (VSWA)" if len(groups) > 1 else ""),
            KV_MANAGER + " calculateMaxNumBlocks",
        )
    )

    # one sequence of `context` tokens: ceil(min(window, context) / tokens_per_block) blocks in every window group
    def blocks_needed(win: int, length: int) -> int:
        return -(-min(win, length) // tokens_per_block)

    sequences = min(
        (pools[win]["blocks"] // blocks_needed(win, context) for win in groups),
        default=0,
    )
    sequences = min(sequences, batch)
    longest = pool["pool_tokens"] if len(groups) == 1 else min(pool["pool_tokens"], context)
    longest = min(longest, context)

    refusal = None
    if free <= 0 and not only_tokens:
        refusal = (
            f"no memory left for the KV cache: the weights ({weights / GIB:.1f} GiB per GPU) and the "
            + ("engine's activation buffer" if cpp else "estimation pass's peak")
            + f" leave {free / GIB:.1f} GiB (kvlab's words; TensorRT-LLM fails at start-up)"
        )
    elif sequences < 1 and cpp:
        refusal = (
            "maxTokensInPagedKvCache must be large enough to process at least 1 sequence to completion (i.e. must be "
            f"larger than beam_width * tokensPerBlock * maxBlocksPerSeq) (kvlab: {pool['pool_tokens']} tokens < 1 x "
            f"{tokens_per_block} x {blocks_needed(full, context)})"
        )
    elif sequences < 1:
        upper = pool["blocks"] * tokens_per_block
        refusal = (
            "maxAttentionWindow and maxSequenceLen are too large for at least one sequence to fit in kvCache. "
            f"they are reduced to {upper} (TensorRT-LLM 1.x starts with the shorter max_seq_len; up to ~0.9 it "
            f"refused: maxTokensInPagedKvCache ({pool['pool_tokens']}) must be large enough to process at least "
            f"1 sequence to completion (i.e. must be larger than beam_width (1) * tokensPerBlock "
            f"({tokens_per_block}) * maxBlocksPerSeq ({blocks_needed(full, context)})))"
        )
    if cpp:
        rule = (
            "gives the KV cache kv_cache_free_gpu_mem_fraction (0.85 unless set) of the memory still free once the "
            "TensorRT engine has loaded its weights and its activation buffer (sized at build time for max_num_tokens, "
            "max_input_len x max_batch_size unless set), or max_tokens_in_paged_kv_cache when only that is set (the "
            "smaller when both are), in blocks of tokens_per_block."
        )
        unsure = UNSURE_CPP
    else:
        rule = (
            "gives the KV cache free_gpu_memory_fraction (0.9) of the memory still free after the weights "
            "and a profiling pass at peak, capped by max_tokens, in blocks of tokens_per_block."
        )
        unsure = UNSURE
    return budget_result(
        engine="tensorrt-llm",
        engine_name="TensorRT-LLM",
        version_modelled=VERSION_CPP if cpp else VERSION,
        fits=refusal is None,
        refusal=refusal,
        kv_budget_bytes=budget,
        kv_bytes_per_token=per_token,
        max_tokens=int(pool["pool_tokens"]),
        max_sequences_at_context=int(max(sequences, 0)),
        longest_context=int(longest),
        settings=settings,
        steps=steps,
        unsure=[
            u.replace(FORMULA_WEIGHTS, "the weights are the checkpoint's bytes as stored, split evenly over tp")
            if w.get("stored")
            else u
            for u in unsure
        ],
        rule=rule,
    )


budget = deployment_budget(trtllm_budget)
