"""The one registry of widget calls that the Python harnesses walk (not a test module: no test imports another).

- WIDGET_FUNCTION: each widget (a folder of site_src/widgets/ with a widget.json) and the kvlab function
  its widget.json names.
- FUNCTIONS: every function a widget calls: those, and any name a widget's JS passes to ctx.call /
  ctx.live (model-race's race_theory, kv-quant's kv_quant_table). Each is called through the browser's
  own door, kvlab.bridge.call_json, so each must be public (tests/python/test_widget_calls.py).
- PARAMETERS: (function, parameter) for every numeric parameter of those functions.
- CALLS: inputs besides the defaults, per function: extremes, and what reaches the other branches.
- SLOW_FUNCTIONS / slow_if / SLOW_WIDGETS: the functions that run the tiny model over whole episodes at
  every call. Every test that calls one carries `@pytest.mark.slow` on itself (`slow_if(name)` is that
  mark, for pytest.param), so that `build.py test --fast` leaves it out.
- BOUND_WIDGETS: the widgets whose template is their only markup (kit.bind fills it): every widget but
  those NOT_BOUND names, with the reason.

Who walks what: test_snapshots (FUNCTIONS), test_inputs_every_function (PARAMETERS),
test_inputs_property (FUNCTIONS), test_results_typed (FUNCTIONS, CALLS, PARAMETERS), test_widget_binding
(BOUND_WIDGETS), test_controls (WIDGET_FUNCTION, SLOW_WIDGETS).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

import kvlab
from kvlab.memory.catalogue import engine_log_examples

ROOT = Path(__file__).resolve().parents[2]
WIDGETS = ROOT / "site_src" / "widgets"
CALLED_FROM_JS = re.compile(r"""ctx\.(?:call|live|form)\(\s*["']([A-Za-z_]\w*)["']""")

WIDGET_FUNCTION: dict[str, str] = {
    spec.parent.name: json.loads(spec.read_text(encoding="utf-8"))["function"]
    for spec in sorted(WIDGETS.glob("*/widget.json"))
}


def widget_functions() -> list[str]:
    names = set(WIDGET_FUNCTION.values())
    for js in sorted(WIDGETS.glob("*/*.js")):
        names.update(CALLED_FROM_JS.findall(js.read_text(encoding="utf-8")))
    return sorted(names)


FUNCTIONS = widget_functions()

# The functions that run the tiny model over whole episodes at every call (most of tests/python's wall time:
# bench/results/2026-12-03-test-loop.md), and the widgets that call them.
SLOW_FUNCTIONS = {"model_eviction_figure", "kv_quant_figure", "kv_quant_table"}
SLOW_WIDGETS = {w for w, f in WIDGET_FUNCTION.items() if f in SLOW_FUNCTIONS}


def slow_if(function: str) -> tuple:
    """`pytest.mark.slow` for a call of `function` if it is slow (for pytest.param's marks)."""
    return (pytest.mark.slow,) if function in SLOW_FUNCTIONS else ()


def slow_widget_if(widget: str) -> tuple:
    """`pytest.mark.slow` for a test that renders `widget` (its function called with the defaults) if it is slow."""
    return (pytest.mark.slow,) if widget in SLOW_WIDGETS else ()


def numeric_parameters() -> list[tuple[str, str]]:
    out = []
    for name in FUNCTIONS:
        for p in inspect.signature(getattr(kvlab, name)).parameters.values():
            if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
                out.append((name, p.name))
    return out


PARAMETERS = numeric_parameters()

EXAMPLES = {e["id"]: e for e in engine_log_examples()}
CONFIG = json.dumps(
    {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 2048,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 4096,
        "vocab_size": 32000,
        "intermediate_size": 5632,
        "torch_dtype": "bfloat16",
    }
)
# door_code_score's runs as the browser sends them (the full cache's, a window's, sinks + window's)
RUNS = {
    "full": {"answer": " the door has code 3457.", "cached": None, "prompt_nll": [1.0, 2.0, 0.5, 0.25]},
    "window": {"answer": " code 3400", "cached": [0, 3], "prompt_nll": [1.5, 2.5, 0.75, 0.5]},
    "sinks": {"answer": "", "cached": [0, 1, 2, 3], "prompt_nll": [1.0, 2.0, 0.5, 0.5]},
}
# kv_quant_table's measurements as the browser sends them: two formats, one door-code chat
MEASUREMENTS = {
    "source": "test",
    "prompt_len": 3,
    "config": {"n_layer": 2, "n_head": 2, "n_embd": 64, "n_kv_head": 1},
    "generation": {
        "fp32": {"logits": [[0.0, 1.0], [1.0, 0.0]], "cache_bytes": 64},
        "q4_0": {"logits": [[0.0, 1.0], [0.0, 1.0]], "cache_bytes": 20},
    },
    "recall": [{"code": 1234, "distance": 10, "answers": {"fp32": "code 1234", "q4_0": "code 1299"}}],
}

# Inputs besides the defaults, per function: extremes, and what reaches the other branches.
CALLS: dict[str, list[dict]] = {
    "attention_figure": [{"d": 2, "causal": False}, {"d": 1000, "temperature": "0.01", "seed": 7, "sentence": "one"}],
    "model_attention_figure": [
        {"layer": 0, "head": "mean", "query": 0},
        {"prompt": "Hello there", "layer": 99, "head": -5, "query": -1},
    ],
    "tokens_figure": [{"text": ""}, {"text": "aé " * 900}],
    "next_token_figure": [{"top_k": 1}, {"prompt": "The", "top_k": 99}],
    "generate_figure": [{"max_new_tokens": 1, "top_k": 1}, {"prompt": "Once", "max_new_tokens": 3, "top_k": 20}],
    "model_race_figure": [{"n_new": 1}],
    "race_theory": [
        {"n_new": 1},
        {"prompt_len": 1, "n_new": 511, "n_layer": 1, "n_head": 1, "n_embd": 8, "vocab_size": 10},
    ],
    "reprocessing_figure": [{"n": 1}, {"n": 10**6}],
    "race_figure": [{"n": 1, "reply": 1, "target_ratio": 1}, {"n": 5000, "reply": 3, "target_ratio": 10**6}],
    "quadratic_wall_figure": [{"n": 1, "max_points": 1}, {"n": 5000, "n_kv_heads": 4, "max_points": 10**9}],
    "step_through_figure": [
        {"prompt_len": 1, "steps": 1, "layers": 1},
        {"prompt_len": 100, "steps": 100, "layers": 100, "seed": 5},
    ],
    "eviction_figure": [
        {"policy": "full"},
        {"policy": "window", "n": 1},
        {"policy": "h2o", "budget": 3, "recent": 9, "n": 10**6},
    ],
    "context_shift_figure": [
        {"mode": "stop"},
        {"prompt_len": 40, "n_ctx": 8, "n_keep": 99},
        {"n_generate": 1, "n_keep": -1},
    ],
    "door_code_chat": [
        {"chat": "no code in here"},
        {"chat": "the door has code 1234.\n" * 40, "block_size": 16, "n_new": 99},
    ],
    "door_code_score": [
        {"runs": RUNS, "code_positions": [1, 2], "window": 1, "sinks": 99},
        {"code": None, "runs": {"window": {**RUNS["window"], "prompt_nll": []}}},
    ],
    "model_eviction_figure": [{"episode": -1, "window": 8, "sinks": 0, "n_new": 1}],
    "prefix_blocks_figure": [{"prefix_len": 0, "suffix_len": 1, "block_size": 1}, {"prefix_len": 32, "block_size": 16}],
    "prefix_cache_figure": [
        {"n_requests": 1, "prefix_len": 0},
        {"block_size": 7, "flops_per_token": "2e9", "bytes_per_token": 1.5},
    ],
    "prefix_cases_figure": [
        {"case": case, "shared_len": 999, "own_len": 1, "block_size": 5}
        for case in ("code_template", "instructions_last", "multi_turn")
    ],
    "kv_memory_figure": [
        {"model": "gemma-2-9b", "mode": "vllm", "kv": "fp8", "context": 10**9},
        {"model": "qwen3-next-80b-a3b", "mode": "exact", "n_seq": 3, "references": ""},
        {"model": "deepseek-v2-lite", "kv": "q4_0", "context": 1.5},
        {"config": CONFIG, "context": 8192},
        {"config": "not json"},
        {"config": '{"model_type": "llama"}'},
    ],
    "gpu_fit_figure": [
        {
            "mode": "vllm",
            "kv": "f16",
            "weights": "BF16",
            "n_gpus": 2,
            "gpu": "h100-sxm",
            "gpu_memory_utilization": 5,
            "block_size": 32,
        },
        {"model": "deepseek-v3", "gpu": "m4-max-128gb", "context": 2**20},
        {"model": "llama-3.1-70b", "weights": "BF16", "gpu": "rtx-3090"},
        {"model": "qwen3-0.6b", "gpu": "mi300x", "context": 4096, "n_seq": 256},
    ],
    "serving_figure": [
        {"engine": "llamacpp", "kv": "q8_0", "weights": "Q4_K_M", "gpu": "mi300x", "batch": 1},
        {"model": "llama-3.1-70b", "gpu": "rtx-4090", "context": 2**20, "batch": 1024, "answer": 10**6},
        {"model": "deepseek-v2-lite", "gpu": "m4-max-128gb", "gpu_memory_utilization": 0.01},
    ],
    "engine_log_figure": [
        *({"example": key} for key in EXAMPLES),
        {
            "log": EXAMPLES["llamacpp-gpt-oss-20b-swa"]["log"],
            "model": "gpt-oss-20b",
            "settings": "n_ctx=8192, swa_full=true",
        },
        {"log": EXAMPLES["vllm-qwen3-14b"]["log"], "config": EXAMPLES["vllm-qwen3-14b"].get("config", "")},
        {"log": "hello\nno engine here", "model": "llama-3.1-8b"},
        {"log": EXAMPLES["vllm-llama-3.1-8b-20k"]["log"], "config": "not json"},
        {"log": EXAMPLES["vllm-llama-3.1-8b-20k"]["log"], "settings": "bogus"},
    ],
    "kv_quant_figure": [{"n_new": 4, "prompt": "Hi"}],
    "kv_quant_table": [{"measurements": MEASUREMENTS}, {"measurements": {**MEASUREMENTS, "recall": []}}],
    "tradeoff_map_figure": [
        {"length": "short", "repetition": "low", "memory": "low"},
        {"length": "long", "repetition": "high", "memory": "high"},
        {"length": "long", "memory": "low"},
    ],
    "prefill_decode_figure": [{"replies": "one"}, {"prompt": "a", "replies": "b c d e"}],
}

# Every call: each function with its defaults, then CALLS.
CASES: list[tuple[str, dict]] = [(name, {}) for name in FUNCTIONS] + [
    (name, kw) for name, calls in CALLS.items() for kw in calls
]

# Widgets whose markup is not only their template yet, and why (test_widget_binding checks every other one).
NOT_BOUND = {
    "serving-sim": "binds rows.length (a JS property the Python binder does not follow) and writes its SVG's "
    "aria-label as a sentence around peak_kv_text, which the binder replaces with the bare value",
}
BOUND_WIDGETS = [w for w in WIDGET_FUNCTION if w not in NOT_BOUND]
