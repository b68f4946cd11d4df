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

from kvlab.core.attention import causal_mask, multi_head_attention, scaled_dot_product_attention, softmax
from kvlab.core.cache import KVCache, cache_lengths
from kvlab.core.decoding import DecoderConfig, ToyDecoder, decoding_costs, step_cost, times_processed
from kvlab.core.gpt import GPT, GPTConfig
from kvlab.core.tokenizer import BPETokenizer, load_tokenizer
from kvlab.memory.architecture import Architecture, LayerSpec
from kvlab.memory.catalogue import get_gpu, get_model, list_gpus, list_models, model_architecture
from kvlab.memory.engine_logs import explain_engine_log, parse_engine_log
from kvlab.memory.hf_config import parse_hf_config
from kvlab.memory.llama_server import llama_server_command
from kvlab.memory.kv_bytes import (
    fit_report,
    kv_bytes_per_token,
    kv_cache_bytes,
    llamacpp_kv_cache,
    memory_report,
    vllm_capacity,
    vllm_kv_cache,
)
from kvlab.memory.serving import cost_per_million_tokens, decode_time_per_token, serving_estimate, users_per_gpu
from kvlab.memory.verdict import fit_verdict
from kvlab.memory.weights import list_weight_formats, weights_bytes
from kvlab.reuse.context import run_out_of_context
from kvlab.reuse.eviction import AttentionSinks, EvictionPolicy, FullCache, HeavyHitters, SlidingWindow, make_policy
from kvlab.reuse.prefix_cache import BlockPrefixCache, RadixPrefixCache, block_hashes, run_requests
from kvlab.widgets.attention import attention_demo, model_attention
from kvlab.widgets.eviction import (
    context_shift_timeline,
    context_shift_view,
    door_code_chat,
    door_code_score,
    eviction_recall_demo,
    eviction_timeline,
    eviction_view,
)
from kvlab.widgets.generate import generation_demo, race_demo, race_measured, race_theory
from kvlab.widgets.kv_quant import kv_quant_demo, kv_quant_table
from kvlab.widgets.kv_cache import cache_equivalence, cache_phases, step_through, step_through_figure
from kvlab.widgets.memory import engine_log_figure, gpu_fit_figure, kv_memory_figure
from kvlab.widgets.prefix import prefix_blocks, prefix_cache_demo, prefix_cache_figure, prefix_cases
from kvlab.widgets.serving import serving_figure
from kvlab.widgets.tokens import next_token_demo, tokenize_demo
from kvlab.widgets.wall import (
    add_token_counters,
    quadratic_wall,
    quadratic_wall_figure,
    race,
    race_figure,
    race_odometers,
    reprocessing,
)
from kvlab.widgets.wrapup import prefill_decode_sequence, tradeoff_map

__version__ = "0.1.0"

__all__ = [
    # issue 14: playable
    "add_token_counters",
    "door_code_chat",
    "door_code_score",
    "llama_server_command",
    "prefill_decode_sequence",
    "prefix_cases",
    "race_odometers",
    "tradeoff_map",
    "attention_demo",
    "causal_mask",
    "multi_head_attention",
    "scaled_dot_product_attention",
    "softmax",
    "Architecture",
    "LayerSpec",
    "cost_per_million_tokens",
    "decode_time_per_token",
    "fit_report",
    "get_gpu",
    "get_model",
    "kv_bytes_per_token",
    "kv_cache_bytes",
    "list_gpus",
    "list_models",
    "list_weight_formats",
    "llamacpp_kv_cache",
    "fit_verdict",
    "memory_report",
    "explain_engine_log",
    "parse_engine_log",
    "model_architecture",
    "parse_hf_config",
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
    "reprocessing",
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
    "context_shift_view",
    "eviction_view",
    "prefix_blocks",
    "prefix_cache_figure",
    # memory/serving widgets
    "engine_log_figure",
    "gpu_fit_figure",
    "kv_memory_figure",
    "kv_quant_demo",
    "kv_quant_table",
    "serving_figure",
    # the tiny model on the pages
    "eviction_recall_demo",
    "generation_demo",
    "model_attention",
    "next_token_demo",
    "race_demo",
    "race_measured",
    "race_theory",
    "tokenize_demo",
]
