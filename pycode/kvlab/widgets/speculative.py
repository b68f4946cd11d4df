"""The "speculative decoding" page (speculative.md): the spec-decode widget.

The tiny model's first layers draft, the whole model verifies (kvlab.core.speculative);
every step's proposals, acceptances and cache lengths, and the check against plain
greedy decoding. Same contract as every widget module: plain JSON-able data, inputs
checked (kvlab.inputs), "params" echoes what was used, display strings in "view".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvlab.core import tiny
from kvlab.core.speculative import greedy_check, recurrent_rollback, speculative_generate
from kvlab.inputs import Param, Spec, one_of, takes
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.kv_bytes import kv_bytes_per_token, kv_cache_bytes
from kvlab.widgets.views import computed_status, with_view
from kvlab.wording import human_bytes, plural, span_text

if TYPE_CHECKING:
    from kvlab.widgets.speculative_types import SpecDecodeResult, SpecDecodeView

# What spec_decode_figure accepts (rounded, clamped with a notice); `control`: what the page's slider offers.
INPUTS = Spec(
    k=Param(1, 8),
    draft_layers=Param(1, 3),  # below the tiny model's 4 (the target)
    n_new=Param(1, 64, control=(8, 48)),
)
PROMPTS = {
    "chat": "user: hello!\nbot: hello! how can i help you?\nuser: my door code is 4921.\nbot:",
    "story": tiny.DEFAULT_PROMPT,
    "repeat": "The cat sat on the mat. The cat sat on the mat. The cat",
}
PROMPT_LABELS = {"chat": "a chat", "story": "a story", "repeat": "a repeated sentence"}
# The cache after the rollbacks is compared with plain decoding's to this absolute tolerance:
# the verify pass computes k + 1 positions in one matrix product, plain decoding one at a
# time, so float32 rounding differs (~1e-6 on the tiny model).
CACHE_TOLERANCE = 1e-4
# The hybrid example: a model in kvlab's catalogue (kvlab/data/models.json) with recurrent layers.
HYBRID_MODEL = "qwen3-next-80b-a3b"
HYBRID_SOURCES = [
    # SGLang: per-draft-step intermediate SSM and conv states, then the last accepted step's
    "https://github.com/sgl-project/sglang/pull/12892",
    # vLLM (TPU backend): one state checkpoint per verify-window position, resume from the last accepted
    "https://github.com/vllm-project/tpu-inference/pull/3178",
    # TensorRT-LLM: the other way, replay the accepted tokens from the state before the step
    "https://github.com/NVIDIA/TensorRT-LLM/pull/13453",
]


def _piece(tok, i: int) -> str:
    """A token as the page shows it: a newline as ↵, so every chip is visible."""
    return tok.token_str(i).replace("\n", "↵")


def _positions(a: int, b: int) -> str:
    """Cache positions a..b-1 as a reader counts them: "position 34", "positions 30–34"."""
    return f"position {a}" if b - a == 1 else f"positions {span_text([[a, b]])}"


def spec_decode_view(data: dict) -> SpecDecodeView:
    """Display strings for the template: per step, the chips, the cache strip and the sentences."""
    p, t, c, h = data["params"], data["totals"], data["check"], data["hybrid"]
    n = len(data["steps"])

    def step(s: dict) -> dict:
        tc = s["target_cache"]
        chips = [
            {"text": x["text"], "state": "accepted", "sr": "(accepted)"}
            if j < s["accepted"]
            else {"text": x["text"], "state": "rejected", "sr": "(rejected, rolled back)"}
            for j, x in enumerate(s["proposed"])
        ]
        own = "bonus" if s["bonus"] else "correction" if s["k"] else "decoded"
        chips.append({"text": s["emitted"][-1]["text"], "state": "target", "sr": f"(the target's token: {own})"})
        cells = [
            {"state": "kept" if pos < tc["before"] else "dropped" if pos in s["dropped"] else "new"}
            for pos in range(tc["after_verify"])
        ]
        written = tc["after_verify"] - tc["before"]
        verify = f"its verify pass over the last token and the {plural(s['k'], 'proposal')}" if s["k"] else "its pass"
        if s["dropped"]:
            dropped = (
                f"the rollback drops {plural(len(s['dropped']), 'entry', 'entries')} "
                f"({_positions(s['dropped'][0], s['dropped'][-1] + 1)}), leaving {tc['after_rollback']}"
            )
        else:
            dropped = f"nothing to roll back: all {tc['after_rollback']} entries stay"
        if not s["k"]:
            headline = f"Step {s['step']}: one token left, so no proposals: the target decodes it alone"
            state = "With no proposals there is nothing to undo: a hybrid model's recurrent state simply moves on."
        else:
            own = "a bonus token" if s["bonus"] else "its correction"
            headline = (
                f"Step {s['step']}: the draft proposed {s['k']}, the target accepted {s['accepted']} and added {own}"
            )
            state = (
                "A hybrid model's recurrent layers cannot cut their state back: they restore the snapshot "
                f"taken after the last token and {plural(s['state_restored'], 'accepted proposal')} "
                f"({s['state_restored'] + 1} of {s['k'] + 1})."
            )
        return {
            "number": s["step"],
            "counter": f"Step {s['step']} of {n}",
            "headline": headline,
            "chips": chips,
            "cells": cells,
            "cache": f"{tc['before']} → {tc['after_verify']} → {tc['after_rollback']}",
            "dropped": span_text([[s["dropped"][0], s["dropped"][-1] + 1]]) if s["dropped"] else "none",
            "describe": (
                f"The target's cache held {tc['before']} entries; {verify} wrote {written} "
                f"({_positions(tc['before'], tc['after_verify'])}); "
                f"{dropped}. {plural(s['accepted'] + 1, 'token')} came out of this pass."
            ),
            "state": state,
        }

    return {
        "status": computed_status(
            "spec_decode_figure",
            f"k = {data['params']['k']}, {data['params']['draft_layers']}-layer draft, {data['params']['n_new']} tokens",
        ),
        "steps": [step(s) for s in data["steps"]],
        "summary": (
            f"{plural(t['new_tokens'], 'token')} in {plural(t['target_passes'], 'target pass', 'target passes')} "
            f"instead of {t['plain_passes']}: {t['tokens_per_pass']:.2f} tokens per pass. The draft proposed "
            f"{t['proposed']} and the target accepted {t['accepted']} ({t['acceptance']:.0%}), "
            f"{t['mean_accepted']:.2f} per step on average; {plural(t['rolled_back'], 'cache entry', 'cache entries')} "
            "were written and rolled back."
        ),
        "check": (
            f"Same {plural(t['new_tokens'], 'token')} as plain greedy decoding with the whole model: "
            f"{'yes' if c['same_tokens'] else 'no'}. The target's cache after the rollbacks "
            f"({c['cache_entries']} entries) equals the one plain decoding builds ({c['plain_cache_entries']}): "
            f"{'yes' if c['cache_matches'] else 'no'}, every value within {c['tolerance']:g}."
        ),
        "draft": (
            f"Draft: the first {plural(p['draft_layers'], 'layer')} of the tiny model's {data['n_layer']}, "
            f"with its final norm and output head. Target: all {data['n_layer']} layers."
        ),
        "hybrid": (
            f"{h['model']} keeps a recurrent state in {h['state_layers']} of its layers: "
            f"{human_bytes(h['state_bytes'])} per sequence (f32), whatever the length. Verifying {p['k']} "
            f"proposals with one snapshot per position keeps {h['snapshots']} of them, "
            f"{human_bytes(h['snapshot_bytes'])}: as much as its KV cache holds for "
            f"{plural(h['tokens_of_kv'], 'token')}."
        ),
    }


@takes(INPUTS)
@with_view(spec_decode_view)
def spec_decode_figure(prompt: str = "chat", k: int = 4, draft_layers: int = 2, n_new: int = 20) -> SpecDecodeResult:
    """Greedy speculative decoding on the tiny model, step by step, against plain greedy decoding.

    The draft is the tiny model's first `draft_layers` blocks + its final norm and head; the
    target is the whole model. Per step: the draft's `k` proposals, the target's choices,
    how many it accepted, the tokens it emitted, the target's and the draft's cache
    lengths before / after the verify pass / after the rollback, and the positions rolled back.

    >>> f = spec_decode_figure(n_new=8)
    >>> f["check"]["same_tokens"], f["check"]["cache_matches"], f["totals"]["new_tokens"]
    (True, True, 8)
    """
    clamped: dict = {}
    prompt = one_of("prompt", prompt, list(PROMPTS))
    k, draft_layers, n_new = INPUTS.check({"k": k, "draft_layers": draft_layers, "n_new": n_new}, clamped).values()
    target, tok = tiny.model_and_tokenizer()
    ids = tok.encode(PROMPTS[prompt])
    run = speculative_generate(target, draft_layers, ids, n_new, k)
    # plain greedy decoding's output and cache, checked in one pass of the whole model (greedy_check);
    # tests/python/test_speculative.py also runs plain decoding token by token
    plain, plain_cache = greedy_check(target, ids, run["tokens"])
    cache_diff = max(
        float(max(np.abs(a[0] - b[0]).max(), np.abs(a[1] - b[1]).max())) for a, b in zip(run["cache"], plain_cache)
    )
    steps = []
    for i, s in enumerate(run["steps"]):
        steps.append(
            {
                "step": i + 1,
                "k": s["k"],
                "proposed": [{"id": t, "text": _piece(tok, t)} for t in s["proposed"]],
                "target": [{"id": t, "text": _piece(tok, t)} for t in s["target"]],
                "accepted": s["accepted"],
                "emitted": [{"id": t, "text": _piece(tok, t)} for t in s["emitted"]],
                "bonus": 0 < s["k"] == s["accepted"],
                "target_cache": dict(zip(("before", "after_verify", "after_rollback"), s["target_cache"])),
                "draft_cache": dict(zip(("before", "after_draft", "after_rollback"), s["draft_cache"])),
                "dropped": s["dropped"],
                "state_restored": recurrent_rollback(s["k"], s["accepted"], 0)["restored"],
            }
        )
    proposed = sum(s["k"] for s in steps)
    accepted = sum(s["accepted"] for s in steps)
    target_passes = 1 + len(steps)  # the prefill, then one verify pass per step
    arch = model_architecture(HYBRID_MODEL)
    state = kv_cache_bytes(arch, 1)["by_kind_bytes"]["linear"]  # one sequence's recurrent state, f32
    per_token = kv_bytes_per_token(arch)["bytes_per_token"]
    hybrid = recurrent_rollback(k, 0, state)  # the snapshots one step keeps (what it restores varies per step)
    return {
        "params": {"prompt": prompt, "k": k, "draft_layers": draft_layers, "n_new": n_new},
        "clamped": clamped,
        "prompts": [{"key": key, "label": PROMPT_LABELS[key]} for key in PROMPTS],
        "prompt_text": PROMPTS[prompt],
        "prompt_tokens": len(ids),
        "n_layer": target.config.n_layer,
        "first": {"id": run["first"], "text": _piece(tok, run["first"])},
        "steps": steps,
        "text": tok.decode(run["tokens"]),
        "totals": {
            "new_tokens": len(run["tokens"]),
            "steps": len(steps),
            "proposed": proposed,
            "accepted": accepted,
            "acceptance": accepted / proposed if proposed else 0.0,
            "mean_accepted": accepted / len(steps) if steps else 0.0,
            "tokens_per_pass": len(run["tokens"]) / target_passes,
            "target_passes": target_passes,
            "plain_passes": n_new,  # plain decoding: one token per target pass, the prefill's included
            "draft_passes": proposed,  # one pass per proposal (its prompt cache comes from the target's prefill)
            "rolled_back": sum(len(s["dropped"]) for s in steps),
        },
        "check": {
            "same_tokens": run["tokens"] == plain,
            "plain_text": tok.decode(plain),
            "cache_entries": int(run["cache"][0][0].shape[2]),
            "plain_cache_entries": int(plain_cache[0][0].shape[2]),
            "cache_matches": run["cache"][0][0].shape == plain_cache[0][0].shape and cache_diff <= CACHE_TOLERANCE,
            "tolerance": CACHE_TOLERANCE,
        },
        "hybrid": {
            "model": arch.name,
            "source": arch.source,
            "state_layers": len(arch.state_layers),
            "state_bytes": state,
            "kv_bytes_per_token": per_token,
            "snapshots": hybrid["snapshots"],
            "snapshot_bytes": hybrid["snapshot_bytes"],
            "tokens_of_kv": hybrid["snapshot_bytes"] // per_token,
            "engine_sources": HYBRID_SOURCES,
        },
    }
