"""kvlab: the numbers behind the KV cache explainer.

Pure numpy; runs unchanged in CPython and in Pyodide. Every function a widget
uses returns plain, JSON-able data.
"""
from kvlab.attention import causal_mask, multi_head_attention, scaled_dot_product_attention, softmax
from kvlab.widgets import attention_demo
from kvlab.architecture import Architecture, LayerSpec
from kvlab.catalogue import get_gpu, get_model, list_gpus, list_models, model_architecture
from kvlab.hf_config import parse_hf_config
from kvlab.memory import (fit_report, kv_bytes_per_token, kv_cache_bytes, llamacpp_kv_cache, memory_report,
                          vllm_capacity, vllm_kv_cache)
from kvlab.verdict import fit_verdict
from kvlab.serving import cost_per_million_tokens, decode_time_per_token, serving_estimate, users_per_gpu
from kvlab.weights import list_weight_formats, weights_bytes
from kvlab.cache import KVCache, cache_lengths
from kvlab.context import run_out_of_context
from kvlab.decoding import DecoderConfig, ToyDecoder, decoding_costs, step_cost, times_processed
from kvlab.eviction import AttentionSinks, EvictionPolicy, FullCache, HeavyHitters, SlidingWindow, make_policy
from kvlab.figures import (cache_equivalence, cache_phases, context_shift_timeline, eviction_timeline,
                           prefix_cache_demo, quadratic_wall, race, reprocessing, step_through)
from kvlab.figures_cache import quadratic_wall_figure, race_figure, step_through_figure
from kvlab.prefix_cache import BlockPrefixCache, RadixPrefixCache, block_hashes, run_requests
from kvlab.gpt import GPT, GPTConfig
from kvlab.figures_reuse import context_shift_view, eviction_view, prefix_blocks, prefix_cache_figure
from kvlab.tokenizer import BPETokenizer, load_tokenizer
from kvlab.figures_memory import gpu_fit_figure, kv_memory_figure, serving_figure
from kvlab.tiny import (eviction_recall_demo, generation_demo, model_attention, next_token_demo, race_demo,
                        race_theory, tokenize_demo)

__version__ = "0.1.0"

__all__ = [
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
    "gpu_fit_figure",
    "kv_memory_figure",
    "serving_figure",
    # the tiny model on the pages
    "eviction_recall_demo",
    "generation_demo",
    "model_attention",
    "next_token_demo",
    "race_demo",
    "race_theory",
    "tokenize_demo",
]
