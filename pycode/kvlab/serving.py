"""Speed and cost of decoding, from bytes and bandwidth.

Decoding one token is memory-bandwidth-bound: the GPU streams every weight
it needs plus the whole KV cache of the sequence, and does comparatively
little arithmetic on them. So, at batch 1,

    time per token = (weight bytes read + KV bytes read) / bandwidth.

With B sequences decoded together, the weights are read once per step and
shared; each sequence still reads its own cache:

    step time = (weight bytes + B x KV bytes per sequence) / bandwidth
    tokens/s  = B / step time

These are roofline numbers: an upper bound on speed that real engines reach
60-85% of. Every result carries its assumptions next to its numbers.

>>> r = decode_time_per_token(weight_bytes=16e9, kv_bytes=0, bandwidth_gb_s=1000)
>>> round(r["seconds_per_token"], 3), round(r["tokens_per_second"], 1)
(0.016, 62.5)
"""
from __future__ import annotations

from kvlab.architecture import Architecture
from kvlab.catalogue import get_gpu, gpu_memory_bytes, model_architecture
from kvlab.memory import GIB, RUNTIME_RESERVE_BYTES, kv_cache_bytes
from kvlab.weights import weights_bytes


def decode_time_per_token(weight_bytes: float, kv_bytes: float, bandwidth_gb_s: float, batch: int = 1,
                          bandwidth_efficiency: float = 1.0) -> dict:
    """Step time for `batch` sequences that each read `kv_bytes` of cache, sharing one weight read."""
    if bandwidth_gb_s <= 0 or batch < 1 or not 0 < bandwidth_efficiency <= 1:
        raise ValueError("bandwidth must be positive, batch >= 1, bandwidth_efficiency in (0, 1]")
    bandwidth = bandwidth_gb_s * 1e9 * bandwidth_efficiency
    bytes_read = weight_bytes + batch * kv_bytes
    step = bytes_read / bandwidth
    return {
        "batch": batch,
        "bytes_read_per_step": bytes_read,
        "weight_bytes_read": weight_bytes,
        "kv_bytes_read": batch * kv_bytes,
        "kv_share_of_reads": batch * kv_bytes / bytes_read if bytes_read else 0.0,
        "seconds_per_token": step,          # per sequence: each gets one token per step
        "tokens_per_second": 1 / step,      # per sequence
        "total_tokens_per_second": batch / step,
        "assumptions": [
            "decode is memory-bandwidth-bound: time = bytes read / bandwidth (compute and latency ignored)",
            f"bandwidth {bandwidth_gb_s:g} GB/s x efficiency {bandwidth_efficiency:g} (1.0 = vendor peak: an upper bound)",
            "weights are read once per step and shared by the batch; each sequence reads its own KV cache",
        ],
    }


def cost_per_million_tokens(price_per_hour: float, tokens_per_second: float) -> dict:
    """Dollars per million generated tokens at a given hourly price and total throughput."""
    if price_per_hour is None or price_per_hour < 0 or tokens_per_second <= 0:
        raise ValueError("price_per_hour must be >= 0 and tokens_per_second > 0")
    tokens_per_hour = tokens_per_second * 3600
    return {"price_per_hour": price_per_hour, "tokens_per_hour": tokens_per_hour,
            "usd_per_million_tokens": price_per_hour / tokens_per_hour * 1e6,
            "assumptions": ["the GPU is busy generating the whole hour (no idle time, no prefill)"]}


def _weights_read(arch: Architecture, fmt: str, batch: int) -> tuple[int, int, str]:
    total = weights_bytes(arch.params, fmt)
    if not arch.active_params or arch.active_params >= arch.params:
        return total["bytes"], total["bytes"], "dense: every weight is read each step"
    active = weights_bytes(arch.active_params, fmt)["bytes"]
    read = min(total["bytes"], active * batch)
    return read, total["bytes"], (f"MoE: {arch.active_params:.3g} of {arch.params:.3g} params per token; "
                                  "a batch reads at most batch x active (upper bound: different experts per sequence)")


def serving_estimate(model, gpu, context: int, batch: int = 1, weights_format: str = "BF16",
                     kv: str = "f16", price_per_hour: float | None = None, bandwidth_efficiency: float = 1.0,
                     n_gpus: int = 1) -> dict:
    """Speed, memory and cost of serving `batch` chats of `context` tokens each on a GPU.

    `model` is a catalogue id, config path/dict/JSON or Architecture; `gpu` a
    catalogue id or a dict with memory_gib, bandwidth_gb_s (and optionally
    price_per_hour_usd). KV bytes read per token = the exact cache of a
    `context`-token sequence (sliding layers capped at their window).
    """
    arch = model_architecture(model)
    card = get_gpu(gpu) if isinstance(gpu, str) else dict(gpu)
    if n_gpus < 1:
        raise ValueError("n_gpus must be at least 1")
    memory = gpu_memory_bytes(card) * n_gpus
    bandwidth = card["bandwidth_gb_s"] * n_gpus
    price = price_per_hour if price_per_hour is not None else card.get("price_per_hour_usd")
    price = price * n_gpus if price is not None and price_per_hour is None else price

    kv_seq = kv_cache_bytes(arch, context, kv)["total_bytes"]
    w_read, w_total, w_note = _weights_read(arch, weights_format, batch)
    speed = decode_time_per_token(w_read, kv_seq, bandwidth, batch, bandwidth_efficiency)
    used = w_total + batch * kv_seq + RUNTIME_RESERVE_BYTES
    users_by_memory = max(0, (memory - w_total - RUNTIME_RESERVE_BYTES) // kv_seq) if kv_seq else None
    result = {
        "model": arch.name,
        "gpu": card.get("name", card.get("id", "custom")),
        "n_gpus": n_gpus,
        "context_per_chat": context,
        "batch": batch,
        "weights_format": weights_format,
        "kv_type": kv,
        "weights_bytes": w_total,
        "kv_bytes_per_chat": kv_seq,
        "memory_used_bytes": used,
        "memory_used_gib": used / GIB,
        "memory_bytes": memory,
        "fits": used <= memory,
        "chats_that_fit_in_memory": users_by_memory,
        "seconds_per_token": speed["seconds_per_token"],
        "tokens_per_second_per_chat": speed["tokens_per_second"],
        "total_tokens_per_second": speed["total_tokens_per_second"],
        "kv_share_of_reads": speed["kv_share_of_reads"],
        "usd_per_million_tokens": None,
        "price_per_hour": price,
        "assumptions": speed["assumptions"] + [
            w_note,
            f"KV read per token = whole cache of a {context}-token chat ({kv}); sliding layers capped at their window",
            "memory = weights + batch x KV + 0.5 GiB runtime reserve (compute buffers not counted here)",
        ],
    }
    if price is not None:
        cost = cost_per_million_tokens(price, speed["total_tokens_per_second"])
        result["usd_per_million_tokens"] = cost["usd_per_million_tokens"]
        result["assumptions"] += cost["assumptions"]
        if card.get("price_source"):
            result["assumptions"].append(f"price {card.get('price_provider')}, {card.get('price_source')} "
                                         f"({card.get('price_date')})")
    if not result["fits"]:
        result["assumptions"].append("WARNING: this batch does not fit in memory; the speed is hypothetical")
    return result


def users_per_gpu(model, gpu, context: int, weights_format: str = "BF16", kv: str = "f16",
                  min_tokens_per_second: float | None = None, bandwidth_efficiency: float = 1.0) -> dict:
    """How many chats of `context` tokens one GPU serves: limited by memory, and by speed if asked.

    Speed limit: each chat gets bandwidth / (weights + B x KV) tokens/s, so
    B <= (bandwidth / min_tokens_per_second - weights) / KV.
    """
    arch = model_architecture(model)
    card = get_gpu(gpu) if isinstance(gpu, str) else dict(gpu)
    memory = gpu_memory_bytes(card)
    kv_seq = kv_cache_bytes(arch, context, kv)["total_bytes"]
    w_total = weights_bytes(arch.params, weights_format)["bytes"]
    by_memory = max(0, (memory - w_total - RUNTIME_RESERVE_BYTES) // kv_seq)
    by_speed = None
    if min_tokens_per_second:
        bandwidth = card["bandwidth_gb_s"] * 1e9 * bandwidth_efficiency
        w_read, _, _ = _weights_read(arch, weights_format, 1)
        by_speed = max(0, int((bandwidth / min_tokens_per_second - w_read) // kv_seq))
    users = by_memory if by_speed is None else min(by_memory, by_speed)
    return {"model": arch.name, "gpu": card.get("name", "custom"), "context_per_chat": context,
            "kv_bytes_per_chat": kv_seq, "weights_bytes": w_total,
            "users_by_memory": by_memory, "users_by_speed": by_speed, "users": users,
            "limited_by": "memory" if by_speed is None or by_memory <= by_speed else "speed",
            "assumptions": [
                "memory: (GPU memory - weights - 0.5 GiB reserve) // KV of one full chat",
                "speed (if asked): each chat must get at least min_tokens_per_second at the roofline",
                "every chat is at its full context (worst case)"]}
