"""Speed and cost of decoding, from bytes and bandwidth.

Decoding one token is memory-bandwidth-bound: the GPU streams every weight
it needs plus the whole KV cache of the sequence, and does comparatively
little arithmetic on them. So, at batch 1,

    time per token = (weight bytes read + KV bytes read) / bandwidth.

With B sequences decoded together, the weights are read once per step and
shared; each sequence still reads its own cache:

    step time = (weight bytes + B x KV bytes per sequence) / bandwidth
    tokens/s  = B / step time

Large batches turn the step compute-bound: B x 2 x active params FLOPs (plus
attention) over the GPU's peak. A step takes the longer of the two bounds,
and the result names which one binds. Nothing is timed that does not fit:
memory is the verdict of `kvlab.memory.verdict.fit_verdict`.

These are roofline numbers: an upper bound on speed that real engines reach
60-85% of. Every result carries its assumptions next to its numbers.

>>> r = decode_time_per_token(weight_bytes=16e9, kv_bytes=0, bandwidth_gb_s=1000)
>>> round(r["seconds_per_token"], 3), round(r["tokens_per_second"], 1)
(0.016, 62.5)
"""

from __future__ import annotations

from kvlab.memory.architecture import LINEAR, SLIDING, Architecture
from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.kv_bytes import VLLM_BLOCK_SIZE, VLLM_GPU_MEMORY_UTILIZATION, kv_cache_bytes
from kvlab.memory.weights import model_weights_bytes, params_text, weights_bytes
from kvlab.inputs import finite_number


def decode_time_per_token(
    weight_bytes: float,
    kv_bytes: float,
    bandwidth_gb_s: float,
    batch: int = 1,
    bandwidth_efficiency: float = 1.0,
    flops_per_step: float | None = None,
    peak_tflops: float | None = None,
) -> dict:
    """Step time for `batch` sequences that each read `kv_bytes` of cache, sharing one weight read.

    Both roofline bounds: bytes / bandwidth, and (when `flops_per_step` and
    `peak_tflops` are given) FLOPs / peak compute. The step takes the longer;
    `bound` names which one binds.

    A step must take some time: `weight_bytes` and `kv_bytes` may not both be 0 unless the
    compute bound is given and positive (else tokens per second would be 1 / 0); that, and
    negative or non-finite byte counts, are a ValueError naming the field.
    """
    if not bandwidth_gb_s > 0 or batch < 1 or not 0 < bandwidth_efficiency <= 1:
        raise ValueError("bandwidth must be positive, batch >= 1, bandwidth_efficiency in (0, 1]")
    finite_number("weight_bytes", weight_bytes, minimum=0)
    finite_number("kv_bytes", kv_bytes, minimum=0)
    bandwidth = bandwidth_gb_s * 1e9 * bandwidth_efficiency
    bytes_read = weight_bytes + batch * kv_bytes
    memory_time = bytes_read / bandwidth
    compute_time = None
    if flops_per_step is not None and peak_tflops:
        compute_time = flops_per_step / (peak_tflops * 1e12)
    step = max(memory_time, compute_time or 0.0)
    if not step > 0:
        raise ValueError(
            "weight_bytes and kv_bytes must not both be 0 (with no positive compute bound): "
            "a step that reads nothing takes no time, so tokens per second is undefined"
        )
    bound = "compute" if compute_time is not None and compute_time > memory_time else "bandwidth"
    assumptions = [
        "time per step = the longer of bytes read / bandwidth and FLOPs / peak compute (roofline)",
        f"bandwidth {bandwidth_gb_s:g} GB/s x efficiency {bandwidth_efficiency:g} (1.0 = vendor peak: an upper bound)",
        "weights are read once per step and shared by the batch; each sequence reads its own KV cache",
    ]
    if compute_time is None:
        assumptions[0] = "decode is memory-bandwidth-bound: time = bytes read / bandwidth (compute not given)"
    return {
        "batch": batch,
        "bytes_read_per_step": bytes_read,
        "weight_bytes_read": weight_bytes,
        "kv_bytes_read": batch * kv_bytes,
        "kv_share_of_reads": batch * kv_bytes / bytes_read if bytes_read else 0.0,
        "memory_seconds": memory_time,
        "compute_seconds": compute_time,
        "flops_per_step": flops_per_step,
        "bound": bound,
        "seconds_per_token": step,  # per sequence: each gets one token per step
        "tokens_per_second": 1 / step,  # per sequence
        "total_tokens_per_second": batch / step,
        "assumptions": assumptions,
    }


def cost_per_million_tokens(price_per_hour: float, tokens_per_second: float) -> dict:
    """Dollars per million generated tokens at a given hourly price and total throughput."""
    if price_per_hour is None or not price_per_hour >= 0 or not tokens_per_second > 0:
        raise ValueError("price_per_hour must be >= 0 and tokens_per_second > 0")
    tokens_per_hour = tokens_per_second * 3600
    return {
        "price_per_hour": price_per_hour,
        "tokens_per_hour": tokens_per_hour,
        "usd_per_million_tokens": price_per_hour / tokens_per_hour * 1e6,
        "assumptions": ["the GPU is busy generating the whole hour (no idle time, no prefill)"],
    }


def _weights_read(arch: Architecture, fmt: str, batch: int) -> tuple[int, int, str]:
    """Weight bytes one decode step reads, the model's total, and how (MoE: active experts only)."""
    total = model_weights_bytes(arch, fmt)
    if not arch.active_params or arch.active_params >= arch.params:
        return total["bytes"], total["bytes"], "dense: every weight is read each step"
    if total.get("covered_params"):  # MXFP4 experts, BF16 rest: the rest is read every step
        rest = arch.params - total["covered_params"]
        expert_active = max(0.0, arch.active_params - rest)
        rest_bytes = weights_bytes(rest, "BF16")["bytes"]
        expert_bytes = weights_bytes(expert_active, fmt)["bytes"] if expert_active else 0
        read = min(total["bytes"], rest_bytes + expert_bytes * batch)
    else:
        active = weights_bytes(arch.active_params, fmt)["bytes"]
        read = min(total["bytes"], active * batch)
    return (
        read,
        total["bytes"],
        (
            f"MoE: {params_text(arch.active_params)} of {params_text(arch.params)} params "
            "per token; a batch reads at most batch x active (upper bound: different "
            "experts per sequence)"
        ),
    )


def attention_flops(arch: Architecture, context: int) -> float:
    """FLOPs of attention for one new token against `context` cached tokens, all layers.

    Per attention layer: scores (q . k) and the weighted sum of values, 2 FLOPs
    per multiply-add: 2 x n_heads x tokens x (head_dim_k + head_dim_v); a sliding
    layer sees at most its window; an MLA layer (absorbed form) works on the
    latent for both. A linear-attention layer updates its state: 4 FLOPs per
    state value.
    """
    flops = 0.0
    for layer in arch.layers:
        if layer.kind == LINEAR:
            flops += 4 * layer.ssm_state_values
            continue
        seen = min(context, layer.window) if layer.kind == SLIDING else context
        hk = layer.head_dim_k
        hv = layer.head_dim_v or hk
        flops += 2 * arch.n_heads * seen * (hk + hv)
    return flops


def decode_flops(arch: Architecture, context: int, batch: int) -> float:
    """FLOPs of one decode step of `batch` sequences at `context`: 2 x active params + attention, each."""
    active = arch.active_params or arch.params
    return batch * (2 * active + attention_flops(arch, context))


def prefill_flops(arch: Architecture, prompt: int) -> float:
    """FLOPs to prefill one `prompt`-token prompt: 2 x active params per token + causal attention."""
    active = arch.active_params or arch.params
    flops = 2 * active * prompt
    for layer in arch.layers:
        if layer.kind == LINEAR:
            flops += 4 * layer.ssm_state_values * prompt
            continue
        hk = layer.head_dim_k
        hv = layer.head_dim_v or hk
        w = layer.window if layer.kind == SLIDING else prompt
        w = min(w, prompt)
        seen = w * (w + 1) // 2 + (prompt - w) * w  # sum over t of min(t, window)
        flops += 2 * arch.n_heads * seen * (hk + hv)
    return flops


def serving_estimate(
    model,
    gpu,
    context: int,
    batch: int = 1,
    weights_format: str = "BF16",
    kv: str = "f16",
    price_per_hour: float | None = None,
    bandwidth_efficiency: float = 1.0,
    n_gpus: int = 1,
    engine: str = "vllm",
    answer_tokens: int = 512,
    solve: bool = True,
    gpu_memory_utilization: float = VLLM_GPU_MEMORY_UTILIZATION,
    block_size: int = VLLM_BLOCK_SIZE,
) -> dict:
    """Speed, memory and cost of serving `batch` chats of `context` tokens each.

    Memory is `kvlab.memory.verdict.fit_verdict` for the same settings (under vLLM with its
    `gpu_memory_utilization` and `block_size`; llama.cpp ignores both): a batch that
    does not fit is neither timed nor priced (those fields are None and
    `verdict` says why). Each step takes the longer of its two roofline bounds
    (bytes / bandwidth, FLOPs / peak compute); the binding one is `bound`.
    Cost per million generated tokens includes prefill: each chat's prompt of
    context - answer_tokens tokens is prefilled once, then answer_tokens are
    decoded (every step timed at the full context: an upper bound).
    """
    from kvlab.memory.verdict import fit_verdict

    arch = model_architecture(model)
    card = get_gpu(gpu) if isinstance(gpu, str) else dict(gpu)
    context = finite_number("context", context, minimum=1, integer=True)
    batch = finite_number("batch", batch, minimum=1, maximum=65536, integer=True)
    n_gpus = finite_number("n_gpus", n_gpus, minimum=1, integer=True)
    answer = finite_number("answer_tokens", answer_tokens, minimum=1, integer=True)
    answer = min(answer, context)
    prompt = context - answer
    if price_per_hour is not None:
        price_per_hour = finite_number("price_per_hour", price_per_hour, minimum=0)
    efficiency = finite_number("bandwidth_efficiency", bandwidth_efficiency, minimum=0.01, maximum=1)
    v = fit_verdict(
        arch,
        context,
        n_seq=batch,
        weights=weights_format,
        kv=kv,
        gpu=card,
        n_gpus=n_gpus,
        engine=engine,
        gpu_memory_utilization=gpu_memory_utilization,
        block_size=block_size,
        solve=solve,
    )
    bandwidth = card["bandwidth_gb_s"] * n_gpus
    peak = card.get("bf16_dense_tflops")
    peak = peak * n_gpus if peak else None
    price = price_per_hour if price_per_hour is not None else card.get("price_per_hour_usd")
    price = price * n_gpus if price is not None and price_per_hour is None else price

    kv_seq = kv_cache_bytes(arch, context, kv)["total_bytes"]
    w_read, w_total, w_note = _weights_read(arch, weights_format, batch)
    flops = decode_flops(arch, context, batch)
    speed = decode_time_per_token(w_read, kv_seq, bandwidth, batch, efficiency, flops, peak)
    pre_flops = prefill_flops(arch, prompt) if prompt else 0.0
    pre_seconds = max(
        pre_flops / (peak * 1e12) if peak else 0.0, (w_total / (bandwidth * 1e9 * efficiency)) if prompt else 0.0
    )
    round_seconds = batch * pre_seconds + answer * speed["seconds_per_token"]
    tokens_per_second_with_prefill = batch * answer / round_seconds
    result = {
        "model": arch.name,
        "gpu": card.get("name", card.get("id", "custom")),
        "n_gpus": n_gpus,
        "engine": engine,
        "context_per_chat": context,
        "prompt_tokens": prompt,
        "answer_tokens": answer,
        "batch": batch,
        "weights_format": v["weights_format"],
        "kv_type": kv,
        "weights_bytes": w_total,
        "kv_bytes_per_chat": kv_seq,
        "verdict": v,
        "fits": v["fits"],
        "memory_used_bytes": v["total_bytes"],
        "memory_used_gib": v["total_gib"],
        "memory_bytes": v["budget_bytes"],
        "chats_that_fit_in_memory": v["max_sequences"],
        "bound": speed["bound"],
        "memory_seconds": speed["memory_seconds"],
        "compute_seconds": speed["compute_seconds"],
        "flops_per_step": flops,
        "prefill_seconds_per_chat": pre_seconds,
        "seconds_per_token": speed["seconds_per_token"],
        "tokens_per_second_per_chat": speed["tokens_per_second"],
        "total_tokens_per_second": speed["total_tokens_per_second"],
        "tokens_per_second_with_prefill": tokens_per_second_with_prefill,
        "kv_share_of_reads": speed["kv_share_of_reads"],
        "usd_per_million_tokens": None,
        "price_per_hour": price,
        "price_kind": card.get("price_kind") if price_per_hour is None else "given",
        "assumptions": speed["assumptions"]
        + [
            w_note,
            f"FLOPs per step: 2 x active params + attention over the context, per chat; peak "
            f"{card.get('bf16_dense_tflops')} TFLOPS dense BF16 per GPU; source: "
            f"{card.get('flops_source', 'not in the catalogue')}",
            f"KV read per token = whole cache of a {context}-token chat ({kv}); sliding layers capped at their window",
            f"memory: {v['engine_name']} accounting ({v['flags']}), the same verdict as “Does it fit?” on the memory page",
            f"each chat: a {prompt}-token prompt prefilled once (compute-bound), then {answer} tokens decoded at the "
            "full context (upper bound on decode time)",
        ],
    }
    if not v["fits"]:
        for key in (
            "seconds_per_token",
            "tokens_per_second_per_chat",
            "total_tokens_per_second",
            "tokens_per_second_with_prefill",
            "memory_seconds",
            "compute_seconds",
            "prefill_seconds_per_chat",
            "bound",
        ):
            result[key] = None
        result["assumptions"].append(f"not timed or priced: {v['headline']}")
        return result
    if price is not None:
        cost = cost_per_million_tokens(price, tokens_per_second_with_prefill)
        result["usd_per_million_tokens"] = cost["usd_per_million_tokens"]
        result["assumptions"].append("the GPU is busy the whole hour (no idle time); prefill included")
        if card.get("price_source") and price_per_hour is None:
            result["assumptions"].append(
                f"price {card.get('price_provider')} ({card.get('price_kind')}, {card.get('price_date')}); "
                f"source: {card.get('price_source')}"
            )
    return result


def users_per_gpu(
    model,
    gpu,
    context: int,
    weights_format: str = "BF16",
    kv: str = "f16",
    min_tokens_per_second: float | None = None,
    bandwidth_efficiency: float = 1.0,
    engine: str = "vllm",
) -> dict:
    """How many chats of `context` tokens one GPU serves: limited by memory (the verdict), and by speed if asked.

    Speed limit: each chat gets bandwidth / (weights + B x KV) tokens/s, so
    B <= (bandwidth / min_tokens_per_second - weights) / KV.
    """
    from kvlab.memory.verdict import fit_verdict

    arch = model_architecture(model)
    card = get_gpu(gpu) if isinstance(gpu, str) else dict(gpu)
    v = fit_verdict(arch, context, weights=weights_format, kv=kv, gpu=card, engine=engine)
    kv_seq = kv_cache_bytes(arch, context, kv)["total_bytes"]
    w_total = model_weights_bytes(arch, weights_format)["bytes"]
    by_memory = v["max_sequences"]
    by_speed = None
    if min_tokens_per_second:
        bandwidth = card["bandwidth_gb_s"] * 1e9 * bandwidth_efficiency
        w_read, _, _ = _weights_read(arch, weights_format, 1)
        by_speed = max(0, int((bandwidth / min_tokens_per_second - w_read) // kv_seq))
    users = by_memory if by_speed is None else min(by_memory, by_speed)
    return {
        "model": arch.name,
        "gpu": card.get("name", "custom"),
        "context_per_chat": context,
        "kv_bytes_per_chat": kv_seq,
        "weights_bytes": w_total,
        "users_by_memory": by_memory,
        "users_by_speed": by_speed,
        "users": users,
        "limited_by": "memory" if by_speed is None or by_memory <= by_speed else "speed",
        "assumptions": [
            f"memory: the largest number of sequences fit_verdict accepts ({v['engine_name']}, {v['flags']})",
            "speed (if asked): each chat must get at least min_tokens_per_second at the bandwidth roofline",
            "every chat is at its full context (worst case)",
        ],
    }
