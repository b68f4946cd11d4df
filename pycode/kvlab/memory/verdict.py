"""One verdict: does a model run, and what binds.

`verdict(dep, context, n_seq)` is the only place that decides whether a deployment
(kvlab.memory.deployment: model, weights format, KV cache type, GPU or GPUs, engine
and its version and settings) holds `n_seq` sequences of `context` tokens. The memory
page, the GPU-fit widget, the serving widget and the CLI all show its answer, so
they cannot disagree with each other.

Semantics, the same for both engines: `n_seq` sequences of `context` tokens
each, all held at once.

- llama.cpp: `-c (context x n_seq) -np n_seq` (one stream of `context` cells
  per sequence; no --kv-unified), the KV cache as llama.cpp allocates it, its
  compute buffer and a runtime reserve per GPU. Several GPUs: the default
  `--split-mode layer`, whole layers (with their weights and KV) per GPU,
  counted here as an even split.
- vLLM: `--max-model-len context`, `n_seq` concurrent sequences; per GPU a
  budget of gpu_memory_utilization x memory holds its share of the weights
  (tensor parallel: 1/n), the activation reserve and its share of the KV heads
  (each GPU holds ceil(kv_heads / n) heads: replicated when kv_heads < n; an
  MLA latent is replicated on every GPU).

What binds, in this order: the weights alone, the weights plus the runtime or
activation reserve, then the KV cache; a context beyond the model's trained
length (max_position_embeddings) binds too, unless `allow_long_context`
(llama.cpp warns and runs; vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1).

>>> from kvlab.memory.deployment import deployment
>>> v = verdict(deployment("llama-2-7b", weights="BF16", kv="f16", gpu="h100-sxm"), 131072)
>>> v["fits"], v["binding"], v["max_context"], v["max_context_limited_by"]
(False, 'trained_context', 4096, 'trained_context')
"""

from __future__ import annotations

from kvlab.memory.architecture import ATTENTION_KINDS, Architecture
from kvlab.dtypes import GIB
from kvlab.memory.deployment import ENGINE_NAMES as ALL_ENGINE_NAMES
from kvlab.memory.deployment import (
    LLAMACPP_VERSION,
    VERDICT_ENGINES,
    Deployment,
)
from kvlab.memory.deployment import MAX_PIPELINE_STAGES as MAX_PIPELINE_STAGES  # re-exported: the widgets' choices
from kvlab.memory.deployment import PIPELINE_STAGES as PIPELINE_STAGES
from kvlab.memory.deployment import TENSOR_PARALLEL as TENSOR_PARALLEL
from kvlab.memory.engines import (
    VLLM_RECENT,
    reserve_features,
    sampler_peak,
    vllm_data,
    vllm_mamba_blocks,
    vllm_mamba_refusal,
    vllm_setup,
)
from kvlab.memory.kv_bytes import (
    LLAMACPP_PAD,
    MAX_CONTEXT,
    MAX_SEQUENCES,
    RUNTIME_RESERVE_BYTES,
    VLLM_BLOCK_SIZE,
    gpu_stages,
    llamacpp_compute_buffer,
    llamacpp_kv_cache,
    vllm_kv_cache,
)
from kvlab.memory.llamacpp import FIT_TARGET_BYTES, device_split, device_weights, fit_params
from kvlab.inputs import finite_number
from kvlab.wording import human_bytes, plural

ENGINES = VERDICT_ENGINES  # the engines the verdict answers for, term by term
ENGINE_NAMES = {e: ALL_ENGINE_NAMES[e] for e in ENGINES}
VLLM_LONG_CONTEXT_FLAG = "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
BINDING_LABELS = {
    "weights": "the weights",
    "reserve": "the weights plus the runtime reserve",
    "kv_cache": "the KV cache",
    "trained_context": "the model's trained context",
    "max_num_seqs": "vLLM's max_num_seqs above the hybrid model's Mamba cache blocks",
}
PARTS = {
    "weights": "weights",
    "kv_cache": "KV cache",
    "compute_buffer": "compute buffer",
    "runtime_reserve": "runtime reserve",
    "activation_reserve": "profiling reserve (activations or sampler warm-up, CUDA graphs)",
}


def _size(nbytes: float) -> str:
    return human_bytes(nbytes)


def _kv_head_share(arch: Architecture, n_gpus: int) -> tuple[float, str]:
    """Fraction of one sequence's attention KV each GPU holds under tensor parallelism."""
    if n_gpus == 1:
        return 1.0, "one GPU holds every KV head"
    if arch.attention == "mla":
        return 1.0, "MLA: the latent is not split by heads, every GPU holds all of it (replicated)"
    kv_heads = [layer.kv_heads for layer in arch.layers if layer.kind in ATTENTION_KINDS]
    if not kv_heads:
        return 1.0, "no attention layer: no KV heads to split"
    heads = max(kv_heads)
    per_gpu = -(-heads // n_gpus)
    if heads < n_gpus:
        return per_gpu / heads, (f"{plural(heads, 'KV head')} < {n_gpus} GPUs: each GPU keeps a replica of one KV head")
    return per_gpu / heads, f"{plural(heads, 'KV head')} / {n_gpus} GPUs = {per_gpu} per GPU"


def _speculative_method(dep: Deployment) -> str:
    """The method (and a separate drafter's model) of the --speculative-config the flags print."""
    if dep.drafter:
        return f'"method": "{dep.drafter["method"]}", "model": "{dep.drafter["id"]}"'
    return f'"method": "{"mtp" if dep.mtp else "..."}"'


def _vllm_setup(dep: Deployment, context: int) -> dict:
    """vLLM's setup (memory seen, batch defaults, loaded weights, reserve) for this context."""
    return vllm_setup(
        dep.card,
        dep.memory_bytes,
        dep.weights,
        dep.arch,
        dep.tp,
        dep.max_num_batched_tokens,
        dep.max_num_seqs,
        dep.version,
        context,
        pp=dep.pp,
        mxfp4_backend=dep.mxfp4_backend,
        multimodal=dep.multimodal,
        drafter=dep.drafter,
        sampler=dep.sampler,
        custom_all_reduce=dep.custom_all_reduce,
    )


def _per_gpu(dep: Deployment, context: int, n_seq: int, setup: dict | None = None) -> dict:
    """Components on one GPU (bytes), its budget, and how each was counted.

    Under pipeline parallel, the GPU shown is the stage with the least room (vLLM gives every stage the
    smallest stage's number of blocks), and `stages` lists each stage's totals.
    """
    arch, n_gpus, memory = dep.arch, dep.tp, dep.memory_bytes
    if dep.engine == "llamacpp":
        kv = llamacpp_kv_cache(arch, context * n_seq, dep.kv, n_seq=n_seq, n_ubatch=dep.n_ubatch, kv_unified=n_seq == 1)
        compute = llamacpp_compute_buffer(arch, dep.n_ubatch)
        flags = f"-c {context * n_seq} -np {n_seq}" if n_seq > 1 else f"-c {context}"
        place = device_split(arch, dep.weights, kv["total_bytes"], n_gpus, dep.device["unified_memory"])
        gpu = place["devices"][place["worst"]]
        split = (
            ""
            if n_gpus == 1
            else f"; GPU {place['worst']} of {n_gpus}, the fullest: {gpu['layers']} of {arch.n_layers} layers"
            + (" and the output layer" if place["worst"] == place["split"]["output_device"] else "")
            + " (llama.cpp's layer split)"
        )
        components = [
            {
                "name": "weights",
                "bytes": gpu["weights"],
                "how": f"{dep.weights['how']}; {place['weights_how']}{split}",
            },
            {
                "name": "kv_cache",
                "bytes": gpu["kv"],
                "how": f"llama.cpp {flags}: {kv['type_k']} K and V, as it allocates{split}",
            },
            {"name": "compute_buffer", "bytes": compute["bytes"], "how": compute["assumption"]},
            {
                "name": "runtime_reserve",
                "bytes": RUNTIME_RESERVE_BYTES,
                "how": "CUDA context and driver reserve, 0.5 GiB per GPU (estimate; Apple and CPU differ)",
            },
        ]
        return {
            "components": components,
            "budget": memory,
            "kv_detail": kv,
            "kv_share": gpu["layers"] / arch.n_layers,
            "flags": flags,
            "budget_how": "all of the GPU's memory",
            "band": compute["bytes"] // 2,  # the compute buffer estimate is good to about +-50%
            "stages": [],
        }
    if setup is None or setup["context_dependent"]:
        setup = _vllm_setup(dep, context)
    dtype = "auto" if dep.kv in ("f16", "bf16") else dep.kv
    batched = setup["max_num_batched_tokens"]
    block_size = dep.block_size
    kv = vllm_kv_cache(
        arch,
        context,
        dtype,
        block_size=block_size,
        max_num_batched_tokens=batched,
        tp=n_gpus,
        pp=dep.pp,
        prefix_caching=dep.prefix_caching,
        speculative_tokens=dep.speculative_tokens,
        mtp=dep.mtp,
        drafter=dep.drafter,
    )
    share, share_how = _kv_head_share(arch, n_gpus)
    usable = setup["usable_bytes"]
    budget = int(usable * dep.gpu_memory_utilization)
    loaded = setup["weights"]
    reserve = setup["reserve"]
    graphs = setup.get("cuda_graphs")  # vLLM 0.20+: the CUDA graph estimate, on every GPU
    graph_bytes = graphs["bytes"] if graphs else 0
    par = (f" / {n_gpus} GPUs (tensor parallel)" if n_gpus > 1 else "") + (
        ", pipeline stage of {layers}" if dep.pp > 1 else ""
    )
    flags = (
        f"--max-model-len {context} --gpu-memory-utilization {dep.gpu_memory_utilization:g}"
        + (f" --block-size {block_size}" if block_size != VLLM_BLOCK_SIZE else "")
        + (f" --tensor-parallel-size {n_gpus}" if n_gpus > 1 else "")
        + (f" --pipeline-parallel-size {dep.pp}" if dep.pp > 1 else "")
        + (" --enable-prefix-caching" if dep.prefix_caching else "")
        + (" --disable-custom-all-reduce" if not dep.custom_all_reduce else "")
        + (
            f" --speculative-config '{{{_speculative_method(dep)}, \"num_speculative_tokens\": {dep.speculative_tokens}}}'"
            if dep.speculative_tokens
            else ""
        )
    )
    per_gpu = gpu_stages(kv)
    stage_weights = _stage_weights(arch, loaded["bytes"], [s["layers"] for s in per_gpu])
    stages = []
    for rank, (stage, weight_bytes) in enumerate(zip(per_gpu, stage_weights)):
        layout = stage["layout"]
        last = rank == len(per_gpu) - 1
        reserve_bytes = (reserve["bytes"] if last else reserve["stage_bytes"]) + graph_bytes
        # vLLM 0.20+ (the null block is older, modelled from this range): block 0 is held back, requests share the rest
        kv_bytes = layout["bytes_per_request"] * n_seq + (layout["memory_per_block"] if setup.get("null_block") else 0)
        stages.append(
            {
                "rank": rank,
                "layers": stage["layers"],
                "layout": layout,
                "weights": -(-weight_bytes // n_gpus),
                "kv_cache": kv_bytes,
                "reserve": reserve_bytes,
                "total": -(-weight_bytes // n_gpus) + kv_bytes + reserve_bytes,
            }
        )
    tight = max(stages, key=lambda st: st["total"])
    layout = tight["layout"]
    a, b = tight["layers"]
    grouping = (
        f"; hybrid layout: {layout['n_groups']} groups of {plural(layout['group_size'], 'layer')}"
        + (f" ({layout['padding_layers']} padding layers)" if layout["padding_layers"] else "")
        + (f", blocks of {layout['block_size']} tokens to hold a state page" if layout["state_page_bytes"] else "")
        if layout["hybrid"]
        else ""
    )
    layers_text = f"layers {a}-{b - 1} of {arch.n_layers}"
    components = [
        {
            "name": "weights",
            "bytes": tight["weights"],
            "how": loaded["how"] + par.format(layers=layers_text),
        },
        {
            "name": "kv_cache",
            "bytes": tight["kv_cache"],
            "how": f"vLLM {flags}: {plural(n_seq, 'sequence')} x {_size(layout['bytes_per_request'])} in blocks of "
            f"{layout['block_size']} tokens ({kv['kv_cache_dtype']}){grouping}"
            + ("" if n_gpus == 1 else f"; {share_how}")
            + (f"; pipeline stage {tight['rank'] + 1} of {dep.pp}: {layers_text}" if dep.pp > 1 else "")
            + (
                f"; + 1 null block ({_size(layout['memory_per_block'])}) the block pool holds back "
                "(vllm/v1/core/block_pool.py)"
                if setup.get("null_block")
                else ""
            ),
        },
        {
            "name": "activation_reserve",
            "bytes": tight["reserve"],
            "how": reserve["how"] + (f"; {graphs['how']}" if graphs else ""),
        },
    ]
    return {
        "components": components,
        "budget": budget,
        "kv_detail": kv,
        "kv_share": share * (b - a) / arch.n_layers,  # of the KV heads, and of the layers under pipeline parallel
        "flags": flags,
        "budget_how": f"gpu_memory_utilization {dep.gpu_memory_utilization:g} x {_size(usable)} ({setup['usable_how']})",
        "band": reserve["band_bytes"] + (graphs["band_bytes"] if graphs else 0),
        "stages": stages if dep.pp > 1 else [],
        "layout": layout,  # the KV layout of the GPU shown (kv_bytes.vllm_kv_layout)
        "setup": setup,
        # vLLM 0.20+'s Mamba cache blocks (None unless hybrid): every GPU gets the smallest stage's block count
        "mamba_blocks": _mamba_blocks(stages, budget) if setup.get("mamba_check") else None,
    }


def _mamba_blocks(stages: list[dict], budget: int) -> int | None:
    """vLLM 0.20+'s Mamba cache blocks (None unless hybrid): every GPU gets the smallest stage's block count."""
    blocks = [vllm_mamba_blocks(budget - st["weights"] - st["reserve"], st["layout"]) for st in stages]
    return None if None in blocks else min(blocks)


def _auto_max_model_len(dep: Deployment, trained: int | None) -> int | None:
    """vLLM 0.20+'s --max-model-len auto: the longest max_model_len, up to the model's own context, whose one
    request fits the KV budget (vllm/v1/core/kv_cache_utils.py, _auto_fit_max_model_len); None when not even
    one block's worth fits ('Cannot auto-fit max_model_len')."""
    step = dep.block_size
    top = min(trained or MAX_CONTEXT, MAX_CONTEXT)

    def fits(n: int) -> bool:
        t, b = _total(dep, min(n * step, top), 1, None)
        return t <= b

    n = _largest(fits, 1, -(-top // step))
    return None if n is None else min(n * step, top)


WHOLE_MODEL_CHECK_THROUGH = "0.15"  # the last vLLM release with the whole-model check (vllm#34076)


def _whole_model_check(g: dict, budget: int) -> str | None:
    """vLLM up to 0.15 checks pipeline stages against the whole model's KV: what it refuses that later versions start.

    Its start-up check compared the smallest stage's free memory with one max-length request over all the layers
    (vllm/v1/core/kv_cache_utils.py, get_kv_cache_configs; vllm#34076, #32105); later releases check each stage
    against its own layers."""
    if not g["stages"]:
        return None
    free = min(budget - st["weights"] - st["reserve"] for st in g["stages"])
    # every layer's own blocks for one request (no group padding), one GPU's share of the heads
    need = sum(
        t["blocks_per_request"] // t["groups"] * t["layers"] * st["layout"]["page_bytes"]
        for st in g["stages"]
        for t in st["layout"]["types"]
    )
    if free >= need:
        return None
    return (
        f"vLLM up to 0.15 refuses this: under pipeline parallel it compared the smallest stage's free memory "
        f"({_size(free)}) with one request over all {g['kv_detail']['layout']['n_layers']} layers ({_size(need)}) "
        "(vllm#34076); later releases check each stage against its own layers, as kvlab does"
    )


def _stage_weights(arch: Architecture, loaded: int, stages: list[tuple[int, int]]) -> list[int]:
    """Each pipeline stage's weights: its layers' share of the rest, the embedding on the first stage and the
    LM head on the last (vLLM builds both there, a tied head too). Embedding and head in BF16, as vLLM's
    quantized formats leave them; the rest spread evenly over the layers."""
    if len(stages) == 1:
        return [loaded]
    table = (arch.vocab_size or 0) * arch.hidden_size * 2
    body = max(0, loaded - 2 * table)
    out = [body * (b - a) // arch.n_layers for a, b in stages]
    out[0] += table
    out[-1] += table
    return out


def _total(dep: Deployment, context: int, n_seq: int, setup: dict | None) -> tuple[int, int]:
    g = _per_gpu(dep, context, n_seq, setup)
    return sum(c["bytes"] for c in g["components"]), g["budget"]


def _largest(fits, lo: int, hi: int) -> int | None:
    """Largest n in [lo, hi] with fits(n) (fits is monotone: True then False); None if not even lo."""
    if not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def long_context_check(arch: Architecture, context: int) -> dict | None:
    """None when `context` is within the model's trained length; else what each engine does about it."""
    trained = arch.max_position_embeddings
    if not trained or context <= trained:
        return None
    return {
        "trained": trained,
        "over_by_tokens": context - trained,
        "text": (
            f"{plural(context, 'token')} is beyond the {plural(trained, 'token')} {arch.name} was trained on "
            f"(max_position_embeddings)"
        ),
        "llamacpp": (
            f"llama.cpp warns (n_ctx_seq {context} > n_ctx_train {trained}) and runs anyway; "
            "the model was not trained past that, so expect its output to degrade"
        ),
        "vllm": (
            f"vLLM refuses --max-model-len {context} > max_position_embeddings {trained} "
            f"unless {VLLM_LONG_CONTEXT_FLAG} is set"
        ),
    }


def verdict(dep: Deployment, context: int | None, n_seq: int = 1, solve: bool = True) -> dict:
    """Does `dep` hold `n_seq` sequences of `context` tokens? The answer, in named steps.

    Returns the components on one GPU (bytes and how each was counted), the
    budget, `fits`, `binding` (None, "weights", "reserve", "kv_cache",
    "max_num_seqs" (0.20+'s hybrid refusal) or "trained_context"), `over_bytes` / `headroom_bytes`, the largest context
    at `n_seq` and the largest number of sequences at `context` (skipped when
    `solve` is False: curves need only the verdict), a one-line `headline`,
    and what each engine does past the trained context.
    """
    if dep.engine not in ENGINES:
        raise ValueError(
            f"engine: the verdict answers for {', '.join(ENGINE_NAMES.values())}; "
            f"{dep.engine_name}'s budget is kvlab.memory.compare.engine_budget"
        )
    auto = None
    if dep.max_model_len_auto:
        auto = _auto_context(dep)
        context = auto["max_model_len"] or dep.block_size  # nothing fits: the verdict shows why at one block
    else:
        context = finite_number("context", context, minimum=1, maximum=MAX_CONTEXT, integer=True)
    n_seq = finite_number("n_seq", n_seq, minimum=1, maximum=MAX_SEQUENCES, integer=True)
    g = _per_gpu(dep, context, n_seq)
    use = _usage(dep, g, context)
    sure = _confidence(dep, g, use, context, n_seq, auto)
    lim = _limits(dep, context, n_seq, g.get("setup"), solve)
    return _result(dep, context, n_seq, g, use, sure, lim, auto)


def _auto_context(dep: Deployment) -> dict:
    """--max-model-len auto (vLLM 0.20+): the length vLLM settles on, and its log line."""
    trained_len = dep.arch.max_position_embeddings
    fitted = _auto_max_model_len(dep, None if dep.allow_long_context else trained_len)
    return {
        "max_model_len": fitted,
        "text": (
            "--max-model-len auto: "
            + (
                f"full model context length {trained_len:,} fits"
                if fitted and fitted == trained_len
                else f"vLLM fits {fitted:,} tokens (the longest whose one request fits)"
                if fitted
                else "Cannot auto-fit max_model_len: not one block of KV cache fits"
            )
        ),
    }


def _usage(dep: Deployment, g: dict, context: int) -> dict:
    """The components against the budget: totals, and what binds first (or the engine's refusal)."""
    parts = {c["name"]: c["bytes"] for c in g["components"]}
    total = sum(parts.values())
    budget = g["budget"]
    reserve = total - parts["weights"] - parts["kv_cache"]
    trained = dep.arch.max_position_embeddings
    over_trained = bool(trained and context > trained)
    # vLLM 0.20+ refuses a hybrid model whose max_num_seqs exceeds its Mamba cache blocks (vllm/config/compilation.py)
    setup = g.get("setup")
    mamba_blocks = g.get("mamba_blocks")
    refusal = (
        vllm_mamba_refusal(setup["max_num_seqs"], mamba_blocks)
        if mamba_blocks is not None and setup["max_num_seqs"] > mamba_blocks
        else None
    )
    binding = None
    if parts["weights"] > budget:
        binding = "weights"
    elif parts["weights"] + reserve > budget:
        binding = "reserve"
    elif total > budget:
        binding = "kv_cache"
    elif refusal:
        binding = "max_num_seqs"
    elif over_trained and not dep.allow_long_context:
        binding = "trained_context"
    return {
        "parts": parts,
        "total": total,
        "budget": budget,
        "reserve": reserve,
        "memory_fits": total <= budget,
        "trained": trained,
        "over_trained": over_trained,
        "mamba_blocks": mamba_blocks,
        "refusal": refusal,
        "binding": binding,
        "fits": binding is None,
    }


# vLLM's profiling pass runs a vision-language model's vision encoder on its largest input before the text model
# ("Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum
# feature size", gpu_model_runner.py, in tests/python/data/engine_logs/calibration/
# vllm_qwen36_35b_a3b_nvfp4_gb10_mtp3_v0251.txt). kvlab estimates its peak for the towers it knows
# (engines.vllm_vision_profile); for the others this warning stands in. With every modality at 0 in
# --limit-mm-per-prompt vLLM initialises no encoder cache and profiles no encoder (compute_mm_encoder_budget: "All
# non-text modalities supported by the model have been explicitly disabled via limit_mm_per_prompt").
VLLM_VISION_PROFILE = (
    "vision-language model: at start-up vLLM also runs the vision encoder on its largest image, and kvlab does not "
    "count that peak; real start-ups of Qwen3.5-4B and Qwen3.6-35B-A3B had about 1.0 and 0.8 GiB less cache than "
    "kvlab predicts. Setting every modality to 0 in --limit-mm-per-prompt skips it"
)


def sampler_doubt(dep: Deployment, settings: dict | None) -> str | None:
    """Where kvlab took V0/V1's default path for vLLM's sampler warm-up (the native sort; no --sampler) and the
    releases or installs of the same range that run no sort would reserve at least 0.25 GiB less: what it assumed,
    and the other figure. `settings`: vLLM's setup, or the verdict's engine_model (both carry the batch settings and
    the path)."""
    if dep.engine != "vllm" or not settings or dep.sampler is not None or settings["sampler"] != "native":
        return None  # 0.20 runs Triton, 0.21+ FlashInfer by default on every card kvlab knows: no doubt worth a line
    feats = reserve_features(dep.arch, settings["max_num_batched_tokens"], settings["max_num_seqs"], dep.tp)
    mine, theirs = sampler_peak(feats, "native")[0], sampler_peak(feats, "flashinfer")[0]
    if abs(mine - theirs) < 0.25:
        return None
    paths = vllm_data()["sampler_warmup"]["paths"]
    return (
        f"vLLM's sampler warm-up: kvlab takes {paths['native']['label']} ({mine:.2f} GiB at its peak), what a pip "
        f"install up to 0.16 runs; 0.17-0.19, and the Docker images of 0.9-0.11.0, run a kernel without the sort "
        f"({theirs:.2f} GiB, {mine - theirs:.2f} GiB more for the KV cache: kvlab fit --sampler triton or flashinfer)"
    )


def _confidence(dep: Deployment, g: dict, use: dict, context: int, n_seq: int, auto: dict | None) -> dict:
    """How sure the answer is: a margin inside the reserve estimate's error is a close call; and the warnings."""
    total, budget, memory_fits = use["total"], use["budget"], use["memory_fits"]
    band = g["band"]
    close = memory_fits and budget - total < band or not memory_fits and total - budget < band
    if auto and auto["max_model_len"]:
        # vLLM sizes the context to fit, so it starts; what the estimate's error moves is the length it picks
        close = False
        auto["text"] += f" (kvlab's estimate is off by up to {_size(band)}, so vLLM's length may differ)"
    confidence = "low" if close else "high"
    warnings = []
    if close:
        warnings.append(
            f"close call: the margin ({_size(abs(budget - total))} {'to spare' if memory_fits else 'over'}) is "
            f"within the reserve estimate's error ({_size(band)}); the engine may "
            + ("refuse to start" if memory_fits else "start after all")
        )
    if dep.engine == "vllm" and dep.arch.vision and dep.multimodal:
        vision = (g.get("setup") or {}).get("vision_profile")
        if not vision:
            warnings.append(VLLM_VISION_PROFILE)
        elif vision["bytes"]:
            warnings.append(
                "vision-language model: at start-up vLLM also runs the vision encoder on its largest image; kvlab "
                f"counts an estimate of that peak ({vision['gib']:.2f} GiB more than the text model's run). Setting "
                "every modality to 0 in --limit-mm-per-prompt skips it"
            )
    if doubt := sampler_doubt(dep, g.get("setup")):
        warnings.append(doubt)
    if dep.engine == "vllm" and dep.device["unified_memory"]:
        warnings.append(
            f"vLLM has no backend for the {dep.device['name']}'s GPU (it runs on CUDA and ROCm cards); this is the "
            "memory arithmetic only"
        )
        confidence = "low"
    strict = _whole_model_check(g, budget)
    older = []  # the range's own earlier releases that refuse what its rule starts: [{"through", "reason"}]
    if strict:
        warnings.append(strict)
        confidence = "low"
        older.append({"through": WHOLE_MODEL_CHECK_THROUGH, "reason": strict})
    if long_context_check(dep.arch, context) and dep.allow_long_context:
        warnings.append(long_context_check(dep.arch, context)["text"])
    if use["refusal"]:
        warnings.append(f"vLLM {VLLM_RECENT} refuses to start: {use['refusal']}")
    if dep.engine == "llamacpp" and not dep.device["unified_memory"]:
        fit = llamacpp_fit(dep, context, n_seq)
        if fit["as_given"]["outcome"] != "fits":
            warnings.append(fit["text"])
    if auto:
        warnings.append(auto["text"])
    return {"close": close, "confidence": confidence, "band": band, "warnings": warnings, "older_refuse": older}


def _limits(dep: Deployment, context: int, n_seq: int, setup: dict | None, solve: bool) -> dict:
    """The longest context at `n_seq` sequences and the most sequences at `context` (None when not solved)."""
    trained = dep.arch.max_position_embeddings
    step = LLAMACPP_PAD if dep.engine == "llamacpp" else dep.block_size

    def fits_at(ctx: int) -> bool:
        t, b = _total(dep, ctx, n_seq, setup)
        return t <= b

    def fits_with(n: int) -> bool:
        t, b = _total(dep, context, n, setup)
        return t <= b

    by_memory = _largest(lambda s: fits_at(s * step), 1, MAX_CONTEXT // step) if solve else None
    by_memory = by_memory * step if by_memory else None
    limit = None if dep.allow_long_context or not trained else trained
    if by_memory is None:
        max_context, limited_by = None, "memory"
    elif limit is not None and limit <= by_memory:
        max_context, limited_by = limit, "trained_context"
    else:
        max_context, limited_by = by_memory, "memory"
    max_sequences = (_largest(fits_with, 1, MAX_SEQUENCES) or 0) if solve else None
    seq_cap = setup["max_num_seqs"] if setup else None
    capped = bool(solve and seq_cap and max_sequences > seq_cap)
    if capped:
        max_sequences = seq_cap
    if not solve:
        context_text = sequences_text = ""
    else:
        if by_memory is None:
            context_text = f"none: not even {plural(step, 'token')} fit"
        elif limited_by == "trained_context":
            context_text = f"{plural(max_context, 'token')}, the model's trained context" + (
                f" (memory alone would allow {by_memory:,})" if by_memory > max_context else ""
            )
        else:
            context_text = f"{plural(max_context, 'token')} (limited by memory)"
        sequences_text = (
            f"{plural(max_sequences, 'sequence')} of {plural(context, 'token')}"
            if max_sequences
            else f"none: not one sequence of {plural(context, 'token')} fits"
        ) + (" (vLLM's max_num_seqs cap; memory allows more)" if capped else "")
    return {
        "max_context": max_context,
        "by_memory": by_memory,
        "limited_by": limited_by,
        "context_text": context_text,
        "max_sequences": max_sequences,
        "sequences_text": sequences_text,
        "capped": capped,
    }


def _headline(dep: Deployment, context: int, use: dict, close: bool) -> tuple[str, str]:
    """The verdict in one line, and its label ("fits", "does not fit", "beyond the trained context")."""
    total, budget, parts, binding = use["total"], use["budget"], use["parts"], use["binding"]
    if binding == "trained_context":
        headline = (
            f"beyond the trained context: {plural(context, 'token')} per sequence, but {dep.arch.name} was "
            f"trained on {plural(use['trained'], 'token')}; memory alone would allow it "
            f"({_size(total)} of {_size(budget)})"
        )
        return headline, "beyond the trained context"
    if use["fits"]:
        headline = (
            f"fits: {_size(total)} of {_size(budget)} on "
            + ("the fullest GPU" if dep.pp > 1 or dep.engine == "llamacpp" else "each GPU")
            + f", {_size(budget - total)} to spare"
            if dep.gpus > 1
            else f"fits: {_size(total)} of {_size(budget)}, {_size(budget - total)} to spare"
        )
        if close:
            headline = "fits, barely: " + headline.removeprefix("fits: ") + " (within the estimate's error)"
        return headline, "fits"
    if binding == "weights":
        headline = (
            f"does not fit: the weights alone take {_size(parts['weights'])}"
            f"{' on the fullest GPU' if dep.pp > 1 else ' per GPU' if dep.tp > 1 else ''}, "
            f"more than the {_size(budget)} available"
        )
    elif binding == "max_num_seqs":
        headline = f"does not start: {use['refusal']}"
    elif binding == "reserve":
        headline = (
            f"does not fit: the weights plus the reserve take {_size(parts['weights'] + use['reserve'])}, "
            f"more than the {_size(budget)} available, before any KV cache"
        )
    else:
        headline = (
            f"does not fit: the KV cache ({_size(parts['kv_cache'])}) takes the total to "
            f"{_size(total)}, {_size(total - budget)} over the {_size(budget)} available"
        )
    return headline, "does not fit"


def llamacpp_fit(
    dep: Deployment,
    context: int | None = None,
    n_seq: int = 1,
    target_bytes: int = FIT_TARGET_BYTES,
    n_gpu_layers_set: bool = False,
) -> dict:
    """What llama.cpp's --fit (on by default since b7407) does with this deployment, by llama.cpp's own rule
    (kvlab.memory.llamacpp.fit_params, common/fit.cpp@b10309).

    `as_given` is -c `context` x `n_seq` as the verdict asks it (None when `context` is None): --fit changes
    nothing when that leaves --fit-target (1 GiB per device) free, and otherwise keeps layers in system
    memory (slower) rather than failing. `unset` is -c left to --fit: the training context, lowered to what
    leaves --fit-target free, not below --fit-ctx (4,096). `context_unset` is that context (None when even
    --fit-ctx does not fit and layers go to the CPU). The free memory is the card less kvlab's runtime reserve
    (the CUDA context llama.cpp cannot use); the compute buffer is taken as fixed (FIT_NOT_MODELLED).
    `target_bytes` is --fit-target per device, `n_gpu_layers_set` says -ngl (or -ts / -ot) was given.
    """
    arch, n_gpus = dep.arch, dep.tp
    trained = min(arch.max_position_embeddings or MAX_CONTEXT, MAX_CONTEXT)
    free = n_gpus * (dep.memory_bytes - RUNTIME_RESERVE_BYTES)
    compute = n_gpus * llamacpp_compute_buffer(arch, dep.n_ubatch)["bytes"]

    def kv_bytes(n_ctx: int) -> int:
        return llamacpp_kv_cache(
            arch, max(1, n_ctx), dep.kv, n_seq=n_seq, n_ubatch=dep.n_ubatch, kv_unified=n_seq == 1
        )["total_bytes"]

    def run(n_ctx: int | None) -> dict:
        return fit_params(
            free_bytes=free,
            weights_bytes=device_weights(arch, dep.weights, dep.device["unified_memory"])["bytes"],
            kv_bytes=kv_bytes,
            n_ctx_train=trained,
            compute_bytes=compute,
            n_ctx=n_ctx,
            target_bytes=target_bytes,
            n_gpu_layers_set=n_gpu_layers_set,
            n_devices=n_gpus,
            n_layers=arch.n_layers,
            moe=bool(arch.expert_params),
        )

    unset = run(None)
    given = run(context * n_seq) if context else None
    reduced = unset["outcome"] in ("fits", "context_reduced")
    context_unset = unset["n_ctx"] // n_seq if reduced else None
    target = unset["target_bytes"] // 2**20
    moe = " (MoE experts first)" if arch.expert_params else ""
    if not reduced:
        unset_text = (
            f"with -c unset not even its minimum of {unset['n_ctx_min']:,} tokens fits beside the weights on the GPU"
        )
    else:
        cells = unset["n_ctx"]
        unset_text = (
            f"with -c unset it allocates {'the training context, ' if unset['outcome'] == 'fits' else ''}"
            f"{plural(cells, 'token')} of context{f' ({context_unset:,} per slot, {n_seq} slots)' if n_seq > 1 else ''}"
            + ("" if unset["outcome"] == "fits" else f", the most that keeps --fit-target {target:,} MiB free")
        )
    if given and given["outcome"] == "fits":
        text = f"llama.cpp's --fit (on by default) changes nothing: -c {context * n_seq:,} leaves more than {target:,} MiB free"
    elif given and free - given["projected_bytes"] >= 0:
        text = (
            f"llama.cpp's --fit (on by default): -c {context * n_seq:,} leaves "
            f"{_size(free - given['projected_bytes'])} free, under --fit-target's {target:,} MiB, so it moves some "
            f"layers{moe} to system memory (slower); --fit off keeps them all on the GPU; {unset_text}"
        )
    else:
        given_text = f"with -c {context * n_seq:,} given" if given else "with -c given"
        text = (
            f"llama.cpp's --fit (on by default): {given_text} it keeps some layers{moe} in system memory instead "
            f"of failing (slower); {unset_text}; --fit off makes it an error"
        )
    return {
        "as_given": given,
        "unset": unset,
        "context_unset": context_unset,
        "target_mib": target,
        "min_ctx": unset["n_ctx_min"],
        "text": text,
        "sources": unset["sources"],
    }


MXFP4_KERNEL_HOW = {
    "given": "MXFP4 weights on vLLM's {kernel} kernel path, as given (--mxfp4-backend)",
    "triton": "MXFP4 weights on vLLM's Triton kernel path (OpenAI's triton_kernels), the one get_mxfp4_backend picks "
    "for this card when triton_kernels is installed, as in vLLM's Docker image; without it, or with "
    "VLLM_MXFP4_USE_MARLIN=1, vLLM runs Marlin, which loads and reserves more (kvlab fit --mxfp4-backend marlin)",
    "marlin": "MXFP4 weights on vLLM's Marlin kernel path, the one get_mxfp4_backend picks below compute capability "
    "9.0 (the packed weights dequantized inside each GEMM)",
    "native": "MXFP4 weights on the card's own FP4 tensor cores",
    "no card": "MXFP4 weights on vLLM's {kernel} kernel path (no card given, so no compute capability to choose by)",
}


def _engine_model(dep: Deployment, setup: dict | None, use: dict, capped: bool, auto: dict | None) -> dict:
    """The engine version modelled and the settings it picked (vLLM), for the result."""
    if not setup:
        return {"version": LLAMACPP_VERSION}
    model = {
        "version": setup["version"],
        "max_num_batched_tokens": setup["max_num_batched_tokens"],
        "max_num_seqs": setup["max_num_seqs"],
        "defaults_how": setup["defaults_how"],
        "usable_bytes": setup["usable_bytes"],
        "usable_how": setup["usable_how"],
        "max_num_seqs_caps_sequences": capped,
    }
    if setup.get("vision_profile"):  # only for a vision tower kvlab knows, so other models' results keep their keys
        model["vision_profile_gib"] = setup["vision_profile"]["gib"]
    model["sampler"] = setup["sampler"]  # the sampler warm-up's path (engines.vllm_sampler)
    if setup.get("mxfp4_kernel"):
        model["mxfp4_kernel"] = setup["mxfp4_kernel"]
        model["mxfp4_kernel_how"] = MXFP4_KERNEL_HOW[
            "given" if dep.mxfp4_backend else setup["mxfp4_kernel"] if dep.card else "no card"
        ].format(kernel=setup["mxfp4_kernel"].capitalize())
    if setup["version_id"] == VLLM_RECENT:
        model |= {
            "cuda_graphs_bytes": setup["cuda_graphs"]["bytes"],
            "null_block": True,
            "mamba_cache_blocks": use["mamba_blocks"],
            "refusal": use["refusal"],
            "max_model_len_auto": auto,
        }
    return model


def _result(
    dep: Deployment, context: int, n_seq: int, g: dict, use: dict, sure: dict, lim: dict, auto: dict | None
) -> dict:
    budget, total = use["budget"], use["total"]
    setup = g.get("setup")
    headline, label = _headline(dep, context, use, sure["close"])
    components = [dict(c, label=PARTS[c["name"]], gib=c["bytes"] / GIB) for c in g["components"]]
    notes = list(g["kv_detail"].get("notes", [])) + list(g["kv_detail"].get("assumptions", []))
    return {
        "model": dep.arch.name,
        "engine": dep.engine,
        "engine_name": dep.engine_name,
        "flags": g["flags"],
        "context": context,
        "n_seq": n_seq,
        "n_gpus": dep.tp,
        "pipeline_parallel": dep.pp,
        "stages": [
            {
                "rank": st["rank"],
                "layers": list(st["layers"]),
                "weights_bytes": st["weights"],
                "kv_cache_bytes": st["kv_cache"],
                "reserve_bytes": st["reserve"],
                "total_bytes": st["total"],
                "free_bytes": budget - st["total"],
                "text": f"stage {st['rank'] + 1}: layers {st['layers'][0]}-{st['layers'][1] - 1}, "
                f"{_size(st['total'])} of {_size(budget)}",
            }
            for st in g["stages"]
        ],
        "gpu": dep.device["name"],
        "where": dep.where(),
        "weights_format": dep.weights["format"],
        "kv_type": dep.kv,
        "components": components,
        "total_bytes": total,
        "total_gib": total / GIB,
        "memory_bytes": dep.memory_bytes,
        "budget_bytes": budget,
        "budget_how": g["budget_how"],
        "headroom_bytes": budget - total,
        "over_bytes": max(0, total - budget),
        "memory_fits": use["memory_fits"],
        "trained_context": use["trained"],
        "over_trained_context": use["over_trained"],
        "long_context": long_context_check(dep.arch, context),
        "allow_long_context": dep.allow_long_context,
        "fits": use["fits"],
        "binding": use["binding"],
        "binding_label": BINDING_LABELS.get(use["binding"]),
        "verdict": label,
        "headline": headline,
        "max_context": lim["max_context"],
        "max_context_by_memory": lim["by_memory"],
        "max_context_limited_by": lim["limited_by"],
        "max_context_text": lim["context_text"],
        "max_sequences": lim["max_sequences"],
        "max_sequences_text": lim["sequences_text"],
        "kv_share_per_gpu": g["kv_share"],
        "confidence": sure["confidence"],
        "error_band_bytes": sure["band"],
        "warnings": sure["warnings"],
        # vLLM releases inside the range modelled that refuse this start: a log that states its version is
        # compared with them ("through": the last such release, (major, minor) as text)
        "older_versions_refuse": sure["older_refuse"],
        "engine_model": _engine_model(dep, setup, use, lim["capped"], auto),
        "assumptions": [f"{c['label']}: {c['how']}" for c in components]
        + [f"budget per GPU: {g['budget_how']}", dep.device["how"]]
        + ([f"vLLM defaults: {setup['defaults_how']}"] if setup else [])
        + dep.weights.get("notes", [])
        + notes,
    }


def vllm_layout(dep: Deployment, context: int) -> dict:
    """vLLM's KV layout on the GPU the verdict shows (groups, pages, blocks: kv_bytes.vllm_kv_layout)."""
    if dep.engine != "vllm":
        raise ValueError(f"engine: the KV layout is vLLM's; this deployment runs {dep.engine_name}")
    return _per_gpu(dep, context, 1)["layout"]


def budget(dep: Deployment, context: int) -> dict:
    """vLLM's or llama.cpp's KV budget for `dep` at `context` tokens, in the shared shape of the four engines."""
    return _as_budget(dep, verdict(dep, context, 1), context)


def _component(v: dict, name: str) -> int:
    return sum(c["bytes"] for c in v["components"] if c["name"] == name)


def _as_budget(dep: Deployment, v: dict, context: int) -> dict:
    """A verdict (vLLM or llama.cpp) in the shared budget shape (kvlab.memory.engine_budget)."""
    engine = dep.engine
    kv = _component(v, "kv_cache")
    per_token = kv / context if context else 0
    weights = _component(v, "weights")
    if engine == "vllm":
        reserve = _component(v, "activation_reserve")
        pool = max(0, v["budget_bytes"] - weights - reserve)
        tokens = int(pool // per_token) if per_token else 0
        rule = (
            f"takes {dep.gpu_memory_utilization:g} of the card, subtracts the weights and a profiled activation "
            "reserve, and fills all the rest with blocks every request shares"
        )
        steps = [
            {"label": "the card's share", "bytes": v["budget_bytes"], "how": v["budget_how"]},
            {"label": "weights", "bytes": -weights, "how": "as loaded"},
            {"label": "activation reserve", "bytes": -reserve, "how": "vLLM's profiling pass, as kvlab models it"},
            {"label": "KV cache pool", "bytes": pool, "how": "what is left, in blocks"},
        ]
        unsure = ["the activation reserve is fitted on real start-up logs, not measured"]
        if doubt := sampler_doubt(dep, v.get("engine_model")):
            unsure.append(doubt)
        if dep.arch.vision and dep.multimodal and not (v.get("engine_model") or {}).get("vision_profile_gib"):
            unsure.append(VLLM_VISION_PROFILE)
        elif dep.arch.vision and dep.multimodal:
            unsure.append("the vision encoder's profile peak is an estimate (its widest block's tensors), not fitted")
    else:
        pool = kv
        tokens = context * v["n_seq"]
        rule = (
            "allocates exactly the context it is given (-c) at start-up and leaves the rest of the card free; "
            "a longer context needs a restart"
        )
        steps = [
            {
                "label": "KV cache",
                "bytes": kv,
                "how": f"{context:,} tokens x {v['n_seq']} sequence(s), allocated at start",
            },
            {"label": "compute buffer", "bytes": _component(v, "compute_buffer"), "how": "llama.cpp's graph buffers"},
        ]
        unsure = [
            "llama-server runs 4 slots with a unified cache when -np is not given; kvlab counts the sequences asked for",
            "--fit (on by default in recent builds) lowers the context to fit instead of failing",
        ]
    return {
        "engine": engine,
        "engine_name": ENGINE_NAMES[engine],
        "version_modelled": v["engine_model"]["version"],
        "fits": v["fits"],
        "refusal": None if v["fits"] else v["headline"],
        "confidence": v["confidence"],
        "kv_budget_bytes": pool,
        "kv_bytes_per_token": per_token,
        "max_tokens": tokens,
        "max_sequences_at_context": v["max_sequences"],
        "longest_context": v["max_context"],
        "settings": {"flags": v["flags"]},
        "steps": steps,
        "unsure": unsure,
        "rule": rule,
    }
