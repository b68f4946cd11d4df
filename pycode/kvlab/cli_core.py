"""`python -m kvlab race|wall|steps|evict|context|prefix`: the cache figures as tables (or --json)."""
from __future__ import annotations

import argparse
import json

from kvlab import figures


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("race", help="token-computations without vs with a KV cache")
    p.add_argument("--n", type=int, default=19, help="tokens to generate (1-4096)")
    _finish(p, _race)

    p = sub.add_parser("wall", help="multiply-adds per token: the quadratic wall without a cache")
    p.add_argument("--n", type=int, default=1024, help="tokens to generate (1-4096)")
    p.add_argument("--layers", type=int, default=12, help="layers")
    p.add_argument("--d-model", type=int, default=768, help="model width")
    p.add_argument("--heads", type=int, default=12, help="query heads")
    p.add_argument("--kv-heads", type=int, default=12, help="key/value heads")
    p.add_argument("--d-ff", type=int, default=3072, help="MLP width")
    p.add_argument("--every", type=int, default=0, help="print every k-th token (default: about 16 rows)")
    _finish(p, _wall)

    p = sub.add_parser("steps", help="prefill then decode, step by step: cache length before/after, cells computed vs read")
    p.add_argument("--prompt-len", type=int, default=4, help="prompt tokens (1-32)")
    p.add_argument("--steps", type=int, default=4, help="decode steps after the prefill (1-32)")
    p.add_argument("--layers", type=int, default=2, help="layers (1-8)")
    p.add_argument("--seed", type=int, default=0, help="seed for the toy decoder")
    _finish(p, _steps)

    p = sub.add_parser("evict", help="which tokens an eviction policy keeps, step by step")
    p.add_argument("--policy", choices=["full", "window", "sinks", "h2o"], default="sinks")
    p.add_argument("--n", type=int, default=32, help="tokens (1-512)")
    p.add_argument("--window", type=int, default=8, help="window (window, sinks)")
    p.add_argument("--sinks", type=int, default=4, help="attention sinks kept (sinks)")
    p.add_argument("--budget", type=int, default=12, help="cache budget (h2o)")
    p.add_argument("--recent", type=int, default=4, help="recent tokens always kept (h2o)")
    p.add_argument("--seed", type=int, default=0, help="seed for the toy attention")
    _finish(p, _evict)

    p = sub.add_parser("context", help="llama.cpp running out of context: shift or stop")
    p.add_argument("--prompt-len", type=int, default=8)
    p.add_argument("--n-generate", type=int, default=40, help="generated tokens fed back")
    p.add_argument("--n-ctx", type=int, default=32, help="context size")
    p.add_argument("--n-keep", type=int, default=4, help="tokens kept at the start (-1: the whole prompt)")
    p.add_argument("--mode", choices=["shift", "stop"], default="shift")
    _finish(p, _context)

    p = sub.add_parser("prefix", help="a shared system prompt across requests: prefill saved by prefix caching")
    p.add_argument("--requests", type=int, default=1000, help="requests (1-1000)")
    p.add_argument("--prefix-len", type=int, default=100, help="shared system prompt tokens")
    p.add_argument("--suffix-len", type=int, default=20, help="each request's own tokens")
    p.add_argument("--block-size", type=int, default=16, help="tokens per block (blocks mode)")
    p.add_argument("--capacity", type=int, default=None, help="cache capacity (blocks; tokens for the radix tree)")
    p.add_argument("--flops-per-token", type=float, default=1.4e10, help="prefill FLOPs per token")
    _finish(p, _prefix)


def _finish(p: argparse.ArgumentParser, func) -> None:
    p.add_argument("--json", action="store_true", help="print the figure data as JSON")
    p.set_defaults(func=func)


def _table(headers: list[str], rows: list[list]) -> str:
    cells = [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def _fmt(x) -> str:
    if isinstance(x, float):
        if abs(x) >= 1e7:
            return f"{x:.3g}"
        return f"{int(x):,}" if x.is_integer() and abs(x) >= 100 else f"{x:,.2f}"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}"
    return str(x)


def _emit(args: argparse.Namespace, data: dict, text: str) -> int:
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        for name, c in data.get("clamped", {}).items():
            print(f"note: {name} clamped from {c['requested']} to {c['used']}")
        print(text)
    return 0


def _race(args: argparse.Namespace) -> int:
    d = figures.race(args.n)
    rows = [
        [t, d["no_cache"]["per_step"][i], d["no_cache"]["cumulative"][i], d["cache"]["cumulative"][i], d["ratio"][i]]
        for i, t in enumerate(d["tokens"])
    ][-40:]
    t = d["totals"]
    text = _table(["token", "no-cache step", "no-cache total", "cache total", "ratio"], rows)
    text += f"\n\n{d['params']['n']} tokens: {t['no_cache']:,} vs {t['cache']:,} token-computations ({t['ratio']:.4g}x)"
    return _emit(args, d, text)


def _wall(args: argparse.Namespace) -> int:
    d = figures.quadratic_wall(args.n, args.layers, args.d_model, args.heads, args.kv_heads, args.d_ff)
    n = len(d["tokens"])
    every = args.every if args.every > 0 else max(1, n // 16)
    idx = sorted(set(list(range(0, n, every)) + [n - 1]))
    nc, c = d["no_cache"], d["cache"]
    rows = [
        [d["tokens"][i], nc["weight_macs"][i], nc["attention_macs"][i], c["weight_macs"][i], c["attention_macs"][i], d["ratio_cumulative"][i]]
        for i in idx
    ]
    text = _table(["token", "no-cache weights", "no-cache attn", "cache weights", "cache attn", "cumulative ratio"], rows)
    return _emit(args, d, text)


def _steps(args: argparse.Namespace) -> int:
    d = figures.step_through(args.prompt_len, args.steps, args.layers, args.seed)
    rows = []
    for s in d["steps"]:
        lay = s["layers"][0]
        rows.append(
            [s["step"], s["phase"], s["cache_len_before"], s["cache_len_after"], _span(lay["read"]), _span(lay["computed"]),
             len(s["without_cache_recomputed"]), s["bytes_read"], s["bytes_written"]]
        )
    text = _table(["step", "phase", "cache before", "cache after", "read", "computed", "no-cache recomputes", "bytes read", "bytes written"], rows)
    text += f"\n\n(read/computed are positions, the same in each of the {d['params']['layers']} layers)"
    return _emit(args, d, text)


def _span(positions: list[int]) -> str:
    if not positions:
        return "-"
    return str(positions[0]) if len(positions) == 1 else f"{positions[0]}..{positions[-1]}"


def _evict(args: argparse.Namespace) -> int:
    d = figures.eviction_timeline(args.policy, args.n, args.window, args.sinks, args.budget, args.recent, args.seed)
    rows = [[s["step"], s["cache_len_after"], ",".join(map(str, s["evicted"])) or "-", s["attention_kept"], _runs(s["cached"])] for s in d["steps"]]
    text = _table(["step", "cached", "evicted", "attn kept", "positions cached after the step"], rows)
    text += f"\n\npolicy {d['policy']}; mean attention kept {d['mean_attention_kept']:.3f}"
    return _emit(args, d, text)


def _runs(positions: list[int]) -> str:
    from kvlab.context import spans

    return " ".join(f"{a}" if b == a + 1 else f"{a}-{b - 1}" for a, b in spans(positions))


def _context(args: argparse.Namespace) -> int:
    d = figures.context_shift_timeline(args.prompt_len, args.n_generate, args.n_ctx, args.n_keep, args.mode)
    rows = [
        [s["step"], s["phase"], "-" if s["token"] is None else s["token"], s["n_past_before"], s["n_past_after"], s["n_discarded"] or "-",
         " ".join(f"{a}-{b - 1}" for a, b in s["visible"])]
        for s in d["steps"]
    ]
    text = _table(["step", "phase", "token", "n_past before", "n_past after", "discarded", "text tokens the model sees"], rows)
    end = f"stopped at step {d['stopped_at']} (context full)" if d["stopped_at"] else f"{len(d['shifts'])} shift(s), {d['total_discarded']} tokens discarded"
    text += f"\n\nn_ctx {d['n_ctx']}, n_keep {d['n_keep']}, mode {d['mode']}: {end}"
    return _emit(args, d, text)


def _prefix(args: argparse.Namespace) -> int:
    d = figures.prefix_cache_demo(args.requests, args.prefix_len, args.suffix_len, args.block_size, args.capacity, args.flops_per_token)
    tg, bl = d["token_granular"], d["blocks"]
    rows = [
        ["token-granular (radix)", tg["tokens_reused"], tg["tokens_computed"], tg["flops_saved"], tg["hit_rate"]],
        [f"blocks of {bl['block_size']}", bl["tokens_reused"], bl["tokens_computed"], bl["flops_saved"], bl["hit_rate"]],
    ]
    text = _table(["cache", "tokens reused", "tokens computed", "FLOPs saved", "hit rate"], rows)
    text += "\n\nblock granularity:\n" + _table(
        ["block size", "tokens reused", "per request", "prefix tokens in a partial block"],
        [[g["block_size"], g["tokens_reused"], g["tokens_reused_per_request"], g["partial_block_tokens"]] for g in d["granularity"]],
    )
    return _emit(args, d, text)
