"""Engine load logs, explained: the KV cache lines llama.cpp and vLLM print at start-up,
rebuilt term by term from the model's config and the settings the log shows.

`parse_engine_log(text)` reads what it recognises (nothing else: an unknown line is skipped):

- llama.cpp: the context lines (`n_ctx`, `n_ctx_per_seq` / `n_ctx_seq`, `n_seq_max`,
  `n_ubatch`, `flash_attn`, `kv_unified`), the iSWA lines ("creating SWA KV cache, size =
  N cells"), every cache size line (`llama_kv_cache` / `llama_kv_cache_unified` /
  `llama_memory_recurrent`: "size = X MiB (N cells, L layers, s/S seqs), K (type): ..."),
  the older "KV self size = ..." line, and the per-device KV / compute / model buffers.
- vLLM: weights ("Loading model weights took", "Model loading took"), the V0 memory
  profile (total, peak torch, non-torch, kv_cache_size, gpu_memory_utilization),
  "Available KV cache memory", "GPU blocks", "GPU KV cache size: N tokens",
  "Maximum concurrency for N tokens per request", the two start-up refusals, and the
  engine arguments it echoes (`max_model_len`, `kv_cache_dtype`, `block_size`,
  `max_num_batched_tokens`, `gpu_memory_utilization`).

`explain_engine_log(text, model, **stated)` rebuilds every figure it can with the same
functions the memory page uses (`llamacpp_kv_cache`, `vllm_kv_cache`), prints the
arithmetic, and where a figure disagrees names the term (cells, layers, row width,
bytes per value, block rounding, a setting the log does not show) and why. Settings come
from the log first, then from what the reader states, then from the engine's default
(each one says where it came from).

Units: llama.cpp prints MiB with two decimals; vLLM prints GiB with two decimals (older
versions wrote "GB" for the same GiB figure). A rebuilt figure "matches" when it prints
the same digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kvlab.memory.architecture import ATTENTION_KINDS, FULL, LINEAR, SLIDING, Architecture
from kvlab.dtypes import GIB, HEAD_SCALE_BYTES, KV_TYPES, MIB, kv_type, row_bytes
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.llamacpp import LLAMACPP_MLA_CACHE, LLAMACPP_MLA_CACHES, llamacpp_mla_architecture
from kvlab.memory.kv_bytes import (
    LLAMACPP_PAD,
    LLAMACPP_SWA_FAMILIES,
    VLLM_BLOCK_SIZE,
    VLLM_MAX_NUM_BATCHED_TOKENS,
    llamacpp_kv_cache,
    gpu_stages,
    vllm_kv_cache,
)
from kvlab.memory.engines import vllm_version_from_tags
from kvlab.memory.drafters import known_drafter
from kvlab.memory.weights import model_weights_bytes, without_mtp
from kvlab.wording import plural
from kvlab.inputs import short_repr

ENGINES = ("llama.cpp", "vllm", "sglang", "tensorrt-llm")
_ENGINE_ALIASES = {
    "llamacpp": "llama.cpp",
    "trtllm": "tensorrt-llm",
    "tensorrt_llm": "tensorrt-llm",
    "trt-llm": "tensorrt-llm",
}
MLA_LAYOUT_SETTING = "MLA cache layout (the build and GGUF)"
MAX_LOG_CHARS = 200_000  # a start-up log is a few hundred lines; refuse whole server sessions
MAX_LOG_BYTES = 4 * MAX_LOG_CHARS  # files and standard input are read up to this (UTF-8: at most 4 B a character)
LLAMACPP_DEFAULT_UBATCH = 512
# How far vLLM's logged weight memory may be from kvlab's count and still agree (it also loads buffers).
WEIGHTS_TOLERANCE = 0.03


# --- llama.cpp -------------------------------------------------------------------------
_SIZE = re.compile(
    r"(?P<who>llama_kv_cache(?:_unified)?|llama_memory_recurrent):\s+size\s*=\s*(?P<mib>[\d.]+)\s*MiB\s*\(\s*"
    r"(?P<cells>\d+)\s*cells,\s*(?P<layers>\d+)\s*layers,\s*(?P<seqs>\d+)(?:\s*/\s*(?P<streams>\d+))?\s*seqs"
    r"(?:\s+(?P<rs_seq>\d+)\s*rs_seq)?\),\s*"
    r"(?P<kl>[KR])\s*\((?P<kt>\w+)\):\s*(?P<kmib>[\d.]+)\s*MiB,\s*(?P<vl>[VS])\s*\((?P<vt>\w+)\):\s*(?P<vmib>[\d.]+)\s*MiB"
)
_SELF = re.compile(
    r"KV self size\s*=\s*(?P<mib>[\d.]+)\s*MiB,\s*(?P<kl>K|c\^KV)\s*\((?P<kt>\w+)\):\s*(?P<kmib>[\d.]+)\s*MiB"
    r"(?:,\s*(?:V|kv\^T)\s*(?:\((?P<vt>\w+)\):\s*(?P<vmib>[\d.]+)\s*MiB|:\s*not used))?"
)
_ISWA = re.compile(r"creating\s+(?P<which>non-SWA|SWA)\s+KV cache,\s*size\s*=\s*(?P<cells>\d+)\s*cells")
_BUFFER = re.compile(
    r"(?P<dev>[\w.:\[\]-]+)\s+(?P<what>KV|RS|compute|model|output)\s+buffer size\s*=\s*(?P<mib>[\d.]+)\s*MiB"
)
_LLAMA_INT = {
    "n_ctx": re.compile(r"\bn_ctx\s*=\s*(\d+)"),
    "n_ctx_seq": re.compile(r"\bn_ctx_(?:per_)?seq\s*=\s*(\d+)"),
    "n_seq_max": re.compile(r"\bn_seq_max\s*=\s*(\d+)"),
    "n_ubatch": re.compile(r"\bn_ubatch\s*=\s*(\d+)"),
    "n_ctx_train": re.compile(r"\bn_ctx_train\s*(?:=\s*|\(\s*)(\d+)"),
    "kv_size": re.compile(r"\bkv_size\s*=\s*(\d+)"),
    "n_ctx_slot": re.compile(r"\bn_ctx_slot\s*=\s*(\d+)"),
    "ctx_size": re.compile(r"\bctx_size\s*=\s*(\d+)"),
    "n_swa": re.compile(r"\bn_swa\s*=\s*(\d+)"),
}
# llama.cpp's --fit (on by default since b7003: llama_params_fit in src/llama.cpp, common_params_fit in newer
# builds): what it projects per device, the margin it keeps free, the context it lowers, and its outcome
_FIT_PREFIX = r"(?:llama|common)_params_fit(?:_impl)?:\s*"
_FIT = {
    "projected": re.compile(
        _FIT_PREFIX + r"projected to use (?P<mib>\d+) MiB of device memory vs\. (?:a total of )?(?P<free>\d+) MiB"
        r"(?P<of_free> of free device memory)?"
    ),
    "margin": re.compile(
        _FIT_PREFIX + r"cannot fulfill margin of (?P<margin>\d+) MiB on all devices, need to use (?P<less>\d+) MiB less"
    ),
    "context": re.compile(
        _FIT_PREFIX + r"context size reduced from (?P<from>\d+) to (?P<to>\d+) -> need (?P<less>\d+) MiB less"
    ),
    "leave": re.compile(_FIT_PREFIX + r"will leave (?P<leave>\d+) >= (?P<target>\d+) MiB of free device memory"),
    "result": re.compile(_FIT_PREFIX + r"(?P<word>successfully fit|failed to fit) params to free device memory"),
}
_FIT_DEVICE = re.compile(
    _FIT_PREFIX + r"-\s*(?P<dev>[\w.:-]+)\s*\((?P<name>[^)]*(?:\([^)]*\)[^)]*)*)\)\s*:\s*(?:(?P<total>\d+) total,\s*"
    r"(?P<used>\d+) used,\s*(?P<deficit>-?\d+) (?:deficit|surplus)|(?P<layers>\d+) layers \(\s*(?P<over>\d+) "
    r"overflowing\),\s*(?P<used2>\d+) MiB used,\s*(?P<free>-?\d+) MiB free)"
)
_FIT_BREAKDOWN = re.compile(
    r"common_memory_breakdown_print:\s*\|\s*-\s*(?P<dev>[\w.:-]+)\s*\((?P<name>[^)]*)\)\s*\|\s*(?P<total>\d+)\s*=\s*"
    r"(?P<free>\d+)\s*\+\s*\(\s*(?P<self>\d+)\s*=\s*(?P<model>\d+)\s*\+\s*(?P<context>\d+)\s*\+\s*"
    r"(?P<compute>\d+)\s*\)"
)
_FLASH = re.compile(r"\bflash_attn\s*=\s*(\w+)|Flash Attention was auto, set to (enabled|disabled)")
_UNIFIED = re.compile(r"\bkv_unified\s*=\s*(\w+)")
_TYPES = re.compile(r"type_k\s*=\s*'(\w+)',\s*type_v\s*=\s*'(\w+)'")

# --- vLLM ------------------------------------------------------------------------------
_VLLM_FLOAT = {
    # V1 ("Model loading took"), V0 ("Loading model weights took"), and the 0.6.5-0.7 profiling report
    "weights_gib": re.compile(
        r"(?:Loading model weights took|Model loading took|model weights take)\s*([\d.]+)\s*(?:GB|GiB)"
    ),
    # V1's line, the 0.6.5-0.7 report ("the rest of the memory reserved for KV Cache is"), the
    # multi-line 0.6.4 report ("available_kv_cache_memory  53.29GiB") and 0.6.x's kv_cache_size=
    "available_gib": re.compile(
        r"Available KV cache memory:\s*(-?[\d.]+)\s*GiB|reserved for KV Cache is\s*(-?[\d.]+)\s*GiB"
        r"|available_kv_cache_memory\s+(-?[\d.]+)\s*GiB"
    ),
    # the 0.6-0.8 reports' total_gpu_memory, and 0.2x's "Free memory on device (free/total GiB) on startup" (later
    # releases name the device: "Free memory on device cuda:0 (17.1/22.05 GiB)")
    "total_gib": re.compile(
        r"total_gpu_memory(?:=|\s*\(|\s+)([\d.]+)\s*GiB|Free memory on device(?: \S+)? \([\d.]+/([\d.]+) GiB\)"
    ),
    "peak_torch_gib": re.compile(r"peak_torch_memory=([\d.]+)GiB"),
    "activation_peak_gib": re.compile(r"PyTorch activation peak memory(?:\s+takes)?\s+([\d.]+)\s*GiB"),
    "non_torch_gib": re.compile(r"non_torch_memory(?:=|\s+takes\s+|\s+)([\d.]+)\s*GiB"),
    "kv_cache_size_gib": re.compile(r"kv_cache_size=([\d.]+)GiB"),
    "gpu_memory_utilization": re.compile(
        r"gpu_memory_utilization(?:['\"]?\s*[=:]\s*|\s*\(|\s+)(\d*\.?\d+)|--gpu-memory-utilization[ =](\d*\.?\d+)"
    ),
}
_VLLM_INT = {
    "gpu_blocks": re.compile(r"(?:GPU|CUDA) blocks:\s*([\d,]+)"),  # "# CUDA blocks" in 0.6.6-0.7
    "gpu_kv_tokens": re.compile(r"GPU KV cache size:\s*([\d,]+)\s*tokens"),
    "max_model_len": re.compile(
        r"['\"]max_model_len['\"]:\s*(\d+)|--max-model-len[ =](\d+)|max_model_len=(\d+)|[ ,]max_seq_len=(\d+)"
    ),
    "block_size": re.compile(r"['\"]block_size['\"]:\s*(\d+)|--block-size[ =](\d+)"),
    "max_num_batched_tokens": re.compile(
        r"max_num_batched_tokens['\"]?\s*[=:]\s*(\d+)|--max-num-batched-tokens?[ =](\d+)"
    ),
    "tensor_parallel_size": re.compile(
        r"['\"]tensor_parallel_size['\"]:\s*(\d+)|--tensor-parallel-size[ =](\d+)|\s-tp[ =](\d+)"
    ),
    "pipeline_parallel_size": re.compile(
        r"['\"]pipeline_parallel_size['\"]:\s*(\d+)|pipeline_parallel_size=(\d+)|--pipeline-parallel-size[ =](\d+)"
        r"|\s-pp[ =](\d+)"
    ),
}
_PP_PARTITION = re.compile(r"VLLM_PP_LAYER_PARTITION=['\"]?([\d,]+)")
# speculative decoding, as vLLM echoes it ('speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3})
# or as a command gives it (--speculative-config '{"method": "eagle3", ...}')
# vLLM's MXFP4 MoE kernel path as it prints it (vllm/model_executor/layers/quantization/mxfp4.py; the Marlin
# warning from marlin_utils_fp4.py): the path decides gpt-oss's loaded weights and reserve (engines.mxfp4_path)
MXFP4_PRINTED = (
    (re.compile(r"\[mxfp4\.py:\d+\] Using Triton backend"), "triton"),
    (re.compile(r"Weight-only FP4 compression will be used leveraging the Marlin kernel"), "marlin"),
)
_SPECULATIVE = re.compile(r"speculative[_-]config['\"]?\s*[:=]?\s*['\"]?\{([^}]*)")
_SPEC_METHOD = re.compile(r"['\"]method['\"]:\s*['\"]([\w.-]+)['\"]")
_SPEC_TOKENS = re.compile(r"['\"]num_speculative_tokens['\"]:\s*(\d+)")
_SPEC_MODEL = re.compile(r"['\"]model['\"]:\s*['\"]([^'\"]+)['\"]")
_PREFIX_CACHING = re.compile(r"['\"]enable_prefix_caching['\"]:\s*(True|False)|--(no-)?enable-prefix-caching\b")
# the engine arguments ('kv_cache_dtype': 'fp8'), the command (--kv-cache-dtype fp8) or the engine-init line
# ("Initializing a V1 LLM engine (v...) with config: ..., kv_cache_dtype=fp8, ...")
_VLLM_DTYPE = re.compile(
    r"['\"]kv_cache_dtype['\"]:\s*['\"](\w+)['\"]|--kv-cache-dtype[ =](\w+)|[ ,]kv_cache_dtype=(\w+)"
)
_CONCURRENCY = re.compile(r"Maximum concurrency for\s*([\d,]+)\s*tokens per request:\s*([\d.]+)x")
_NEEDED = re.compile(
    r"max seq len \((\d+)\),\s*\(([\d.]+)\s*GiB KV cache is needed, which is larger than the available "
    r"KV cache memory \(([\d.]+)\s*GiB\)"
)
_TOO_LONG = re.compile(
    r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV "
    r"cache \((\d+)\)"
)

# vLLM 0.19+: the CUDA graph memory estimated before the KV cache is sized (subtracted from the budget by default
# from 0.20.0 on, vllm/envs.py at v0.20.0, though the line says "default since v0.21.0") and the utilization that keeps the
# KV cache of a run without that estimate; before 0.19 the same pair as an advice ("increase ... from A to B")
_VLLM_CG = re.compile(r"Estimated CUDA graph memory:\s*([\d.]+)\s*GiB")
_VLLM_EQUIV = re.compile(
    r"current --gpu-memory-utilization=([\d.]+) is equivalent to --gpu-memory-utilization=([\d.]+) without CUDA "
    r"graph memory profiling"
)
_VLLM_EQUIV_OLD = re.compile(
    r"increase --gpu-memory-utilization from ([\d.]+) to ([\d.]+) to maintain the same effective KV cache size"
)
# 0.20+ run with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 (opt-out): the estimate is printed, not subtracted, and
# the utilization that would keep the same KV cache with it subtracted is advised ("increasing ... from A to B.")
_VLLM_OPT_OUT = re.compile(
    r"CUDA graph memory profiling is disabled \(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0\).*?increasing "
    r"--gpu-memory-utilization from (\d*\.\d+) to (\d*\.\d+)"
)
# "Initializing a V1 LLM engine (v0.24.0)", "vLLM API server version 0.20.2rc1...", and the 0.22+ start-up banner
# ("▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.25.1", api_utils.py)
_VLLM_VERSION = re.compile(
    r"LLM engine \(v(\d+)\.(\d+)|vLLM API server version (\d+)\.(\d+)|[█▀▄]\s+version (\d+)\.(\d+)\.\d"
)
# gpu_worker.py, when the KV cache is sized from gpu_memory_utilization: what the run took and the --kv-cache-memory
# that would keep it ("... consumed memory (weights + non-torch), ..." in later releases; "... for weight, ... for
# non-torch memory, ..." before)
_VLLM_FREE = re.compile(
    r"Free memory on device(?: \S+)? \(([\d.]+)/([\d.]+) GiB\) on startup\. Desired GPU memory utilization is \(([\d.]+), "
    r"([\d.]+) GiB\)\. Actual usage is ([\d.]+) GiB for (consumed memory \(weights \+ non-torch\)|weight), "
    r"([\d.]+) GiB for peak activation, (?:([\d.]+) GiB for non-torch memory, )?and ([\d.]+) GiB for CUDAGraph "
    r"memory\. Replace gpu_memory_utilization config with `--kv-cache-memory=(\d+)` \(([\d.]+) GiB\) to fit into "
    r"requested memory, or `--kv-cache-memory=(\d+)` \(([\d.]+) GiB\) to fully utilize gpu memory\. Current kv "
    r"cache memory in use is ([\d.]+) GiB"
)
# gpu_worker.py after capture: the graphs' pool against the estimate subtracted before the KV cache was sized
_VLLM_CG_POOL = re.compile(
    r"CUDA graph pool memory:\s*([\d.]+)\s*GiB \(actual\),\s*([\d.]+)\s*GiB \(estimated\),\s*difference:\s*"
    r"(-?[\d.]+)\s*GiB"
)
_VLLM_NO_MEMORY = re.compile(r"No available memory for the cache blocks")
# --kv-cache-memory-bytes set: the KV budget is the user's, no profiling run (gpu_worker.py)
_VLLM_KV_SET = re.compile(
    r"Initial free memory ([\d.]+) GiB, reserved ([\d.]+) GiB memory for KV Cache as specified by "
    r"kv_cache_memory_bytes config"
)
# vllm/worker/gpu_worker.py: redundancy_buffer_memory = 150 * (1 << 20), kept back from both --kv-cache-memory advices
VLLM_REDUNDANCY_BUFFER = 150 * (1 << 20)

# --- SGLang ----------------------------------------------------------------------------
# python/sglang/srt/model_executor/model_runner.py and mem_cache/memory_pool.py; SGLang's "GB" are GiB (÷ 2³⁰)
_SGLANG = {
    "weights": re.compile(r"Load weight end\..*?avail mem=([\d.]+)\s*GB,\s*mem usage=([\d.]+)\s*GB"),
    "pool": re.compile(
        r"KV Cache is allocated\.(?:\s*dtype:\s*(?P<dtype>[\w.]+),)?\s*#tokens:\s*(?P<tokens>[\d,]+),\s*"
        r"(?:K size:\s*(?P<k>[\d.]+)\s*GB,\s*V size:\s*(?P<v>[\d.]+)\s*GB|KV size:\s*(?P<kv>[\d.]+)\s*GB)"
    ),
    "after_pool": re.compile(r"Memory pool end\.\s*avail mem=([\d.]+)\s*GB"),
    "before_graph": re.compile(r"Capture cuda graph begin\..*?avail mem=([\d.]+)\s*GB"),
    "max_total_num_tokens": re.compile(r"max_total_num_tokens=(\d+)"),
    "max_running_requests": re.compile(r"max_running_requests=(\d+)"),
    "context_len": re.compile(r"\bcontext_len=(\d+)"),
    "available_gpu_mem": re.compile(r"available_gpu_mem=([\d.]+)\s*GB"),
    "mem_fraction_static": re.compile(r"mem[_-]fraction[_-]static['\"]?\s*[=:]\s*(\d+(?:\.\d+)?)"),
    "refusal": re.compile(r"(Loaded weights leave no GPU memory for the KV cache[^\n]*|Not enough memory[^\n]*)"),
    # hybrid models (Qwen3.5/3.6/Next, Nemotron-H...): the recurrent states' pool, one slot per running request
    "mamba": re.compile(
        r"Mamba Cache is allocated\.\s*max_mamba_cache_size:\s*(\d+),\s*conv_state size:\s*([\d.]+)\s*GB,\s*"
        r"ssm_state size:\s*([\d.]+)\s*GB"
    ),
}

# --- TensorRT-LLM ----------------------------------------------------------------------
# cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp and tensorrt_llm/_torch/pyexecutor/_util.py (PyTorch backend)
_TRTLLM = {
    "tokens": re.compile(r"Using (\d+) (?:total )?tokens in paged KV cache"),
    "blocks_per_seq": re.compile(
        r"tokens in paged KV cache, and (\d+) blocks per sequence|Max KV cache blocks per sequence:\s*(\d+)"
    ),
    "window": re.compile(r"\[window size=(\d+)\]"),
    "kv_bytes": re.compile(r"Allocate (\d+) bytes for k/v cache"),
    "allocated": re.compile(
        r"\[MemUsageChange\] Allocated ([\d.]+) GiB for max tokens(?: in paged KV cache)? \((\d+)\)"
    ),
    "tokens_per_block": re.compile(r"tokens per block[=:]\s*(\d+)|Number of tokens per block:\s*(\d+)", re.I),
    "primary_blocks": re.compile(r"primary blocks=(\d+)|Number of blocks in KV cache primary pool:\s*(\d+)"),
    "total_available": re.compile(
        r"Memory usage when calculating max tokens in paged kv cache: total: ([\d.]+) GiB, available: ([\d.]+) GiB"
    ),
    "profile": re.compile(
        r"Peak memory during memory usage profiling \(torch \+ non-torch\):\s*([\d.]+) GiB, available KV cache "
        r"memory when calculating max tokens:\s*([\d.]+) GiB(?:, fraction is set ([\d.]+), kv size(?: per token)? is "
        r"(\d+)\.?(?:\s*device total memory ([\d.]+) GiB)?(?:,\s*,? tmp kv_mem ([\d.]+) GiB)?)?"
    ),
    "estimated": re.compile(r"Estimated max memory in KV cache\s*:\s*([\d.]+) GiB"),
    "too_small": re.compile(
        r"maxTokensInPagedKvCache \((\d+)\) must be large enough to process at least 1 sequence.*?beam_width "
        r"\((\d+)\) \* tokensPerBlock \((\d+)\) \* maxBlocksPerSeq \((\d+)\)"
    ),
}


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _first(match) -> str | None:
    return next((g for g in match.groups() if g is not None), None) if match else None


def _vllm_v021_lines(line: str, number: int, vllm: dict) -> None:
    """vLLM's CUDA graph lines (0.19+): the estimate and the utilization it is equivalent to."""
    if "cuda_graph_gib" not in vllm and (m := _VLLM_CG.search(line)):
        vllm["cuda_graph_gib"] = {"value": float(m.group(1)), "line": number, "text": m.group(0)}
    if "equivalent_util" not in vllm:
        if m := _VLLM_EQUIV.search(line):
            # 0.20+ (the default since 0.20.0): the estimate is subtracted; without it the same KV cache takes util'
            vllm["equivalent_util"] = {
                "util": m.group(1),
                "without": m.group(2),
                "subtracted": True,
                "line": number,
                "text": m.group(0),
            }
        elif m := _VLLM_EQUIV_OLD.search(line):
            # before 0.19 (opt-in): the estimate is not subtracted; with it the same KV cache would take util'
            vllm["equivalent_util"] = {
                "util": m.group(1),
                "without": m.group(1),
                "with": m.group(2),
                "subtracted": False,
                "line": number,
                "text": m.group(0),
            }
            vllm.setdefault("gpu_memory_utilization", {"value": float(m.group(1)), "line": number, "text": m.group(0)})
    if "equivalent_util" not in vllm and (m := _VLLM_OPT_OUT.search(line)):
        # 0.20+ with the estimate switched off: not subtracted; with it the same KV cache would take util'
        vllm["equivalent_util"] = {
            "util": m.group(1),
            "without": m.group(1),
            "with": m.group(2),
            "subtracted": False,
            "opt_out": True,
            "line": number,
            "text": m.group(0),
        }
        vllm.setdefault("gpu_memory_utilization", {"value": float(m.group(1)), "line": number, "text": m.group(0)})
    if "free_memory" not in vllm and (m := _VLLM_FREE.search(line)):
        g = m.groups()
        vllm["free_memory"] = {
            "free": float(g[0]),
            "total": float(g[1]),
            "util": float(g[2]),
            "desired": float(g[3]),
            "consumed": float(g[4]),
            "consumed_what": "weights + non-torch" if g[5].startswith("consumed") else "weights",
            "activation": float(g[6]),
            "non_torch": float(g[7]) if g[7] is not None else None,
            "cuda_graph": float(g[8]),
            "fit_bytes": int(g[9]),
            "fit_gib": float(g[10]),
            "full_bytes": int(g[11]),
            "full_gib": float(g[12]),
            "in_use": float(g[13]),
            "line": number,
            "text": m.group(0),
        }
    if "cuda_graph_pool" not in vllm and (m := _VLLM_CG_POOL.search(line)):
        vllm["cuda_graph_pool"] = {
            "actual": float(m.group(1)),
            "estimated": float(m.group(2)),
            "difference": float(m.group(3)),
            "line": number,
            "text": m.group(0),
        }
    if "kv_memory_set" not in vllm and (m := _VLLM_KV_SET.search(line)):
        vllm["kv_memory_set"] = {
            "free": float(m.group(1)),
            "value": float(m.group(2)),
            "line": number,
            "text": m.group(0),
        }
    if "no_memory" not in vllm and (m := _VLLM_NO_MEMORY.search(line)):
        vllm["no_memory"] = {"line": number, "text": m.group(0)}
    if "version" not in vllm and (m := _VLLM_VERSION.search(line)):
        major, minor = (g for g in m.groups() if g is not None)
        vllm["version"] = {"value": (int(major), int(minor)), "line": number, "text": m.group(0)}


def _read_sglang(line: str, number: int, sg: dict) -> None:
    """SGLang's memory lines: weights, the KV pool (tokens, K and V sizes), what is left, the scheduler's limits."""
    if "pool" in sg and (m := _SGLANG["pool"].search(line)):
        # a second pool of another size (a draft model's under speculative decoding): kept apart, read once
        first = sg["pool"]
        sizes = (m["k"], m["v"], m["kv"])
        if sizes != (first["k"], first["v"], first["kv"]) and "other_pool" not in sg:
            sg["other_pool"] = {
                "tokens": _int(m["tokens"]),
                "k": m["k"],
                "v": m["v"],
                "kv": m["kv"],
                "line": number,
                "text": m.group(0),
            }
    for key, rx in _SGLANG.items():
        if key in sg or not (m := rx.search(line)):
            continue
        if key == "mamba":
            sg[key] = {
                "slots": int(m.group(1)),
                "conv": float(m.group(2)),
                "ssm": float(m.group(3)),
                "line": number,
                "text": m.group(0),
            }
        elif key == "pool":
            sg[key] = {
                "tokens": _int(m["tokens"]),
                "k": m["k"],
                "v": m["v"],
                "kv": m["kv"],
                "dtype": m["dtype"],
                "line": number,
                "text": m.group(0),
            }
        elif key == "weights":
            sg[key] = {"avail": float(m.group(1)), "usage": float(m.group(2)), "line": number, "text": m.group(0)}
        elif key == "refusal":
            sg[key] = {"value": m.group(1).strip(), "line": number, "text": m.group(0)}
        else:
            text = m.group(1)
            value = float(text) if "." in text else int(text)
            sg[key] = {"value": value, "line": number, "text": m.group(0)}


def _read_trtllm(line: str, number: int, trt: dict) -> None:
    """TensorRT-LLM's KV cache lines (C++ runtime and PyTorch backend)."""
    for key, rx in _TRTLLM.items():
        if key in trt or not (m := rx.search(line)):
            continue
        groups = list(m.groups())
        if key in ("tokens", "window", "kv_bytes", "tokens_per_block", "primary_blocks", "blocks_per_seq"):
            trt[key] = {"value": int(_first(m)), "line": number, "text": m.group(0)}
        elif key == "estimated":
            trt[key] = {"value": float(m.group(1)), "line": number, "text": m.group(0)}
        elif key == "allocated":
            trt[key] = {"gib": float(m.group(1)), "tokens": int(m.group(2)), "line": number, "text": m.group(0)}
        elif key == "total_available":
            trt[key] = {"total": float(m.group(1)), "available": float(m.group(2)), "line": number, "text": m.group(0)}
        elif key == "profile":
            trt[key] = {
                "peak": float(groups[0]),
                "available": float(groups[1]),
                "fraction": float(groups[2]) if groups[2] else None,
                "kv_size": int(groups[3]) if groups[3] else None,
                "total": float(groups[4]) if groups[4] else None,
                "tmp_kv": float(groups[5]) if groups[5] else None,
                "line": number,
                "text": m.group(0),
            }
        elif key == "too_small":
            trt[key] = {
                "tokens": int(groups[0]),
                "beam": int(groups[1]),
                "per_block": int(groups[2]),
                "blocks_per_seq": int(groups[3]),
                "line": number,
                "text": m.group(0),
            }


def _read_llamacpp_fit(line: str, number: int, fit: dict) -> None:
    """llama.cpp's --fit lines (llama_params_fit / common_params_fit and the memory breakdown table)."""
    for key, rx in _FIT.items():
        if (m := rx.search(line)) and key not in fit:
            fit[key] = {**{k: v for k, v in m.groupdict().items() if v is not None}, "line": number}
    if m := _FIT_DEVICE.search(line):
        if m["layers"] is not None:
            row = {
                "device": m["dev"],
                "name": m["name"].strip(),
                "layers": int(m["layers"]),
                "overflowing": int(m["over"]),
                "used_mib": int(m["used2"]),
                "free_mib": int(m["free"]),
            }
            fit.setdefault("final_devices", []).append({**row, "line": number})
        else:
            row = {
                "device": m["dev"],
                "name": m["name"].strip(),
                "total_mib": int(m["total"]),
                "used_mib": int(m["used"]),
                "deficit_mib": int(m["deficit"]),
            }
            fit.setdefault("initial_devices", []).append({**row, "line": number})
    if m := _FIT_BREAKDOWN.search(line):
        row = {k: (v if k in ("dev", "name") else int(v)) for k, v in m.groupdict().items()}
        fit.setdefault("breakdowns", []).append({**row, "line": number})


def _fit_lines(fit: dict) -> int:
    return sum(len(v) if isinstance(v, list) else 1 for v in fit.values())


def _fit_line_numbers(fit: dict) -> set:
    out = set()
    for v in fit.values():
        out |= {r["line"] for r in v} if isinstance(v, list) else {v["line"]}
    return out


def _explain_llamacpp_fit(fit: dict) -> tuple[list, list]:
    """What llama.cpp's --fit printed, in words, and the sums its own figures must satisfy (checks)."""
    notes, checks = [], []
    if p := fit.get("projected"):
        what = "free device memory" if p.get("of_free") else "device memory in total"
        notes.append(
            f"--fit projected {int(p['mib']):,} MiB of device memory against {int(p['free']):,} MiB of "
            f"{what} (line {p['line']})"
        )
    if m := fit.get("margin"):
        notes.append(
            f"--fit could not keep its margin of {int(m['margin']):,} MiB free on every device; it needed "
            f"{int(m['less']):,} MiB less (line {m['line']})"
        )
    if c := fit.get("context"):
        notes.append(
            f"--fit lowered the context from {int(c['from']):,} to {int(c['to']):,} tokens, "
            f"{int(c['less']):,} MiB less (line {c['line']})"
        )
    if (lv := fit.get("leave")) and (p := fit.get("projected")):
        left = int(p["free"]) - int(p["mib"])
        ok = abs(left - int(lv["leave"])) <= 1  # llama.cpp prints whole MiB, each rounded down
        checks.append(
            {
                "figure": "memory --fit leaves free",
                "line": lv["line"],
                "logged": f"{int(lv['leave']):,} MiB",
                "rebuilt": f"{int(p['free']):,} - {int(p['mib']):,} = {left:,} MiB",
                "status": "consistent" if ok else "differs",
                "terms": [],
                "why": None if ok else "the free memory and the projection do not give the memory it says it leaves",
            }
        )
        notes.append(
            f"--fit keeps at least {int(lv['target']):,} MiB free (its target: 1,024 MiB per device by "
            "default, plus a multimodal projector's memory) and changed nothing"
        )
    for d in fit.get("initial_devices", []):
        notes.append(
            f"--fit at the initial settings: {d['device']} ({d['name']}) {d['total_mib']:,} MiB total, "
            f"{d['used_mib']:,} MiB projected, {d['deficit_mib']:,} MiB short (line {d['line']})"
        )
    for d in fit.get("final_devices", []):
        notes.append(
            f"--fit placed {d['layers']} layers on {d['device']} ({d['name']}), {d['overflowing']} "
            f"overflowing to the CPU: {d['used_mib']:,} MiB used, {d['free_mib']:,} MiB left (line {d['line']})"
        )
    for b in fit.get("breakdowns", []):
        total = b["model"] + b["context"] + b["compute"]
        ok = abs(total - b["self"]) <= 2  # each part is printed in whole MiB, rounded down on its own
        checks.append(
            {
                "figure": f"{b['dev']} memory breakdown (model + context + compute)",
                "line": b["line"],
                "logged": f"{b['self']:,} MiB",
                "rebuilt": f"{b['model']:,} + {b['context']:,} + {b['compute']:,} = {total:,} MiB",
                "status": "consistent" if ok else "differs",
                "terms": [],
                "why": None if ok else "the three parts do not add up to the device's own figure",
            }
        )
    if r := fit.get("result"):
        notes.append(
            ("--fit succeeded" if r["word"].startswith("success") else "--fit failed")
            + f": '{r['word']} params to free device memory' (line {r['line']})"
        )
    notes.append(
        "not modelled: --fit's own projection (weights per device, the layers it moves to the CPU); kvlab "
        "reads these lines and checks their sums, and rebuilds the KV cache from the llama_kv_cache lines"
    )
    return notes, checks


#: A worker's line prefix that names tensor-parallel rank 0 ("(VllmWorker rank=0 pid=...)", "(Worker_TP0 pid=...)").
_RANK0 = re.compile(r"\brank=0\b|\bWorker_TP0\b")


def parse_engine_log(text: str) -> dict:
    """What a pasted llama.cpp or vLLM start-up log says about memory, line by line."""
    if not isinstance(text, str):
        raise ValueError("log: expected the text of a log")
    if len(text) > MAX_LOG_CHARS:
        raise ValueError(f"log: {len(text):,} characters; paste the start-up part (at most {MAX_LOG_CHARS:,})")
    facts: dict = {}
    caches: list[dict] = []
    buffers: list[dict] = []
    vllm: dict = {}
    sglang: dict = {}
    trtllm: dict = {}
    pending_label = None
    fit: dict = {}
    for number, line in enumerate(text.splitlines(), start=1):
        _read_llamacpp_fit(line, number, fit)
        if m := _ISWA.search(line):
            pending_label = {"which": m["which"], "cells": int(m["cells"]), "line": number}
        if m := _SIZE.search(line):
            recurrent = m["who"] == "llama_memory_recurrent"
            entry = {
                "line": number,
                "text": line.strip(),
                "format": "size",
                "recurrent": recurrent,
                "mib": m["mib"],
                "cells": int(m["cells"]),
                "layers": int(m["layers"]),
                "n_seq": int(m["seqs"]),
                "streams": int(m["streams"]) if m["streams"] else None,
                "rs_seq": int(m["rs_seq"]) if m["rs_seq"] else 0,
                "type_k": m["kt"],
                "type_v": m["vt"],
                "k_mib": m["kmib"],
                "v_mib": m["vmib"],
                "label": None if recurrent else (pending_label["which"] if pending_label else None),
            }
            pending_label = None
            caches.append(entry)
        elif m := _SELF.search(line):
            caches.append(
                {
                    "line": number,
                    "text": line.strip(),
                    "format": "self",
                    "recurrent": False,
                    "mib": m["mib"],
                    "cells": None,
                    "layers": None,
                    "n_seq": None,
                    "streams": None,
                    "type_k": m["kt"],
                    "type_v": m["vt"] or m["kt"],
                    "k_mib": m["kmib"],
                    "v_mib": m["vmib"] or "0.00",
                    "label": "MLA latent (c^KV)" if m["kl"] == "c^KV" else None,
                }
            )
        for m in _BUFFER.finditer(line):
            buffers.append({"line": number, "device": m["dev"], "what": m["what"], "mib": m["mib"]})
        for key, rx in _LLAMA_INT.items():
            if key not in facts and (m := rx.search(line)):
                facts[key] = {"value": int(m.group(1)), "line": number}
        if "flash_attn" not in facts and (m := _FLASH.search(line)):
            word = (m.group(1) or m.group(2)).lower()
            if word in ("1", "true", "enabled", "on"):
                facts["flash_attn"] = {"value": True, "line": number}
            elif word in ("0", "false", "disabled", "off"):
                facts["flash_attn"] = {"value": False, "line": number}
        if "kv_unified" not in facts and (m := _UNIFIED.search(line)):
            facts["kv_unified"] = {"value": m.group(1).lower() in ("1", "true"), "line": number}
        if "types" not in facts and (m := _TYPES.search(line)):
            facts["types"] = {"value": (m.group(1), m.group(2)), "line": number}
        # vLLM
        for key, rx in _VLLM_FLOAT.items():
            held = vllm.get(key)
            # the first line, except that each GPU prints its own available-KV line, in no fixed order, and the
            # token lines that follow are the ranks' in order, rank 0 first: rank 0's memory line is read against them
            if held and not (key == "available_gib" and not held["rank0"] and _RANK0.search(line)):
                continue
            if m := rx.search(line):
                rank0 = _RANK0.search(line) is not None
                vllm[key] = {"value": float(_first(m)), "line": number, "text": m.group(0), "rank0": rank0}
        for key, rx in _VLLM_INT.items():
            if key not in vllm and (m := rx.search(line)):
                vllm[key] = {"value": _int(_first(m)), "line": number, "text": m.group(0)}
        if "kv_cache_dtype" not in vllm and (m := _VLLM_DTYPE.search(line)):
            vllm["kv_cache_dtype"] = {"value": _first(m), "line": number, "text": m.group(0)}
        if "concurrency" not in vllm and (m := _CONCURRENCY.search(line)):
            vllm["concurrency"] = {
                "value": float(m.group(2)),
                "text_value": m.group(2),
                "max_model_len": _int(m.group(1)),
                "line": number,
                "text": m.group(0),
            }
        if "needed" not in vllm and (m := _NEEDED.search(line)):
            vllm["needed"] = {
                "max_model_len": int(m.group(1)),
                "needed": m.group(2),
                "available": m.group(3),
                "line": number,
                "text": m.group(0),
            }
        if "speculative" not in vllm and (m := _SPECULATIVE.search(line)):
            method, tokens = _SPEC_METHOD.search(m.group(1)), _SPEC_TOKENS.search(m.group(1))
            model = _SPEC_MODEL.search(m.group(1))
            vllm["speculative"] = {
                "method": method.group(1) if method else None,
                "tokens": int(tokens.group(1)) if tokens else None,
                "model": model.group(1) if model else None,
                "line": number,
            }
        if "mxfp4_kernel" not in vllm:
            kernel = next((k for pattern, k in MXFP4_PRINTED if pattern.search(line)), None)
            if kernel:
                vllm["mxfp4_kernel"] = {"value": kernel, "line": number}
        if "prefix_caching" not in vllm and (m := _PREFIX_CACHING.search(line)):
            vllm["prefix_caching"] = {
                "value": m.group(1) == "True" or (m.group(1) is None and not m.group(2)),
                "line": number,
            }
        if "pp_partition" not in vllm and (m := _PP_PARTITION.search(line)):
            sizes = tuple(int(n) for n in m.group(1).split(",") if n)
            vllm["pp_partition"] = {"value": sizes, "line": number, "text": m.group(0)}
        _vllm_v021_lines(line, number, vllm)
        _read_sglang(line, number, sglang)
        _read_trtllm(line, number, trtllm)
        if "too_long" not in vllm and (m := _TOO_LONG.search(line)):
            vllm["too_long"] = {
                "max_model_len": int(m.group(1)),
                "tokens": int(m.group(2)),
                "line": number,
                "text": m.group(0),
            }
    scores = {
        "llama.cpp": len(caches) + len(buffers) + len(facts) + _fit_lines(fit),
        "vllm": len(vllm),
        "sglang": len(sglang),
        "tensorrt-llm": len(trtllm),
    }
    best = max(scores.values())
    engine = next((name for name, score in scores.items() if score == best), None) if best else None
    if vllm and "version" not in vllm and (tagged := vllm_version_from_tags(text)):
        # no version printed: the releases whose logs print the same "[file.py:LINE]" tags (engines.json log_tags)
        first = next(n for n, line in enumerate(text.splitlines(), start=1) if f"[{tagged['tags'][0]}]" in line)
        vllm["version"] = {
            "value": tagged["value"],
            "line": first,
            "text": ", ".join(f"[{t}]" for t in tagged["tags"]),
            "releases": tagged["releases"],
        }
    return {
        "engine": engine,
        "llamacpp": {"facts": facts, "caches": caches, "buffers": buffers, "fit": fit},
        "vllm": vllm,
        "sglang": sglang,
        "trtllm": trtllm,
    }


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _mib(nbytes: float) -> str:
    return f"{nbytes / MIB:.2f}"


def _gib(nbytes: float) -> str:
    return f"{nbytes / GIB:.2f}"


def _setting(settings: list, name: str, value, source: str) -> None:
    settings.append({"name": name, "value": value, "from": source})


def _pick(name: str, logged: dict | None, stated: dict, default, settings: list, label: str | None = None):
    """The log's value, else the reader's, else the engine default; recorded with where it came from."""
    label = label or name
    if logged is not None:
        value, source = logged["value"], f"log line {logged['line']}"
        if name in stated and stated[name] is not None and stated[name] != value:
            source += f" (you said {stated[name]}; the log wins: it is what ran)"
    elif stated.get(name) is not None:
        value, source = stated[name], "you"
    else:
        value, source = default, "default (not in the log)"
    _setting(settings, label, value, source)
    return value


def _width_text(layer) -> str:
    if layer.kind == LINEAR:
        return "recurrent state"
    if layer.v_values == 0:
        return f"{layer.k_values} latent values (MLA)"
    return f"{layer.kv_heads} KV heads x {layer.head_dim_k} head_dim = {layer.k_values} values"


def _kind_name(kind: str, arch: Architecture) -> str:
    if kind == LINEAR:
        return "recurrent (linear attention)"
    if arch.attention == "mla":
        return "MLA latent"
    return {FULL: "full attention", SLIDING: "sliding window"}[kind]


def _summary(checks: list[dict]) -> str:
    compared = [c for c in checks if c["status"] in ("exact", "consistent", "differs")]
    exact = [c for c in compared if c["status"] in ("exact", "consistent")]
    differs = [c for c in compared if c["status"] == "differs"]
    if not compared:
        predicted = [c for c in checks if c["status"] == "predicted"]
        if predicted:
            return (
                f"nothing in this log to compare with; {plural(len(predicted), 'figure')} predicted from the "
                "config and the memory it logs"
            )
        return "nothing in this log could be compared (no KV cache line recognised)"
    text = f"{len(exact)} of {plural(len(compared), 'figure')} rebuilt from the config"
    if differs:
        text += f"; {len(differs)} {'differs' if len(differs) == 1 else 'differ'}: " + "; ".join(
            c["figure"] for c in differs
        )
    return text


# ---------------------------------------------------------------------------------------
# llama.cpp
# ---------------------------------------------------------------------------------------


def _llamacpp_terms(
    arch: Architecture,
    logged: dict,
    expected: dict | None,
    layers,
    type_k: str,
    type_v: str,
    cells_rule: str,
    mla: bool,
) -> tuple[list[dict], str, str | None]:
    """Terms of one cache line: cells, layers, streams, K and V bytes; status and why."""
    terms = []
    why = None
    cells = logged["cells"]
    streams = logged["streams"] or 1
    n_layers = len(layers)
    if expected is not None:
        ok = expected["cells"] == cells
        terms.append(
            {"term": "cells", "logged": f"{cells:,}", "rebuilt": f"{expected['cells']:,}", "how": cells_rule, "ok": ok}
        )
        ok_l = expected["layers"] == logged["layers"]
        terms.append(
            {
                "term": "layers",
                "logged": str(logged["layers"]),
                "rebuilt": str(expected["layers"]),
                "how": f"{plural(n_layers, 'layer')} of this kind in the config",
                "ok": ok_l,
            }
        )
    widths = sorted({_width_text(la) for la in layers})
    k_row = sum(row_bytes(type_k, la.k_values) for la in layers)
    v_row = 0 if mla else sum(row_bytes(type_v, la.v_values) for la in layers)
    k_bytes = k_row * cells * streams
    v_bytes = v_row * cells * streams
    per_value_k = KV_TYPES[type_k][1] / KV_TYPES[type_k][0]
    k_how = (
        f"{cells:,} cells x {streams} stream{'s' if streams > 1 else ''} x {n_layers} layers x "
        f"({'; '.join(widths)}) x {per_value_k:g} B ({type_k})"
    )
    ok_k = _mib(k_bytes) == f"{float(logged['k_mib']):.2f}"
    terms.append(
        {
            "term": f"K ({type_k})",
            "logged": f"{logged['k_mib']} MiB",
            "rebuilt": f"{_mib(k_bytes)} MiB",
            "how": k_how,
            "ok": ok_k,
        }
    )
    if mla:
        ok_v = float(logged["v_mib"]) == 0
        terms.append(
            {
                "term": "V",
                "logged": f"{logged['v_mib']} MiB",
                "rebuilt": "0.00 MiB",
                "how": "MLA: no V tensor (V is rebuilt from the latent)",
                "ok": ok_v,
            }
        )
    else:
        per_value_v = KV_TYPES[type_v][1] / KV_TYPES[type_v][0]
        ok_v = _mib(v_bytes) == f"{float(logged['v_mib']):.2f}"
        terms.append(
            {
                "term": f"V ({type_v})",
                "logged": f"{logged['v_mib']} MiB",
                "rebuilt": f"{_mib(v_bytes)} MiB",
                "how": f"as K with V widths x {per_value_v:g} B ({type_v})",
                "ok": ok_v,
            }
        )
    total = k_bytes + v_bytes
    ok_t = _mib(total) == f"{float(logged['mib']):.2f}"
    terms.append(
        {"term": "total", "logged": f"{logged['mib']} MiB", "rebuilt": f"{_mib(total)} MiB", "how": "K + V", "ok": ok_t}
    )
    bad = [t for t in terms if not t["ok"]]
    if not bad:
        return terms, "exact", None
    first = bad[0]["term"]
    if first == "cells":
        why = (
            f"cells: the log has {cells:,}, the settings give {expected['cells']:,} ({cells_rule}); "
            "a different -c, --parallel, --kv-unified, -ub or --swa-full than the log shows, "
            "or an older llama.cpp that padded differently"
        )
    elif first == "layers":
        why = (
            f"layers: the log puts {logged['layers']} layers in this cache, the config has {n_layers}; "
            "the log is from a model with another layer layout (another size of the family?), or llama.cpp "
            "splits the layers differently from kvlab for this family"
        )
    else:
        implied = float(logged["k_mib"]) * MIB / (cells * streams * max(1, logged["layers"]))
        values = implied / per_value_k
        why = (
            f"bytes: with the same cells and layers the log's K is {implied:,.0f} B per cell per layer, "
            f"{values:,.0f} {type_k} values; the config gives {k_row // max(1, n_layers):,} B "
            f"({'; '.join(widths)}): the model in the log has other KV heads or head_dim than this config"
        )
    return terms, "differs", why


_LLAMACPP_FIGURES = {
    "kv": "KV cache",
    "non-SWA": "non-SWA cache (full-attention layers)",
    "SWA": "SWA cache (sliding-window layers)",
    "recurrent": "recurrent state",
}


@dataclass(kw_only=True)
class _Reading:
    """What reading one start-up builds, in the order the answer shows it: the settings in force, the checks and the
    notes. Each engine's run adds the log's figures, the model and what the caller stated (its positional fields)."""

    settings: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def answer(self, *steps) -> dict:
        """Run the named steps in order, each adding its settings, checks and notes; the reading's answer."""
        for step in steps:
            step(self)
        return {"settings": self.settings, "checks": self.checks, "notes": self.notes}


@dataclass
class _LlamacppRun(_Reading):
    """One llama.cpp start-up as explain-log reads it: the parsed log, the model, what the caller stated, the
    settings in force (the log's, else the caller's, else llama.cpp's defaults), the caches llama.cpp would build
    for them, and the checks and notes that come of comparing the two."""

    parsed: dict
    arch: Architecture
    stated: dict
    # the settings (_llamacpp_settings)
    n_seq: int = 1
    kv_unified: bool = True
    n_ubatch: int = LLAMACPP_DEFAULT_UBATCH
    flash: bool = True
    swa_full: bool = False
    n_ctx: int | None = None
    type_k: str = "f16"
    type_v: str = "f16"
    mla_cache: str = LLAMACPP_MLA_CACHE  # how the build and GGUF cache an MLA model (LLAMACPP_MLA_CACHES)
    # the caches llama.cpp builds for them (_llamacpp_expected)
    expected: dict = field(default_factory=dict)
    kind_layers: dict = field(default_factory=dict)
    rules: dict = field(default_factory=dict)
    pad_text: str = ""
    by_name: dict = field(default_factory=dict)
    used: set = field(default_factory=set)


def _explain_llamacpp(parsed: dict, arch: Architecture, stated: dict) -> dict:
    """llama.cpp's start-up rebuilt in named steps, each adding its checks and notes in the order the answer shows them.

    An MLA model's cache has had three layouts (LLAMACPP_MLA_CACHES). Unless the caller names one, today's is
    rebuilt first; if the log's figures differ from it and match an older one, that one is shown, said so."""
    answer = _explain_llamacpp_as(parsed, arch, stated)
    if arch.attention != "mla" or stated.get("mla_cache") or not _differs(answer):
        return answer
    for layout in LLAMACPP_MLA_CACHES:
        if layout == LLAMACPP_MLA_CACHE:
            continue
        other = _explain_llamacpp_as(parsed, arch, {**stated, "mla_cache": layout})
        if other["checks"] and not _differs(other):
            for setting in other["settings"]:
                if setting["name"] == MLA_LAYOUT_SETTING:
                    setting["from"] = "the log's KV figures, which today's latent-only layout does not give"
            other["notes"].insert(
                0,
                f"the log's KV figures are those of the {layout!r} MLA layout, not today's latent-only cache: "
                f"{LLAMACPP_MLA_CACHES[layout]}",
            )
            return other
    answer["notes"].append(
        "MLA: the figures match none of llama.cpp's MLA layouts ("
        + "; ".join(f"{k}: {v.split(':')[0]}" for k, v in LLAMACPP_MLA_CACHES.items())
        + ")"
    )
    return answer


def _differs(answer: dict) -> bool:
    return any(c["status"] == "differs" for c in answer["checks"])


def _explain_llamacpp_as(parsed: dict, arch: Architecture, stated: dict) -> dict:
    """One rebuild of a llama.cpp start-up for one reading of the settings (see _explain_llamacpp)."""
    run = _LlamacppRun(parsed, arch, stated)
    _llamacpp_settings(run)
    if run.n_ctx is None:
        return {
            "settings": run.settings,
            "checks": [],
            "notes": [
                "no context size in the log (n_ctx, kv_size or a cache line with cells): state it "
                "(n_ctx) and the log can be rebuilt"
            ],
        }
    for step in (_llamacpp_expected, _llamacpp_cache_checks, _llamacpp_context_check, _llamacpp_buffer_checks):
        step(run)
    facts = parsed["facts"]
    if facts.get("n_ctx_train") and run.n_ctx > facts["n_ctx_train"]["value"]:
        run.notes.append(
            f"n_ctx {run.n_ctx:,} is beyond the trained context {facts['n_ctx_train']['value']:,}: llama.cpp warns "
            "and runs"
        )
    return {"settings": run.settings, "checks": run.checks, "notes": run.notes}


def _llamacpp_settings(run: _LlamacppRun) -> None:
    """The settings in force: the log's, else the caller's, else llama.cpp's defaults (each listed in run.settings)."""
    facts, caches, stated, settings = run.parsed["facts"], run.parsed["caches"], run.stated, run.settings
    size_lines = [c for c in caches if c["format"] == "size"]
    first = caches[0] if caches else None

    # n_seq and streams: the size line's "s/S seqs" is the most direct reading
    seq_line = next((c for c in size_lines if not c["recurrent"]), None)
    logged_nseq = facts.get("n_seq_max")
    if logged_nseq is None and seq_line:
        logged_nseq = {"value": seq_line["n_seq"], "line": seq_line["line"]}
    n_seq = run.n_seq = _pick("n_seq", logged_nseq, stated, 1, settings, "sequences (--parallel, n_seq_max)")
    logged_unified = facts.get("kv_unified")
    if logged_unified is None and seq_line and seq_line["streams"] is not None:
        logged_unified = {"value": seq_line["streams"] == 1, "line": seq_line["line"]}
    ctx_fact, seq_fact = facts.get("n_ctx"), facts.get("n_ctx_seq")
    if logged_unified is None and ctx_fact and seq_fact and n_seq > 1:
        # a log that prints no kv_unified (llama.cpp before it had one, Ollama) but n_ctx_per_seq = n_ctx / n_seq:
        # each sequence gets its share of the context, as with --kv-unified off
        if seq_fact["value"] * n_seq == ctx_fact["value"]:
            logged_unified = {"value": False, "line": seq_fact["line"]}
    kv_unified = run.kv_unified = _pick(
        "kv_unified", logged_unified, stated, True, settings, "one KV stream for all sequences (--kv-unified)"
    )
    run.n_ubatch = _pick("n_ubatch", facts.get("n_ubatch"), stated, LLAMACPP_DEFAULT_UBATCH, settings, "n_ubatch (-ub)")
    run.flash = _pick("flash_attn", facts.get("flash_attn"), stated, True, settings, "flash attention (-fa)")
    if run.arch.attention == "mla":
        run.mla_cache = _pick("mla_cache", None, stated, LLAMACPP_MLA_CACHE, settings, MLA_LAYOUT_SETTING)
        run.arch = llamacpp_mla_architecture(run.arch, run.mla_cache)
    run.swa_full = bool(stated.get("swa_full", False))
    if stated.get("swa_full"):
        _setting(settings, "full-size SWA cache (--swa-full)", True, "you")

    # n_ctx: the context line, else kv_size, else the server slot x sequences, else ctx_size
    n_ctx_fact = facts.get("n_ctx") or facts.get("kv_size")
    if n_ctx_fact is None and facts.get("n_ctx_slot"):
        slot = facts["n_ctx_slot"]
        n_ctx_fact = {"value": slot["value"] * (n_seq if not kv_unified else 1), "line": slot["line"]}
    if n_ctx_fact is None and facts.get("ctx_size"):
        n_ctx_fact = facts["ctx_size"]
    run.n_ctx = _pick("n_ctx", n_ctx_fact, stated, None, settings, "context (-c, n_ctx)")

    # types: the size line, else the init line, else stated
    type_k = type_v = None
    types_from = f"log line {first['line']}" if first else None
    if first:
        type_k, type_v = first["type_k"], first["type_v"]
        if first["recurrent"]:
            attn = next((c for c in caches if not c["recurrent"]), None)
            type_k, type_v = (attn["type_k"], attn["type_v"]) if attn else (None, None)
    if type_k is None and facts.get("types"):
        type_k, type_v = facts["types"]["value"]
        types_from = f"log line {facts['types']['line']}"
    run.type_k = kv_type(type_k or stated.get("type_k") or "f16")
    run.type_v = kv_type(type_v or stated.get("type_v") or run.type_k)
    _setting(
        settings,
        "cache types (-ctk / -ctv)",
        f"{run.type_k} / {run.type_v}",
        types_from or ("you" if stated.get("type_k") else "default (not in the log)"),
    )

    if run.n_ctx is None:
        base = next((c for c in size_lines if not c["recurrent"] and c["label"] != "SWA"), None)
        if base:
            run.n_ctx = base["cells"] * (base["streams"] or 1)
            _setting(settings, "context (-c, n_ctx)", run.n_ctx, f"cells x streams on log line {base['line']}")


def _llamacpp_expected(run: _LlamacppRun) -> None:
    """The caches llama.cpp builds for these settings, the layers each holds, and each one's sizing rule in words."""
    arch, n_seq, n_ctx = run.arch, run.n_seq, run.n_ctx
    expected = run.expected = llamacpp_kv_cache(
        arch,
        n_ctx,
        run.type_k,
        run.type_v,
        n_seq=n_seq,
        n_ubatch=run.n_ubatch,
        kv_unified=run.kv_unified,
        swa_full=run.swa_full,
        flash_attn=run.flash,
    )
    run.notes += expected["notes"]
    uses_swa = arch.family in LLAMACPP_SWA_FAMILIES and arch.count(SLIDING) > 0
    run.kind_layers = {
        "kv": [la for la in arch.layers if la.kind in ATTENTION_KINDS],
        "non-SWA": [la for la in arch.layers if la.kind == FULL or (la.kind == SLIDING and not uses_swa)],
        "SWA": [la for la in arch.layers if la.kind == SLIDING and uses_swa],
        "recurrent": [la for la in arch.layers if la.kind == LINEAR],
    }
    rules = run.rules
    n_ctx_seq = expected["n_ctx_seq"]
    pad_text = f"n_ctx {n_ctx:,} padded to a multiple of {LLAMACPP_PAD} = {expected['n_ctx']:,}"
    if not run.kv_unified and n_seq > 1:
        pad_text += f"; per stream pad({expected['n_ctx']:,} / {n_seq}, {LLAMACPP_PAD}) = {n_ctx_seq:,}"
    run.pad_text = rules["kv"] = rules["non-SWA"] = pad_text
    swa = next((c for c in expected["caches"] if c["cache"] == "SWA"), None)
    if swa:
        rules["SWA"] = (
            f"pad(min({n_ctx_seq:,}, n_swa {swa['n_swa']} x {n_seq if run.kv_unified else 1} + n_ubatch "
            f"{run.n_ubatch}), {LLAMACPP_PAD}) = {swa['cells']:,}"
            if not run.swa_full
            else f"--swa-full: the whole context, {n_ctx_seq:,}"
        )
    rules["recurrent"] = f"one state per sequence: max(1, n_seq {n_seq})"
    run.by_name = {c["cache"]: c for c in expected["caches"]}


def _llamacpp_cache_name(logged: dict, by_name: dict, used: set) -> str:
    """Which of kvlab's caches a logged cache line is: by its label, else by its layer count, else the next unused."""
    if logged["recurrent"]:
        return "recurrent"
    if logged["label"] in ("SWA", "non-SWA"):
        return logged["label"]
    if logged["format"] == "self":
        return "kv" if "kv" in by_name else "non-SWA"
    # unlabelled: the cache whose layer count matches, else the first not yet used
    return next(
        (n for n, c in by_name.items() if n not in used and n != "recurrent" and c["layers"] == logged["layers"]),
        None,
    ) or next((n for n in by_name if n not in used and n != "recurrent"), "kv")


def _llamacpp_cache_checks(run: _LlamacppRun) -> None:
    """Each logged cache line against the cache kvlab builds for it, term by term; a cache the log leaves out is
    shown as what llama.cpp would print."""
    arch, by_name, used = run.arch, run.by_name, run.used
    mla = arch.attention == "mla"
    for logged in run.parsed["caches"]:
        name = _llamacpp_cache_name(logged, by_name, used)
        used.add(name)
        exp = by_name.get(name)
        layers = run.kind_layers.get(name, [])
        figure = _LLAMACPP_FIGURES[name]
        if logged["format"] == "self":
            figure = "KV cache (older 'KV self size' line)"
            logged = dict(
                logged,
                cells=exp["cells"] if exp else run.n_ctx,
                layers=len(layers),
                streams=exp["streams"] if exp else 1,
            )
            run.notes.append(
                f"line {logged['line']}: the older log line prints no cells or layers; the context "
                f"({exp['cells'] if exp else run.n_ctx:,} cells) and the config's {len(layers)} layers are used"
            )
        if name == "recurrent":
            terms, status, why = _recurrent_terms(arch, logged, exp, layers, run.rules["recurrent"])
        elif not layers:
            terms, status = [], "differs"
            why = (
                f"the log has a {figure} of {logged['layers']} layers; for this config kvlab expects no such cache "
                f"(family {arch.family!r}): the log is from another model, or llama.cpp runs this family's "
                "layers differently from kvlab"
            )
        else:
            terms, status, why = _llamacpp_terms(
                arch,
                logged,
                exp,
                layers,
                kv_type(logged["type_k"]),
                kv_type(logged["type_v"]),
                run.rules.get(name, ""),
                mla,
            )
        run.checks.append(
            {
                "figure": figure,
                "line": logged["line"],
                "logged": logged["text"],
                "rebuilt": exp["log_line"] if exp else "",
                "status": status,
                "terms": terms,
                "why": why,
            }
        )
    for name, exp in by_name.items():
        if name not in used:
            run.checks.append(
                {
                    "figure": _LLAMACPP_FIGURES[name],
                    "line": None,
                    "logged": "",
                    "rebuilt": exp["log_line"],
                    "status": "not in the log",
                    "terms": [],
                    "why": "this cache's line is not in the pasted text; here is what llama.cpp would print for it",
                }
            )


def _llamacpp_context_check(run: _LlamacppRun) -> None:
    """The logged context per sequence (n_ctx_per_seq) against the padding rule."""
    seq_fact = run.parsed["facts"].get("n_ctx_seq")
    if seq_fact is None:
        return
    want = run.expected["n_ctx_seq"]
    ok = seq_fact["value"] == want
    run.checks.append(
        {
            "figure": "context per sequence (n_ctx_per_seq)",
            "line": seq_fact["line"],
            "logged": f"{seq_fact['value']:,}",
            "rebuilt": f"{want:,}",
            "status": "exact" if ok else "differs",
            "terms": [
                {
                    "term": "n_ctx_seq",
                    "logged": f"{seq_fact['value']:,}",
                    "rebuilt": f"{want:,}",
                    "how": run.pad_text,
                    "ok": ok,
                }
            ],
            "why": None if ok else "another -c, --parallel or --kv-unified than the log shows",
        }
    )


def _llamacpp_whole_layers(run: _LlamacppRun, kv_buffers: list) -> None:
    """With no cache size line (an older log), each device's KV buffer against whole layers of kvlab's cache: under
    llama.cpp's layer split a device holds some layers' K and V, so its buffer is a whole number of layers."""
    caches = [c for c in run.expected["caches"] if c["cache"] != "recurrent"]
    if len(caches) != 1 or not caches[0]["layers"]:
        return  # several caches (SWA, recurrent) or uneven layers: a device's share is not one layer size
    layer_mib = caches[0]["bytes"] / caches[0]["layers"] / MIB
    counts = [float(b["mib"]) / layer_mib for b in kv_buffers]
    whole = all(abs(n - round(n)) * layer_mib < 0.006 and round(n) >= 1 for n in counts)
    total = sum(round(n) for n in counts)
    run.checks.append(
        {
            "figure": "KV buffers per device (whole layers)",
            "line": kv_buffers[0]["line"],
            "logged": " + ".join(f"{b['device']} {b['mib']} MiB" for b in kv_buffers),
            "rebuilt": " + ".join(f"{round(n)} x {layer_mib:.2f} MiB" for n in counts)
            + f" ({total} of {caches[0]['layers']} layers)",
            "status": "exact" if whole and total <= caches[0]["layers"] else "differs",
            "terms": [],
            "why": None
            if whole
            else f"a layer of kvlab's cache is {layer_mib:.2f} MiB and the buffers are not whole layers of it",
        }
    )


def _llamacpp_buffer_checks(run: _LlamacppRun) -> None:
    """The devices' KV buffers against the cache size lines (a cache cut from the excerpt filled in by kvlab's size),
    and the compute buffers named as not rebuilt."""
    buffers, caches = run.parsed["buffers"], run.parsed["caches"]
    kv_buffers = [b for b in buffers if b["what"] in ("KV", "RS")]
    if kv_buffers and not caches:
        _llamacpp_whole_layers(run, kv_buffers)
    if kv_buffers and caches:
        total_buffers = sum(float(b["mib"]) for b in kv_buffers)
        total_lines = sum(float(c["mib"]) for c in caches)
        diff = total_buffers - total_lines
        status = "exact" if abs(diff) < 0.006 else ("consistent" if 0 < diff < 1 else "differs")
        # an excerpt cut after a cache's buffer line but before its size line: kvlab's size of that cache fills in
        missing = [(name, exp) for name, exp in run.by_name.items() if name not in run.used]
        missing_mib = sum(exp["bytes"] for _, exp in missing) / MIB
        fills = status == "differs" and missing and abs(diff - missing_mib) < 0.006 * (len(missing) + 1)
        rebuilt = f"{total_lines:.2f} MiB in the cache size lines"
        if fills:
            status = "consistent"
            rebuilt += " + " + " + ".join(f"{_mib(exp['bytes'])} MiB ({name} cache, rebuilt)" for name, exp in missing)
        run.checks.append(
            {
                "figure": "KV buffers per device",
                "line": kv_buffers[0]["line"],
                "logged": " + ".join(f"{b['device']} {b['mib']} MiB" for b in kv_buffers),
                "rebuilt": rebuilt,
                "status": status,
                "terms": [],
                "why": None
                if status == "exact"
                else (
                    "the pasted text ends before the size line of the "
                    + ", ".join(name for name, _ in missing)
                    + " cache; its buffer is the size kvlab rebuilds for it"
                    if fills
                    else f"the buffers hold {diff:+.2f} MiB more than the tensors: each backend buffer is rounded up "
                    "to its alignment"
                    if status == "consistent"
                    else "the device buffers and the size lines disagree: the pasted text may mix two runs"
                ),
            }
        )
    compute = [b for b in buffers if b["what"] == "compute"]
    if compute:
        run.checks.append(
            {
                "figure": "compute buffers",
                "line": compute[0]["line"],
                "logged": " + ".join(f"{b['device']} {b['mib']} MiB" for b in compute),
                "rebuilt": "",
                "status": "not rebuilt",
                "terms": [],
                "why": "scratch memory for one n_ubatch forward pass; it depends on the backend and the graph, "
                "so kvlab only estimates it (the compute buffer in “Does it fit?” on the memory page)",
            }
        )


def _recurrent_terms(arch, logged, exp, layers, rule) -> tuple[list[dict], str, str | None]:
    cells = logged["cells"]
    r = sum(la.conv_state_values for la in layers) * 4 * cells
    s = sum(la.ssm_state_values for la in layers) * 4 * cells
    conv = layers[0].conv_state_values if layers else 0
    ssm = layers[0].ssm_state_values if layers else 0
    terms = [
        {
            "term": "cells",
            "logged": str(cells),
            "rebuilt": str(exp["cells"]) if exp else "?",
            "how": rule,
            "ok": bool(exp) and exp["cells"] == cells,
        },
        {
            "term": "layers",
            "logged": str(logged["layers"]),
            "rebuilt": str(arch.n_layers),
            "how": f"llama.cpp prints n_layer, every layer of the model; {len(layers)} of them keep a state",
            "ok": arch.n_layers == logged["layers"],
        },
        {
            "term": "R (f32)",
            "logged": f"{logged['k_mib']} MiB",
            "rebuilt": f"{_mib(r)} MiB",
            "how": f"{cells} x {len(layers)} recurrent layers x {conv:,} conv-state values x 4 B",
            "ok": _mib(r) == f"{float(logged['k_mib']):.2f}",
        },
        {
            "term": "S (f32)",
            "logged": f"{logged['v_mib']} MiB",
            "rebuilt": f"{_mib(s)} MiB",
            "how": f"{cells} x {len(layers)} recurrent layers x {ssm:,} recurrent-state values x 4 B",
            "ok": _mib(s) == f"{float(logged['v_mib']):.2f}",
        },
    ]
    bad = [t for t in terms if not t["ok"]]
    if not bad:
        return terms, "exact", None
    why = f"{bad[0]['term']}: the log has {bad[0]['logged']}, the config gives {bad[0]['rebuilt']} ({bad[0]['how']})"
    if logged.get("rs_seq"):
        why += (
            f"; this build also keeps {logged['rs_seq']} rollback snapshot(s) per sequence (rs_seq), "
            "which kvlab does not model"
        )
    return terms, "differs", why


# ---------------------------------------------------------------------------------------
# vLLM
# ---------------------------------------------------------------------------------------


@dataclass
class _VllmRun(_Reading):
    """One vLLM start-up as explain-log reads it: the log's figures (`v`), the model, what the caller stated, the
    settings in force (the log's, else the caller's, else vLLM's defaults) and, step by step, the request's layout,
    the figures the log prints, and the checks and notes that come of them."""

    v: dict
    arch: Architecture
    stated: dict
    # the settings (_vllm_settings)
    logged_len: dict | None = None
    max_len: int | None = None
    dtype: str = "auto"
    dtype_key: str | None = None
    block: int = VLLM_BLOCK_SIZE
    batched: int = VLLM_MAX_NUM_BATCHED_TOKENS
    batched_known: bool = False
    tp: int = 1
    pp: int = 1
    mxfp4_kernel: str | None = None
    # one request's layout (_vllm_request_layout)
    request: dict = field(default_factory=dict)
    kv: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)
    stage_layouts: list = field(default_factory=list)
    per_request: int = 0
    page_all: int = 0
    hybrid: bool = False
    per_request_how: str = ""
    # the sizes the log prints (_vllm_logged_sizes)
    blocks: dict | None = None
    tokens_logged: dict | None = None
    capacity: bool = False
    kv_gib: dict | None = None
    conc: dict | None = None


def _explain_vllm(v: dict, arch: Architecture, stated: dict) -> dict:
    """vLLM's start-up rebuilt in named steps, each adding its checks and notes in the order the answer shows them."""
    run = _VllmRun(v, arch, stated)
    _vllm_settings(run)
    if run.dtype_key is None:
        # nvfp4, fp8_ds_mla, int4_per_token_head...: vLLM's own page layouts, which kvlab's KV types do not have
        out = _explain_vllm_log_only(
            v,
            stated,
            f"not modelled: KV cache dtype {run.dtype!r} (a vLLM page layout kvlab's KV types do not have): the "
            "log's own figures are checked against each other, not rebuilt from the model's layers",
        )
        return {"settings": run.settings, "checks": out["checks"], "notes": out["notes"], "log_only": True}
    if run.max_len is None:
        return {
            "settings": run.settings,
            "checks": [],
            "notes": [
                "no max model length in the log (the concurrency line, the refusal or the engine arguments carry it): "
                "state it (max_model_len) and the log can be rebuilt"
            ],
        }
    return run.answer(
        _vllm_request_layout,
        _vllm_needed_check,
        _vllm_logged_sizes,
        _vllm_concurrency_checks,
        _vllm_profile_check,
        _vllm_available_check,
        _vllm_engine_checks,
        _vllm_memory_split,
        _vllm_weights_check,
        _vllm_unmodelled,
    )


def _vllm_settings(run: _VllmRun) -> None:
    """The settings in force: the log's, else the caller's, else vLLM's defaults (each listed in run.settings)."""
    v, stated, settings = run.v, run.stated, run.settings
    lens = [x["max_model_len"] for x in (v.get("concurrency"), v.get("needed"), v.get("too_long")) if x]
    run.logged_len = v.get("max_model_len") or (
        {
            "value": lens[0],
            "line": next(x["line"] for x in (v.get("concurrency"), v.get("needed"), v.get("too_long")) if x),
        }
        if lens
        else None
    )
    # vLLM's default --max-model-len is the model's own maximum (max_position_embeddings)
    run.max_len = _pick(
        "max_model_len",
        run.logged_len,
        stated,
        run.arch.max_position_embeddings,
        settings,
        "max model length (--max-model-len; vLLM's default is the model's max_position_embeddings)",
    )
    run.dtype = _pick(
        "kv_cache_dtype", v.get("kv_cache_dtype"), stated, "auto", settings, "KV cache dtype (--kv-cache-dtype)"
    )
    run.block = _pick("block_size", v.get("block_size"), stated, VLLM_BLOCK_SIZE, settings, "block size (--block-size)")
    batched_logged = v.get("max_num_batched_tokens")
    run.batched = _pick(
        "max_num_batched_tokens",
        batched_logged,
        stated,
        VLLM_MAX_NUM_BATCHED_TOKENS,
        settings,
        "max_num_batched_tokens",
    )
    run.batched_known = batched_logged is not None or stated.get("max_num_batched_tokens") is not None
    if version := v.get("version"):  # shown where the log prints it or its line tags place it
        major, minor = version["value"]
        where = f"log line {version['line']}"
        if version.get("releases"):
            where = (
                f"not printed; its line tags {version['text']} match vLLM {' or '.join(version['releases'])} "
                "(stored start-up logs that state their version)"
            )
        _setting(settings, "vLLM version", f"{major}.{minor}", where)
    run.tp = _pick("tensor_parallel_size", v.get("tensor_parallel_size"), stated, 1, settings, "tensor parallel (-tp)")
    try:
        dtype = str(run.dtype)
        run.dtype_key = "auto" if dtype.lower() == "auto" else kv_type(dtype.replace("fp8_e4m3", "fp8"))
    except ValueError:
        run.dtype_key = None
        return
    if run.max_len is None:
        return
    # shown only where the log or the caller gives it
    if v.get("mxfp4_kernel"):  # the path decides gpt-oss's load and reserve (kvlab fit --mxfp4-backend)
        run.mxfp4_kernel = _pick(
            "mxfp4_backend", v["mxfp4_kernel"], stated, None, settings, "MXFP4 MoE kernel path (--mxfp4-backend)"
        )
    if v.get("pipeline_parallel_size") or "pipeline_parallel_size" in stated:
        run.pp = _pick(
            "pipeline_parallel_size", v.get("pipeline_parallel_size"), stated, 1, settings, "pipeline parallel (-pp)"
        )


def _vllm_request_layout(run: _VllmRun) -> None:
    """One GPU's layout: under tensor parallel each GPU holds its share of the KV heads (vLLM's figures are per GPU);
    prefix caching and speculative tokens as the log gives them (a recurrent state's blocks per request, an MTP
    drafter's own layers: kv_bytes.vllm_state_blocks, vllm_with_draft_layers)."""
    v, arch, stated, notes = run.v, run.arch, run.stated, run.notes
    if not v.get("speculative") and stated.get("num_speculative_tokens"):
        v["speculative"] = {
            "method": stated.get("speculative_method"),
            "tokens": stated["num_speculative_tokens"],
            "model": stated.get("speculative_model"),
            "line": None,
        }
    if not v.get("prefix_caching") and stated.get("enable_prefix_caching") is not None:
        v["prefix_caching"] = {"value": stated["enable_prefix_caching"], "line": None}
    spec = v.get("speculative") or {}
    drafter = known_drafter(spec.get("model") or stated.get("speculative_model"))
    if drafter and arch.hidden_size != drafter["target_hidden_size"]:
        notes.append(f"the speculative model {drafter['id']} drafts for another model; its layers are left out")
        drafter = None
    if drafter:
        notes.append(
            f"speculative decoding with a separate drafter, {drafter['id']} (read from "
            f"{'log line ' + str(spec['line']) if spec.get('line') and spec.get('model') else 'what you said'}): its "
            f"{drafter['config']['num_hidden_layers']} attention layers are a cache type of their own in the pool "
            "(kvlab.memory.drafters)"
        )
    run.request = {
        "prefix_caching": bool((v.get("prefix_caching") or {}).get("value")),
        "speculative_tokens": spec.get("tokens") or 0,
        "mtp": spec.get("method") == "mtp" and bool(arch.draft_layers),
        "drafter": drafter,
    }
    sizes = {"block_size": run.block, "max_num_batched_tokens": run.batched, "tp": run.tp}
    kv = vllm_kv_cache(arch, run.max_len, run.dtype_key, **sizes, **run.request)
    run.kv, run.layout = kv, gpu_stages(kv)[0]["layout"]
    if run.pp > 1:
        partition = v["pp_partition"]["value"] if v.get("pp_partition") else None
        staged = vllm_kv_cache(
            arch, run.max_len, run.dtype_key, **sizes, pp=run.pp, pp_partition=partition, **run.request
        )
        run.stage_layouts = [st["layout"] for st in gpu_stages(staged)]
        notes.append(
            f"pipeline parallel {run.pp}: the stages hold layers "
            + ", ".join(f"{a}-{b - 1}" for a, b in (st["layers"] for st in gpu_stages(staged)))
            + (
                " (VLLM_PP_LAYER_PARTITION in the log)"
                if partition
                else " (vLLM's get_pp_indices; VLLM_PP_LAYER_PARTITION moves them)"
            )
            + ", each logs its own available memory, "
            "and every stage gets the smallest stage's block count. Up to vLLM 0.15 the start-up check compared the "
            "smallest stage's memory with the whole model's KV for one request (vllm#34076: it refuses what would "
            "fit); later releases check each stage against its own layers"
        )
    if run.tp != 1:
        notes.append(
            f"tensor parallel {run.tp}: vLLM's figures are per GPU, and each GPU holds ceil(KV heads / {run.tp}) of "
            "the KV heads (an MLA latent whole); kvlab rebuilds one GPU's share"
        )
    run.per_request = run.layout["bytes_per_request"]
    run.page_all = run.layout["memory_per_block"]  # one block of every layer in a group (all layers when not hybrid)
    run.hybrid = kv["by_kind"][SLIDING]["layers"] > 0 or kv["by_kind"][LINEAR]["layers"] > 0
    parts = [
        f"{_kind_name(kind, arch)}: {row['layers']} layers, {_gib(row['bytes_per_sequence'])} GiB"
        for kind, row in kv["by_kind"].items()
        if row["layers"]
    ]
    run.per_request_how = (
        f"max_model_len {run.max_len:,} in blocks of {run.block}: "
        + "; ".join(parts)
        + f" ({kv['kib_per_token']:g} KiB per token in the attention layers, {kv['kv_cache_dtype']})"
    )


def _vllm_needed_check(run: _VllmRun) -> None:
    """A refusal to start: the KV memory one max-length request needs, rebuilt (per pipeline stage where the log's
    vLLM checks each stage), and the longest context that would have fitted."""
    nd = run.v.get("needed")
    if not nd:
        return
    kv, block, batched, max_len = run.kv, run.block, run.batched, run.max_len
    per_request_how = run.per_request_how
    ok = _gib(run.per_request) == f"{float(nd['needed']):.2f}"
    rebuilt_request = run.per_request
    if ok and run.stage_layouts:
        per_request_how += "; all the model's layers, as vLLM up to 0.15 checks under pipeline parallel"
    stage = next(
        (
            i
            for i, lay in enumerate(run.stage_layouts)
            if _gib(lay["bytes_per_request"]) == f"{float(nd['needed']):.2f}"
        ),
        None,
    )
    if not ok and stage is not None:
        ok, rebuilt_request = True, run.stage_layouts[stage]["bytes_per_request"]
        per_request_how = f"pipeline stage {stage + 1}'s layers only, as later vLLM checks each stage; " + (
            per_request_how
        )
    why = None
    if not ok and kv["by_kind"][SLIDING]["layers"] and not run.batched_known:
        lo, hi = _batched_range(run.arch, max_len, run.dtype_key, block, float(nd["needed"]))
        full = kv["by_kind"][FULL]["bytes_per_sequence"]
        why = (
            f"the sliding-window term: full-attention layers need {_gib(full)} GiB whatever the settings; the "
            f"sliding layers hold window - 1 + max_num_batched_tokens tokens, and the log does not say "
            f"max_num_batched_tokens (kvlab used {batched:,}). "
            + (
                f"The logged {nd['needed']} GiB is what vLLM needs with max_num_batched_tokens from {lo:,} to {hi:,}."
                if lo is not None
                else "No value of max_num_batched_tokens reproduces it."
            )
        )
    elif not ok:
        why = (
            f"per request kvlab needs {_gib(run.per_request)} GiB ({per_request_how}); a different KV dtype, "
            "block size or model than the log's"
        )
    run.per_request_how = per_request_how  # the refusal's reading is the one the later checks quote
    run.checks.append(
        {
            "figure": "KV memory one max-length request needs",
            "line": nd["line"],
            "logged": f"{nd['needed']} GiB",
            "rebuilt": f"{_gib(rebuilt_request)} GiB",
            "status": "exact" if ok else "differs",
            "terms": [
                {
                    "term": "per request",
                    "logged": f"{nd['needed']} GiB",
                    "rebuilt": f"{_gib(rebuilt_request)} GiB",
                    "how": per_request_how,
                    "ok": ok,
                }
            ],
            "why": why,
        }
    )
    avail = float(nd["available"]) * GIB
    run.notes.append(
        f"the engine refused to start: {nd['needed']} GiB needed > {nd['available']} GiB available "
        f"for the KV cache; the longest context that fits is about "
        f"{_longest_fit(run.arch, run.dtype_key, block, batched, avail):,} tokens (kvlab, same accounting)"
    )


def _vllm_logged_sizes(run: _VllmRun) -> None:
    """The cache's size as the log prints it (blocks, tokens, GiB), each figure rebuilt from the others and the
    layout; a 'too long' refusal said in blocks."""
    v, block, page_all, kv = run.v, run.block, run.page_all, run.kv
    blocks = run.blocks = v.get("gpu_blocks")
    tokens_logged = v.get("gpu_kv_tokens") or (
        {"value": v["too_long"]["tokens"], "line": v["too_long"]["line"]} if v.get("too_long") else None
    )
    # vLLM 0.20.2+: "GPU KV cache size" is int(concurrency x max_model_len), not blocks x block size
    run.capacity = _vllm_capacity_format(v, run.hybrid, block)
    if run.capacity:
        tokens_logged = None
    run.tokens_logged = tokens_logged
    if v.get("too_long"):
        tl = v["too_long"]
        need_blocks = -(-tl["max_model_len"] // block)
        run.notes.append(
            f"the engine refused to start: one {tl['max_model_len']:,}-token request needs {need_blocks:,} "
            f"blocks of {block} ({need_blocks * block:,} tokens, {_gib(need_blocks * page_all)} GiB), the cache "
            f"holds {tl['tokens']:,} tokens"
        )
    if blocks and tokens_logged:
        rebuilt = blocks["value"] * block
        ok = rebuilt == tokens_logged["value"]
        run.checks.append(
            {
                "figure": "KV cache size in tokens",
                "line": tokens_logged["line"],
                "logged": f"{tokens_logged['value']:,} tokens",
                "rebuilt": f"{rebuilt:,} tokens",
                "status": "exact" if ok else "differs",
                "terms": [
                    {
                        "term": "tokens",
                        "logged": f"{tokens_logged['value']:,}",
                        "rebuilt": f"{rebuilt:,}",
                        "how": f"{blocks['value']:,} GPU blocks x {block} tokens per block",
                        "ok": ok,
                    }
                ],
                "why": None if ok else "a block size other than the one assumed",
            }
        )
    # under pipeline parallel each stage logs its own memory and blocks are per stage: no single page to divide by
    kv_gib = run.kv_gib = None if run.stage_layouts else v.get("kv_cache_size_gib") or v.get("available_gib")
    if blocks and kv_gib:
        rebuilt = blocks["value"] * page_all
        ok = _gib(rebuilt) == f"{kv_gib['value']:.2f}"
        if not ok and not run.hybrid:
            lo_b, hi_b = _blocks_range(kv_gib["value"], page_all)
            ok = lo_b <= blocks["value"] <= hi_b
        run.checks.append(
            {
                "figure": "KV cache memory from the block count",
                "line": kv_gib["line"],
                "logged": f"{kv_gib['value']:.2f} GiB",
                "rebuilt": f"{_gib(rebuilt)} GiB",
                "status": "exact" if ok else "differs",
                "terms": [
                    {
                        "term": "block",
                        "logged": "",
                        "rebuilt": f"{_mib(page_all)} MiB",
                        "how": f"{block} tokens x {kv['bytes_per_token']:,} B per token "
                        f"({kv['kib_per_token']:g} KiB: every attention layer's K and V)",
                        "ok": True,
                    },
                    {
                        "term": "memory",
                        "logged": f"{kv_gib['value']:.2f} GiB",
                        "rebuilt": f"{_gib(rebuilt)} GiB",
                        "how": f"{blocks['value']:,} blocks x {_mib(page_all)} MiB",
                        "ok": ok,
                    },
                ],
                "why": None
                if ok
                else "the log's blocks are not this model's size: another model, dtype or "
                "block size (or a hybrid model, whose blocks differ by layer group)",
            }
        )
    elif kv_gib and tokens_logged and not run.hybrid:
        lo_b, hi_b = _blocks_range(kv_gib["value"], page_all)
        lo_t, hi_t = lo_b * block, hi_b * block
        ok = lo_t <= tokens_logged["value"] <= hi_t
        run.checks.append(
            {
                "figure": "KV cache size in tokens",
                "line": tokens_logged["line"],
                "logged": f"{tokens_logged['value']:,} tokens",
                "rebuilt": f"{lo_t:,} to {hi_t:,} tokens",
                "status": "consistent" if ok else "differs",
                "terms": [
                    {
                        "term": "tokens",
                        "logged": f"{tokens_logged['value']:,}",
                        "rebuilt": f"{lo_t:,}-{hi_t:,}",
                        "how": f"{kv_gib['value']:.2f} GiB (printed to 0.01 GiB) / {_mib(page_all)} MiB per "
                        f"block of {block} tokens, whole blocks",
                        "ok": ok,
                    }
                ],
                "why": None
                if ok
                else f"{tokens_logged['value']:,} tokens would take "
                f"{_gib(tokens_logged['value'] * kv['bytes_per_token'])} GiB at "
                f"{kv['kib_per_token']:g} KiB per token: another model or KV dtype",
            }
        )


def _vllm_concurrency_checks(run: _VllmRun) -> None:
    """The "Maximum concurrency" line: by vLLM 0.20.2+'s capacity format, by layer group for a hybrid model, else
    tokens / max_model_len. run.conc keeps the line only where no other reading took it."""
    v, stated = run.v, run.stated
    conc = v.get("concurrency")
    if run.capacity:
        len_known = run.logged_len is not None or stated.get("max_model_len") is not None
        more, more_notes = _vllm_capacity_checks(
            v["gpu_kv_tokens"], conc, run.kv_gib, run.layout, run.max_len, len_known
        )
        run.checks.extend(more)
        run.notes.extend(more_notes)
        conc = None
    if run.layout["hybrid"] and (conc or run.tokens_logged):
        run.checks.extend(_hybrid_checks(run.layout, conc, run.tokens_logged, run.kv_gib, run.max_len))
        conc = None
    run.conc = conc
    if not conc:
        return
    blocks, tokens_logged = run.blocks, run.tokens_logged
    tokens = (blocks["value"] * run.block) if blocks else (tokens_logged["value"] if tokens_logged else None)
    simple = tokens / conc["max_model_len"] if tokens else None
    if simple is not None and f"{simple:.2f}" == conc["text_value"]:
        run.checks.append(
            {
                "figure": "maximum concurrency",
                "line": conc["line"],
                "logged": f"{conc['text_value']}x",
                "rebuilt": f"{simple:.2f}x",
                "status": "exact",
                "terms": [
                    {
                        "term": "concurrency",
                        "logged": conc["text_value"],
                        "rebuilt": f"{simple:.2f}",
                        "how": f"{tokens:,} tokens / {conc['max_model_len']:,} per request",
                        "ok": True,
                    }
                ],
                "why": None,
            }
        )
        return
    implied = conc["value"] * run.per_request
    why = (
        (
            f"for a model with sliding-window or recurrent layers vLLM divides the KV memory by what one "
            f"request needs across its layer groups ({_gib(run.per_request)} GiB here: {run.per_request_how}), not "
            f"the token count by max_model_len; {conc['text_value']}x implies about {_gib(implied)} GiB of KV "
            "memory"
        )
        if run.hybrid
        else None
    )
    if simple is not None and run.hybrid:
        why += (
            f", while {tokens:,} tokens / {conc['max_model_len']:,} = {simple:.2f}: the two log lines are "
            "computed differently and do not multiply back"
        )
    elif simple is not None:
        why = (
            f"{tokens:,} tokens / {conc['max_model_len']:,} = {simple:.2f}, not {conc['text_value']}: "
            "another block size or model"
        )
    run.checks.append(
        {
            "figure": "maximum concurrency",
            "line": conc["line"],
            "logged": f"{conc['text_value']}x",
            "rebuilt": f"{simple:.2f}x" if simple is not None else "",
            "status": "differs" if simple is not None else "not rebuilt",
            "terms": [],
            "why": why or "the log has no token count or KV memory to divide",
        }
    )


def _vllm_profile_check(run: _VllmRun) -> None:
    """The KV budget from the memory profile's own terms (total x utilization - peak torch - non-torch)."""
    v = run.v
    if not all(
        k in v for k in ("total_gib", "peak_torch_gib", "non_torch_gib", "kv_cache_size_gib", "gpu_memory_utilization")
    ):
        return
    t, u = v["total_gib"]["value"], v["gpu_memory_utilization"]["value"]
    p, n, k = v["peak_torch_gib"]["value"], v["non_torch_gib"]["value"], v["kv_cache_size_gib"]["value"]
    budget = t * u - p - n
    ok = abs(budget - k) <= 0.015
    run.checks.append(
        {
            "figure": "KV budget from the memory profile",
            "line": v["kv_cache_size_gib"]["line"],
            "logged": f"{k:.2f} GiB",
            "rebuilt": f"{budget:.2f} GiB",
            "status": "consistent" if ok else "differs",
            "terms": [
                {
                    "term": "budget",
                    "logged": f"{k:.2f} GiB",
                    "rebuilt": f"{budget:.2f} GiB",
                    "how": f"total {t} GiB x gpu_memory_utilization {u} - peak torch memory {p} GiB "
                    f"(weights + activations of the profiling run) - non-torch {n} GiB",
                    "ok": ok,
                }
            ],
            "why": None if ok else "the profile's terms do not add up: vLLM's formula changed between versions",
        }
    )


def _vllm_available_check(run: _VllmRun) -> None:
    """A log that prints only the available KV memory: what vLLM would print for it with the same settings."""
    avail = run.v.get("available_gib")
    if not avail or run.blocks or avail["value"] <= 0:
        return
    gib = avail["value"] * GIB
    fits = gib / run.per_request if run.per_request else 0
    tokens_pred = int(gib // run.page_all) * run.block if not run.hybrid else None
    line = f"{avail['value']:.2f} GiB / {_gib(run.per_request)} GiB per {run.max_len:,}-token request = {fits:.2f} requests"
    if tokens_pred is not None:
        line += f"; {tokens_pred:,} tokens in blocks of {run.block}"
    if run.conc or run.tokens_logged or run.capacity:
        return
    if avail["text"].startswith("Available KV cache memory"):
        run.notes.append(_null_block_note(int(gib // run.page_all), run.layout["blocks_per_request"]))
    run.checks.append(
        {
            "figure": "what the available KV memory holds",
            "line": avail["line"],
            "logged": f"{avail['value']:.2f} GiB",
            "rebuilt": line,
            "status": "predicted",
            "terms": [],
            "why": "the log does not print the token count or the concurrency; this is what vLLM "
            "would print with the same settings",
        }
    )


def _vllm_engine_checks(run: _VllmRun) -> None:
    """The lines of vLLM 0.20+ (the CUDA graph estimate, the free-memory profile) and its refusals' advice."""
    cg_checks, cg_notes = _vllm_cuda_graph_checks(run.v, run.stated)
    run.checks.extend(cg_checks)
    run.notes.extend(cg_notes)
    fm_checks, fm_notes = _vllm_free_memory_checks(run.v)
    run.checks.extend(fm_checks)
    run.notes.extend(fm_notes)
    run.notes.extend(_vllm_refusal_notes(run.v))


def _vllm_memory_split(run: _VllmRun) -> None:
    """Where the GPU's memory went, with the card's size stated: budget, weights, KV and the rest read off."""
    v = run.v
    gpu, util = run.stated.get("gpu_memory_gib"), v.get("gpu_memory_utilization")
    weights, avail = v.get("weights_gib"), v.get("available_gib")
    if not (gpu and util and weights and avail):
        return
    budget = gpu * util["value"]
    rest = budget - weights["value"] - avail["value"]
    cg = v.get("cuda_graph_gib")
    subtracted = cg and (v.get("equivalent_util") or {}).get("subtracted", True)
    rest_text = (
        f"the rest, {rest:.2f} GiB, is the CUDA graph estimate {cg['value']:.2f} GiB (subtracted before the KV "
        f"cache from vLLM 0.20 on) and {rest - cg['value']:.2f} GiB of activations and non-torch memory"
        if subtracted
        else f"the rest, {rest:.2f} GiB, is activations, CUDA graphs and non-torch memory"
    )
    run.checks.append(
        {
            "figure": "where the GPU memory went",
            "line": avail["line"],
            "logged": f"weights {weights['value']:.2f} GiB, KV {avail['value']:.2f} GiB",
            "rebuilt": f"{gpu:g} GiB x {util['value']:g} = {budget:.2f} GiB budget; {rest_text}",
            "status": "predicted",
            "terms": [],
            "why": "vLLM measures the rest in a profiling run; kvlab can only read it off as the difference "
            "(and CUDA reports a little less total memory than the card's nominal size)",
        }
    )


def _vllm_weights_check(run: _VllmRun) -> None:
    """The logged weight memory against kvlab's count of the stated weights format."""
    weights, stated = run.v.get("weights_gib"), run.stated
    if not weights:
        return
    if not stated.get("weights"):
        run.notes.append(
            f"weights: {weights['value']:g} GiB as logged (vLLM's older 'GB' is the same GiB figure); state "
            "the weights format to compare it with the parameter count"
        )
        return
    w = model_weights_bytes(run.arch, stated["weights"])
    if not run.request["mtp"]:
        w = without_mtp(w)  # vLLM loads a checkpoint's MTP head only for an MTP drafter
    diff = weights["value"] * GIB / w["bytes"] - 1 if w["bytes"] else float("inf")
    ok = abs(diff) <= WEIGHTS_TOLERANCE
    # older vLLM prints this figure as "GB" but divides by 2**30: it is GiB, shown as GiB and labelled
    printed_gb = weights["text"].rstrip().endswith("GB")
    logged_weights = f"{weights['value']:g} GiB" + (" (printed “GB”)" if printed_gb else "")
    unit_note = "; this vLLM prints GiB (bytes ÷ 2³⁰) as “GB”" if printed_gb else ""
    run.checks.append(
        {
            "figure": "model weights",
            "line": weights["line"],
            "logged": logged_weights,
            "rebuilt": f"{_gib(w['bytes'])} GiB",
            "status": "consistent" if ok else "differs",
            "terms": [
                {
                    "term": "weights",
                    "logged": logged_weights,
                    "rebuilt": f"{_gib(w['bytes'])} GiB",
                    "how": w["how"],
                    "ok": ok,
                }
            ],
            "why": (
                f"the load took {abs(diff):.1%} {'more' if diff >= 0 else 'less'} than kvlab's count of "
                f"{stated['weights']} weights: within {WEIGHTS_TOLERANCE:.0%} (vLLM also loads a few buffers){unit_note}"
            )
            if ok
            else (
                f"{diff:+.1%} from kvlab's count of {stated['weights']} weights: "
                "checkpoints keep some tensors in another format (embeddings, "
                "norms, routers are often left in BF16), or only part of the "
                f"model is on this GPU{unit_note}"
            ),
        }
    )


def _vllm_unmodelled(run: _VllmRun) -> None:
    """What the log runs that changes the layout: counted ones said in a note, the rest named where a figure differs."""
    v, arch, notes = run.v, run.arch, run.notes
    unmodelled = []
    if spec := v.get("speculative"):
        how = ", ".join(x for x in (spec["method"], spec["tokens"] and plural(spec["tokens"], "token")) if x)
        where = f"log line {spec['line']}" if spec["line"] else "stated"
        if spec.get("method") == "mtp" and arch.draft_layers:
            notes.append(
                f"speculative decoding ({how}; {where}): "
                + (
                    "the model's MTP layer caches"
                    if arch.draft_layers == 1
                    else f"the model's {arch.draft_layers} MTP layers cache"
                )
                + " K and V in the same pool, and each recurrent group keeps a state block per speculative token "
                "(both counted)"
            )
        elif run.request.get("drafter"):
            pass  # a drafter kvlab knows: its layers are in the layout, said in _vllm_request_layout's note
        else:
            unmodelled.append(
                (
                    "a separate draft model",
                    f"{how}; {where}",
                    "its own KV layers join the pool; kvlab counts the state blocks per speculative token only",
                )
            )
    if run.kv["by_kind"][LINEAR]["layers"] and run.request["prefix_caching"]:
        notes.append(
            "prefix caching on a model with recurrent layers ("
            + (f"log line {v['prefix_caching']['line']}" if v["prefix_caching"]["line"] else "stated")
            + "): each "
            "recurrent group keeps 2 state blocks per request (mamba_cache_mode 'align', counted; 'all' is not modelled)"
        )
    notes.extend(f"not modelled: {name} ({where}): {what}" for name, where, what in unmodelled)
    if unmodelled:
        names = "; ".join(name for name, _, _ in unmodelled)
        for check in run.checks:
            if check["status"] == "differs":
                check["why"] = (check["why"] or "") + f"; or what kvlab does not model: {names}"


def _vllm_capacity_format(v: dict, hybrid: bool, block: int) -> bool:
    """Whether the log's "GPU KV cache size" is vLLM 0.20.2+'s int(max_concurrency x max_model_len) (vllm#38364).

    Older releases print num_blocks // groups x block size, a whole number of blocks. The newer figure
    matches the concurrency line times max_model_len; for a model of one layer type whose max_model_len
    is a whole number of blocks the two are the same, and the older reading is kept."""
    tok, conc = v.get("gpu_kv_tokens"), v.get("concurrency")
    if not tok or v.get("gpu_blocks"):
        return False
    n = tok["value"]
    newer = (v.get("version") or {}).get("value", (0, 0)) >= (0, 21)
    if conc:
        length = conc["max_model_len"]
        if not int((conc["value"] - 0.005) * length) <= n <= int((conc["value"] + 0.005) * length):
            return False
        return hybrid or n % block != 0 or newer
    return n % VLLM_BLOCK_SIZE != 0 or newer


def _null_block_note(blocks: int, per_request: int) -> str:
    """vLLM V1's block pool keeps block 0 back (vllm/v1/core/block_pool.py: null_block = free_block_queue.popleft())."""
    text = (
        f"of the {blocks:,} blocks, one is vLLM's null block (block 0, which the block pool holds back as a "
        f"placeholder: vllm/v1/core/block_pool.py), so requests share {max(0, blocks - 1):,}; the token count and "
        f"concurrency vLLM prints count all {blocks:,}"
    )
    if blocks - 1 < per_request <= blocks:
        text += f": here that leaves fewer than the {per_request:,} blocks one max_model_len request takes"
    return text


def _vllm_capacity_checks(
    tok: dict, conc: dict | None, kv_gib: dict | None, layout: dict, max_len: int, len_known: bool
) -> tuple[list[dict], list[str]]:
    """vLLM 0.20.2+: the token line is the concurrency line times max_model_len; the blocks behind both, rebuilt."""
    checks: list = []
    notes: list = []
    n_tok = tok["value"]
    per_req, page = layout["blocks_per_request"], layout["memory_per_block"]
    length = conc["max_model_len"] if conc else (max_len if len_known else None)
    meaning = (
        "vLLM 0.20.2 and later (vllm#38364) print “GPU KV cache size” as int(maximum concurrency x max_model_len): "
        "the tokens of max_model_len-long requests the pool holds, not blocks x block size"
    )
    if conc:
        lo, hi = int((conc["value"] - 0.005) * length), int((conc["value"] + 0.005) * length)
        ok = lo <= n_tok <= hi
        checks.append(
            {
                "figure": "KV cache size in tokens",
                "line": tok["line"],
                "logged": f"{n_tok:,} tokens",
                "rebuilt": f"{conc['text_value']}x x {length:,} = {lo:,} to {hi:,} tokens",
                "status": "consistent" if ok else "differs",
                "terms": [
                    {
                        "term": "tokens",
                        "logged": f"{n_tok:,}",
                        "rebuilt": f"{lo:,}-{hi:,}",
                        "how": f"{meaning}; the concurrency is printed to 0.01 (line {conc['line']})",
                        "ok": ok,
                    }
                ],
                "why": None if ok else "the token line is not the concurrency line times max_model_len",
            }
        )
    if length is None:
        notes.append(
            f"line {tok['line']}: {n_tok:,} tokens is no whole number of blocks: {meaning}; the log shows neither "
            "max_model_len nor the concurrency, so kvlab cannot rebuild it (state max_model_len)"
        )
        return checks, notes
    if kv_gib:
        b_lo, b_hi = _blocks_range(kv_gib["value"], page)
        candidates = range(b_lo, b_hi + 1)
        basis = (
            f"{kv_gib['value']:.2f} GiB / {_mib(page)} MiB per block = {b_lo:,}"
            + (f" to {b_hi:,}" if b_hi != b_lo else "")
            + " blocks"
        )
    else:
        x = n_tok * per_req / length
        candidates = range(max(0, int(x) - 1), int(x) + 2)
        basis = f"no memory line: the blocks whose count gives {n_tok:,} tokens"
    # exactly as vLLM computes it: max_concurrency = num_blocks / blocks per request, then x max_model_len
    fits = [n for n in candidates if int(n / per_req * length) == n_tok]
    ok = bool(fits)
    n = fits[0] if fits else candidates[0]
    layout_text = (
        f"{layout['n_groups']} group{'s' if layout['n_groups'] > 1 else ''} of {layout['group_size']} layers in "
        f"blocks of {layout['block_size']} tokens"
    )
    rebuilt = (
        f"{n:,} blocks / {per_req:,} = {n / per_req:.2f}x, {int(n / per_req * length):,} tokens"
        if ok or kv_gib
        else "no whole block count"
    )
    checks.append(
        {
            "figure": "maximum concurrency" if conc else "KV cache size in tokens",
            "line": conc["line"] if conc else tok["line"],
            "logged": f"{conc['text_value']}x ({n_tok:,} tokens)" if conc else f"{n_tok:,} tokens",
            "rebuilt": rebuilt,
            "status": "consistent" if ok else "differs",
            "terms": [
                {
                    "term": "blocks",
                    "logged": f"{n_tok:,} tokens",
                    "rebuilt": rebuilt,
                    "how": f"{basis}; one {length:,}-token request takes {per_req:,} blocks ({layout_text}); "
                    "concurrency = blocks / blocks per request",
                    "ok": ok,
                }
            ],
            "why": None
            if ok
            else f"with kvlab's {per_req:,} blocks of {_mib(page)} MiB per request no whole number of blocks gives "
            f"{n_tok:,} tokens: vLLM's layout for this log takes another number of blocks per request or another "
            "page (another KV dtype, max_num_batched_tokens, block size or model than the log's)",
        }
    )
    if ok:
        notes.append(_null_block_note(n, per_req))
    return checks, notes


def _vllm_cuda_graph_checks(v: dict, stated: dict) -> tuple[list[dict], list[str]]:
    """vLLM 0.19+'s CUDA graph estimate and the utilization it is equivalent to: util - util' = graphs / total."""
    cg, eq = v.get("cuda_graph_gib"), v.get("equivalent_util")
    checks: list = []
    notes: list = []
    if not cg and not eq:
        return checks, notes
    total = stated.get("gpu_memory_gib") or ((v.get("total_gib") or {}).get("value"))
    subtracted = eq["subtracted"] if eq else True
    if eq:
        util = float(eq["util"])
        other = float(eq["without"] if subtracted else eq["with"])
        diff = abs(util - other)
        label = "without" if subtracted else "with"
        if cg and total:
            lo, hi = (cg["value"] - 0.005) / total, (cg["value"] + 0.005) / total
            ok = lo - 0.00005 <= diff <= hi + 0.00005
            rebuilt = util - cg["value"] / total if subtracted else util + cg["value"] / total
            checks.append(
                {
                    "figure": f"gpu_memory_utilization {label} the CUDA graph estimate",
                    "line": eq["line"],
                    "logged": f"{other:.4f}",
                    "rebuilt": f"{rebuilt:.4f}",
                    "status": "consistent" if ok else "differs",
                    "terms": [
                        {
                            "term": "CUDA graphs",
                            "logged": f"{cg['value']:.2f} GiB",
                            "rebuilt": f"{diff * total:.2f} GiB",
                            "how": f"|{util:.4f} - {other:.4f}| x {total:g} GiB of GPU memory",
                            "ok": ok,
                        }
                    ],
                    "why": None
                    if ok
                    else f"the card does not have {total:g} GiB (CUDA reports the driver's total, a little less "
                    "than the nominal size), or the estimate and the utilization come from different ranks",
                }
            )
        elif cg:
            notes.append(
                f"lines {cg['line']} and {eq['line']}: {cg['value']:.2f} GiB of CUDA graphs is {diff:.4f} of the "
                f"GPU's memory, so the card has about {cg['value'] / diff:.1f} GiB "
                f"({(cg['value'] - 0.005) / (diff + 0.00005):.1f} to {(cg['value'] + 0.005) / max(diff - 0.00005, 1e-9):.1f} "
                "with the printed rounding); state gpu_memory_gib to check it"
            )
        elif total:
            notes.append(
                f"line {eq['line']}: the CUDA graph estimate these utilizations imply is |{util:.4f} - {other:.4f}| x "
                f"{total:g} GiB = {diff * total:.2f} GiB"
            )
        else:
            notes.append(
                f"line {eq['line']}: the CUDA graph estimate is {diff:.4f} of the GPU's memory (the log does not "
                "print it in GiB; state gpu_memory_gib to have it)"
            )
    size = f" ({cg['value']:.2f} GiB)" if cg else ""
    notes.append(
        f"vLLM subtracts its CUDA graph estimate{size} from the budget before it sizes the KV cache (the default "
        "from 0.20.0): KV memory = total x gpu_memory_utilization - weights - "
        "activations - non-torch memory - CUDA graphs"
        if subtracted
        else f"this vLLM runs with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 (line {eq['line']}): it estimates the "
        f"CUDA graphs{size} but does not subtract them, although subtracting is its default (0.20.0 "
        "on): they are captured after the KV cache is sized, in what "
        "gpu_memory_utilization leaves"
        if eq and eq.get("opt_out")
        else f"this vLLM measures the CUDA graphs{size} but does not subtract them (opt-in before 0.19, "
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1): they are captured after the KV cache is sized, in what "
        "gpu_memory_utilization leaves"
    )
    return checks, notes


def _vllm_free_memory_checks(v: dict) -> tuple[list[dict], list[str]]:
    """vLLM's "Free memory on device ..." line (gpu_worker.py) and "CUDA graph pool memory" line, rebuilt from their
    own terms: desired = util x total; the two --kv-cache-memory advices = desired (or free) - every term - 150 MiB;
    the KV memory in use = desired - consumed - peak activation."""
    checks: list = []
    notes: list = []
    fm = v.get("free_memory")
    if fm:
        half = 0.005  # every GiB figure is printed to 0.01
        terms = [("consumed", fm["consumed"]), ("peak activation", fm["activation"])]
        if fm["non_torch"] is not None:
            terms.append(("non-torch", fm["non_torch"]))
        terms.append(("CUDA graphs", fm["cuda_graph"]))
        spent = sum(x for _, x in terms)
        buffer_gib = VLLM_REDUNDANCY_BUFFER / GIB
        desired = fm["util"] * fm["total"]
        ok = abs(desired - fm["desired"]) <= fm["util"] * half + half
        checks.append(
            {
                "figure": "requested memory (gpu_memory_utilization x total)",
                "line": fm["line"],
                "logged": f"{fm['desired']:.2f} GiB",
                "rebuilt": f"{desired:.2f} GiB",
                "status": "consistent" if ok else "differs",
                "terms": [
                    {
                        "term": "requested",
                        "logged": f"{fm['desired']:.2f} GiB",
                        "rebuilt": f"{desired:.2f} GiB",
                        "how": f"{fm['util']:g} x {fm['total']:.2f} GiB (the total the line prints)",
                        "ok": ok,
                    }
                ],
                "why": None if ok else "the utilization and the total the line prints do not multiply to its request",
            }
        )
        spent_text = " - ".join(f"{name} {x:.2f}" for name, x in terms)
        tol = half * (len(terms) + 2)
        for figure, base, base_name, gib, nbytes in (
            (
                "--kv-cache-memory to fit into requested memory",
                fm["desired"],
                "requested",
                fm["fit_gib"],
                fm["fit_bytes"],
            ),
            ("--kv-cache-memory to fully utilize GPU memory", fm["free"], "free", fm["full_gib"], fm["full_bytes"]),
        ):
            rebuilt = base - spent - buffer_gib
            ok_sum = abs(rebuilt - gib) <= tol
            ok_bytes = f"{nbytes / GIB:.2f}".rstrip("0").rstrip(".") == f"{gib:.2f}".rstrip("0").rstrip(".")
            checks.append(
                {
                    "figure": figure,
                    "line": fm["line"],
                    "logged": f"{nbytes:,} B ({gib:g} GiB)",
                    "rebuilt": f"{rebuilt:.2f} GiB",
                    "status": "consistent" if ok_sum and ok_bytes else "differs",
                    "terms": [
                        {
                            "term": "advice",
                            "logged": f"{gib:g} GiB",
                            "rebuilt": f"{rebuilt:.2f} GiB",
                            "how": f"{base_name} {base:.2f} - {spent_text} - 150 MiB (vLLM's redundancy buffer) GiB, "
                            f"each term printed to 0.01 (within {tol:.3f})",
                            "ok": ok_sum,
                        },
                        {
                            "term": "bytes",
                            "logged": f"{nbytes:,} B",
                            "rebuilt": f"{nbytes / GIB:.3f} GiB",
                            "how": "the byte figure / 2³⁰ is the GiB figure printed beside it",
                            "ok": ok_bytes,
                        },
                    ],
                    "why": None
                    if ok_sum and ok_bytes
                    else "the advice is not the line's own terms less vLLM's 150 MiB buffer: another release's rule",
                }
            )
        if fm["non_torch"] is None:
            in_use = fm["desired"] - fm["consumed"] - fm["activation"]
            in_use_how = (
                f"requested {fm['desired']:.2f} - consumed {fm['consumed']:.2f} - peak activation "
                f"{fm['activation']:.2f} GiB: the CUDA graph term is not taken again (this release's peak activation "
                "already holds the estimate subtracted before the KV cache was sized, vllm#57936; the advices above "
                "take the graphs a second time)"
            )
        else:
            in_use = fm["desired"] - fm["consumed"] - fm["activation"] - fm["non_torch"]
            in_use_how = (
                f"requested {fm['desired']:.2f} - weights {fm['consumed']:.2f} - peak activation "
                f"{fm['activation']:.2f} - non-torch {fm['non_torch']:.2f} GiB"
            )
        ok = abs(in_use - fm["in_use"]) <= half * 4
        checks.append(
            {
                "figure": "KV cache memory in use",
                "line": fm["line"],
                "logged": f"{fm['in_use']:.2f} GiB",
                "rebuilt": f"{in_use:.2f} GiB",
                "status": "consistent" if ok else "differs",
                "terms": [
                    {
                        "term": "KV",
                        "logged": f"{fm['in_use']:.2f} GiB",
                        "rebuilt": f"{in_use:.2f} GiB",
                        "how": in_use_how,
                        "ok": ok,
                    }
                ],
                "why": None if ok else "the KV memory in use is not the request less the line's terms",
            }
        )
        avail = v.get("available_gib")
        if avail and f"{avail['value']:.2f}" != f"{fm['in_use']:.2f}":
            notes.append(
                f"lines {avail['line']} and {fm['line']}: the available KV memory ({avail['value']:.2f} GiB) and the "
                f"KV memory in use ({fm['in_use']:.2f} GiB) differ: they come from different ranks or runs"
            )
    pool = v.get("cuda_graph_pool")
    if pool:
        ok = abs(abs(pool["estimated"] - pool["actual"]) - abs(pool["difference"])) <= 0.011
        checks.append(
            {
                "figure": "CUDA graph pool: estimated - actual",
                "line": pool["line"],
                "logged": f"{pool['difference']:g} GiB",
                "rebuilt": f"{pool['estimated'] - pool['actual']:.2f} GiB",
                "status": "consistent" if ok else "differs",
                "terms": [
                    {
                        "term": "difference",
                        "logged": f"{pool['difference']:g} GiB",
                        "rebuilt": f"{pool['estimated'] - pool['actual']:.2f} GiB",
                        "how": f"{pool['estimated']:g} GiB estimated - {pool['actual']:g} GiB captured, each printed to "
                        "0.01",
                        "ok": ok,
                    }
                ],
                "why": None if ok else "the line's difference is not its estimate less its actual pool",
            }
        )
        notes.append(
            f"line {pool['line']}: the CUDA graphs took {pool['actual']:g} GiB once captured; vLLM had set "
            f"{pool['estimated']:g} GiB aside for them (the estimate it subtracts before it sizes the KV cache), so "
            f"{pool['estimated'] - pool['actual']:.2f} GiB of the budget stays unused"
        )
    return checks, notes


def _explain_vllm_log_only(v: dict, stated: dict, reason: str) -> dict:
    """A vLLM log read without rebuilding from a model (no model given, or a KV dtype kvlab does not model): the
    figures that check against each other (token line and concurrency, CUDA graph lines, the free-memory line)."""
    settings: list = []
    checks: list = []
    notes: list = [reason]
    conc = v.get("concurrency")
    logged_len = v.get("max_model_len") or ({"value": conc["max_model_len"], "line": conc["line"]} if conc else None)
    if logged_len or stated.get("max_model_len"):
        _pick("max_model_len", logged_len, stated, None, settings, "max model length (--max-model-len)")
    if v.get("kv_cache_dtype") or stated.get("kv_cache_dtype"):
        _pick("kv_cache_dtype", v.get("kv_cache_dtype"), stated, "auto", settings, "KV cache dtype (--kv-cache-dtype)")
    if v.get("tensor_parallel_size") or stated.get("tensor_parallel_size"):
        _pick("tensor_parallel_size", v.get("tensor_parallel_size"), stated, 1, settings, "tensor parallel (-tp)")
    if v.get("pipeline_parallel_size") or stated.get("pipeline_parallel_size"):
        _pick("pipeline_parallel_size", v.get("pipeline_parallel_size"), stated, 1, settings, "pipeline parallel (-pp)")
    tok = v.get("gpu_kv_tokens")
    if tok and conc:
        length = conc["max_model_len"]
        lo, hi = int((conc["value"] - 0.005) * length), int((conc["value"] + 0.005) * length)
        ok = lo <= tok["value"] <= hi
        blocks = tok["value"] % VLLM_BLOCK_SIZE == 0 and not ok
        checks.append(
            {
                "figure": "KV cache size in tokens",
                "line": tok["line"],
                "logged": f"{tok['value']:,} tokens",
                "rebuilt": f"{conc['text_value']}x x {length:,} = {lo:,} to {hi:,} tokens",
                "status": "consistent" if ok else "not rebuilt",
                "terms": [
                    {
                        "term": "tokens",
                        "logged": f"{tok['value']:,}",
                        "rebuilt": f"{lo:,}-{hi:,}",
                        "how": "vLLM 0.20.2 and later (vllm#38364) print “GPU KV cache size” as int(maximum "
                        f"concurrency x max_model_len); the concurrency is printed to 0.01 (line {conc['line']})",
                        "ok": ok,
                    }
                ],
                "why": None
                if ok
                else (
                    "an older vLLM: the token line is blocks x block size, which needs the model to check"
                    if blocks
                    else "the token line is not the concurrency line times max_model_len"
                ),
            }
        )
    cg_checks, cg_notes = _vllm_cuda_graph_checks(v, stated)
    fm_checks, fm_notes = _vllm_free_memory_checks(v)
    checks += cg_checks + fm_checks
    notes += cg_notes + fm_notes
    notes += _vllm_refusal_notes(v)
    if nd := v.get("needed"):
        notes.append(
            f"the engine refused to start (line {nd['line']}): one {nd['max_model_len']:,}-token request needs "
            f"{nd['needed']} GiB of KV cache, {nd['available']} GiB is available; the model's layers would rebuild "
            "the need"
        )
    if avail := v.get("available_gib"):
        if avail["value"] > 0:
            notes.append(f"line {avail['line']}: {avail['value']:.2f} GiB for the KV cache on this GPU")
    if w := v.get("weights_gib"):
        notes.append(f"line {w['line']}: the weights took {w['value']:g} GiB")
    if spec := v.get("speculative"):
        how = ", ".join(x for x in (spec["method"], spec["tokens"] and plural(spec["tokens"], "token")) if x)
        notes.append(f"speculative decoding ({how}; log line {spec['line']}): a drafter's KV layers share the pool")
    return {"settings": settings, "checks": checks, "notes": notes}


def _vllm_refusal_notes(v: dict) -> list[str]:
    """vLLM's refusal when the profiling run leaves nothing for the KV cache (gpu_worker.py / kv_cache_utils.py), and
    a KV budget set by --kv-cache-memory-bytes (no profiling run)."""
    avail, refused = v.get("available_gib"), v.get("no_memory")
    notes = []
    if ks := v.get("kv_memory_set"):
        notes.append(
            f"line {ks['line']}: the KV cache budget is {ks['value']:g} GiB as set by --kv-cache-memory-bytes "
            f"({ks['free']:g} GiB free at start): vLLM skipped its profiling run, so gpu_memory_utilization, "
            "activations and CUDA graphs play no part in it"
        )
    if not refused and not (avail and avail["value"] <= 0):
        return notes
    where = f"line {refused['line']}" if refused else f"line {avail['line']}"
    text = f"the engine refused to start ({where}: No available memory for the cache blocks)"
    if avail and avail["value"] <= 0:
        text += (
            f": the weights, the profiling run's activations and non-torch memory took {abs(avail['value']):.2f} GiB "
            "more than total x gpu_memory_utilization (the available KV memory is negative)"
        )
    return notes + [text]


def _hybrid_checks(layout: dict, conc: dict | None, tokens_logged: dict | None, kv_gib: dict | None, max_len: int):
    """A hybrid model's token count and concurrency, rebuilt from vLLM's layer groups (kvlab.memory.engines).

    vLLM prints tokens = blocks // groups x block size and concurrency = blocks / blocks one request
    takes; the blocks are the unknown, bounded by every figure the log prints."""
    g, bs, per_req, mem = (
        layout["n_groups"],
        layout["block_size"],
        layout["blocks_per_request"],
        layout["memory_per_block"],
    )
    lo, hi = 0, 1 << 40
    if tokens_logged:
        lo, hi = max(lo, tokens_logged["value"] // bs * g), min(hi, tokens_logged["value"] // bs * g + g - 1)
    if kv_gib:
        b_lo, b_hi = _blocks_range(kv_gib["value"], mem)
        lo, hi = max(lo, b_lo), min(hi, b_hi)
    how_layout = (
        f"{g} groups of {layout['group_size']} layers ("
        + ", ".join(f"{t['groups']} {t['kind']}" for t in layout["types"])
        + (f", {layout['padding_layers']} padding layers" if layout["padding_layers"] else "")
        + f"), blocks of {bs} tokens"
        + (
            f" (enlarged so a page holds one recurrent state of {layout['state_page_bytes']:,} B)"
            if layout["state_page_bytes"]
            else ""
        )
    )
    checks = []
    if tokens_logged:
        ok = lo <= hi
        checks.append(
            {
                "figure": "KV cache size in tokens",
                "line": tokens_logged["line"],
                "logged": f"{tokens_logged['value']:,} tokens",
                "rebuilt": f"{lo:,} to {hi:,} blocks" if ok else "no block count gives it",
                "status": "consistent" if ok else "differs",
                "terms": [
                    {
                        "term": "tokens",
                        "logged": f"{tokens_logged['value']:,}",
                        "rebuilt": f"blocks // {g} x {bs}",
                        "how": how_layout,
                        "ok": ok,
                    }
                ],
                "why": None if ok else "the log's figures do not fit this model's layer groups",
            }
        )
    if conc:
        values = {f"{b / per_req:.2f}" for b in range(lo, min(hi, lo + 10_000) + 1)} if lo <= hi else set()
        ok = conc["text_value"] in values if values else False
        rebuilt = f"{lo / per_req:.2f}x to {hi / per_req:.2f}x" if lo <= hi and hi < 1 << 40 else f"blocks / {per_req}"
        checks.append(
            {
                "figure": "maximum concurrency",
                "line": conc["line"],
                "logged": f"{conc['text_value']}x",
                "rebuilt": rebuilt,
                "status": "consistent" if ok else ("differs" if values else "predicted"),
                "terms": [
                    {
                        "term": "concurrency",
                        "logged": conc["text_value"],
                        "rebuilt": rebuilt,
                        "how": f"blocks / {per_req} blocks per {max_len:,}-token request ({how_layout}): vLLM "
                        "divides by what one request takes in every group, not tokens by max_model_len",
                        "ok": ok,
                    }
                ],
                "why": None if ok else "another max_num_batched_tokens, block size or state dtype than the log's",
            }
        )
    return checks


def _blocks_range(gib_printed: float, page: int) -> tuple[int, int]:
    """Whole blocks that fit in a memory printed as gib_printed (rounded to 0.01 GiB)."""
    lo = max(0.0, (gib_printed - 0.005) * GIB)
    hi = (gib_printed + 0.005) * GIB
    return int(lo // page), int(hi // page)


def _batched_range(arch, max_len, dtype, block, needed_gib: float) -> tuple[int | None, int | None]:
    """The max_num_batched_tokens values for which vLLM's per-request need prints as needed_gib."""
    hits = [
        b
        for b in range(64, 65537, 64)
        if _gib(vllm_kv_cache(arch, max_len, dtype, block_size=block, max_num_batched_tokens=b)["bytes_per_sequence"])
        == f"{needed_gib:.2f}"
    ]
    return (hits[0], hits[-1]) if hits else (None, None)


def _longest_fit(arch, dtype, block, batched, available_bytes: float) -> int:
    lo, hi = 1, 1 << 24
    if (
        vllm_kv_cache(arch, 1, dtype, block_size=block, max_num_batched_tokens=batched)["bytes_per_sequence"]
        > available_bytes
    ):
        return 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if (
            vllm_kv_cache(arch, mid, dtype, block_size=block, max_num_batched_tokens=batched)["bytes_per_sequence"]
            <= available_bytes
        ):
            lo = mid
        else:
            hi = mid - 1
    return lo // block * block if lo >= block else lo


# ---------------------------------------------------------------------------------------
# SGLang and TensorRT-LLM: the per-token KV bytes, rebuilt; their budget rules, named
# ---------------------------------------------------------------------------------------

# torch dtype names SGLang prints for its pool
_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "f16", "half": "f16", "float32": "f32"}


def _per_rank_kv_bytes(arch: Architecture, dtype: str, tp: int, replicate_floor: bool) -> tuple[int, int, int]:
    """K and V bytes one token takes on one GPU in every attention layer (heads split over tp), and the layers."""
    per_value = KV_TYPES[dtype][1] / KV_TYPES[dtype][0]
    k = v = 0
    layers = [la for la in arch.layers if la.kind in ATTENTION_KINDS]
    for la in layers:
        if la.v_values == 0:  # an MLA latent is not split
            k += la.k_values * per_value
            continue
        heads = la.kv_heads or 1
        share = max(1, heads // tp) if replicate_floor else -(-heads // tp)
        k += la.k_values * share // heads * per_value
        v += la.v_values * share // heads * per_value
    return int(k), int(v), len(layers)


def _engine_dtype(text: str | None, stated: dict, default: str) -> tuple[str, str]:
    """A KV dtype from the log's torch dtype, else the reader's kv_cache_dtype, else the engine's default."""
    if text:
        name = text.split(".")[-1].lower()
        if name.startswith("float8"):
            return "fp8", "the log"
        if name in _TORCH_DTYPES:
            return _TORCH_DTYPES[name], "the log"
    if stated.get("kv_cache_dtype") and str(stated["kv_cache_dtype"]).lower() != "auto":
        dtype = kv_type(str(stated["kv_cache_dtype"]))
        if dtype in HEAD_SCALE_BYTES:
            raise ValueError(
                f"kv_cache_dtype={dtype} is a vLLM cache type; SGLang and TensorRT-LLM take auto, bf16, fp8"
            )
        return dtype, "you"
    return default, "default (not in the log)"


@dataclass
class _PoolRun(_Reading):
    """One SGLang or TensorRT-LLM start-up as explain-log reads it: the log's figures, the model (None: the log is
    read alone), what the caller stated, the settings in force and what a token takes on one GPU. kvlab rebuilds
    these engines' bytes per token, not the budget that sizes their pools."""

    log: dict
    arch: Architecture | None
    stated: dict
    # the settings (_sglang_settings, _trtllm_settings)
    tp: int = 1
    dtype: str = "bf16"
    # TensorRT-LLM (_trtllm_settings): the pool's token count (value, line), and K and V bytes of a token on one
    # GPU from the model (None without one)
    tokens: dict | None = None
    per_token: int | None = None
    per_token_how: str = ""

    @property
    def sglang_pool_sized(self) -> bool:
        """SGLang: the log prints the pool's K and V (or MLA's KV) size, not only its token count."""
        pool = self.log.get("pool")
        return bool(pool and (pool["k"] or pool["kv"]))


def _explain_sglang(sg: dict, arch: Architecture | None, stated: dict) -> dict:
    """SGLang: the pool's K and V sizes rebuilt per token from the model; the pool's size is SGLang's own rule.
    In named steps, each adding its checks and notes in the order the answer shows them."""
    return _PoolRun(sg, arch, stated).answer(
        _sglang_settings, _sglang_pool_check, _sglang_token_count_check, _sglang_lines_read, _sglang_unmodelled
    )


def _sglang_settings(run: _PoolRun) -> None:
    """The settings in force: tp (the caller's, else 1), the KV dtype (the pool line's, else the caller's, else bf16)
    and mem_fraction_static where the log prints it."""
    sg, stated, settings = run.log, run.stated, run.settings
    pool = sg.get("pool")
    run.tp = stated.get("tensor_parallel_size", 1)
    _setting(
        settings,
        "tensor parallel (--tp)",
        run.tp,
        "you" if "tensor_parallel_size" in stated else "default (not in the log)",
    )
    run.dtype, source = _engine_dtype(pool["dtype"] if pool else None, stated, "bf16")
    _setting(settings, "KV cache dtype (--kv-cache-dtype; auto = the model's dtype)", run.dtype, source)
    if sg.get("mem_fraction_static"):
        _setting(
            settings,
            "mem_fraction_static",
            sg["mem_fraction_static"]["value"],
            f"log line {sg['mem_fraction_static']['line']}",
        )


def _sglang_pool_terms(pool: dict, dtype: str, k_tok: int, v_tok: int, n_layers: int, tp: int) -> list[dict]:
    """The pool's K and V (or an MLA latent's one KV) as logged and as (#tokens + 1 padding row) x bytes per token."""
    rows = pool["tokens"] + 1
    if not pool["k"]:
        return [
            {
                "term": f"KV ({dtype})",
                "logged": f"{pool['kv']} GiB (printed “GB”)",
                "rebuilt": f"{_gib(rows * k_tok)} GiB",
                "how": f"({pool['tokens']:,} tokens + 1 padding row) x {k_tok:,} B (MLA latent, {n_layers} layers)",
                "ok": _gib(rows * k_tok) == f"{float(pool['kv']):.2f}",
            }
        ]
    return [
        {
            "term": f"{name} ({dtype})",
            "logged": f"{logged} GiB (printed “GB”)",
            "rebuilt": f"{_gib(rows * per_token)} GiB",
            "how": f"({pool['tokens']:,} tokens + 1 padding row) x {per_token:,} B "
            f"({n_layers} attention layers, heads split over tp {tp})",
            "ok": _gib(rows * per_token) == f"{float(logged):.2f}",
        }
        for name, logged, per_token in (("K", pool["k"], k_tok), ("V", pool["v"], v_tok))
    ]


def _sglang_pool_check(run: _PoolRun) -> None:
    """'KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB': the bytes per token rebuilt from the model
    (memory_pool.py: each layer's buffer has size + page_size rows, page_size 1 by default, row 0 padding); without
    a model, what the log's pool takes per token."""
    if not run.sglang_pool_sized:
        return
    pool, arch = run.log["pool"], run.arch
    logged_gib = float(pool["k"]) + float(pool["v"]) if pool["k"] else float(pool["kv"])
    implied = logged_gib * GIB / (pool["tokens"] + 1)
    logged_text = (
        f"K {pool['k']} GB + V {pool['v']} GB" if pool["k"] else f"KV {pool['kv']} GB"
    ) + f" for {pool['tokens']:,} tokens"
    if arch is None:
        run.notes.append(
            f"line {pool['line']}: the pool takes {implied:,.0f} B per token on this GPU ({logged_text}, "
            "+1 padding row); state the model to rebuild it"
        )
        return
    k_tok, v_tok, n_layers = _per_rank_kv_bytes(arch, run.dtype, run.tp, replicate_floor=True)
    terms = _sglang_pool_terms(pool, run.dtype, k_tok, v_tok, n_layers, run.tp)
    ok = all(t["ok"] for t in terms)
    per_token = k_tok + v_tok
    why = None
    if not ok:
        why = (
            f"the log's pool takes {implied:,.0f} B per token, kvlab's model {per_token:,} B: another model, "
            "KV dtype or tensor-parallel size than the log's"
        )
        if arch.count(SLIDING) or arch.count(LINEAR):
            why += (
                "; or SGLang's separate pools for sliding-window or linear-attention layers (SWAKVPool, "
                "the hybrid pools), which kvlab does not model"
            )
    run.checks.append(
        {
            "figure": "KV pool per token (K size + V size / #tokens)",
            "line": pool["line"],
            "logged": logged_text,
            "rebuilt": f"{per_token:,} B per token",
            "status": "exact" if ok else "differs",
            "terms": terms,
            "why": why,
        }
    )
    if ok and arch.count(SLIDING):
        run.notes.append(
            "this pool gives every attention layer every token: the SGLang of this log does not size the "
            "sliding-window layers apart (later releases keep them in a pool of their own, SWAKVPool)"
        )
    if ok and arch.count(LINEAR):
        run.notes.append(
            f"this pool holds the {n_layers} full-attention layers only: the {arch.count(LINEAR)} "
            "linear-attention layers keep their recurrent states in SGLang's Mamba pool (MambaPool), apart"
        )


def _sglang_token_count_check(run: _PoolRun) -> None:
    """No K or V size printed, only the pool's token count: what that many tokens take, predicted from the model."""
    sg, pool = run.log, run.log.get("pool")
    tokens = (
        pool["tokens"] if pool else (sg["max_total_num_tokens"]["value"] if sg.get("max_total_num_tokens") else None)
    )
    if run.sglang_pool_sized or tokens is None or run.arch is None:
        return
    k_tok, v_tok, _ = _per_rank_kv_bytes(run.arch, run.dtype, run.tp, replicate_floor=True)
    line = sg["max_total_num_tokens"]["line"]
    run.checks.append(
        {
            "figure": "KV pool from the token count",
            "line": line,
            "logged": f"max_total_num_tokens={tokens:,}",
            "rebuilt": f"{_gib((tokens + 1) * (k_tok + v_tok))} GiB",
            "status": "predicted",
            "terms": [],
            "why": f"the log prints no K or V size; {tokens:,} tokens x {k_tok + v_tok:,} B is what the pool takes",
        }
    )


def _sglang_lines_read(run: _PoolRun) -> None:
    """The lines read, not rebuilt: the pool's token count and limits, the weights, a draft model's second pool,
    the recurrent-state (Mamba) pool, a refusal."""
    sg, notes = run.log, run.notes
    if sg.get("max_total_num_tokens"):
        m = sg["max_total_num_tokens"]
        limits = ", ".join(
            f"{label} {sg[key]['value']:,}"
            for key, label in (("context_len", "context_len"), ("max_running_requests", "max_running_requests"))
            if sg.get(key)
        )
        notes.append(
            f"line {m['line']}: the pool holds max_total_num_tokens={m['value']:,} tokens"
            + (f" ({limits})" if limits else "")
            + (f", {sg['available_gpu_mem']['value']:.2f} GiB left on the GPU" if sg.get("available_gpu_mem") else "")
        )
    if sg.get("weights"):
        w = sg["weights"]
        notes.append(
            f"line {w['line']}: the weights took {w['usage']:.2f} GiB (SGLang prints GiB as “GB”), "
            f"{w['avail']:.2f} GiB left on the GPU"
        )
    if sg.get("other_pool"):
        o = sg["other_pool"]
        size = f"K {o['k']} GB + V {o['v']} GB" if o["k"] else f"KV {o['kv']} GB"
        per = (float(o["k"]) + float(o["v"]) if o["k"] else float(o["kv"])) * GIB / (o["tokens"] + 1)
        notes.append(
            f"line {o['line']}: a second KV pool on the same rank, {size} for {o['tokens']:,} tokens "
            f"({per:,.0f} B per token): a draft model's own pool under speculative decoding; the figures above are "
            "the first pool's"
        )
    if sg.get("mamba"):
        mb = sg["mamba"]
        notes.append(
            f"line {mb['line']}: the recurrent-state (Mamba) pool: {mb['slots']:,} request slots, conv states "
            f"{mb['conv']:.2f} GiB + SSM states {mb['ssm']:.2f} GiB = {mb['conv'] + mb['ssm']:.2f} GiB (about "
            f"{(mb['conv'] + mb['ssm']) * 1024 / mb['slots']:,.1f} MiB a slot), taken from the budget beside the KV "
            "pool; not modelled yet"
        )
    if sg.get("refusal"):
        r = sg["refusal"]
        notes.append(f"the engine refused to start (line {r['line']}): {r['value']}")


def _sglang_unmodelled(run: _PoolRun) -> None:
    """What kvlab does not model of SGLang: the budget rule that sizes the pool."""
    run.notes.append(
        "not modelled yet: SGLang's budget rule: the pool gets what is left of total memory x mem_fraction_static "
        "after the weights (SGLang picks mem_fraction_static from the card and settings when it is not given); "
        "kvlab rebuilds the bytes per token, not the token count"
    )


def _explain_trtllm(t: dict, arch: Architecture | None, stated: dict) -> dict:
    """TensorRT-LLM: bytes per token from the model, the block arithmetic the log prints; its budget is named.
    In named steps, each adding its checks and notes in the order the answer shows them."""
    return _PoolRun(t, arch, stated).answer(
        _trtllm_settings,
        _trtllm_memory_check,
        _trtllm_per_token_check,
        _trtllm_pool_tokens_check,
        _trtllm_blocks_per_sequence_check,
        _trtllm_budget_check,
        _trtllm_lines_read,
        _trtllm_unmodelled,
    )


def _trtllm_settings(run: _PoolRun) -> None:
    """The settings in force (tp and the KV dtype: the caller's, else 1 and f16), the pool's token count, and the
    bytes a token takes on one GPU (heads split over tp)."""
    t, stated, settings = run.log, run.stated, run.settings
    run.tp = stated.get("tensor_parallel_size", 1)
    _setting(
        settings,
        "tensor parallel (tp_size)",
        run.tp,
        "you" if "tensor_parallel_size" in stated else "default (not in the log)",
    )
    run.dtype, source = _engine_dtype(None, stated, "f16")
    _setting(settings, "KV cache dtype (the engine's kv_cache_dtype)", run.dtype, source)
    run.tokens = t.get("tokens") or (
        {"value": t["allocated"]["tokens"], "line": t["allocated"]["line"]} if t.get("allocated") else None
    )
    if run.arch is not None:
        k_tok, v_tok, n_layers = _per_rank_kv_bytes(run.arch, run.dtype, run.tp, replicate_floor=False)
        run.per_token = k_tok + v_tok
        run.per_token_how = (
            f"{n_layers} attention layers' K and V per token on one GPU ({run.dtype}, heads split over tp {run.tp})"
        )


def _trtllm_memory_check(run: _PoolRun) -> None:
    """The cache's memory (bytes, or the GiB allocated) against tokens x bytes per token; without a model, what the
    log's cache takes per token; with tokens but no memory printed, what they take, predicted."""
    t, tokens, per_token = run.log, run.tokens, run.per_token
    memory = t.get("kv_bytes") or t.get("allocated")
    if tokens and memory:
        if t.get("kv_bytes"):
            logged_bytes, logged_text = t["kv_bytes"]["value"], f"{t['kv_bytes']['value']:,} B"
            implied = logged_bytes / tokens["value"]
        else:
            logged_bytes, logged_text = t["allocated"]["gib"] * GIB, f"{t['allocated']['gib']:.2f} GiB"
            implied = logged_bytes / tokens["value"]
        if per_token is not None:
            rebuilt = tokens["value"] * per_token
            ok = rebuilt == logged_bytes if t.get("kv_bytes") else _gib(rebuilt) == f"{t['allocated']['gib']:.2f}"
            run.checks.append(
                {
                    "figure": "KV cache memory from the token count",
                    "line": memory["line"],
                    "logged": logged_text,
                    "rebuilt": f"{rebuilt:,} B" if t.get("kv_bytes") else f"{_gib(rebuilt)} GiB",
                    "status": "exact" if ok else "differs",
                    "terms": [
                        {
                            "term": "per token",
                            "logged": f"{implied:,.1f} B",
                            "rebuilt": f"{per_token:,} B",
                            "how": run.per_token_how,
                            "ok": ok,
                        }
                    ],
                    "why": None
                    if ok
                    else f"the log's cache takes {implied:,.1f} B per token, the model {per_token:,} B: another model, "
                    "KV dtype or tensor-parallel size than the log's",
                }
            )
        else:
            run.notes.append(
                f"line {memory['line']}: {logged_text} for {tokens['value']:,} tokens is {implied:,.1f} B per token "
                "on this GPU; state the model to rebuild it"
            )
    elif tokens and per_token is not None:
        run.checks.append(
            {
                "figure": "KV cache memory from the token count",
                "line": tokens["line"],
                "logged": f"{tokens['value']:,} tokens",
                "rebuilt": f"{_gib(tokens['value'] * per_token)} GiB",
                "status": "predicted",
                "terms": [],
                "why": f"the log prints no memory; {tokens['value']:,} tokens x {per_token:,} B ({run.per_token_how})",
            }
        )


def _trtllm_per_token_check(run: _PoolRun) -> None:
    """The memory profile's 'kv size' (bytes per token) against the model's."""
    profile, per_token = run.log.get("profile"), run.per_token
    if not (profile and profile["kv_size"] and per_token is not None):
        return
    ok = profile["kv_size"] == per_token
    run.checks.append(
        {
            "figure": "KV bytes per token (kv size)",
            "line": profile["line"],
            "logged": f"{profile['kv_size']:,} B",
            "rebuilt": f"{per_token:,} B",
            "status": "exact" if ok else "differs",
            "terms": [],
            "why": None
            if ok
            else "another model, KV dtype or tensor-parallel size, or a draft model's own KV "
            "(the PyTorch backend adds a drafter's bytes per token)",
        }
    )


def _trtllm_pool_tokens_check(run: _PoolRun) -> None:
    """The primary pool's tokens: its blocks x tokens per block, against the token count the log prints."""
    blocks, per_block, tokens = run.log.get("primary_blocks"), run.log.get("tokens_per_block"), run.tokens
    if not (blocks and per_block and tokens):
        return
    ok = blocks["value"] * per_block["value"] == tokens["value"]
    run.checks.append(
        {
            "figure": "tokens in the primary pool",
            "line": tokens["line"],
            "logged": f"{tokens['value']:,} tokens",
            "rebuilt": f"{blocks['value'] * per_block['value']:,} tokens",
            "status": "exact" if ok else "differs",
            "terms": [
                {
                    "term": "tokens",
                    "logged": f"{tokens['value']:,}",
                    "rebuilt": f"{blocks['value'] * per_block['value']:,}",
                    "how": f"{blocks['value']:,} primary blocks x {per_block['value']} tokens per block",
                    "ok": ok,
                }
            ],
            "why": None if ok else "the blocks and the token count disagree: the pasted text may mix two runs",
        }
    )


def _trtllm_blocks_per_sequence_check(run: _PoolRun) -> None:
    """The blocks one sequence takes: its attention window over the tokens per block, rounded up."""
    window, per_seq, per_block = run.log.get("window"), run.log.get("blocks_per_seq"), run.log.get("tokens_per_block")
    if not (window and per_seq and per_block):
        return
    need = -(-window["value"] // per_block["value"])
    ok = need == per_seq["value"]
    run.checks.append(
        {
            "figure": "KV cache blocks per sequence",
            "line": per_seq["line"],
            "logged": str(per_seq["value"]),
            "rebuilt": str(need),
            "status": "exact" if ok else "differs",
            "terms": [
                {
                    "term": "blocks",
                    "logged": str(per_seq["value"]),
                    "rebuilt": str(need),
                    "how": f"ceil(window {window['value']:,} / {per_block['value']} tokens per block)",
                    "ok": ok,
                }
            ],
            "why": None if ok else "another tokens per block than the log prints",
        }
    )


def _trtllm_budget_check(run: _PoolRun) -> None:
    """The KV budget the memory profile prints: (device total - peak + the profiling run's own KV) x the fraction."""
    profile = run.log.get("profile")
    if not (profile and profile["fraction"] and profile["total"]):
        return
    rebuilt = (profile["total"] - profile["peak"] + (profile["tmp_kv"] or 0)) * profile["fraction"]
    ok = abs(rebuilt - profile["available"]) <= 0.01 * (2 + profile["fraction"])
    run.checks.append(
        {
            "figure": "KV budget from the memory profile",
            "line": profile["line"],
            "logged": f"{profile['available']:.2f} GiB",
            "rebuilt": f"{rebuilt:.2f} GiB",
            "status": "consistent" if ok else "differs",
            "terms": [
                {
                    "term": "budget",
                    "logged": f"{profile['available']:.2f} GiB",
                    "rebuilt": f"{rebuilt:.2f} GiB",
                    "how": f"(device total {profile['total']} GiB - peak {profile['peak']} GiB"
                    + (f" + the profiling run's own KV {profile['tmp_kv']} GiB" if profile["tmp_kv"] else "")
                    + f") x fraction {profile['fraction']:g}",
                    "ok": ok,
                }
            ],
            "why": None if ok else "the profile's terms do not add up: TensorRT-LLM's formula changed between versions",
        }
    )


def _trtllm_lines_read(run: _PoolRun) -> None:
    """The lines read, not rebuilt: a refusal (the pool too small for one sequence), the memory free when sized."""
    t = run.log
    if t.get("too_small"):
        ts = t["too_small"]
        need = ts["beam"] * ts["per_block"] * ts["blocks_per_seq"]
        run.notes.append(
            f"the engine refused to start (line {ts['line']}): the pool holds {ts['tokens']:,} tokens, one sequence "
            f"needs beam {ts['beam']} x {ts['per_block']} tokens per block x {ts['blocks_per_seq']} blocks = {need:,}"
        )
    if t.get("total_available"):
        ta = t["total_available"]
        run.notes.append(
            f"line {ta['line']}: {ta['available']:.2f} of {ta['total']:.2f} GiB free when the pool was sized; the pool "
            "takes kv_cache_free_gpu_mem_fraction of it (0.9 unless set)"
        )


def _trtllm_unmodelled(run: _PoolRun) -> None:
    """What kvlab does not model of TensorRT-LLM: the budget rule that sizes the cache."""
    run.notes.append(
        "not modelled yet: TensorRT-LLM's budget rule: the KV cache gets kv_cache_free_gpu_mem_fraction (0.9 "
        "unless set) of the memory free after the engine loads (C++ runtime) or of total - peak in a profiling run "
        "(PyTorch backend), capped by max_tokens; kvlab rebuilds the bytes per token, not the token count"
    )


# ---------------------------------------------------------------------------------------
# the one entry point
# ---------------------------------------------------------------------------------------

_STATED_INTS = {
    "n_ctx": 1 << 24,
    "n_seq": 65536,
    "n_ubatch": 1 << 16,
    "max_model_len": 1 << 24,
    "block_size": 1024,
    "max_num_batched_tokens": 1 << 24,
    "tensor_parallel_size": 64,
    "pipeline_parallel_size": 64,
    "num_speculative_tokens": 64,
}
STATED_LLAMACPP = (
    "n_ctx",
    "n_seq",
    "type_k",
    "type_v",
    "n_ubatch",
    "kv_unified",
    "swa_full",
    "flash_attn",
    "mla_cache",
)
STATED_VLLM = (
    "max_model_len",
    "kv_cache_dtype",
    "block_size",
    "max_num_batched_tokens",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "gpu_memory_gib",
    "weights",
    "enable_prefix_caching",
    "num_speculative_tokens",
    "speculative_method",
    "speculative_model",
)


def explain_engine_log(log: str, model, engine: str | None = None, **stated) -> dict:
    """Rebuild every memory figure of a llama.cpp, vLLM, SGLang or TensorRT-LLM start-up log from the model's config.

    `model`: a catalogue id, a Hugging Face id in the catalogue, a config.json (path, dict or
    JSON text) or an Architecture; None reads an SGLang or TensorRT-LLM log without rebuilding
    (what it prints per token is reported). `engine`: "llama.cpp", "vllm", "sglang" or
    "tensorrt-llm" (read from the log when None). `stated`: settings the log does not show
    (llama.cpp: n_ctx, n_seq, type_k, type_v, n_ubatch, kv_unified, swa_full, flash_attn; vLLM:
    max_model_len, kv_cache_dtype, block_size, max_num_batched_tokens, tensor_parallel_size,
    pipeline_parallel_size, gpu_memory_gib, weights (a format such as BF16); SGLang and
    TensorRT-LLM: tensor_parallel_size, kv_cache_dtype).
    """
    unknown = sorted(set(stated) - set(STATED_LLAMACPP) - set(STATED_VLLM))
    if unknown:
        raise ValueError(
            f"unknown setting {short_repr(unknown[0])}; a log's settings are "
            + ", ".join(STATED_LLAMACPP + STATED_VLLM)
        )
    stated = {k: v for k, v in stated.items() if v is not None}
    for name, value in stated.items():
        if name in _STATED_INTS and (
            isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _STATED_INTS[name]
        ):
            raise ValueError(f"{name} must be a whole number from 1 to {_STATED_INTS[name]:,}, got {short_repr(value)}")
        if name in ("kv_unified", "swa_full", "flash_attn", "enable_prefix_caching") and not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {short_repr(value)}")
        if name == "gpu_memory_gib" and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 2**20
        ):
            raise ValueError(f"gpu_memory_gib must be a positive number of GiB, got {short_repr(value)}")
        if name in (
            "type_k",
            "type_v",
            "kv_cache_dtype",
            "weights",
            "speculative_method",
            "speculative_model",
        ) and not isinstance(value, str):
            raise ValueError(f"{name} must be a type name, got {short_repr(value)}")
        if name == "mla_cache" and value not in LLAMACPP_MLA_CACHES:
            raise ValueError(f"mla_cache must be one of {', '.join(LLAMACPP_MLA_CACHES)}, got {short_repr(value)}")
    parsed = parse_engine_log(log)
    if engine is not None:
        key = _ENGINE_ALIASES.get(str(engine).lower(), str(engine).lower())
        if key not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {short_repr(engine)}")
        parsed["engine"] = key
    if model is None and parsed["engine"] not in ("sglang", "tensorrt-llm", "vllm"):
        raise ValueError("model: give the model the log ran (a catalogue id or a config.json) to rebuild its figures")
    arch = model_architecture(model) if model is not None else None
    name = arch.name if arch is not None else None
    if parsed["engine"] is None:
        return {
            "model": name,
            "engine": None,
            "settings": [],
            "checks": [],
            "notes": [
                "no llama.cpp, vLLM, SGLang or TensorRT-LLM memory line found: paste the start-up log (llama.cpp: "
                "the llama_context and llama_kv_cache lines; vLLM: the KV cache memory, GPU blocks or KV cache size "
                "lines; SGLang: 'KV Cache is allocated'; TensorRT-LLM: the paged KV cache lines)"
            ],
            "summary": "nothing recognised",
            "lines_read": 0,
        }
    if parsed["engine"] == "llama.cpp":
        lc = parsed["llamacpp"]
        fit = lc.get("fit") or {}
        if lc["caches"] or lc["buffers"] or lc["facts"]:
            out = _explain_llamacpp(lc, arch, stated)
        else:  # only --fit lines: read, not rebuilt
            out = {"settings": [], "checks": [], "notes": []}
        if fit:
            fit_notes, fit_checks = _explain_llamacpp_fit(fit)
            out = {**out, "checks": out["checks"] + fit_checks, "notes": out["notes"] + fit_notes}
        lines = (
            {c["line"] for c in lc["caches"]}
            | {b["line"] for b in lc["buffers"]}
            | {f["line"] for f in lc["facts"].values()}
            | _fit_line_numbers(fit)
        )
    elif parsed["engine"] == "vllm" and arch is None:
        out = _explain_vllm_log_only(
            parsed["vllm"],
            stated,
            "no model given: the log's own figures are checked against each other; give the model the log ran (a "
            "catalogue id or a config.json) to rebuild them from its layers",
        )
        lines = {x["line"] for x in parsed["vllm"].values()}
    elif parsed["engine"] == "vllm":
        out = _explain_vllm(parsed["vllm"], arch, stated)
        lines = {x["line"] for x in parsed["vllm"].values()}
    elif parsed["engine"] == "sglang":
        out = _explain_sglang(parsed["sglang"], arch, stated)
        lines = {x["line"] for x in parsed["sglang"].values()}
    else:
        out = _explain_trtllm(parsed["trtllm"], arch, stated)
        lines = {x["line"] for x in parsed["trtllm"].values()}
    return {
        "model": name,
        "engine": parsed["engine"],
        "settings": out["settings"],
        "checks": out["checks"],
        "notes": out["notes"],
        "summary": _summary(out["checks"]).replace("from the config", "from the log's own figures")
        if arch is None or out.get("log_only")
        else _summary(out["checks"]),
        "lines_read": len(lines),
        "sources": [
            "llama.cpp src/llama-context.cpp, llama-kv-cache.cpp, llama-kv-cache-iswa.cpp (see kv_bytes)",
            "vllm/v1/kv_cache_interface.py, vllm/v1/core/kv_cache_utils.py, vllm/v1/core/block_pool.py (see kv_bytes)",
            "sglang python/sglang/srt/mem_cache/memory_pool.py (MHATokenToKVPool: size + page_size rows per layer)",
            "TensorRT-LLM cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, tensorrt_llm/_torch/pyexecutor/_util.py",
        ],
    }
