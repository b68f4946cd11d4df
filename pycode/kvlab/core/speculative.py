"""Speculative decoding on the tiny GPT, with its KV caches step by step.

A cheap *draft* proposes k tokens one at a time; the *target* (the model whose
output we want) reads the last accepted token and the k proposals in one forward
pass, appending k + 1 entries to its KV cache. It keeps the longest prefix of the
proposals that matches its own greedy choice, plus one token of its own (the
correction where they first differ, or a bonus token when all k match), and
rolls its cache back: the entries of rejected proposals are cut off the end.

    step   target cache before   after the verify pass   after the rollback
           P                     P + k + 1               P + accepted + 1

The draft here is the target itself cut after its first `draft_layers` blocks,
with the same final norm and (tied) LM head: an early-exit, "self-speculative"
draft (Draft & Verify, Zhang et al. 2023, https://arxiv.org/abs/2309.08168;
LayerSkip, Elhoushi et al. 2024, https://arxiv.org/abs/2404.16710). The tiny
model was not trained to exit early, so its first layers are a weak draft: the
point is the bookkeeping, which is exact.

With greedy decoding the output is the target's own greedy output, token for
token (Leviathan et al. 2023, https://arxiv.org/abs/2211.17192, section 2.3 for
sampling; Chen et al. 2023, https://arxiv.org/abs/2302.01318): tests check this,
and that the rolled-back cache equals the one plain decoding builds.

Hybrid models (attention layers + recurrent/SSM layers) cannot cut a recurrent
state back: it folds every token into one fixed-size array. `recurrent_rollback`
computes kvlab's model of what an engine keeps instead: one state snapshot per
draft position, the accepted one restored.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from kvlab.core.gpt import GPT, PastKeyValues

__all__ = [
    "draft_model",
    "truncate_cache",
    "speculative_generate",
    "greedy_generate",
    "greedy_check",
    "rejection_rule",
    "recurrent_rollback",
]


def draft_model(target: GPT, draft_layers: int) -> GPT:
    """The target's first `draft_layers` blocks, its final norm and its LM head (same arrays, no copy)."""
    if not 1 <= draft_layers <= target.config.n_layer:
        raise ValueError(f"draft_layers must be in [1, {target.config.n_layer}], got {draft_layers}")
    return GPT(replace(target.config, n_layer=draft_layers), target.w)


def truncate_cache(cache: PastKeyValues, length: int) -> PastKeyValues:
    """Keep the first `length` entries of every layer (the rollback): (B, nh, T, hs) -> (B, nh, length, hs)."""
    return [(k[:, :, :length], v[:, :, :length]) for k, v in cache]


def greedy_generate(model: GPT, prompt: list[int], n_new: int) -> tuple[list[int], PastKeyValues, int]:
    """Plain greedy decoding with a cache: (new tokens, final cache, forward passes).

    The final cache holds prompt + n_new - 1 entries: the last token chosen is never fed.
    """
    logits, cache = model.forward(np.array([prompt]))
    out, passes = [int(np.argmax(logits[0, -1]))], 1
    while len(out) < n_new:
        logits, cache = model.forward(np.array([[out[-1]]]), cache)
        out.append(int(np.argmax(logits[0, -1])))
        passes += 1
    return out, cache, passes


def greedy_check(model: GPT, prompt: list[int], tokens: list[int]) -> tuple[list[int], PastKeyValues]:
    """The model's greedy choice at every position of prompt + tokens, in one pass without a cache.

    Returns (the choice after the prompt and after each token but the last, the K/V the pass
    computed for prompt + tokens[:-1]). `tokens` is the model's greedy output exactly when
    the choices equal `tokens`: greedy decoding picks each token from the ones before it,
    so a sequence that agrees with the argmax at every position is the one it produces.
    The K/V are what plain decoding caches for the same tokens (up to float rounding).
    """
    ids = [int(t) for t in prompt] + [int(t) for t in tokens[:-1]]
    logits, cache = model.forward(np.array([ids]))
    return [int(t) for t in np.argmax(logits[0, len(prompt) - 1 :], axis=-1)], cache


def speculative_generate(target: GPT, draft_layers: int, prompt: list[int], n_new: int, k: int) -> dict:
    """Greedy speculative decoding of `n_new` tokens, `k` proposals per step, the draft being
    the target's first `draft_layers` blocks (`draft_model`).

    Returns {"tokens": new ids, "cache": the target's final cache, "steps": [...]}; each
    step: "k" (proposals this step; fewer near the end so exactly n_new come out),
    "proposed", "target" (the target's greedy choice after each proposal prefix, k + 1 ids),
    "accepted" (matching prefix length), "emitted" (accepted proposals + the target's
    token), target and draft cache lengths before / after the pass / after the rollback,
    and "dropped" (positions of the target cache entries the rollback removed).
    The prefill (one pass of the target over the prompt) is not a step; its token
    (the target's first) is "first".
    """
    if n_new < 1:
        raise ValueError(f"n_new must be >= 1, got {n_new}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    prompt = [int(t) for t in prompt]
    draft = draft_model(target, draft_layers)
    logits, t_cache = target.forward(np.array([prompt]))  # prefill: the target's cache holds the prompt
    # the draft's blocks are the target's first ones, fed the same prompt: its prompt cache is
    # the target's first layers' (one prefill serves both, as LayerSkip shares its cache)
    d_cache = t_cache[:draft_layers]
    seq = prompt + [int(np.argmax(logits[0, -1]))]  # the sequence so far; its last token is not cached yet
    steps = []
    while len(seq) - len(prompt) < n_new:
        k_step = min(k, n_new - (len(seq) - len(prompt)) - 1)
        t_before, d_before = len(seq) - 1, d_cache[0][0].shape[2]
        # draft: feed what it has not seen (the last token, and after a full accept the
        # last proposal too), then its own proposals, one token per pass
        proposed: list[int] = []
        feed = seq[d_before:]
        for _ in range(k_step):
            d_logits, d_cache = draft.forward(np.array([feed]), d_cache)
            proposed.append(int(np.argmax(d_logits[0, -1])))
            feed = proposed[-1:]
        d_after = d_cache[0][0].shape[2]
        # target: one pass over the last token and the k proposals: k + 1 new cache entries
        t_logits, t_cache = target.forward(np.array([seq[-1:] + proposed]), t_cache)
        choice = [int(t) for t in np.argmax(t_logits[0], axis=-1)]  # k + 1 greedy choices
        accepted = 0
        while accepted < k_step and proposed[accepted] == choice[accepted]:
            accepted += 1
        emitted = proposed[:accepted] + [choice[accepted]]
        t_after = t_cache[0][0].shape[2]
        keep = t_before + accepted + 1  # the last token and the accepted proposals
        t_cache = truncate_cache(t_cache, keep)
        d_cache = truncate_cache(d_cache, min(d_after, keep))
        steps.append(
            {
                "k": k_step,
                "proposed": proposed,
                "target": choice,
                "accepted": accepted,
                "emitted": emitted,
                "target_cache": [t_before, t_after, keep],
                "draft_cache": [d_before, d_after, min(d_after, keep)],
                "dropped": list(range(keep, t_after)),
            }
        )
        seq += emitted
    return {"first": seq[len(prompt)], "tokens": seq[len(prompt) :], "cache": t_cache, "steps": steps}


def rejection_rule(p: np.ndarray, q: np.ndarray) -> dict:
    """One proposal under speculative *sampling*, worked out exactly instead of sampled.

    The draft samples x from q; the target keeps it with probability min(1, p(x) / q(x)),
    else samples from the leftover max(0, p - q), normalised (Leviathan et al. 2023,
    https://arxiv.org/abs/2211.17192, section 2.3; Chen et al. 2023, algorithm 2).
    Returns the probability that the proposal is kept (1 minus the total variation
    distance between p and q) and the distribution of the token that comes out: p itself.

    >>> r = rejection_rule([0.5, 0.5, 0.0], [0.25, 0.25, 0.5])
    >>> r["accept"], [float(x) for x in r["output"]]
    (0.5, [0.5, 0.5, 0.0])
    """
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError(f"p and q must be two distributions over the same tokens, got shapes {p.shape} and {q.shape}")
    kept = np.minimum(p, q)  # P(the draft proposes x and the target keeps it)
    accept = float(kept.sum())
    leftover = np.maximum(p - q, 0.0)
    output = kept + (1.0 - accept) * leftover / leftover.sum() if leftover.sum() > 0 else kept
    return {"accept": accept, "output": output}


def recurrent_rollback(k: int, accepted: int, state_bytes: int) -> dict:
    """kvlab's model of one verify step for a recurrent (SSM / linear-attention) layer.

    The state after the pass has folded in all k + 1 tokens and cannot be cut back, so
    the engine keeps the state after each of the k + 1 positions (snapshots) and
    restores the one after the last accepted token; the alternative is to restore
    the state from before the step and run the accepted tokens through again.

    >>> recurrent_rollback(4, 2, 1000)
    {'snapshots': 5, 'snapshot_bytes': 5000, 'restored': 2, 'recompute_tokens': 3}
    """
    if not 0 <= accepted <= k:
        raise ValueError(f"accepted must be in [0, k={k}], got {accepted}")
    return {
        "snapshots": k + 1,
        "snapshot_bytes": (k + 1) * state_bytes,
        "restored": accepted,  # the state after the last token and `accepted` proposals
        "recompute_tokens": accepted + 1,
    }
