"""llama.cpp's own start-up rules, as pure functions: what `--fit` does with the device's memory
(`fit_params`), how many llama-server slots share which context (`server_defaults`), and which of
Gemma-3n's layers keep a K/V cache (`gemma3n_cache_layers`).

Every rule cites the file it comes from at a llama.cpp release tag. llama.cpp tags a release
b<N> for the master commit whose `git rev-list --count` is N (the build number its binaries print,
"build: 8477 (ec2b787eb)"); the code was read at b10309 (commit 82bb485, 2026-08-07) and each
default traced back to the build that introduced it:

- b6925 (PR 16736, 2025-11-02): llama-server runs 4 slots over one unified KV cache when -np is
  left alone (tools/server/server.cpp@b6925: "-np 1" without -kvu counted as "left alone").
- b7407 (PR 16653, 2025-12-15): `--fit` on by default, `--fit-target` 1024 MiB, `--fit-ctx` 4096;
  `-c` defaults to 0, the model's training context (common/common.h@b7407).
- b7433 (PR 17997, 2025-12-16): `-np` defaults to -1 (auto); an explicit `-np 1` now means 1 slot.
- b7550 (PR 18372, 2025-12-27): the context --fit settles on is interpolated between two
  projections (at the training context and at --fit-ctx), rounded down to 256.
- b7672 (PR 18679): one --fit-target per device. b7825 (PR 19070): an explicit `-c 0` is never reduced.

Input checks raise ValueError naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dataclasses import replace

from kvlab.inputs import short_repr
from kvlab.memory.architecture import ATTENTION_KINDS, Architecture, attention_layer
from kvlab.memory.weights import WEIGHT_FORMATS

LLAMACPP_TAG = "b10309"  # the tag every rule below was read at (commit 82bb485)
MIB = 2**20
GIB = 2**30
# common/common.h@b10309: fit_params = true; fit_params_min_ctx = 4096; fit_params_target = 1024 * 1024*1024 per device
FIT_TARGET_BYTES = 1024 * MIB
FIT_MIN_CTX = 4096
# src/llama-context.cpp@b10309: cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256); common/fit.cpp rounds its pick down to 256
CTX_PAD = 256
# tools/server/server.cpp@b10309: "n_parallel is set to auto, using n_parallel = 4 and kv_unified = true"
AUTO_SLOTS = 4
BUILD_AUTO_SLOTS = 6925  # PR 16736
BUILD_FIT = 7407  # PR 16653
BUILD_NP_AUTO = 7433  # PR 17997
BUILD_FIT_INTERPOLATED = 7550  # PR 18372
BUILD_KEEP_CTX_0 = 7825  # PR 19070
N_CTX_DEFAULT_BEFORE_FIT = 4096  # common/common.h before b7407: int32_t n_ctx = 4096
# src/models/gemma3n.cpp@b10309: hparams.n_layer_kv_from_start = 20; swa_period = 5 unless the GGUF says otherwise
GEMMA3N_KV_LAYERS = 20
GEMMA3N_SWA_PERIOD = 5

FIT_SOURCES = [
    f"common/common.h@{LLAMACPP_TAG}: fit_params = true, fit_params_min_ctx = 4096, fit_params_target = 1 GiB",
    f"common/arg.cpp@{LLAMACPP_TAG}: --fit [on|off], --fit-target MiB0,MiB1,..., --fit-ctx N; -c 0 sets "
    "fit_params_min_ctx = UINT32_MAX",
    f"common/fit.cpp@{LLAMACPP_TAG}: common_params_fit_impl step 1 (no change when free - used >= target), "
    "step 2 (context interpolated between n_ctx_train and --fit-ctx, rounded down to 256), step 3 (layers and "
    "MoE experts to system memory; aborts when -ngl, -ts or -ot were given)",
    f"common/common.cpp@{LLAMACPP_TAG}: common_init_result calls common_fit_params when params.fit_params",
]
SERVER_SOURCES = [
    f"common/arg.cpp@{LLAMACPP_TAG}: LLAMA_EXAMPLE_SERVER sets n_parallel = -1 (auto); -np 0 is refused; "
    "-kvu: 'default: enabled if number of slots is auto'",
    f"tools/server/server.cpp@{LLAMACPP_TAG}: n_parallel < 0 -> n_parallel = 4, kv_unified = true",
    f"src/llama-context.cpp@{LLAMACPP_TAG}: n_ctx = 0 -> n_ctx_train; n_ctx padded to 256; kv_unified: n_ctx_seq = "
    "n_ctx, else n_ctx_seq = pad(n_ctx / n_seq_max, 256)",
    f"tools/server/server-context.cpp@{LLAMACPP_TAG}: n_ctx_slot = n_ctx_seq, capped at n_ctx_train",
]
FIT_NOT_MODELLED = [
    "the compute buffer's growth with the context (taken as fixed: in logs llama.cpp then settles ~1 % higher)",
    "how many layers or MoE experts step 3 moves to system memory, and whether system memory holds them",
    "several devices: how layers are then spread across them (the context pick is modelled)",
    "CPU-only builds (fitted to system memory since b8834)",
    "a multimodal projector or a draft model beyond what extra_bytes carries",
]


# Where llama.cpp puts the weights. src/llama-model.cpp (ggml-org/llama.cpp@a5410f046c01, load_tensors): "assign the
# input layer / there is very little benefit to offloading the input layer, so always keep it on the CPU"
# (dev_input = the CPU device): token_embd stays in system memory whatever -ngl says. The output projection is a
# tensor of the output layer, on the last layer's device; a model without one (tied embeddings) gets token_embd
# again there (create_tensor(..., TENSOR_DUPLICATED)), so the GPU then holds the embedding's bytes all the same.
# token_embd's type (src/llama-quant.cpp@8784689fee07, llama_tensor_get_type, TOKEN_EMBD): the ftype's base type
# (Q4_K for Q4_K_M and Q4_K_S, ...), Q2_K for IQ2_XXS / IQ2_XS / IQ1_S, IQ3_S for IQ2_S and IQ3_XXS, Q8_0 for
# MXFP4_MOE (gpt-oss: every tensor but the experts in Q8_0). Seen in logs: Llama-3-8B Q4_0 and Q4_K_M,
# "CPU_Mapped model buffer size = 281.81 MiB" = 128,256 x 4,096 x 4.5 bits.
LLAMACPP_MODEL_SOURCE = "ggml-org/llama.cpp src/llama-model.cpp@a5410f046c01 (load_tensors: dev_input on the CPU)"
EMBEDDING_TYPE = {
    "Q4_K_M": "Q4_K",
    "Q4_K_S": "Q4_K",
    "Q5_K_M": "Q5_K",
    "Q5_K_S": "Q5_K",
    "Q3_K_M": "Q3_K",
    "IQ2_XXS": "Q2_K",
    "IQ2_XS": "Q2_K",
    "IQ1_S": "Q2_K",
    "IQ2_S": "IQ3_S",
    "IQ3_XXS": "IQ3_S",
    "MXFP4": "Q8_0",
}
# formats that are a GGUF ftype whose token_embd keeps the same type
SAME_TYPE = (
    "F32", "F16", "BF16", "Q8_0", "Q6_K", "Q5_1", "Q5_0", "Q5_K", "Q4_1", "Q4_0", "Q4_K", "IQ4_NL", "IQ4_XS",
    "Q3_K", "IQ3_S", "Q2_K",
)  # fmt: skip


def device_weights(arch, weights: dict, unified_memory: bool = False) -> dict:
    """The weights llama.cpp puts on the GPUs (all layers offloaded): the file's bytes less token_embd, which stays
    in system memory, for a model with its own output projection. `weights`: the deployment's (format, bytes).

    A tied model (or one whose config does not say), a format that is not a GGUF type, a model without a
    vocabulary size, or a device whose memory is the system's (`unified_memory`): every byte counted on the GPU,
    and said."""
    total, fmt = int(weights["bytes"]), weights["format"]
    emb = EMBEDDING_TYPE.get(fmt, fmt if fmt in SAME_TYPE else None)
    whole = {"bytes": total, "cpu_bytes": 0}
    if unified_memory:  # system memory is the device's (Apple silicon): token_embd takes the same pool
        return {**whole, "how": "whole file in the device's memory (unified: llama.cpp's CPU buffers share it)"}
    if arch.tied_embeddings is None:
        return {**whole, "how": "whole file on the GPU (the config does not say whether the embedding is tied)"}
    if arch.tied_embeddings:
        return {
            **whole,
            "how": "whole file on the GPU: llama.cpp keeps token_embd in system memory, and a tied model's output "
            "layer holds a copy of it on the GPU",
        }
    if emb is None or not arch.vocab_size:
        return {**whole, "how": f"whole file on the GPU (token_embd's type in {fmt} not known to kvlab)"}
    cpu = int(arch.vocab_size * arch.hidden_size * WEIGHT_FORMATS[emb][0] / 8)
    return {
        "bytes": total - cpu,
        "cpu_bytes": cpu,
        "how": f"less token_embd ({arch.vocab_size:,} x {arch.hidden_size:,} in {emb}, {cpu / MIB:,.0f} MiB), which "
        "llama.cpp keeps in system memory",
        "source": LLAMACPP_MODEL_SOURCE,
    }


# The output projection's type (llama-quant.cpp@8784689fee07, llama_tensor_get_type, the output branch, which a tied
# model's token_embd takes too): Q5_K for the lowest IQ ftypes, else Q6_K unless the ftype is Q8_0; unquantized
# files keep theirs.
OUTPUT_TYPE = {"Q8_0": "Q8_0", "F32": "F32", "F16": "F16", "BF16": "BF16"} | dict.fromkeys(
    ("IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S"), "Q5_K"
)
LAYER_SPLIT_SOURCE = (
    "ggml-org/llama.cpp src/llama-model.cpp@a5410f046c01 (load_tensors: splits from each device's free memory; layer "
    "il, and the output layer as il = n_layer, on the first device whose cumulative split exceeds il / (n_layer + 1))"
)


def layer_split(n_layer: int, n_devices: int) -> dict:
    """llama.cpp's --split-mode layer (its default) over `n_devices` alike devices, every layer offloaded: how many
    repeating layers each device gets, and which one holds the output layer. The splits are the devices' free
    memory, equal here: layer il goes to the first device whose cumulative share exceeds il / (n_layer + 1)
    (std::upper_bound), so the first devices get one layer more than the last when they do not divide evenly."""
    n_layer, n_devices = _whole("n_layer", n_layer, 1), _whole("n_devices", n_devices, 1)
    splits = [(d + 1) / n_devices for d in range(n_devices)]
    slots = n_layer + 1

    def device(il: int) -> int:
        x = il / slots
        return min(next((d for d, cut in enumerate(splits) if cut > x), n_devices - 1), n_devices - 1)

    counts = [0] * n_devices
    for il in range(n_layer):
        counts[device(il)] += 1
    return {"layers": counts, "output_device": device(n_layer), "source": LAYER_SPLIT_SOURCE}


def device_split(arch, weights: dict, kv_bytes: int, n_devices: int, unified_memory: bool = False) -> dict:
    """Weights and KV cache on each of `n_devices` alike GPUs under llama.cpp's layer split, and the device with the
    most (the one a fit depends on). The weights: `device_weights`' GPU bytes, the output projection on its device
    and the rest in proportion to each device's layers; the KV cache in proportion to its layers (each layer's cache
    lives with its layer; kvlab spreads the cache's layers evenly, so an interleaved sliding-window pattern is
    approximate)."""
    on_gpu = device_weights(arch, weights, unified_memory)
    split = layer_split(arch.n_layers, n_devices)
    fmt = weights["format"]
    out_type = OUTPUT_TYPE.get(fmt, "Q6_K" if (fmt in EMBEDDING_TYPE or fmt in SAME_TYPE) else None)
    known = arch.tied_embeddings is not None and out_type is not None and arch.vocab_size
    output = int(arch.vocab_size * arch.hidden_size * WEIGHT_FORMATS[out_type][0] / 8) if known else 0
    layered = max(0, on_gpu["bytes"] - output)
    devices = []
    for d, n in enumerate(split["layers"]):
        w = layered * n // arch.n_layers + (output if d == split["output_device"] else 0)
        devices.append({"layers": n, "weights": w, "kv": kv_bytes * n // arch.n_layers})
    worst = max(range(n_devices), key=lambda d: devices[d]["weights"] + devices[d]["kv"])
    return {
        "devices": devices,
        "worst": worst,
        "output_bytes": output,
        "output_type": out_type if known else None,
        "weights_how": on_gpu["how"],
        "split": split,
    }


def _whole(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum:,}, got {short_repr(value)}")
    return value


def _pad(n: int, to: int = CTX_PAD) -> int:
    return -(-n // to) * to


def server_defaults(
    n_ctx_train: int,
    parallel: int | None = None,
    kv_unified: bool | None = None,
    n_ctx: int | None = None,
    build: int | None = None,
    speculative: bool = False,
) -> dict:
    """The slots llama-server runs, whether they share one unified KV cache, and each slot's context.

    `parallel` is -np (None: not given), `kv_unified` is -kvu / -no-kvu (None: not given), `n_ctx` is -c
    (None: not given; 0: the training context), `build` the llama.cpp build number (None: b10309's rules).
    `n_ctx` in the result is the total context llama.cpp allocates (its KV cache's cells), `n_ctx_seq`
    the most one slot can use, `n_ctx_slot` that capped at the training context, as the server logs it.

    >>> d = server_defaults(131072)
    >>> d["n_parallel"], d["kv_unified"], d["n_ctx"], d["n_ctx_seq"]
    (4, True, 131072, 131072)
    >>> d = server_defaults(131072, parallel=4, n_ctx=32768)
    >>> d["n_parallel"], d["kv_unified"], d["n_ctx_seq"]
    (4, False, 8192)
    >>> server_defaults(131072, build=7000, parallel=1)["n_parallel"]  # b6925-b7432: -np 1 still meant auto
    4
    """
    n_ctx_train = _whole("n_ctx_train", n_ctx_train, 1)
    if parallel is not None:
        if isinstance(parallel, bool) or not isinstance(parallel, int):
            raise ValueError(f"parallel (-np) must be a whole number or None, got {short_repr(parallel)}")
        if parallel == 0:
            raise ValueError("parallel (-np) 0 is refused by llama-server ('invalid value for n_parallel')")
    if kv_unified is not None and not isinstance(kv_unified, bool):
        raise ValueError(f"kv_unified (-kvu) must be True, False or None, got {short_repr(kv_unified)}")
    if n_ctx is not None:
        n_ctx = _whole("n_ctx", n_ctx, 0)
    if build is not None:
        build = _whole("build", build, 1)
    b = build if build is not None else 10**9
    unified = bool(kv_unified)
    if b >= BUILD_NP_AUTO:
        auto = parallel is None or parallel < 0
        since = f"b{BUILD_NP_AUTO} (PR 17997; 4 slots + unified since b{BUILD_AUTO_SLOTS}, PR 16736)"
        rule = "-np not given: 4 slots over one unified KV cache" if auto else f"-np {parallel} as given"
    elif b >= BUILD_AUTO_SLOTS:
        # tools/server/server.cpp@b6925: if (n_parallel == 1 && kv_unified == false [&& !has_speculative()])
        auto = (parallel is None or parallel == 1) and not kv_unified and not speculative
        since = f"b{BUILD_AUTO_SLOTS} (PR 16736)"
        rule = "-np 1 (the default) without -kvu: 4 slots over one unified KV cache" if auto else "as given"
    else:
        auto = False
        since = "before b6925: one slot unless -np says otherwise"
        rule = "as given"
    slots = AUTO_SLOTS if auto else (parallel if parallel is not None and parallel > 0 else 1)
    unified = True if auto else unified
    if n_ctx is None:
        requested = n_ctx_train if b >= BUILD_FIT else N_CTX_DEFAULT_BEFORE_FIT
    else:
        requested = n_ctx or n_ctx_train
    total = _pad(requested)
    if unified:
        per_seq = total
    else:
        per_seq = _pad(total // slots)
        total = per_seq * slots
    slot_ctx = min(per_seq, n_ctx_train)
    text = (
        f"llama-server runs {slots} slot{'s' if slots > 1 else ''}"
        + (" over one unified KV cache" if unified and slots > 1 else "")
        + f" ({rule}): {total:,} cells of KV cache, "
        + (
            f"which any slot may fill up to {slot_ctx:,} tokens while the others share what is left"
            if unified and slots > 1
            else f"{slot_ctx:,} tokens per slot"
        )
    )
    return {
        "n_parallel": slots,
        "kv_unified": unified,
        "auto": auto,
        "n_ctx": total,
        "n_ctx_seq": per_seq,
        "n_ctx_slot": slot_ctx,
        "since": since,
        "build": build,
        "text": text,
        "sources": SERVER_SOURCES,
    }


def _context_fn(kv_bytes: int | float | Callable[[int], int]) -> Callable[[int], int]:
    if callable(kv_bytes):
        return kv_bytes
    if isinstance(kv_bytes, bool) or not isinstance(kv_bytes, (int, float)) or kv_bytes < 0:
        raise ValueError(f"kv_bytes must be bytes per token (>= 0) or a function of n_ctx, got {short_repr(kv_bytes)}")
    return lambda n: int(kv_bytes * _pad(n))


def fit_params(
    free_bytes: int,
    weights_bytes: int,
    kv_bytes: int | float | Callable[[int], int],
    n_ctx_train: int,
    compute_bytes: int = 0,
    n_ctx: int | None = None,
    target_bytes: int = FIT_TARGET_BYTES,
    n_ctx_min: int = FIT_MIN_CTX,
    fit: bool = True,
    n_gpu_layers_set: bool = False,
    extra_bytes: int = 0,
    n_devices: int = 1,
    n_layers: int | None = None,
    moe: bool = False,
) -> dict:
    """What llama.cpp's `--fit` (common/fit.cpp@b10309, common_params_fit_impl) does at start-up.

    free_bytes: the free memory llama.cpp reads from the device(s) (summed over `n_devices`), after the
    CUDA context; weights_bytes: the model buffers on them; kv_bytes: the context buffers (KV cache and
    recurrent state) as bytes per token or as a function of the total n_ctx; compute_bytes: the compute
    buffer (fixed); extra_bytes: anything else llama.cpp projects (a projector, a draft model).
    n_ctx is -c (None: not given, so --fit may lower it; 0: the training context, never lowered since
    b7825); target_bytes is --fit-target per device, n_ctx_min --fit-ctx; n_gpu_layers_set says -ngl
    (or -ts / -ot) was given, which stops step 3.

    `outcome` is one of
      "fits": free - used >= target with the settings as given, nothing changes;
      "context_reduced": -c was not given and a context from n_ctx_min up fits: `n_ctx` is that context;
      "layers_to_cpu": llama.cpp keeps some layers or MoE experts in system memory (slower) and starts;
      "user_layers_kept": -ngl given, --fit gives up with a warning and loads as set: `starts` is whether
        the buffers fit the free memory at all (no target);
      "fit_off": --fit off, a plain allocation: `starts` likewise.

    >>> r = fit_params(free_bytes=30733 * MIB, weights_bytes=19370 * MIB, kv_bytes=65536,
    ...                n_ctx_train=262144, target_bytes=400 * MIB)
    >>> r["outcome"], r["n_ctx"]
    ('context_reduced', 175360)
    """
    free_bytes = _whole("free_bytes", free_bytes)
    weights_bytes = _whole("weights_bytes", weights_bytes)
    compute_bytes = _whole("compute_bytes", compute_bytes)
    extra_bytes = _whole("extra_bytes", extra_bytes)
    target_bytes = _whole("target_bytes", target_bytes)
    n_ctx_train = _whole("n_ctx_train", n_ctx_train, 1)
    n_ctx_min = _whole("n_ctx_min", n_ctx_min, 1)
    n_devices = _whole("n_devices", n_devices, 1)
    if n_ctx is not None:
        n_ctx = _whole("n_ctx", n_ctx, 0)
    if not isinstance(fit, bool) or not isinstance(n_gpu_layers_set, bool) or not isinstance(moe, bool):
        raise ValueError("fit, n_gpu_layers_set and moe must be True or False")
    if n_devices > 1:
        n_layers = _whole("n_layers", n_layers, 1)
    context = _context_fn(kv_bytes)

    def used(c: int) -> int:
        ctx_bytes = context(c)
        if isinstance(ctx_bytes, bool) or not isinstance(ctx_bytes, int) or ctx_bytes < 0:
            raise ValueError(f"kv_bytes({c}) must return whole bytes >= 0, got {short_repr(ctx_bytes)}")
        return weights_bytes + ctx_bytes + compute_bytes + extra_bytes

    start_ctx = n_ctx_train if not n_ctx else n_ctx  # src/llama-context.cpp: n_ctx 0 -> n_ctx_train
    used_full = used(start_ctx)
    margin = target_bytes * n_devices
    log = [
        f"projected to use {used_full // MIB} MiB of device memory vs. {free_bytes // MIB} MiB of free device memory"
    ]
    result: dict[str, Any] = {
        "n_ctx": start_ctx,
        "projected_bytes": used_full,
        "free_bytes": free_bytes,
        "target_bytes": target_bytes,
        "n_ctx_min": n_ctx_min,
        "all_on_gpu": True,
        "not_modelled": FIT_NOT_MODELLED,
        "since": f"--fit on by default since b{BUILD_FIT} (PR 16653); this context rule since "
        f"b{BUILD_FIT_INTERPOLATED} (PR 18372)",
        "sources": FIT_SOURCES,
    }
    if not fit:
        starts = used_full <= free_bytes
        return result | {
            "outcome": "fit_off",
            "starts": starts,
            "log_lines": [],
            "text": f"--fit off: llama.cpp allocates {used_full / GIB:.2f} GiB as asked"
            + (" and starts" if starts else f" and fails: only {free_bytes / GIB:.2f} GiB is free"),
        }
    # step 1: the settings as given (common/fit.cpp: projected_free >= margins[0] -> "no changes needed")
    if free_bytes - used_full >= margin:
        log.append(
            f"will leave {(free_bytes - used_full) // MIB} >= {target_bytes // MIB} MiB of free device memory, no changes needed"
        )
        return result | {
            "outcome": "fits",
            "starts": True,
            "log_lines": log,
            "text": f"--fit: the settings leave {(free_bytes - used_full) / GIB:.2f} GiB free "
            f"(at least --fit-target {target_bytes // MIB:,} MiB), so nothing changes",
        }
    # step 2: lower the context, only when -c was not given
    deficit = used_full - (free_bytes - margin)
    log.append(
        f"cannot meet free memory target of {target_bytes // MIB} MiB, need to reduce device memory by {deficit // MIB} MiB"
    )
    chosen = start_ctx
    reduced_enough = False
    if n_ctx is None and n_ctx_train > n_ctx_min:
        used_target = free_bytes - margin
        if n_devices > 1:
            # whole layers (dense) or whole tensors (MoE, ~1/3 layer) per device: (nd + 1) half-layers held back
            per_layer = weights_bytes // n_layers
            used_target -= (n_devices + 1) * per_layer // (6 if moe else 2)
        used_min = used(n_ctx_min)
        chosen = n_ctx_min
        if used_target > used_min:
            chosen += (n_ctx_train - n_ctx_min) * (used_target - used_min) // (used_full - used_min)
            chosen = max(chosen - chosen % CTX_PAD, n_ctx_min)
            reduced_enough = True
        per_ctx = (used_full - used_min) // (n_ctx_train - n_ctx_min)
        saved = (n_ctx_train - chosen) * per_ctx if reduced_enough else used_full - used_min
        log.append(
            f"context size reduced from {n_ctx_train} to {chosen} -> need {saved // MIB} MiB less memory in total"
        )
        if reduced_enough and n_devices == 1:
            log.append("entire model can be fit by reducing context")
            return result | {
                "outcome": "context_reduced",
                "n_ctx": chosen,
                "starts": True,
                "log_lines": log,
                "text": f"--fit lowers the context from {n_ctx_train:,} (the training context) to {chosen:,} tokens, "
                f"the most that leaves --fit-target {target_bytes // MIB:,} MiB free",
            }
    elif n_ctx is None or n_ctx == 0:
        log.append(
            f"user has requested full context size of {n_ctx_train} -> no change"
            if n_ctx == 0
            else f"default model context size is {n_ctx_train} which is <= the min. context size of {n_ctx_min} -> no change"
        )
    else:
        log.append(f"context size set by user to {n_ctx} -> no change")
    result["n_ctx"] = chosen
    if reduced_enough:  # several devices: the context fits in sum, layers are then spread (not modelled)
        return result | {
            "outcome": "context_reduced",
            "starts": True,
            "log_lines": log + ["entire model should be fit across devices by reducing context"],
            "text": f"--fit lowers the context to {chosen:,} tokens and spreads the layers over {n_devices} devices",
        }
    # step 3: weights to system memory, unless the user placed them
    if n_gpu_layers_set:
        final = used(chosen)
        starts = final <= free_bytes
        log.append("failed to fit params to free device memory: n_gpu_layers already set by user, abort")
        return result | {
            "outcome": "user_layers_kept",
            "starts": starts,
            "log_lines": log,
            "text": "--fit gives up because -ngl was given and loads the layers as set"
            + (f" with {chosen:,} tokens of context" if chosen != start_ctx else "")
            + (": it starts, with less than --fit-target free" if starts else ": the allocation fails"),
        }
    return result | {
        "outcome": "layers_to_cpu",
        "starts": True,
        "all_on_gpu": False,
        "log_lines": log,
        "text": "--fit keeps some layers"
        + (" (MoE experts first)" if moe else "")
        + " in system memory so the rest fits with --fit-target free"
        + (f", at {chosen:,} tokens of context" if chosen != start_ctx else f", at the {chosen:,} tokens asked")
        + ": it starts, slower (how many layers is not modelled)",
    }


# How llama.cpp has cached an MLA model (DeepSeek-V2/V3, Kimi, GLM-4.7-Flash) over time. The GGUF says which graph
# runs: a file converted since PR 12801 carries attention.key_length_mla / value_length_mla (the heads' own sizes,
# 192 / 128 for DeepSeek-V3) and key_length 576 / value_length 512 (the latent); an older file carries only
# key_length 192 / value_length 128 per head, and llama.cpp runs it with every head's K and V cached.
LLAMACPP_MLA_CACHES = {
    "latent": (
        "K holds the latent (kv_lora_rank + qk_rope_head_dim values), no V tensor: llama.cpp since PR 19067 "
        "('kv-cache : support V-less cache', 2026-01-24: 'almost x2 less memory for the KV cache')"
    ),
    "latent+v": (
        "K holds the latent (kv_lora_rank + qk_rope_head_dim values) and V the latent again (kv_lora_rank "
        "values): llama.cpp from PR 12801 ('DeepSeek V2/V3 MLA implementation', April 2025) to PR 19067 "
        "(GGUF key_length 576, value_length 512)"
    ),
    "per-head": (
        "every head's K (qk_nope_head_dim + qk_rope_head_dim) and V (v_head_dim): llama.cpp before PR 12801, or "
        "a GGUF converted before it (key_length 192, value_length 128 per head, no key_length_mla)"
    ),
}
LLAMACPP_MLA_CACHE = "latent"


def llamacpp_mla_architecture(arch: Architecture, mla_cache: str = LLAMACPP_MLA_CACHE) -> Architecture:
    """`arch` as the llama.cpp build or GGUF named by `mla_cache` (LLAMACPP_MLA_CACHES) caches it.

    "latent" returns the model as it is. The others need MLA's sizes from the config (Architecture.mla_dims);
    a model that is not MLA is returned as it is, whatever the layout.

    >>> from kvlab.memory.catalogue import model_architecture
    >>> ds = model_architecture("deepseek-v3")
    >>> [(la.k_values, la.v_values) for m in LLAMACPP_MLA_CACHES for la in llamacpp_mla_architecture(ds, m).layers[:1]]
    [(576, 0), (576, 512), (24576, 16384)]
    """
    if mla_cache not in LLAMACPP_MLA_CACHES:
        raise ValueError(f"mla_cache must be one of {', '.join(LLAMACPP_MLA_CACHES)}, got {short_repr(mla_cache)}")
    if arch.attention != "mla" or mla_cache == LLAMACPP_MLA_CACHE:
        return arch
    if arch.mla_dims is None:
        raise ValueError(
            f"mla_cache {mla_cache}: {arch.name}'s config lacks qk_nope_head_dim or v_head_dim, which that layout needs"
        )
    rank, rope, nope, v_dim = arch.mla_dims

    def cached(layer):
        if layer.kind not in ATTENTION_KINDS or layer.k_values != rank + rope:
            return layer
        if mla_cache == "latent+v":
            return replace(layer, v_values=rank, head_dim_v=rank)
        return attention_layer(layer.kind, arch.n_heads, nope + rope, head_dim_v=v_dim)

    layers = tuple(cached(layer) for layer in arch.layers)
    note = f"llama.cpp's {mla_cache} MLA cache: {LLAMACPP_MLA_CACHES[mla_cache]}"
    return replace(
        arch,
        layers=layers,
        attention="mla" if mla_cache == "latent+v" else "mha",
        notes=(*arch.notes, note),
    )


def gemma3n_cache_layers(n_layer: int, swa_period: int = GEMMA3N_SWA_PERIOD) -> dict:
    """Which Gemma-3n layers llama.cpp gives a K/V cache, and which of those slide.

    src/models/gemma3n.cpp@b10309: swa_type STANDARD, set_swa_pattern(swa_period) (layer il slides when
    il % period < period - 1, src/llama-hparams.cpp), n_layer_kv_from_start = 20 (src/llama-hparams.cpp
    has_kv: only layers below it keep K/V); src/llama-model.cpp@b10309: layers from 20 on reuse layer 18
    (sliding) or 19 (full).

    >>> gemma3n_cache_layers(35)
    {'full': 4, 'sliding': 16, 'shared': 15}
    """
    n_layer = _whole("n_layer", n_layer, 1)
    swa_period = _whole("swa_period", swa_period, 1)
    kept = range(min(n_layer, GEMMA3N_KV_LAYERS))
    sliding = sum(1 for il in kept if swa_period > 1 and il % swa_period < swa_period - 1)
    return {"full": len(kept) - sliding, "sliding": sliding, "shared": n_layer - len(kept)}
