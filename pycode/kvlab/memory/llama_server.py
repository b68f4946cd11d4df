"""The `llama-server` command a reader would type for a widget's settings.

llama.cpp's server flags (tools/server/README.md): `-c/--ctx-size` (context in
tokens, shared by all slots), `-ctk/--cache-type-k` and `-ctv/--cache-type-v`
(the cache's number format; a quantised V cache needs flash attention, `-fa on`),
`-np/--parallel` (slots: sequences served at once, each gets ctx-size / parallel; the
default -1 means auto: 4 slots sharing one unified cache, `--kv-unified`, so a command for
one sequence says `--parallel 1`),
`--cache-reuse N` (reuse cached chunks of at least N tokens by shifting them,
on top of prompt caching), `--context-shift` (when a slot is full, keep the
first `--keep` tokens and discard half of the rest instead of stopping).
The KV memory the command allocates comes from kvlab.memory.llamacpp_kv_cache.
"""

from __future__ import annotations

from kvlab.memory.architecture import Architecture
from kvlab.memory.catalogue import get_model, model_architecture
from kvlab.memory.kv_bytes import llamacpp_kv_cache
from kvlab.memory.llamacpp import AUTO_SLOTS
from kvlab.inputs import short_repr

CACHE_TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"]
# `-np` left alone: AUTO_SLOTS slots over one unified KV cache (tools/server/server.cpp@b10309, since b6925;
# `-np` defaults to -1 = auto since b7433), and `--fit` on by default since b7407: kvlab.memory.llamacpp has the rules
FIT_NOTE = (
    "By default llama.cpp fits itself to the GPU (--fit, on since build b7407): this command sets --ctx-size, so "
    "--fit does not lower the context; if these settings leave less than 1 GiB of the GPU free it keeps some "
    "layers in system memory (slower) instead. Add --fit off to get an error rather than a slower start"
)
MAX_CTX_SIZE = 2**32 - 1  # llama.cpp's n_ctx is a uint32_t (llama_context_params.n_ctx)


def cache_contents(kv: dict) -> str:
    """What llama.cpp's caches for a model hold, in words: a KV cache, recurrent state, or both."""
    kinds = {c["cache"] for c in kv["caches"]}
    if kinds == {"recurrent"}:
        return "recurrent state (no layer has attention, so no KV cache)"
    return "KV cache and recurrent state" if "recurrent" in kinds else "KV cache"


def llama_server_command(
    ctx_size: int = 8192,
    cache_type_k: str = "f16",
    cache_type_v: str | None = None,
    parallel: int = 1,
    cache_reuse: int = 0,
    context_shift: bool = False,
    keep: int = 0,
    model: str | Architecture = "llama-3.1-8b",
    model_file: str | None = None,
) -> dict:
    """The command line for these settings, one flag a line, with what each flag does
    and the KV cache it allocates for `model` (a catalogue id, or the Architecture of a
    pasted config.json: its GGUF file is then called `model-Q4_K_M.gguf`).

    >>> c = llama_server_command(8192, "q8_0", parallel=2, context_shift=True, keep=32)
    >>> c["argv"][1:]
    ['-m', 'Llama-3.1-8B-Q4_K_M.gguf', '--ctx-size', '8192', '-ctk', 'q8_0', '-ctv', 'q8_0', '-fa', 'on', \
'--parallel', '2', '--context-shift', '--keep', '32']
    >>> one = llama_server_command(8192, model="gemma-3-27b-it")
    >>> one["argv"][-2:], one["kv"]["total_mib"], one["kv"]["auto_slots_total_mib"]
    (['--parallel', '1'], 1264.0, 2512.0)
    >>> c["kv"]["n_ctx_seq"], c["kv"]["total_mib"]
    (4096, 544.0)
    """
    if isinstance(ctx_size, bool) or int(ctx_size) != ctx_size or not 1 <= int(ctx_size) <= MAX_CTX_SIZE:
        raise ValueError(
            f"ctx_size must be a whole number of tokens from 1 to {MAX_CTX_SIZE:,}, got {short_repr(ctx_size)}"
        )
    ctx_size, parallel, cache_reuse, keep = int(ctx_size), int(parallel), int(cache_reuse), int(keep)
    cache_type_v = cache_type_k if cache_type_v is None else cache_type_v
    for name, t in (("cache_type_k", cache_type_k), ("cache_type_v", cache_type_v)):
        if t not in CACHE_TYPES:
            raise ValueError(f"{name} must be one of {CACHE_TYPES}, got {short_repr(t)}")
    if not 1 <= parallel <= 256:
        raise ValueError(f"parallel must be from 1 to 256, got {parallel}")
    if cache_reuse < 0 or keep < -1:
        raise ValueError("cache_reuse must be >= 0 and keep >= -1")
    if isinstance(model, Architecture):
        arch, name, default_file = model, model.name, "model-Q4_K_M.gguf"
    else:
        arch, name = model_architecture(model), get_model(model)["hf_id"]
        default_file = name.split("/")[-1] + "-Q4_K_M.gguf"
    if model_file is None:
        model_file = default_file
    argv = ["llama-server", "-m", model_file, "--ctx-size", str(ctx_size)]
    flags = [{"flag": f"--ctx-size {ctx_size}", "means": f"{ctx_size:,} tokens of context, shared by all slots"}]
    if cache_type_k != "f16" or cache_type_v != "f16":
        argv += ["-ctk", cache_type_k, "-ctv", cache_type_v]
        flags.append(
            {
                "flag": f"-ctk {cache_type_k} -ctv {cache_type_v}",
                "means": "the cache's number format for K and V (the default is f16)",
            }
        )
        if cache_type_v not in ("f32", "f16", "bf16"):
            argv += ["-fa", "on"]
            flags.append({"flag": "-fa on", "means": "flash attention: llama.cpp needs it for a quantised V cache"})
    # without -np llama-server runs AUTO_SLOTS slots over one unified cache: say what that would allocate
    auto = llamacpp_kv_cache(arch, ctx_size, cache_type_k, cache_type_v, n_seq=AUTO_SLOTS, kv_unified=True)
    argv += ["--parallel", str(parallel)]
    flags.append(
        {
            "flag": f"--parallel {parallel}",
            "means": (
                f"{parallel} slots, each with {ctx_size // parallel:,} tokens of the context"
                if parallel != 1
                else "one slot with the whole context; without it llama-server runs "
                f"{AUTO_SLOTS} slots sharing the context (-np auto, --kv-unified), "
                f"{auto['total_mib']:,.0f} MiB of cache for this model"
            ),
        }
    )
    if cache_reuse:
        argv += ["--cache-reuse", str(cache_reuse)]
        flags.append(
            {
                "flag": f"--cache-reuse {cache_reuse}",
                "means": f"reuse cached chunks of {cache_reuse}+ tokens even after a change earlier in the prompt",
            }
        )
    if context_shift:
        argv += ["--context-shift"]
        flags.append(
            {
                "flag": "--context-shift",
                "means": "when a slot is full, keep the first --keep tokens and discard half of the rest",
            }
        )
        if keep:
            argv += ["--keep", str(keep)]
            flags.append(
                {
                    "flag": f"--keep {keep}",
                    "means": "tokens at the start that a context shift never discards"
                    if keep > 0
                    else "keep the whole prompt",
                }
            )
    # an explicit --parallel leaves --kv-unified off: each slot gets ctx_size / parallel
    kv = llamacpp_kv_cache(arch, ctx_size, cache_type_k, cache_type_v, n_seq=parallel, kv_unified=parallel == 1)
    holds = cache_contents(kv)
    lines, line = [], argv[0]
    for part in argv[1:]:
        if part.startswith("-") and not part.lstrip("-").isdigit():
            lines.append(line)
            line = "  " + part
        else:
            line += " " + part
    lines.append(line)
    return {
        "params": {
            "ctx_size": ctx_size,
            "cache_type_k": cache_type_k,
            "cache_type_v": cache_type_v,
            "parallel": parallel,
            "cache_reuse": cache_reuse,
            "context_shift": bool(context_shift),
            "keep": keep,
            "model": model if isinstance(model, str) else name,
        },
        "argv": argv,
        "command": " \\\n".join(lines),
        "flags": flags,
        "kv": {
            "model": name,
            "holds": holds,
            "n_ctx_seq": kv["n_ctx_seq"],
            "total_bytes": kv["total_bytes"],
            "total_mib": kv["total_mib"],
            "auto_slots_total_mib": auto["total_mib"],
        },
        "notes": [FIT_NOTE],
        "text": {
            "kv": (
                f"For {name} these settings allocate {kv['total_mib']:,.0f} MiB of {holds} "
                f"({kv['n_ctx_seq']:,} tokens per slot)."
            )
        },
    }
