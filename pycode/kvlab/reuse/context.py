"""Running out of context, the llama.cpp way.

The cache has room for n_ctx positions. Before each decode step llama.cpp
checks `n_past + n_new >= n_ctx` (n_new = 1 while generating) and then either

- stops (context shift disabled), or
- shifts: keeps the first n_keep tokens, discards half of the rest,

      n_left    = n_past - n_keep
      n_discard = n_left // 2
      remove cache positions [n_keep, n_keep + n_discard), slide the rest down,
      n_past   -= n_discard

  (examples/main and the server do exactly this; the server also lets the
  client pick n_discard, not modelled here).

So the model "forgets" a block from the middle of the text, not token by
token from the start, and the first n_keep tokens (typically the system
prompt) survive every shift.
"""

from __future__ import annotations
from kvlab.inputs import short_repr

SHIFT = "shift"
STOP = "stop"


def spans(positions: list[int]) -> list[list[int]]:
    """Sorted positions as half-open [start, end) runs.

    >>> spans([0, 1, 2, 7, 8, 10])
    [[0, 3], [7, 9], [10, 11]]
    """
    out: list[list[int]] = []
    for p in positions:
        if out and out[-1][1] == p:
            out[-1][1] = p + 1
        else:
            out.append([p, p + 1])
    return out


def effective_n_keep(n_keep: int, prompt_len: int) -> int:
    """llama.cpp's main: n_keep < 0 or larger than the prompt means "keep the whole prompt".

    >>> effective_n_keep(-1, 10), effective_n_keep(4, 10), effective_n_keep(50, 10)
    (10, 4, 10)
    """
    return prompt_len if n_keep < 0 or n_keep > prompt_len else n_keep


def run_out_of_context(prompt_len: int, n_generate: int, n_ctx: int, n_keep: int = 0, mode: str = SHIFT) -> dict:
    """Prefill `prompt_len` tokens, then feed `n_generate` generated tokens one per step.

    Tokens are numbered by their place in the text (prompt 0..prompt_len-1,
    the token fed at decode step k is prompt_len + k - 1). Per step the result
    says which text tokens the cache (the model's view) holds after the step,
    as [start, end) spans, and what a shift discarded.

    >>> r = run_out_of_context(prompt_len=4, n_generate=6, n_ctx=8, n_keep=2)
    >>> [(s["step"], s["n_discard"], s["discarded"]) for s in r["shifts"]]
    [(4, 2, [[2, 4]]), (6, 2, [[4, 6]])]
    >>> r["steps"][-1]["visible"]
    [[0, 2], [6, 10]]
    """
    if mode not in (SHIFT, STOP):
        raise ValueError(f"mode must be {SHIFT!r} or {STOP!r}, got {short_repr(mode)}")
    if n_ctx < 4:
        raise ValueError(f"n_ctx must be >= 4, got {n_ctx}")
    if not 1 <= prompt_len < n_ctx:
        raise ValueError(f"prompt_len must be in [1, n_ctx - 1] = [1, {n_ctx - 1}], got {prompt_len}")
    if n_generate < 0:
        raise ValueError(f"n_generate must be >= 0, got {n_generate}")
    keep = effective_n_keep(n_keep, prompt_len)
    if mode == SHIFT and keep > n_ctx - 3:
        # a shift at n_past = n_ctx - 1 must discard at least one token
        raise ValueError(f"n_keep ({keep}) must be <= n_ctx - 3 = {n_ctx - 3} for a context shift to free space")

    cache = list(range(prompt_len))  # text index of each cached position, in cache order
    steps = [
        {
            "step": 0,
            "phase": "prefill",
            "token": None,
            "n_past_before": 0,
            "n_past_after": prompt_len,
            "n_discarded": 0,
            "visible": spans(cache),
        }
    ]
    shifts, stopped_at = [], None
    for k in range(1, n_generate + 1):
        n_past = len(cache)
        discarded: list[int] = []
        if n_past + 1 >= n_ctx:
            if mode == STOP:
                stopped_at = k
                break
            n_left = n_past - keep
            n_discard = n_left // 2
            discarded = cache[keep : keep + n_discard]
            del cache[keep : keep + n_discard]
            shifts.append(
                {
                    "step": k,
                    "n_past_before": n_past,
                    "n_left": n_left,
                    "n_discard": n_discard,
                    "discarded": spans(discarded),
                }
            )
        token = prompt_len + k - 1
        cache.append(token)
        steps.append(
            {
                "step": k,
                "phase": "decode",
                "token": token,
                "n_past_before": n_past,
                "n_past_after": len(cache),
                "n_discarded": len(discarded),
                "visible": spans(cache),
            }
        )
    return {
        "prompt_len": prompt_len,
        "n_ctx": n_ctx,
        "n_keep": keep,
        "mode": mode,
        "steps": steps,
        "shifts": shifts,
        "stopped_at": stopped_at,
        "tokens_fed": len(steps) - 1,
        "total_discarded": sum(s["n_discard"] for s in shifts),
    }
