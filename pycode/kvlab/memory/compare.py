"""Four engines side by side: the same model on the same GPUs, what each sets aside for the KV cache.

Each engine sizes its cache by its own rule, so the same model and card give different answers:

- vLLM takes a share of the card (`--gpu-memory-utilization`, 0.9), subtracts the weights and an
  activation reserve it measures with a profiling pass, and fills the rest with a pool of blocks
  every request shares (kvlab.memory.verdict, engine "vllm").
- llama.cpp allocates exactly the context it is asked for (`-c`) at start-up, for its slots, and
  leaves the rest of the card free (the verdict, engine "llamacpp").
- SGLang keeps a static fraction of the card (`--mem-fraction-static`, a default that depends on the
  card and the settings) for the weights and a token pool (kvlab.memory.sglang).
- TensorRT-LLM gives the KV cache a fraction (`free_gpu_memory_fraction`, 0.9) of the memory still
  free after it has loaded the engine and run its estimation pass (kvlab.memory.trtllm).

Each engine answers through one protocol, `budget(dep, context)` on a kvlab.memory.deployment.Deployment
(`engine_budget` dispatches). `engines_side_by_side` returns one row per engine in the shape kvlab.memory.engine_budget describes
(the budget per GPU, what it holds, the longest context and the sequences at this context, the rule
in words, what kvlab is unsure of), each naming the engine version it models.
"""

from __future__ import annotations

from kvlab.inputs import finite_number
from kvlab.memory import sglang, trtllm
from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.deployment import ENGINE_NAMES, VERDICT_ENGINES, Deployment, deployment
from kvlab.memory.verdict import budget as verdict_budget


ENGINE_BUDGETS = {"vllm": verdict_budget, "llamacpp": verdict_budget, "sglang": sglang.budget, "trtllm": trtllm.budget}


def engine_budget(dep: Deployment, context: int, **flags) -> dict:
    """What `dep`'s engine sets aside for the KV cache at `context` tokens, in the shared shape.

    The one entry point for the four engines: each engine module's `budget(dep, context)`.
    `flags` are the engine's own settings beyond the deployment's (SGLang's mem_fraction_static,
    TensorRT-LLM's free_gpu_memory_fraction ...), passed to its budget.
    """
    return ENGINE_BUDGETS[dep.engine](dep, context, **flags)


def engines_side_by_side(
    model,
    gpu: str,
    context: int,
    *,
    n_gpus: int = 1,
    weights: str = "BF16",
    engines: tuple[str, ...] = ("vllm", "sglang", "trtllm", "llamacpp"),
    checkpoint: dict | None = None,
) -> dict:
    """What each engine sets aside for the KV cache of `model` on `n_gpus` x `gpu` (tensor parallel) at
    `context` tokens, in one table: {"rows": [...], "context", "gpu", "n_gpus"}. `checkpoint`: the weights as
    stored (kvlab.memory.checkpoint), else params x bits of `weights`."""
    arch = model_architecture(model)
    card = get_gpu(gpu)
    context = finite_number("context", context, minimum=1, integer=True)
    rows = []
    for engine in engines:
        if engine not in ENGINE_NAMES:
            raise ValueError(f"engine must be one of {', '.join(ENGINE_NAMES)}, got {engine!r}")
        kv = "f16" if engine in VERDICT_ENGINES else "auto"
        dep = deployment(arch, weights=weights, kv=kv, gpu=card["id"], tp=n_gpus, engine=engine, checkpoint=checkpoint)
        rows.append(engine_budget(dep, context))
    # one meaning for the column: the longest single context the engine could serve in this memory, up to
    # the model's trained context (SGLang's and TensorRT-LLM's own figure is capped at the context asked for)
    trained = arch.max_position_embeddings or None
    for row in rows:
        if row["engine"] in ("sglang", "trtllm"):
            row["longest_context"] = min(trained or row["max_tokens"], row["max_tokens"]) if row["max_tokens"] else 0
    return {"model": arch.name, "gpu": card["name"], "n_gpus": n_gpus, "context": context, "rows": rows}
