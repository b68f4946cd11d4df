"""Golden values for the memory and serving calculators (kv_bytes, verdict, serving).

The other memory tests check each formula against a reference (real llama.cpp and vLLM
logs, brute-force sums, hand-worked examples). This file pins the *whole* result of each
calculator, numbers, notes and error messages alike, on a grid of inputs that reaches
every branch: MHA, GQA, MoE, MXFP4-covered experts, sliding windows, hybrids with
recurrent state, MLA; both engines; 1 to 8 GPUs; the edges of every input check. A
mutation (bench/mutation.py) or a refactor that changes any of it fails here, naming
the case.

Each result (the JSON of the value, or of the error) is stored as its leaves, each under its
path (value.layers[0].kind), in two files, one case per line in each:

- data/memory_golden_numbers.jsonl: every leaf that is not a string (numbers, booleans, nulls,
  empty lists and dicts);
- data/memory_golden_text.jsonl: every string leaf (notes, warnings, error messages, *_text,
  names).

So a copy edit rewrites only the text file, and a change of numbers only the numbers file (both
where a number is written in the text). On a mismatch the test names the case, the file and the
path; if the change is meant, rewrite both files with

    KVLAB_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/python/test_memory_golden.py

Numbers are compared to 1e-12 relative (plain float64 arithmetic, the same on every CPU), and an
int must stay an int; every other leaf must be equal, and the paths the same.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlab import dtypes as dt
from kvlab.memory import kv_bytes as kb
from kvlab.memory import serving as sv
from kvlab.memory import verdict as vd
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.deployment import deployment

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = {"numbers": DATA / "memory_golden_numbers.jsonl", "text": DATA / "memory_golden_text.jsonl"}
UPDATE = os.environ.get("KVLAB_UPDATE_SNAPSHOTS") == "1"

# one model per way of building the cache
DENSE = ("llama-2-7b", "llama-3.1-8b")  # MHA, GQA
MOE = ("qwen3-30b-a3b", "mixtral-8x7b")
SLIDING = ("gemma-2-9b", "gpt-oss-20b")  # interleaved windows; gpt-oss: MXFP4 experts too
HYBRID = ("qwen3-next-80b-a3b", "qwen3.6-27b")  # Gated DeltaNet state + full layers
MLA = ("deepseek-v2-lite", "deepseek-v3")
MODELS = DENSE + MOE + SLIDING + HYBRID + MLA


def arch(model: str):
    return model_architecture(model)


def _deployed_verdict(model, context, n_seq=1, solve=True, **fields):
    return vd.verdict(deployment(model, **fields), context, n_seq, solve=solve)


def cases() -> dict[str, tuple]:
    """id -> (function, args, kwargs); models are passed as catalogue ids and turned into
    Architectures where the function wants one (prefix 'A:')."""
    c: dict[str, tuple] = {}

    def add(name, fn, *args, **kwargs):
        assert name not in c, name
        c[name] = (fn, args, kwargs)

    # -- kv_bytes: types
    for t in ("f16", "F16", "float16", "fp16", "half", "bf16", "bfloat16", "f32", "q8_0", "q4_0", "q4_1", "q5_0"):
        add(f"kv_type[{t}]", dt.kv_type, t)
    for t in ("fp8", "fp8_e4m3", "float8", "iq4_nl", "q5_1", "int3", "", " Q8_0 "):
        add(f"kv_type[{t!r}]", dt.kv_type, t)
        add(f"bits_per_value[{t!r}]", dt.bits_per_value, t)
    for t in ("f16", "q8_0", "q4_0", "fp8", "f32"):
        for n in (1, 32, 64, 100, 128):
            add(f"row_bytes[{t},{n}]", dt.row_bytes, t, n)
    # -- kv_bytes: per token and per context
    for m in MODELS:
        for k, v in (("f16", None), ("q8_0", None), ("q4_0", "q8_0"), ("fp8", None), ("f32", "f16")):
            add(f"kv_bytes_per_token[{m},{k},{v}]", kb.kv_bytes_per_token, "A:" + m, k, v)
        for ctx in (1, 100, 4096, 131072):
            for n_seq in (1, 3):
                add(f"kv_cache_bytes[{m},{ctx},{n_seq}]", kb.kv_cache_bytes, "A:" + m, ctx, "q8_0", n_seq=n_seq)
        add(f"kv_cache_bytes[{m},state]", kb.kv_cache_bytes, "A:" + m, 5000, "f16", "q4_0", n_seq=2, state_type="f16")
    # -- llama.cpp
    for m in MODELS:
        for n_ctx, n_seq, unified in (
            (1, 1, True),
            (300, 1, True),
            (4096, 1, True),
            (40960, 2, False),
            (40960, 4, True),
        ):
            add(
                f"llamacpp_kv_cache[{m},{n_ctx},{n_seq},{unified}]",
                kb.llamacpp_kv_cache,
                "A:" + m,
                n_ctx,
                "q8_0",
                "f16",
                n_seq=n_seq,
                kv_unified=unified,
            )
        add(f"llamacpp_kv_cache[{m},swa_full]", kb.llamacpp_kv_cache, "A:" + m, 9000, swa_full=True, n_ubatch=256)
        add(f"llamacpp_kv_cache[{m},no_fa]", kb.llamacpp_kv_cache, "A:" + m, 9000, "q4_0", flash_attn=False)
        for ub in (1, 512, 2048):
            add(f"llamacpp_compute_buffer[{m},{ub}]", kb.llamacpp_compute_buffer, "A:" + m, ub)
    add("llamacpp_kv_cache[bad n_ctx]", kb.llamacpp_kv_cache, "A:llama-3.1-8b", 0)
    add("llamacpp_kv_cache[bad n_seq]", kb.llamacpp_kv_cache, "A:llama-3.1-8b", 4096, n_seq=0)
    # -- vLLM
    for m in MODELS:
        for length, dtype, block, batched in (
            (1, "auto", 16, 2048),
            (100, "fp8", 16, 2048),
            (4096, "auto", 32, 512),
            (40000, "bf16", 1, 8192),
            (131072, "f16", 128, 2048),
        ):
            add(
                f"vllm_kv_cache[{m},{length},{dtype},{block},{batched}]",
                kb.vllm_kv_cache,
                "A:" + m,
                length,
                dtype,
                block_size=block,
                max_num_batched_tokens=batched,
            )
        for batched, seqs in ((2048, 256), (512, 8), (8192, 1024)):
            add(f"vllm_activation_reserve[{m},{batched},{seqs}]", kb.vllm_activation_reserve, "A:" + m, batched, seqs)
        add(f"vllm_capacity[{m}]", kb.vllm_capacity, "A:" + m, 80 * 2**30, 16 * 2**30, 32768)
        add(
            f"vllm_capacity[{m},tight]",
            kb.vllm_capacity,
            "A:" + m,
            24 * 2**30,
            20 * 2**30,
            8192,
            gpu_memory_utilization=0.95,
            kv_cache_dtype="fp8",
            activation_reserve_bytes=2**30,
            block_size=32,
        )
    add("vllm_kv_cache[bad]", kb.vllm_kv_cache, "A:llama-3.1-8b", 0)
    add("vllm_kv_cache[bad block]", kb.vllm_kv_cache, "A:llama-3.1-8b", 10, block_size=0)
    add("vllm_capacity[bad utilization]", kb.vllm_capacity, "A:llama-3.1-8b", 2**34, 2**33, 4096, 1.5)
    add("vllm_capacity[zero utilization]", kb.vllm_capacity, "A:llama-3.1-8b", 2**34, 2**33, 4096, 0)
    add("vllm_capacity[full utilization]", kb.vllm_capacity, "A:llama-3.1-8b", 2**34, 2**33, 4096, 1)
    # -- the layer map and the reports
    for m in MODELS:
        for mode in ("llamacpp", "vllm", "exact"):
            kv = "q8_0" if mode != "vllm" else "fp8"
            for ctx, n_seq in ((70000, 2),):
                add(f"layer_memory_map[{m},{mode},{ctx},{n_seq}]", kb.layer_memory_map, "A:" + m, ctx, kv, mode, n_seq)
            add(f"memory_report[{m},{mode}]", kb.memory_report, m, 20000, kv, mode, n_seq=2)
    add("layer_memory_map[block 64]", kb.layer_memory_map, "A:gemma-2-9b", 5000, "f16", "vllm", 1, 256, 64, 1024)
    add("layer_memory_map[bad mode]", kb.layer_memory_map, "A:gemma-2-9b", 5000, "f16", "sglang")
    add("memory_report[bad mode]", kb.memory_report, "llama-3.1-8b", 4096, mode="tgi")
    add("memory_report[v_kv]", kb.memory_report, "llama-3.1-8b", 4096, "q8_0", v_kv="q4_0", n_ubatch=128)
    add("memory_report[split streams]", kb.memory_report, "gemma-2-9b", 8192, n_seq=4, kv_unified=False)
    # the CLI's path: one Deployment, then its verdict (the ids keep the name of the function it replaced)
    for mode in ("llamacpp", "vllm"):
        add(
            f"fit_report[{mode}]", _deployed_verdict, "llama-3.1-8b", 32768, gpu="rtx-4090", weights="Q8_0", engine=mode
        )
    add("fit_report[memory]", _deployed_verdict, "qwen3-30b-a3b", 8192, memory_gib=48, n_seq=2, kv="q4_0")

    # -- verdict (of a deployment; the ids keep the name of fit_verdict, the field-by-field function it replaced)
    for m in MODELS:
        for engine in ("llamacpp", "vllm"):
            kv = "q8_0" if engine == "llamacpp" else "fp8"
            for ctx, n_seq, gpu, n_gpus in (
                (4096, 1, "rtx-4090", 1),
                (131072, 1, "h100-sxm", 1),
                (65536, 4, "mi300x", 8),
                (16384, 2, "m4-max-128gb", 1),
            ):
                add(
                    f"fit_verdict[{m},{engine},{ctx},{n_seq},{gpu},{n_gpus}]",
                    _deployed_verdict,
                    m,
                    ctx,
                    n_seq,
                    weights="Q4_K_M",
                    kv=kv,
                    gpu=gpu,
                    tp=n_gpus,
                    engine=engine,
                )
    for args, kwargs in (
        (("llama-2-7b", 131072), {"weights": "BF16", "gpu": "h100-sxm", "allow_long_context": True}),
        (("llama-2-7b", 4096), {"weights": "BF16", "gpu": "h100-sxm", "solve": False}),
        (("llama-2-7b", 4097), {"weights": "BF16", "gpu": "h100-sxm", "engine": "vllm"}),
        (("llama-3.1-70b", 8192), {"weights": "BF16", "gpu": "rtx-4090"}),
        (("llama-3.1-70b", 8192), {"weights": "Q4_K_M", "gpu": "rtx-4090", "engine": "vllm"}),
        (("llama-3.1-8b", 1_000_000), {"weights": "Q4_K_M", "gpu": "rtx-4090", "kv": "q4_0"}),
        (("llama-3.1-8b", 8192), {"memory_gib": 10, "n_seq": 3, "n_ubatch": 64}),
        (("llama-3.1-8b", 8192), {"memory_gib": 17.4, "weights": "BF16", "engine": "vllm", "kv": "f16"}),
        (("llama-3.1-8b", 30000), {"gpu": "h100-sxm", "engine": "vllm", "gpu_memory_utilization": 0.5}),
        (("llama-3.1-8b", 30000), {"gpu": "h100-sxm", "engine": "vllm", "block_size": 128, "n_seq": 5}),
        (("llama-3.1-8b", 30000), {"gpu": "h100-sxm", "engine": "vllm", "tp": 8}),
        (("llama-3.1-8b", 30000), {"gpu": "h100-sxm", "engine": "llamacpp", "tp": 4, "n_seq": 2}),
        (("deepseek-v3", 30000), {"gpu": "h200", "engine": "vllm", "tp": 8, "kv": "fp8"}),
        (("gpt-oss-20b", 131072), {"gpu": "rtx-5090", "weights": "MXFP4", "n_seq": 2}),
        (("qwen3-32b", 40960), {"gpu": "a100-80gb", "weights": "Q8_0", "engine": "vllm", "tp": 4}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "engine": "tgi"}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "engine": "vllm", "kv": "q8_0"}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "kv": "fp8"}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "tp": 3}),
        (("llama-3.1-8b", 0), {"gpu": "h100-sxm"}),
        (("llama-3.1-8b", 2**24 + 1), {"gpu": "h100-sxm"}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "n_seq": 0}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "gpu_memory_utilization": 0}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "gpu_memory_utilization": 1.01}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "gpu_memory_utilization": 1, "engine": "vllm"}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "n_ubatch": 0}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "engine": "vllm", "block_size": 24}),
        (("llama-3.1-8b", 4096), {}),
        (("llama-3.1-8b", 4096), {"gpu": "h100-sxm", "memory_gib": 40}),
        (("llama-3.1-8b", 4096), {"memory_gib": -1}),
        (("llama-3.1-8b", 4096), {"gpu": "no-such-gpu"}),
        (("mixtral-8x7b", 4096), {"gpu": "h100-sxm", "engine": "vllm", "tp": 8}),
        (("qwen3-next-80b-a3b", 262144), {"gpu": "h200", "engine": "vllm", "tp": 4, "kv": "fp8"}),
    ):
        add(f"fit_verdict[{args},{sorted(kwargs.items())}]", _deployed_verdict, *args, **kwargs)
    for m in MODELS:
        for ctx in (1, 4096, 32768, 40960, 131073, 10**6):
            add(f"long_context_check[{m},{ctx}]", vd.long_context_check, "A:" + m, ctx)
        for n in (1, 2, 4, 8):
            add(f"_kv_head_share[{m},{n}]", vd._kv_head_share, "A:" + m, n)
    for lo, hi, limit in ((1, 1, 0), (1, 1, 1), (1, 100, 37), (1, 100, 100), (5, 9, 4), (0, 2**20, 12345)):
        add(f"_largest[{lo},{hi},{limit}]", vd._largest, ("<=", limit), lo, hi)
    for n in (0, 1, 1023, 1024, 10**6, 2**30 - 1, 2**30, 5 * 2**30 + 1, 2**40):
        add(f"_size[{n}]", vd._size, n)

    # -- serving
    for args in (
        (16e9, 0.5e9, 3350),
        (16e9, 0.5e9, 3350, 8),
        (16e9, 0.5e9, 3350, 64, 0.7),
        (16e9, 0.5e9, 3350, 64, 1.0, 1e12),
        (16e9, 0.5e9, 3350, 256, 1.0, 4e15, 989),
        (16e9, 0.5e9, 3350, 1, 1.0, 1e9, 989),
        (1e9, 0, 1000, 1, 1.0, 1e12, 1000),  # the two bounds exactly equal
        (16e9, 0, 0.5),
        (16e9, 0, 0),
        (16e9, 0, -1),
        (16e9, 0, 100, 0),
        (16e9, 0, 100, 1, 0),
        (16e9, 0, 100, 1, 1.01),
        (16e9, 0, 100, 1, 0.01),
    ):
        add(f"decode_time_per_token[{args}]", sv.decode_time_per_token, *args)
    for price, tps in ((None, 10), (-1, 10), (0, 10), (0.5, 10), (2.5, 0), (2.5, 0.5), (2.5, 1), (2.5, 1234.5)):
        add(f"cost_per_million_tokens[{price},{tps}]", sv.cost_per_million_tokens, price, tps)
    for fmt in ("BF16", "MXFP4"):
        add(f"_weights_read[dense-moe,{fmt}]", sv.weights_read, "dense-moe", fmt, 8)
    for m in MODELS:
        for fmt in ("BF16", "Q4_K_M", "MXFP4"):
            for batch in (1, 3, 64, 4096):
                add(f"_weights_read[{m},{fmt},{batch}]", sv.weights_read, "A:" + m, fmt, batch)
        for ctx in (1, 2, 100, 5000, 300000):
            add(f"attention_flops[{m},{ctx}]", sv.attention_flops, "A:" + m, ctx)
            add(f"prefill_flops[{m},{ctx}]", sv.prefill_flops, "A:" + m, ctx)
            for batch in (1, 7):
                add(f"decode_flops[{m},{ctx},{batch}]", sv.decode_flops, "A:" + m, ctx, batch)
    for m in MODELS:
        for engine in ("vllm", "llamacpp"):
            kv = "fp8" if engine == "vllm" else "q8_0"
            for ctx, batch, gpu, n_gpus, price, answer in (
                (4096, 1, "h100-sxm", 1, None, 512),
                (32768, 16, "h100-sxm", 2, 2.5, 512),
                (1024, 1024, "mi300x", 1, None, 128),
                (8192, 2, "m4-max-128gb", 1, None, 100000),
            ):
                add(
                    f"serving_estimate[{m},{engine},{ctx},{batch},{gpu},{n_gpus},{price},{answer}]",
                    sv.serving_estimate,
                    m,
                    gpu,
                    ctx,
                    batch,
                    "Q4_K_M",
                    kv,
                    price,
                    0.8,
                    n_gpus,
                    engine,
                    answer,
                )
        add(f"users_per_gpu[{m}]", sv.users_per_gpu, m, "h100-sxm", 8192, "Q4_K_M", "fp8")
        add(
            f"users_per_gpu[{m},llamacpp]", sv.users_per_gpu, m, "rtx-4090", 4096, "Q4_K_M", "q8_0", 20, 0.5, "llamacpp"
        )
    for kwargs in (
        {"weights_format": "BF16"},
        {"weights_format": "BF16", "kv": "f16", "solve": False},
        {"weights_format": "MXFP4", "engine": "llamacpp"},
        {"bandwidth_efficiency": 0},
        {"batch": 0},
        {"answer_tokens": 0},
        {"price_per_hour": -1},
    ):
        add(
            f"serving_estimate[{sorted(kwargs.items())}]",
            sv.serving_estimate,
            "llama-3.1-8b",
            "h100-sxm",
            8192,
            **kwargs,
        )
    # a card that is not in the catalogue (no name, no compute peak, no price), and the input checks' edges
    custom = {"memory_gib": 48, "bandwidth_gb_s": 864}
    add("serving_estimate[custom card]", sv.serving_estimate, "llama-3.1-8b", custom, 8192, 4, "Q4_K_M")
    add("serving_estimate[named custom card]", sv.serving_estimate, "llama-3.1-8b", dict(custom, id="x1"), 4096)
    add(
        "users_per_gpu[custom card]",
        sv.users_per_gpu,
        "llama-3.1-8b",
        custom,
        8192,
        "Q4_K_M",
        "q8_0",
        20,
        1.0,
        "llamacpp",
    )
    for name, value in (
        ("context", 0),
        ("context", 1),
        ("context", 2.5),
        ("batch", 65536),
        ("batch", 65537),
        ("batch", 2.5),
        ("n_gpus", 0),
        ("n_gpus", 1.5),
        ("bandwidth_efficiency", 1),
        ("bandwidth_efficiency", 1.5),
        ("bandwidth_efficiency", 0.005),
    ):
        kwargs = {"context": 4096, name: value}
        add(f"serving_estimate[{name}={value}]", sv.serving_estimate, "llama-3.1-8b", "h100-sxm", **kwargs)
    # the catalogue's hourly price is per GPU: two GPUs cost twice as much
    add(
        "serving_estimate[catalogue price, 2 GPUs]", sv.serving_estimate, "llama-3.1-70b", "h100-sxm", 8192, 8, n_gpus=2
    )
    for tps in (30, 1e6):
        add(
            f"users_per_gpu[min tps {tps}]",
            sv.users_per_gpu,
            "llama-3.1-8b",
            "h100-sxm",
            8192,
            min_tokens_per_second=tps,
        )
    add("users_per_gpu[min tps]", sv.users_per_gpu, "llama-3.1-8b", "h100-sxm", 8192, min_tokens_per_second=30)
    add("users_per_gpu[none]", sv.users_per_gpu, "llama-3.1-70b", "rtx-4090", 8192)
    return c


CASES = cases()


def plain(value):
    """JSON-able, with Architectures and other dataclasses as their fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"dataclass": type(value).__name__, **plain(dataclasses.asdict(value))}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def dense_moe():
    """An MoE entry whose active parameters equal all of them: read like a dense model."""
    a = arch("qwen3-30b-a3b")
    return dataclasses.replace(a, active_params=a.params)


def run(case_id: str):
    fn, args, kwargs = CASES[case_id]
    args = [arch(a[2:]) if isinstance(a, str) and a.startswith("A:") else a for a in args]
    args = [dense_moe() if a == "dense-moe" else a for a in args]
    if fn is vd._largest:
        limit = args[0][1]
        args = [lambda n: n <= limit, *args[1:]]
    try:
        return {"value": plain(fn(*args, **kwargs))}
    except (ValueError, KeyError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


NAME = re.compile(r"[A-Za-z_]\w*\Z")


def leaves(value, path: str = "") -> Iterator[tuple[str, object]]:
    """Every leaf of a JSON value, with its path (value.layers[0].kind; a key that is not a name as ["a key"]).
    An empty list or dict is a leaf."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            step = (f".{key}" if path else key) if NAME.match(key) else f"[{json.dumps(key)}]"
            yield from leaves(item, path + step)
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def split(result: dict) -> dict[str, dict]:
    """A result's leaves by file: {"numbers": {path: leaf that is not a string}, "text": {path: string}}."""
    out: dict[str, dict] = {"numbers": {}, "text": {}}
    for path, leaf in leaves(result):
        out["text" if isinstance(leaf, str) else "numbers"][path] = leaf
    return out


def same_leaf(a, b) -> bool:
    """Numbers to 1e-12 relative, and an int that became a float (or the reverse) is a change; else equal."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0)
    return a == b


def difference(got: dict, stored: dict) -> str | None:
    """None if the leaves agree, else the first place they differ: which file, which path."""
    for kind in ("numbers", "text"):
        new, old = got[kind], stored[kind]
        gone, added = [p for p in old if p not in new], [p for p in new if p not in old]
        if gone or added:
            return f"{kind}: paths gone {gone[:5]}, paths added {added[:5]}"
        for path, leaf in old.items():
            if not same_leaf(new[path], leaf):
                return f"{kind} at {path}: {new[path]!r} != {leaf!r}"
    return None


def load() -> dict[str, dict]:
    """{case id: {"numbers": {path: leaf}, "text": {path: leaf}}} from the two files."""
    stored: dict[str, dict] = {}
    for kind, file in GOLDEN.items():
        if file.exists():
            for line in file.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    stored.setdefault(row["id"], {})[kind] = row[kind]
    return stored


def write(results: dict[str, dict]) -> None:
    for kind, file in GOLDEN.items():
        lines = [
            json.dumps({"id": i, kind: split(r)[kind]}, ensure_ascii=False, allow_nan=False) for i, r in results.items()
        ]
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")


STORED = load()


def test_every_case_has_a_golden_value():
    if UPDATE:
        write({i: json.loads(json.dumps(run(i), allow_nan=False)) for i in CASES})
        return
    assert sorted(STORED) == sorted(CASES), (
        "the cases and data/memory_golden_{numbers,text}.jsonl disagree: rewrite them (see the docstring)"
    )
    halves = [i for i, s in STORED.items() if set(s) != {"numbers", "text"}]
    assert halves == [], f"cases in only one of the two files: {halves[:5]} (rewrite them)"
    # every case pins something: its value's leaves, or its error's message
    assert all(s["numbers"] or s["text"] for s in STORED.values())


def test_the_split_stores_every_leaf_once_and_numbers_apart_from_text():
    result = {"value": {"bytes": 10, "share": 0.5, "fits": True, "cap": None, "notes": ["a", "b"], "layers": []}}
    result["value"]["by kind"] = {"full": {"n": 2, "kind": "full"}}
    parts = split(result)
    assert parts["numbers"] == {
        "value.bytes": 10,
        "value.share": 0.5,
        "value.fits": True,
        "value.cap": None,
        "value.layers": [],
        'value["by kind"].full.n': 2,
    }
    assert parts["text"] == {"value.notes[0]": "a", "value.notes[1]": "b", 'value["by kind"].full.kind': "full"}
    # a copy edit changes the text only; a number, the numbers only; an int that became a float is a change
    edited = split({**result, "value": {**result["value"], "notes": ["a", "c"]}})
    assert edited["numbers"] == parts["numbers"] and difference(edited, parts) == "text at value.notes[1]: 'c' != 'b'"
    assert difference(split({"value": {**result["value"], "bytes": 10.0}}), parts).startswith("numbers at value.bytes")
    assert difference(split({"value": {**result["value"], "share": 0.5 + 1e-15}}), parts) is None
    assert difference(split({"error": "ValueError: no"}), parts).startswith("numbers: paths gone")


@pytest.mark.parametrize("case_id", list(CASES))
def test_calculator_matches_its_golden_value(case_id):
    if UPDATE:
        return  # test_every_case_has_a_golden_value rewrites the files
    got = split(json.loads(json.dumps(run(case_id), allow_nan=False)))
    diff = difference(got, STORED[case_id])
    assert diff is None, f"{case_id}: {diff}"
