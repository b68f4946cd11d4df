"""Speed and cost of decoding, from bytes and bandwidth.

Decoding one token is memory-bandwidth-bound: the GPU streams every weight
it needs plus the whole KV cache of the sequence, and does comparatively
little arithmetic on them. So, at batch 1,

    time per token = (weight bytes read + KV bytes read) / bandwidth.

With B sequences decoded together, the weights are read once per step and
shared; each sequence still reads its own cache:

    step time = (weight bytes + B x KV bytes per sequence) / bandwidth
    tokens/s  = B / step time

Large batches turn the step compute-bound: B x 2 x active params FLOPs (less the
embedding, a gather; plus attention) over the GPU's peak. A step takes the longer of the two bounds,
and the result names which one binds. Nothing is timed that does not fit:
memory is the verdict of `kvlab.memory.verdict.verdict`.

The roofline is an upper bound. Real engines reach a share of it that falls
as the batch grows (kernel launches, the scheduler, sampling, and prefills of
new requests sharing the decode steps): `serving_estimate` divides the
roofline step by an efficiency calibrated on published vLLM, SGLang and
TensorRT-LLM measurements (kvlab/data/serving_benchmarks.json, refitted by
bench/serving_calibration.py), and says which. Every result carries its
assumptions next to its numbers.

>>> r = decode_time_per_token(weight_bytes=16e9, kv_bytes=0, bandwidth_gb_s=1000)
>>> round(r["seconds_per_token"], 3), round(r["tokens_per_second"], 1)
(0.016, 62.5)
"""

from __future__ import annotations

import json
import math
import re
from functools import cache

from kvlab.memory.architecture import LINEAR, SLIDING, Architecture
from kvlab.memory.catalogue import DATA_DIR, get_gpu, model_architecture
from kvlab.memory.deployment import deployment
from kvlab.memory.engines import published_sampler
from kvlab.memory.kv_bytes import (
    LLAMACPP_RECURRENT_TYPE,
    VLLM_BLOCK_SIZE,
    kv_cache_bytes,
)
from kvlab.memory.verdict import verdict
from kvlab.memory.weights import (
    embedding_table_bytes,
    model_weights_bytes,
    params_text,
    weights_bytes,
    without_mtp,
)
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


# ---------------------------------------------------------------------------
# calibrated efficiency: achieved / roofline, by regime, from published benchmarks
# ---------------------------------------------------------------------------

BENCHMARKS_FILE = DATA_DIR / "serving_benchmarks.json"

# The regimes and the batch each is anchored at. Between anchors the efficiency is interpolated
# linearly in log(batch) (its logarithm too); below the first and above the last it is flat.
EFFICIENCY_ANCHORS = (("batch 1", 1), ("medium", 16), ("saturated", 64))


@cache
def serving_benchmarks() -> dict:
    """kvlab/data/serving_benchmarks.json: the published points, the max_num_seqs rule and the fitted table."""
    return json.loads(BENCHMARKS_FILE.read_text(encoding="utf-8"))


def serving_accuracy() -> dict:
    """How close the scheduler simulation (kvlab.memory.scheduler.simulate) comes to published benchmark runs that
    set none of its constants: serving_benchmarks.json "validation", written by bench/serving_validation.py --write
    (the tests check it against the simulation as it stands), with the figures in words.

    `vllm_runs`, `sglang_runs`: how many runs; `output`, `tpot`, `ttft` (and `sglang_output`, `sglang_tpot`): the
    median error in percent ("11%"); `*_within`: how many of them within 2x ("83 of 86"); `gpus`: the cards the vLLM
    runs ran on; `models`: how many models; `furthest`: the kind of run (card, dense or MoE, one GPU or several; at
    least KIND_MIN_RUNS runs) it leans furthest on, in a sentence; `sentence`: all but that in one."""
    v = serving_benchmarks()["validation"]

    def err(group: dict, key: str) -> str:
        return f"{group[key]['median_error']:.0%}"

    def within(group: dict, key: str) -> str:
        return f"{group[key]['within_2x']} of {group[key]['of']}"

    held, sg = v["vllm_held_out"], v["sglang"]
    names = [get_gpu(g)["name"] for g in v["gpus"]]
    gpus = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    out = {
        "vllm_runs": held["runs"],
        "sglang_runs": sg["runs"],
        "output": err(held, "output_tok_s"),
        "output_within": within(held, "output_tok_s"),
        "tpot": err(held, "tpot_median"),
        "tpot_within": within(held, "tpot_median"),
        "ttft": err(held, "ttft_median"),
        "ttft_within": within(held, "ttft_median"),
        "sglang_output": err(sg, "output_tok_s"),
        "sglang_tpot": err(sg, "tpot_median"),
        "gpus": gpus,
        "models": len(v["models"]),
    }
    kinds = [k for k in v.get("vllm_by_kind", []) if k["runs"] >= KIND_MIN_RUNS]
    far = max(kinds, key=_lean, default=None)
    out["furthest"] = (
        ""
        if far is None
        else f"It leans furthest on {'MoE' if far['moe'] else 'dense'} models "
        + (
            f"split over several {get_gpu(far['gpu'])['name']} GPUs"
            if far["several_gpus"]
            else f"on one {get_gpu(far['gpu'])['name']}"
        )
        + f": on {far['runs']} such runs it {_leaning(far)}."
    )
    out["sentence"] = (
        f"Checked against {out['vllm_runs']} published vLLM runs that set none of its constants ({gpus}; "
        f"{out['models']} models): answer tokens per second off by {out['output']} at the median "
        f"({out['output_within']} within 2×), time per output token by {out['tpot']} ({out['tpot_within']}), time "
        f"to first token by {out['ttft']} ({out['ttft_within']}); on {out['sglang_runs']} SGLang runs, simulated with "
        f"SGLang's scheduler, answer tokens per second by {out['sglang_output']} and time per output token by "
        f"{out['sglang_tpot']}."
    )
    return out


KIND_MIN_RUNS = 3  # a kind with fewer held-out runs gets no sentence: a median of one or two runs is an anecdote
NO_KIND_SENTENCE = (
    "kvlab has too few published runs of this kind (this card, dense or MoE, one GPU or several) to say which way it "
    "leans here."
)


def _more_or_less(ratio: float, more: str, less: str) -> str:
    """'35% more', '12% less' or 'the same' for a predicted / measured ratio."""
    share = round(abs(ratio - 1) * 100)
    return "the same" if not share else f"{share}% {more if ratio > 1 else less}"


def _kind_tpot(kind: dict) -> float | None:
    """A kind's TPOT median ratio where KIND_MIN_RUNS of its runs state a TPOT, else None."""
    return kind["tpot_ratio"] if kind["tpot_ratio"] is not None and kind["tpot_runs"] >= KIND_MIN_RUNS else None


def _lean(kind: dict) -> float:
    """How far a kind of run leans: the larger |log| of its output and TPOT median ratios."""
    return max(abs(math.log(r)) for r in (kind["output_ratio"], _kind_tpot(kind)) if r is not None)


def _leaning(kind: dict) -> str:
    """What kvlab predicted on a kind's runs, in words: 'predicted 28% more answer tokens ... 32% shorter'."""
    words = (
        f"predicted {_more_or_less(kind['output_ratio'], 'more', 'fewer')} answer tokens a second than were measured "
        "(the median run)"
    )
    tpot = _kind_tpot(kind)
    return words + (f", and a time per output token {_more_or_less(tpot, 'longer', 'shorter')}" if tpot else "")


def is_moe(model) -> bool:
    """Whether a model (catalogue id or config path) is a mixture of experts, as kvlab.memory.scheduler.simulate
    reads it (Architecture.routes_experts)."""
    return model_architecture(model).routes_experts


def accuracy_of_kind(gpu: str, model, n_gpus: int) -> dict | None:
    """How far the simulation was from the held-out published vLLM runs of one kind (the card, dense or MoE, one
    GPU or several; serving_benchmarks.json "validation" "vllm_by_kind"), with a sentence, or None where kvlab has
    fewer than KIND_MIN_RUNS such runs. A reader sizing a deployment of that kind reads which way kvlab leans there."""
    several, moe = n_gpus > 1, is_moe(model)
    kind = next(
        (
            k
            for k in serving_benchmarks()["validation"].get("vllm_by_kind", [])
            if k["gpu"] == gpu and k["moe"] == moe and k["several_gpus"] == several
        ),
        None,
    )
    if kind is None or kind["runs"] < KIND_MIN_RUNS:
        return None
    name = get_gpu(gpu)["name"]
    what = f"{'an MoE' if moe else 'a dense model'} on " + (f"several {name} GPUs" if several else f"one {name}")
    sentence = (
        f"On the {kind['runs']} published vLLM runs of this kind ({what}) that kvlab was not fitted on, it "
        f"{_leaning(kind)}."
    )
    return {**kind, "sentence": sentence}


def run_totals(verbatim: str) -> tuple[int | None, int | None]:
    """(Total input tokens, Total generated tokens) of a `vllm bench serve` / `sglang.bench_serving` result block,
    or of the JSON line either writes with --output-file (total_input_tokens, total_output_tokens); None where not
    printed."""

    def grab(label: str, key: str) -> int | None:
        m = re.search(label + r"[^\n:]*:\s*([\d,]+)", verbatim) or re.search(rf'"{key}":\s*(\d+)', verbatim)
        return int(m.group(1).replace(",", "")) if m else None

    return grab("Total input tokens", "total_input_tokens"), grab("Total generated tokens", "total_output_tokens")


def regime(batch: int) -> str:
    """The regime a decode batch is in: "batch 1", "medium" (2-31) or "saturated" (32 and up)."""
    if batch <= 1:
        return "batch 1"
    return "medium" if batch < 32 else "saturated"


def _hat_weights(batch: float) -> list[float]:
    """How much each anchor counts at `batch`: linear in log2(batch) between neighbours, flat outside."""
    xs = [math.log2(b) for _, b in EFFICIENCY_ANCHORS]
    x = min(max(math.log2(batch), xs[0]), xs[-1])
    weights = [0.0] * len(xs)
    for i in range(len(xs) - 1):
        if xs[i] <= x <= xs[i + 1]:
            t = (x - xs[i]) / (xs[i + 1] - xs[i])
            weights[i], weights[i + 1] = 1 - t, t
            break
    return weights


def fit_efficiency(samples: list[tuple[int, float, str]]) -> dict:
    """Least squares in log(efficiency) for the anchors' values, from (batch, achieved / roofline, point id).

    The model: log e(batch) = sum of anchor weights x log e(anchor) (`_hat_weights`). Three unknowns,
    solved from the normal equations; each anchor lists the points that weigh on it.
    """
    n = len(EFFICIENCY_ANCHORS)
    a = [[0.0] * n for _ in range(n)]
    b = [0.0] * n
    support: list[list[str]] = [[] for _ in range(n)]
    for batch, eff, pid in samples:
        if not eff > 0:
            raise ValueError(f"efficiency of point {pid} must be positive, got {eff}")
        w = _hat_weights(batch)
        for i in range(n):
            if w[i] > 0:
                support[i].append(pid)
            b[i] += w[i] * math.log(eff)
            for j in range(n):
                a[i][j] += w[i] * w[j]
    for i, pts in enumerate(support):
        if not pts:
            raise ValueError(f"no benchmark point near the {EFFICIENCY_ANCHORS[i][0]!r} anchor: cannot fit it")
    # Gaussian elimination with partial pivoting (3 x 3)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    logs = [m[i][n] / m[i][i] for i in range(n)]
    return {
        "model": "log(efficiency) linear in log(batch) between the anchors, flat outside; least squares in log",
        "anchors": [
            {"regime": name, "batch": batch, "efficiency": round(math.exp(v), 4), "points": support[i]}
            for i, ((name, batch), v) in enumerate(zip(EFFICIENCY_ANCHORS, logs))
        ],
    }


def efficiency_table() -> list[dict]:
    """The fitted anchors (regime, batch, efficiency, the points they came from)."""
    anchors = serving_benchmarks().get("fit", {}).get("anchors")
    if not anchors:
        raise ValueError("serving_benchmarks.json has no fitted efficiency: run bench/serving_calibration.py --write")
    return anchors


def calibrated_efficiency(batch: int) -> dict:
    """The share of the roofline a decode batch of `batch` reaches, from the fitted table, and how."""
    table = efficiency_table()
    w = _hat_weights(batch)
    value = math.exp(sum(wi * math.log(a["efficiency"]) for wi, a in zip(w, table)))
    used = [a for wi, a in zip(w, table) if wi > 0]
    if len(used) == 1:
        how = f"the {used[0]['regime']} value ({used[0]['efficiency']:.2f}, fitted at batch {used[0]['batch']})"
    else:
        how = (
            f"interpolated in log-batch between {used[0]['regime']} ({used[0]['efficiency']:.2f} at batch "
            f"{used[0]['batch']}) and {used[1]['regime']} ({used[1]['efficiency']:.2f} at batch {used[1]['batch']})"
        )
    n_points = len(serving_benchmarks()["points"])
    return {
        "value": value,
        "regime": regime(batch),
        "calibrated": True,
        "how": f"calibrated: {how}; fitted on {n_points} published vLLM/SGLang/TensorRT-LLM measurements "
        "(kvlab/data/serving_benchmarks.json)",
        "table": table,
    }


def default_max_num_seqs(card: dict | None) -> dict:
    """vLLM's default max_num_seqs for `card`: 1024 on a GPU of 70 GiB or more that is not an A100, else 256."""
    rule = serving_benchmarks()["max_num_seqs"]
    large = False
    if card is not None:
        name = f"{card.get('id', '')} {card.get('name', '')}".lower()
        memory = card.get("gpu_usable_gib") or card.get("memory_gib") or 0
        large = memory >= rule["large_from_gib"] and not any(w in name for w in rule["large_not_named"])
    return {"value": rule["large"] if large else rule["small"], "source": rule["source"]}


def _max_num_seqs(verdict: dict, card: dict, given: int | None) -> dict:
    """The cap on sequences vLLM runs at once: given, else what the verdict's engine model says, else the rule."""
    if given is not None:
        return {"value": given, "source": "--max-num-seqs given"}
    model = verdict.get("engine_model") or {}
    if model.get("max_num_seqs"):
        return {"value": model["max_num_seqs"], "source": model.get("defaults_how", "the engine model")}
    return default_max_num_seqs(card)


def weights_read(arch: Architecture, fmt: str, batch: int, engine: str = "vllm") -> tuple[int, int, str]:
    """Weight bytes one decode step reads, the model's total, and how (MoE: active experts only). Under vLLM, a
    checkpoint's MTP head is not loaded (no MTP drafter in the roofline): weights.without_mtp."""
    total = model_weights_bytes(arch, fmt)
    if engine == "vllm":
        total = without_mtp(total)
    if not arch.active_params or arch.active_params >= arch.params:
        skip = embedding_table_bytes(arch, total)
        return (
            total["bytes"] - skip,
            total["bytes"],
            "dense: every weight is read each step" + (", but the token embedding (one row per token)" if skip else ""),
        )
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


def vocab_tables(arch: Architecture) -> tuple[int, int]:
    """How many vocab x hidden tables (the token embedding, an untied lm_head) the catalogue's parameter count holds,
    and how many its active count holds: an untied model's count holds two, a tied one's one (a config that does not
    say: one, the least a count can hold); the active figure holds what the total does, unless the catalogue says
    otherwise (`Architecture.active_vocab_tables`: gpt-oss's card counts the unembedding only)."""
    in_params = 2 if arch.tied_embeddings is False else 1
    in_active = in_params if arch.active_vocab_tables is None else arch.active_vocab_tables
    return in_params, in_active


def linear_flops(arch: Architecture) -> tuple[float, float]:
    """(FLOPs per token outside the vocab tables, FLOPs of one lm_head row): a forward pass multiplies 2 x the active
    parameters per token, less the vocabulary's tables, since the token embedding is a gather and the output
    projection (lm_head) runs only where a token is sampled (one position per request: vLLM V1's `logits_indices`).
    Until session 26 every token counted 2 x active params, the tables included (bench/results/
    2026-12-07-serving-session26.md)."""
    active = float(arch.active_params or arch.params)
    vocab = float(arch.vocab_size or 0) * arch.hidden_size
    _, in_active = vocab_tables(arch)
    return 2.0 * max(0.0, active - in_active * vocab), 2.0 * vocab


def decode_flops(arch: Architecture, context: int, batch: int) -> float:
    """FLOPs of one decode step of `batch` sequences at `context`: each token's linear layers and its lm_head row
    (`linear_flops`) + attention."""
    body, head = linear_flops(arch)
    return batch * (body + head + attention_flops(arch, context))


def prefill_flops(arch: Architecture, prompt: int) -> float:
    """FLOPs to prefill one `prompt`-token prompt: the linear layers per token, one lm_head row (the first answer
    token is sampled at the last position: `linear_flops`) + causal attention."""
    body, head = linear_flops(arch)
    flops = body * prompt + (head if prompt > 0 else 0.0)
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


def _state_type(engine: str) -> str:
    """The type a linear layer's recurrent state is counted in, as the fit verdict counts it: llama.cpp keeps
    it in f32 (kv_bytes.LLAMACPP_RECURRENT_TYPE); vLLM in the model dtype, bf16 (kv_bytes.vllm_kv_cache)."""
    return LLAMACPP_RECURRENT_TYPE if engine == "llamacpp" else "bf16"


PREFILL_INTERFERENCE_NOTE = (
    "prefill and decode share the GPU: while new requests arrive, their prompts are prefilled in the same "
    "steps (vLLM's chunked prefill) or between them, so every chat's time per token rises while prompts are "
    "processed; the calibrated efficiency includes the interference of the published benchmarks (short chat "
    "prompts); long prompts arriving often slow decoding more"
)


def serving_estimate(
    model,
    gpu,
    context: int,
    batch: int = 1,
    weights_format: str = "BF16",
    kv: str = "f16",
    price_per_hour: float | None = None,
    bandwidth_efficiency: float | None = None,
    n_gpus: int = 1,
    engine: str = "vllm",
    answer_tokens: int = 512,
    solve: bool = True,
    gpu_memory_utilization: float | None = None,
    block_size: int = VLLM_BLOCK_SIZE,
    max_num_seqs: int | None = None,
    pipeline_parallel: int = 1,
    mxfp4_backend: str | None = None,
    sampler: str | None = None,
    version: str = "v1",
    custom_all_reduce: bool = True,
) -> dict:
    """Speed, memory and cost of serving `batch` chats of `context` tokens each.

    Memory is `kvlab.memory.verdict.verdict` for the same deployment (under vLLM with its
    `gpu_memory_utilization` and `block_size`; llama.cpp ignores both): a batch that
    does not fit is neither timed nor priced (those fields are None and
    `verdict` says why). vLLM runs at most `max_num_seqs` sequences at once (its default for the
    card unless given): a larger batch decodes that many and queues the rest (`queued`).
    Each step takes the longer of its two roofline bounds (bytes / bandwidth, FLOPs / peak
    compute; the binding one is `bound`), divided by the efficiency: calibrated for the batch
    (`calibrated_efficiency`) unless `bandwidth_efficiency` is given. Cost per million generated
    tokens includes prefill: each chat's prompt of context - answer_tokens tokens is prefilled
    once (at the roofline), then answer_tokens are decoded (every step timed at the full
    context: an upper bound). `bounds_text` says both bounds in words.

    `version` is vLLM's range (kvlab.memory.engines.VLLM_VERSIONS; "v1" unless given) and
    `gpu_memory_utilization` None is that version's own default (0.92 from 0.20, 0.9 before).
    `n_gpus` is the tensor-parallel size (bandwidth and compute add up); vLLM's `pipeline_parallel`
    stages multiply the GPUs and the price but not one chat's speed: a token passes the stages in turn,
    each reading its own layers. vLLM keeps up to one batch per stage in flight, so the running chats
    split into min(stages, chats) micro-batches that keep every stage busy (transfers between stages
    are not counted). `custom_all_reduce` False is vLLM's --disable-custom-all-reduce (the deployment's reserve).
    """
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
    if bandwidth_efficiency is not None:
        bandwidth_efficiency = finite_number("bandwidth_efficiency", bandwidth_efficiency, minimum=0.01, maximum=1)
    if max_num_seqs is not None:
        max_num_seqs = finite_number("max_num_seqs", max_num_seqs, minimum=1, maximum=1 << 20, integer=True)
    settings = {
        "weights": weights_format,
        "kv": kv,
        "gpu": card,
        "tp": n_gpus,
        "engine": engine,
        "gpu_memory_utilization": gpu_memory_utilization,
        "block_size": block_size,
        "pp": pipeline_parallel,
        "mxfp4_backend": mxfp4_backend,
        "version": version,
        # vllm serve --max-num-seqs also sets the profile's sampler warm-up (its rows): the reserve; `sampler` its path
        **({"max_num_seqs": max_num_seqs} if engine == "vllm" and max_num_seqs is not None else {}),
        **({"sampler": sampler} if engine == "vllm" and sampler is not None else {}),
        "custom_all_reduce": custom_all_reduce,
    }
    dep = deployment(arch, **settings)
    cap = None
    running = batch
    if engine == "vllm":
        probe = verdict(dep, context, n_seq=1, solve=False)
        cap = _max_num_seqs(probe, card, max_num_seqs)
        running = min(batch, cap["value"])
    queued = batch - running
    v = verdict(dep, context, n_seq=running, solve=solve)
    pp = v["pipeline_parallel"]
    micro = -(-running // min(pp, running))  # chats in one micro-batch: one per stage in flight
    if bandwidth_efficiency is None:
        eff = calibrated_efficiency(micro)
    else:
        eff = {
            "value": bandwidth_efficiency,
            "regime": regime(running),
            "calibrated": False,
            "how": f"given: {bandwidth_efficiency:g} of the roofline",
        }
    efficiency = eff["value"]
    bandwidth = card["bandwidth_gb_s"] * n_gpus
    peak = card.get("bf16_dense_tflops")
    peak = peak * n_gpus if peak else None
    price = price_per_hour if price_per_hour is not None else card.get("price_per_hour_usd")
    price = price * n_gpus * pp if price is not None and price_per_hour is None else price

    kv_seq = kv_cache_bytes(arch, context, kv, state_type=_state_type(engine))["total_bytes"]
    w_read, w_total, w_note = weights_read(arch, weights_format, micro, engine)
    flops = decode_flops(arch, context, micro)
    roof = decode_time_per_token(w_read, kv_seq, bandwidth, micro, 1.0, flops, peak)
    step = roof["seconds_per_token"] / efficiency
    pre_flops = prefill_flops(arch, prompt) if prompt else 0.0
    pre_seconds = max(pre_flops / (peak * 1e12) if peak else 0.0, (w_total / (bandwidth * 1e9)) if prompt else 0.0)
    in_flight = min(pp, running)  # pipeline stages prefill different chats at once
    round_seconds = running * pre_seconds / in_flight + answer * step
    tokens_per_second_with_prefill = running * answer / round_seconds
    roof_round = running * pre_seconds / in_flight + answer * roof["seconds_per_token"]
    where = card.get("name", card.get("id", "custom")) + (f" x {n_gpus * pp}" if n_gpus * pp > 1 else "")
    cap_text = f"; vLLM runs at most {cap['value']:,} sequences at once (max_num_seqs; {cap['source']})" if cap else ""
    memory_bound_text = (
        f"memory bound: {v['max_sequences_text']} fit ({v['engine_name']}){cap_text}"
        if solve
        else f"memory bound: {v['headline']}{cap_text}"
    )
    result = {
        "model": arch.name,
        "gpu": card.get("name", card.get("id", "custom")),
        "n_gpus": n_gpus,
        "where": where,
        "pipeline_parallel": pp,
        "micro_batch": micro,
        "engine": engine,
        "context_per_chat": context,
        "prompt_tokens": prompt,
        "answer_tokens": answer,
        "requested_batch": batch,
        "batch": running,
        "queued": queued,
        "max_num_seqs": cap["value"] if cap else None,
        "max_num_seqs_source": cap["source"] if cap else None,
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
        "bound": roof["bound"],
        "memory_seconds": roof["memory_seconds"],
        "compute_seconds": roof["compute_seconds"],
        "flops_per_step": flops,
        "efficiency": efficiency,
        "efficiency_regime": eff["regime"],
        "efficiency_calibrated": eff["calibrated"],
        "efficiency_how": eff["how"],
        "roofline_seconds_per_token": roof["seconds_per_token"],
        "prefill_seconds_per_chat": pre_seconds,
        "seconds_per_token": step,
        "tokens_per_second_per_chat": 1 / step,
        "total_tokens_per_second": running / step,
        "tokens_per_second_with_prefill": tokens_per_second_with_prefill,
        "roofline_tokens_per_second_with_prefill": running * answer / roof_round,
        "kv_share_of_reads": roof["kv_share_of_reads"],
        "usd_per_million_tokens": None,
        "usd_per_million_tokens_roofline": None,
        "price_per_hour": price,
        "price_kind": card.get("price_kind") if price_per_hour is None else "given",
        "bounds": {"memory": memory_bound_text, "speed": ""},
        "bounds_text": "",
        "notes": [PREFILL_INTERFERENCE_NOTE],
        "assumptions": [
            roof["assumptions"][0],
            f"bandwidth {bandwidth:g} GB/s: the vendor's peak (the roofline); the step is the roofline step / "
            f"efficiency {efficiency:.2f} ({eff['how']})",
            roof["assumptions"][2],
            w_note,
            f"FLOPs per step: 2 x active params (less the vocabulary's tables, but one lm_head row) + attention over the "
            f"context, per chat; peak "
            f"{card.get('bf16_dense_tflops')} TFLOPS dense BF16 per GPU; source: "
            f"{card.get('flops_source', 'not in the catalogue')}",
            f"KV read per token = whole cache of a {context}-token chat ({kv}; recurrent state in "
            f"{_state_type(engine)}, as the fit verdict counts it); sliding layers capped at their window",
            f"memory: {v['engine_name']} accounting ({v['flags']}), the same verdict as “Does it fit?” on the memory page",
            f"each chat: a {prompt}-token prompt prefilled once (compute-bound, at the roofline), then {answer} "
            "tokens decoded at the full context (upper bound on decode time)",
        ],
    }
    if pp > 1:
        result["notes"].append(
            f"pipeline parallel {pp}: a token passes the {pp} stages in turn, so one chat is no faster than on "
            f"{'one GPU' if n_gpus == 1 else f'{n_gpus} GPUs'}; vLLM keeps up to {pp} micro-batches in flight, here "
            f"{min(pp, running)} of {plural_chats(micro)}, so the throughput grows with the stages only once there "
            f"are at least {pp} chats (transfers between stages not counted)"
        )
    if queued:
        result["notes"].append(
            f"{plural_chats(batch)} asked, but vLLM decodes at most {cap['value']:,} at once (max_num_seqs): "
            f"{queued:,} wait in its queue; timed and priced for the {running:,} running"
        )
    if not v["fits"]:
        for key in (
            "seconds_per_token",
            "tokens_per_second_per_chat",
            "total_tokens_per_second",
            "tokens_per_second_with_prefill",
            "roofline_tokens_per_second_with_prefill",
            "roofline_seconds_per_token",
            "memory_seconds",
            "compute_seconds",
            "prefill_seconds_per_chat",
            "bound",
        ):
            result[key] = None
        result["bounds"]["speed"] = "speed bound: not timed, the batch does not fit"
        result["bounds_text"] = f"{memory_bound_text}. Not timed or priced: {v['headline']}."
        result["assumptions"].append(f"not timed or priced: {v['headline']}")
        return result
    compute_text = (
        f"{flops / 1e12:,.3g} TFLOP / {peak:,g} TFLOPS = {roof['compute_seconds'] * 1000:.3g} ms"
        if roof["compute_seconds"] is not None
        else "not known (no peak compute in the catalogue)"
    )
    speed_text = (
        f"speed bound: a step of {micro:,} {'chat' if micro == 1 else 'chats'}"
        + (f" (one of {min(pp, running)} micro-batches in the {pp}-stage pipeline)" if pp > 1 else "")
        + f" reads {w_read / 1e9:,.3g} GB of weights + {micro * kv_seq / 1e9:,.3g} GB of KV: at {bandwidth:,g} GB/s "
        f"{roof['memory_seconds'] * 1000:.3g} ms (bandwidth); compute {compute_text}; the {roof['bound']} "
        f"bound binds, {roof['seconds_per_token'] * 1000:.3g} ms at the roofline; at efficiency {efficiency:.2f} "
        f"({eff['regime']}) a step takes {step * 1000:.3g} ms: {1 / step:,.1f} tokens/s per chat, "
        f"{running / step:,.0f} in all"
    )
    result["bounds"]["speed"] = speed_text
    result["bounds_text"] = f"{memory_bound_text}. {speed_text}."
    if price is not None:
        cost = cost_per_million_tokens(price, tokens_per_second_with_prefill)
        result["usd_per_million_tokens"] = cost["usd_per_million_tokens"]
        result["usd_per_million_tokens_roofline"] = cost_per_million_tokens(
            price, result["roofline_tokens_per_second_with_prefill"]
        )["usd_per_million_tokens"]
        result["assumptions"].append(
            f"the GPU is busy the whole hour (no idle time); prefill included; decode at efficiency "
            f"{efficiency:.2f} (the roofline would give ${result['usd_per_million_tokens_roofline']:.3f})"
        )
        if card.get("price_source") and price_per_hour is None:
            result["assumptions"].append(
                f"price {card.get('price_provider')} ({card.get('price_kind')}, {card.get('price_date')}); "
                f"source: {card.get('price_source')}"
            )
    return result


def plural_chats(n: int) -> str:
    return f"{n:,} chat" + ("" if n == 1 else "s")


def users_per_gpu(
    model,
    gpu,
    context: int,
    weights_format: str = "BF16",
    kv: str = "f16",
    min_tokens_per_second: float | None = None,
    bandwidth_efficiency: float | None = None,
    engine: str = "vllm",
    max_num_seqs: int | None = None,
) -> dict:
    """How many chats of `context` tokens one GPU serves at once: limited by memory (the verdict), by vLLM's
    max_num_seqs, and by speed if asked.

    Speed limit: the largest B whose step, max(bytes / bandwidth, FLOPs / peak) / efficiency(B), still gives
    each chat `min_tokens_per_second` (efficiency calibrated per batch unless `bandwidth_efficiency` is given).
    """
    arch = model_architecture(model)
    card = get_gpu(gpu) if isinstance(gpu, str) else dict(gpu)
    if bandwidth_efficiency is not None:
        bandwidth_efficiency = finite_number("bandwidth_efficiency", bandwidth_efficiency, minimum=0.01, maximum=1)
    v = verdict(deployment(arch, weights=weights_format, kv=kv, gpu=card, engine=engine), context)
    kv_seq = kv_cache_bytes(arch, context, kv, state_type=_state_type(engine))["total_bytes"]
    w_total = weights_read(arch, weights_format, 1, engine)[1]
    by_memory = v["max_sequences"]
    cap = _max_num_seqs(v, card, max_num_seqs) if engine == "vllm" else None
    by_engine = cap["value"] if cap else None
    bandwidth = card["bandwidth_gb_s"] * 1e9
    peak = card.get("bf16_dense_tflops")

    def efficiency(b: int) -> float:
        return calibrated_efficiency(b)["value"] if bandwidth_efficiency is None else bandwidth_efficiency

    def per_chat_speed(b: int) -> float:
        w_read = weights_read(arch, weights_format, b, engine)[0]
        memory_time = (w_read + b * kv_seq) / bandwidth
        compute_time = decode_flops(arch, context, b) / (peak * 1e12) if peak else 0.0
        return efficiency(b) / max(memory_time, compute_time)

    by_speed = None
    if min_tokens_per_second:
        top = max(1, min(by_memory or 1, by_engine or 65536, 65536))
        lo, hi = 0, top  # per-chat speed falls as the batch grows: the largest b that is fast enough
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if per_chat_speed(mid) >= min_tokens_per_second:
                lo = mid
            else:
                hi = mid - 1
        by_speed = lo
    # the verdict may already cap its count at max_num_seqs (memory then allows at least that many): the cap binds
    capped = bool((v.get("engine_model") or {}).get("max_num_seqs_caps_sequences"))
    limits = {"max_num_seqs": by_engine} if capped else {}
    limits["memory"] = by_memory
    if by_engine is not None and not capped:
        limits["max_num_seqs"] = by_engine
    if by_speed is not None:
        limits["speed"] = by_speed
    limited_by = min(limits, key=lambda k: (limits[k], list(limits).index(k)))
    users = limits[limited_by]
    memory_words = f"at least {plural_chats(by_memory)}" if capped else v["max_sequences_text"]
    words = [f"memory: {memory_words} ({v['engine_name']})"]
    if by_engine is not None:
        words.append(f"vLLM's max_num_seqs: {by_engine:,} at once ({cap['source']})")
    if by_speed is not None:
        words.append(
            f"speed: {plural_chats(by_speed)} each get at least {min_tokens_per_second:g} tokens/s "
            f"(efficiency {efficiency(max(by_speed, 1)):.2f} at that batch)"
        )
    return {
        "model": arch.name,
        "gpu": card.get("name", "custom"),
        "context_per_chat": context,
        "kv_bytes_per_chat": kv_seq,
        "weights_bytes": w_total,
        "users_by_memory": by_memory,
        "users_by_max_num_seqs": by_engine,
        "users_by_speed": by_speed,
        "users": users,
        "limited_by": limited_by,
        "bounds_text": "; ".join(words) + f"; the {limited_by.replace('_', ' ')} limit binds: {plural_chats(users)}",
        "assumptions": [
            f"memory: the largest number of sequences the fit verdict accepts ({v['engine_name']}, {v['flags']})",
            "speed (if asked): each chat must get at least min_tokens_per_second at the roofline step divided "
            "by the efficiency for that batch"
            + (" (calibrated)" if bandwidth_efficiency is None else f" ({bandwidth_efficiency:g}, given)"),
            "every chat is at its full context (worst case)",
        ],
        "notes": [PREFILL_INTERFERENCE_NOTE],
    }


def benchmark_prediction(point: dict, calibrated: bool = True) -> dict:
    """kvlab's time per output token for one published benchmark point (serving_benchmarks.json).

    The decode batch is what the engine would run: the point's concurrency, capped by vLLM's
    max_num_seqs for the GPU and by the chats of input + output tokens that fit in memory (vLLM's
    accounting: kvlab models no other engine's memory). `calibrated` False: efficiency 1.0 (the roofline).
    """
    arch = model_architecture(point["model"])
    context = point["input_tokens"] + point["output_tokens"]
    card = get_gpu(point["gpu"])
    sampler = published_sampler(point)  # the profile's sampler warm-up, as the point's install ran it
    dep = deployment(arch, weights=point["weights"], kv="f16", gpu=card, engine="vllm", sampler=sampler)
    fits = verdict(dep, context)
    cap = _max_num_seqs(fits, card, None)["value"]
    batch = max(1, min(point["concurrency"], cap, fits["max_sequences"] or 1))
    est = serving_estimate(
        arch,
        card["id"],
        context,
        batch=batch,
        weights_format=point["weights"],
        answer_tokens=point["output_tokens"],
        bandwidth_efficiency=None if calibrated else 1.0,
        solve=False,
        sampler=sampler,
    )
    measured = point["measured"]["tpot_ms"]
    predicted = est["seconds_per_token"] * 1000
    return {
        "id": point["id"],
        "batch": batch,
        "regime": regime(batch),
        "efficiency": est["efficiency"],
        "roofline_ms": est["roofline_seconds_per_token"] * 1000,
        "predicted_ms": predicted,
        "measured_ms": measured,
        "ratio": measured / predicted,  # > 1: kvlab is optimistic (predicts faster than measured)
        "achieved_efficiency": est["roofline_seconds_per_token"] * 1000 / measured,
    }
