"""One shape for every engine's KV budget, so four engines can stand side by side.

`kvlab.memory.sglang.sglang_budget` and `kvlab.memory.trtllm.trtllm_budget` (and, later, the vLLM
and llama.cpp models) return a flat, JSON-able dict with these keys:

    engine                    "sglang", "tensorrt-llm", ...
    engine_name               "SGLang", "TensorRT-LLM", ...
    version_modelled          the engine version (or commit) whose rule is followed, in words
    fits                      bool: the engine starts and one sequence of `context` tokens fits its pool
    refusal                   str | None: what the engine says when it does not (its own message where
                              kvlab read it, else a sentence that says it is kvlab's)
    kv_budget_bytes           int: memory the KV pool gets, per GPU
    kv_bytes_per_token        int: K and V bytes one token takes across the layers, per GPU
    max_tokens                int: tokens the pool holds
    max_sequences_at_context  int: sequences of `context` tokens that fit at once (pool and batch cap)
    longest_context           int: the longest single sequence the pool holds (capped by the engine's
                              own limit where it has one)
    settings                  {name: {"value", "from"}}: every setting used; "from" says "you", or
                              "default" with the engine rule that picked it
    steps                     [{"label", "bytes", "how", "source"}]: the budget in order; `bytes` is
                              an int (or None for a step that is a count or a fraction, not memory),
                              `source` the engine file at the tag or commit kvlab read (path@ref)
                              or "kvlab estimate" for what the engine measures and kvlab cannot
    unsure                    [str]: what the model does not know
    rule                      one sentence in words: what sets the budget

`budget_step` builds a step; `budget_result` checks and assembles the dict.

>>> budget_step("weights", 2**30, "1 GiB", "kvlab.memory.weights")["bytes"]
1073741824
"""

from __future__ import annotations

from collections.abc import Callable

from kvlab.memory.architecture import ATTENTION_KINDS, Architecture
from kvlab.dtypes import KV_TYPES, kv_type
from kvlab.inputs import finite_number

GIB = 2**30
MIB = 2**20

RESULT_KEYS = (
    "engine",
    "engine_name",
    "version_modelled",
    "fits",
    "refusal",
    "kv_budget_bytes",
    "kv_bytes_per_token",
    "max_tokens",
    "max_sequences_at_context",
    "longest_context",
    "settings",
    "steps",
    "unsure",
    "rule",
)

# KV dtypes the two GPU engines take (SGLang --kv-cache-dtype, TensorRT-LLM kv_cache_dtype); "auto" is
# the model's dtype, which for the bf16 / fp16 checkpoints kvlab models is 2 bytes a value
ENGINE_KV_TYPES = ("auto", "bf16", "f16", "fp8")


def checked_inputs(arch, card, context, n_gpus) -> tuple[int, int]:
    """The checks every engine's rule makes first: an Architecture, a catalogue card, the context and the
    tensor-parallel size (each refusal naming its field). Returns (context, tp)."""
    if not isinstance(arch, Architecture):
        raise ValueError("arch: expected an Architecture (resolve the model with catalogue.model_architecture)")
    if not isinstance(card, dict) or not card.get("memory_gib"):
        raise ValueError("card: expected a GPU card dict with memory_gib (catalogue.get_gpu)")
    context = finite_number("context", context, minimum=1, maximum=1 << 24, integer=True)
    return context, finite_number("n_gpus", n_gpus, minimum=1, maximum=64, integer=True)


def deployment_budget(rule: Callable[..., dict]) -> Callable[..., dict]:
    """The engine protocol's `budget(dep, context, **flags)` (kvlab.memory.compare.engine_budget) for a rule
    that takes the model, card and settings field by field, as sglang_budget and trtllm_budget do."""

    def budget(dep, context: int, **flags) -> dict:
        if dep.card is None:
            raise ValueError("gpu: this engine's rule starts from a catalogue card (give gpu, not memory_gib)")
        return rule(
            dep.arch,
            dep.card,
            context=context,
            n_gpus=dep.tp,
            weights_format=dep.weights["format"],
            weights_counted=dep.weights,
            kv=dep.kv,
            **flags,
        )

    budget.__doc__ = f"The engine protocol (kvlab.memory.compare.engine_budget): {rule.__name__} for a Deployment."
    return budget


def budget_step(label: str, nbytes, how: str, source: str) -> dict:
    """One line of a budget: what it is, its bytes (None for a count or a fraction), how, and where from."""
    return {"label": label, "bytes": None if nbytes is None else int(nbytes), "how": how, "source": source}


def setting(value, source: str) -> dict:
    return {"value": value, "from": source}


def budget_result(**fields) -> dict:
    """The shared result dict: every key present, nothing else."""
    missing = [k for k in RESULT_KEYS if k not in fields]
    extra = [k for k in fields if k not in RESULT_KEYS]
    if missing or extra:
        raise ValueError(f"budget result: missing {missing}, unexpected {extra}")
    return {k: fields[k] for k in RESULT_KEYS}


def engine_kv_dtype(kv: str) -> str:
    """'auto' (the model's 16-bit dtype), 'bf16', 'f16' or 'fp8'; llama.cpp's block types are refused."""
    text = str(kv).strip().lower()
    if text == "auto":
        return "auto"
    try:
        k = kv_type(text.replace("fp8_e4m3", "fp8").replace("fp8_e5m2", "fp8"))
    except ValueError:
        k = None
    if k not in ENGINE_KV_TYPES:
        raise ValueError(f"kv must be one of {', '.join(ENGINE_KV_TYPES)}, got {kv!r}")
    return k


def bytes_per_value(kv: str) -> float:
    k = engine_kv_dtype(kv)
    if k == "auto":
        return 2.0
    return KV_TYPES[k][1] / KV_TYPES[k][0]


def kv_heads_per_gpu(heads: int, tp: int, *, replicate_floor: bool) -> int:
    """KV heads one GPU keeps: heads / tp, at least one (SGLang: max(1, h // tp); TensorRT-LLM: ceil)."""
    heads = heads or 1
    return max(1, heads // tp) if replicate_floor else -(-heads // tp)


def layer_bytes_per_token(layer, kv: str, tp: int, *, replicate_floor: bool) -> int:
    """K + V bytes one token takes in one attention layer on one GPU (an MLA latent is not split)."""
    per_value = bytes_per_value(kv)
    if layer.v_values == 0:  # MLA latent (kv_lora_rank + qk_rope_head_dim), replicated on every GPU
        return int((layer.k_values + layer.index_values) * per_value)
    heads = layer.kv_heads or 1
    share = kv_heads_per_gpu(heads, tp, replicate_floor=replicate_floor)
    return int((layer.k_values + layer.v_values) * share // heads * per_value)


def attention_layers(arch: Architecture) -> list:
    return [la for la in arch.layers if la.kind in ATTENTION_KINDS]
