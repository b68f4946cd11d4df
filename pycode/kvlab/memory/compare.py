"""Four engines side by side: the same model on the same GPUs, what each sets aside for the KV cache.

Each engine sizes its cache by its own rule, so the same model and card give different answers:

- vLLM takes a share of the card (`--gpu-memory-utilization`, 0.9), subtracts the weights and an
  activation reserve it measures with a profiling pass, and fills the rest with a pool of blocks
  every request shares (kvlab.memory.verdict.fit_verdict, engine "vllm").
- llama.cpp allocates exactly the context it is asked for (`-c`) at start-up, for its slots, and
  leaves the rest of the card free (fit_verdict, engine "llamacpp").
- SGLang keeps a static fraction of the card (`--mem-fraction-static`, a default that depends on the
  card and the settings) for the weights and a token pool (kvlab.memory.sglang).
- TensorRT-LLM gives the KV cache a fraction (`free_gpu_memory_fraction`, 0.9) of the memory still
  free after it has loaded the engine and run its estimation pass (kvlab.memory.trtllm).

`engines_side_by_side` returns one row per engine in the shape kvlab.memory.engine_budget describes
(the budget per GPU, what it holds, the longest context and the sequences at this context, the rule
in words, what kvlab is unsure of), each naming the engine version it models.
"""

from __future__ import annotations

from kvlab.inputs import finite_number
from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.kv_bytes import VLLM_GPU_MEMORY_UTILIZATION
from kvlab.memory.sglang import sglang_budget
from kvlab.memory.trtllm import trtllm_budget
from kvlab.memory.verdict import fit_verdict

ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


def _component(v: dict, name: str) -> int:
    return sum(c["bytes"] for c in v["components"] if c["name"] == name)


def _from_verdict(engine: str, v: dict, context: int) -> dict:
    """A fit verdict (vLLM or llama.cpp) as a row of the side-by-side table."""
    kv = _component(v, "kv_cache")
    per_token = kv / context if context else 0
    weights = _component(v, "weights")
    if engine == "vllm":
        reserve = _component(v, "activation_reserve")
        pool = max(0, v["budget_bytes"] - weights - reserve)
        tokens = int(pool // per_token) if per_token else 0
        rule = (
            f"takes {VLLM_GPU_MEMORY_UTILIZATION:g} of the card, subtracts the weights and a profiled activation "
            "reserve, and fills all the rest with blocks every request shares"
        )
        steps = [
            {"label": "the card's share", "bytes": v["budget_bytes"], "how": v["budget_how"]},
            {"label": "weights", "bytes": -weights, "how": "as loaded"},
            {"label": "activation reserve", "bytes": -reserve, "how": "vLLM's profiling pass, as kvlab models it"},
            {"label": "KV cache pool", "bytes": pool, "how": "what is left, in blocks"},
        ]
        unsure = ["the activation reserve is fitted on real start-up logs, not measured"]
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


def engines_side_by_side(
    model,
    gpu: str,
    context: int,
    *,
    n_gpus: int = 1,
    weights: str = "BF16",
    engines: tuple[str, ...] = ("vllm", "sglang", "trtllm", "llamacpp"),
) -> dict:
    """What each engine sets aside for the KV cache of `model` on `n_gpus` x `gpu` (tensor parallel) at
    `context` tokens, in one table: {"rows": [...], "context", "gpu", "n_gpus"}."""
    arch = model_architecture(model)
    card = get_gpu(gpu)
    context = finite_number("context", context, minimum=1, integer=True)
    rows = []
    for engine in engines:
        if engine not in ENGINE_NAMES:
            raise ValueError(f"engine must be one of {', '.join(ENGINE_NAMES)}, got {engine!r}")
        if engine in ("vllm", "llamacpp"):
            v = fit_verdict(arch, context, weights=weights, kv="f16", gpu=card["id"], n_gpus=n_gpus, engine=engine)
            rows.append(_from_verdict(engine, v, context))
        elif engine == "sglang":
            rows.append(sglang_budget(arch, card, context=context, n_gpus=n_gpus, weights_format=weights))
        else:
            rows.append(trtllm_budget(arch, card, context=context, n_gpus=n_gpus, weights_format=weights))
    # one meaning for the column: the longest single context the engine could serve in this memory, up to
    # the model's trained context (SGLang's and TensorRT-LLM's own figure is capped at the context asked for)
    trained = arch.max_position_embeddings or None
    for row in rows:
        if row["engine"] in ("sglang", "trtllm"):
            row["longest_context"] = min(trained or row["max_tokens"], row["max_tokens"]) if row["max_tokens"] else 0
    return {"model": arch.name, "gpu": card["name"], "n_gpus": n_gpus, "context": context, "rows": rows}
