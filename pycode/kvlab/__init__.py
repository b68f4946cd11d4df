"""kvlab: the numbers behind the KV cache explainer.

Pure numpy; runs unchanged in CPython and in Pyodide. Every function a widget
uses returns plain, JSON-able data, and every public name is importable from
here (the browser calls them by name: kvlab.bridge.call_json).

Laid out by concern:

core/      attention (the one softmax), the KV cache, decoding costs, the numpy
           transformers, the tokenizer, the tiny model's files
memory/    architectures, configs, the catalogue, weights, KV cache bytes, the
           fit verdict, serving
reuse/     prefix caching, eviction, context shift
widgets/   the functions the widgets call, one module per page
inputs     every check of a reader's input: limits, clamping, errors naming the field
wording    plurals and number formatting
bridge     the one door from JavaScript (JSON in, JSON out)
cli        `python -m kvlab`
"""

import importlib

# Every public name and the module it lives in. They are imported on first use
# (PEP 562 module __getattr__): `import kvlab` reads no module, and the browser's first
# widget imports only what its function needs (importing everything would hold up Pyodide's
# start-up before any widget could go live: bench/results/2026-12-02-runtime.md).
MODULES = {
    "kvlab.core.attention": ("causal_mask", "multi_head_attention", "scaled_dot_product_attention", "softmax"),
    "kvlab.core.cache": ("KVCache", "cache_lengths"),
    "kvlab.core.decoding": ("DecoderConfig", "ToyDecoder", "decoding_costs", "step_cost", "times_processed"),
    "kvlab.core.gpt": ("GPT", "GPTConfig"),
    "kvlab.core.tokenizer": ("BPETokenizer", "load_tokenizer"),
    "kvlab.memory.architecture": ("Architecture", "LayerSpec"),
    "kvlab.memory.catalogue": ("get_gpu", "get_model", "list_gpus", "list_models", "model_architecture"),
    "kvlab.memory.engine_logs": ("explain_engine_log", "parse_engine_log"),
    "kvlab.memory.hf_config": ("parse_hf_config",),
    "kvlab.memory.llama_server": ("llama_server_command",),
    "kvlab.memory.kv_bytes": (
        "kv_bytes_per_token",
        "kv_cache_bytes",
        "llamacpp_kv_cache",
        "memory_report",
        "vllm_capacity",
        "vllm_kv_cache",
    ),
    "kvlab.memory.serving": (
        "cost_per_million_tokens",
        "decode_time_per_token",
        "serving_accuracy",
        "serving_estimate",
        "users_per_gpu",
    ),
    "kvlab.memory.verdict": ("verdict",),
    "kvlab.memory.deployment": ("Deployment", "deployment"),
    "kvlab.memory.weights": ("list_weight_formats", "weights_bytes"),
    "kvlab.reuse.context": ("run_out_of_context",),
    "kvlab.reuse.eviction": (
        "AttentionSinks",
        "EvictionPolicy",
        "FullCache",
        "HeavyHitters",
        "SlidingWindow",
        "make_policy",
    ),
    "kvlab.reuse.prefix_cache": ("BlockPrefixCache", "RadixPrefixCache", "block_hashes", "run_requests"),
    "kvlab.widgets.api_cache": ("api_cache_figure",),
    "kvlab.widgets.attention": ("attention_figure", "model_attention_figure", "qkv_figure"),
    "kvlab.widgets.disagg": ("kv_routing_figure", "pd_transfer_figure"),
    "kvlab.widgets.eviction": (
        "context_shift_timeline",
        "context_shift_figure",
        "door_code_chat",
        "door_code_score",
        "model_eviction_figure",
        "eviction_timeline",
        "eviction_figure",
    ),
    "kvlab.widgets.generate": ("generate_figure", "model_race_figure", "race_measured", "race_theory"),
    "kvlab.widgets.kv_quant": ("kv_quant_figure", "kv_quant_table"),
    "kvlab.widgets.kv_cache": ("cache_equivalence", "cache_phases", "step_through", "step_through_figure"),
    "kvlab.widgets.engine_log": ("engine_log_figure",),
    "kvlab.widgets.memory": ("gpu_fit_figure", "kv_memory_figure", "kv_memory_hub"),
    "kvlab.widgets.offload": ("kv_offload_figure",),
    "kvlab.widgets.prefix": ("prefix_blocks_figure", "prefix_cache_demo", "prefix_cache_figure", "prefix_cases_figure"),
    "kvlab.widgets.ram": ("ram_calc_figure",),
    "kvlab.widgets.serving": ("serving_figure", "serving_sim_figure"),
    "kvlab.widgets.engines": ("engines_figure",),
    "kvlab.widgets.speculative": ("spec_decode_figure",),
    "kvlab.widgets.tokens": ("next_token_figure", "tokens_figure"),
    "kvlab.widgets.wall": (
        "add_token_counters",
        "quadratic_wall",
        "quadratic_wall_figure",
        "race",
        "race_figure",
        "race_odometers",
        "reprocessing_figure",
    ),
    "kvlab.widgets.wrapup": ("prefill_decode_figure", "tradeoff_map_figure"),
}
_HOME = {name: module for module, names in MODULES.items() for name in names}


def __getattr__(name: str):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'kvlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later lookups find it without this hook
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


__version__ = "0.2.0"

__all__ = [
    # the interactive helpers: odometers, counters, the door-code chat, commands, diagrams, maps
    "add_token_counters",
    "door_code_chat",
    "door_code_score",
    "llama_server_command",
    "prefill_decode_figure",
    "prefix_cases_figure",
    "race_odometers",
    "tradeoff_map_figure",
    "attention_figure",
    "causal_mask",
    "multi_head_attention",
    "scaled_dot_product_attention",
    "softmax",
    "Architecture",
    "LayerSpec",
    "cost_per_million_tokens",
    "decode_time_per_token",
    "Deployment",
    "deployment",
    "verdict",
    "get_gpu",
    "get_model",
    "kv_bytes_per_token",
    "kv_cache_bytes",
    "list_gpus",
    "list_models",
    "list_weight_formats",
    "llamacpp_kv_cache",
    "memory_report",
    "explain_engine_log",
    "parse_engine_log",
    "model_architecture",
    "parse_hf_config",
    "serving_accuracy",
    "serving_estimate",
    "users_per_gpu",
    "vllm_capacity",
    "vllm_kv_cache",
    "weights_bytes",
    "AttentionSinks",
    "BlockPrefixCache",
    "DecoderConfig",
    "EvictionPolicy",
    "FullCache",
    "HeavyHitters",
    "KVCache",
    "RadixPrefixCache",
    "SlidingWindow",
    "ToyDecoder",
    "block_hashes",
    "cache_equivalence",
    "cache_lengths",
    "cache_phases",
    "context_shift_timeline",
    "decoding_costs",
    "eviction_timeline",
    "make_policy",
    "prefix_cache_demo",
    "quadratic_wall",
    "quadratic_wall_figure",
    "race",
    "race_figure",
    "reprocessing_figure",
    "run_out_of_context",
    "run_requests",
    "step_cost",
    "step_through",
    "step_through_figure",
    "times_processed",
    "BPETokenizer",
    "GPT",
    "GPTConfig",
    "load_tokenizer",
    "context_shift_figure",
    "eviction_figure",
    "prefix_blocks_figure",
    "prefix_cache_figure",
    # memory/serving widgets
    "engine_log_figure",
    "gpu_fit_figure",
    "kv_memory_figure",
    "kv_memory_hub",
    "ram_calc_figure",
    "qkv_figure",
    "kv_quant_figure",
    "kv_quant_table",
    "serving_figure",
    "serving_sim_figure",
    "engines_figure",
    # prompt caching in the API
    "api_cache_figure",
    # disaggregated prefill and decode, KV-aware routing
    "kv_routing_figure",
    "pd_transfer_figure",
    # speculative decoding and the cache
    "spec_decode_figure",
    # KV offload tiers
    "kv_offload_figure",
    # the tiny model on the pages
    "model_eviction_figure",
    "generate_figure",
    "model_attention_figure",
    "next_token_figure",
    "model_race_figure",
    "race_measured",
    "race_theory",
    "tokens_figure",
]
