"""`python -m kvlab COMMAND`: the calculators and figures from the command line.

    python -m kvlab attention --d 16 --temperature 0.5
    python -m kvlab memory --model llama-3.1-8b --context 131072 --kv-type q8_0
    python -m kvlab memory --model path/to/config.json --context 32768 --mode vllm --json
    python -m kvlab fit --model qwen3.6-27b --gpu rtx-4090 --weights Q4_K_M --context 65536
    python -m kvlab serve --model llama-3.1-8b --gpu h100-sxm --context 8192 --batch 32
    python -m kvlab explain-log server.log --model llama-3.1-8b [--n-ctx 8192 ...]
    python -m kvlab race|wall|steps|evict|context|prefix [--json]

Each group of commands has an `_add_*_commands(subparsers)` below, called in
`main`; every command sets `func(args) -> int` on its parser. A ValueError (bad
input) is printed as one line, with exit status 2, as argparse does for its own
errors. Every file read (a config.json, a log, standard input) goes through
kvlab.input_files: regular files only, up to a size limit.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from kvlab.input_files import read_text
from kvlab.inputs import SHOWN_CHARS, finite_number, short_repr
from kvlab.memory.catalogue import list_gpus, list_models, model_architecture
from kvlab.memory.engine_logs import MAX_LOG_BYTES, explain_engine_log
from kvlab.dtypes import GIB, KV_TYPES, MIB
from kvlab.memory.kv_bytes import MAX_CONTEXT, MAX_SEQUENCES, MODES, llamacpp_kv_cache, memory_report
from kvlab.memory.llama_server import AUTO_SLOTS
from kvlab.memory.checkpoint import is_hub_id, read_checkpoint_dir, read_hub_checkpoint
from kvlab.memory.compare import engines_side_by_side
from kvlab.memory.scheduler import DATASETS, simulate
from kvlab.memory.serving import NO_KIND_SENTENCE, accuracy_of_kind, serving_accuracy, serving_estimate
from kvlab.memory.compare import engine_budget
from kvlab.memory.drafters import drafter_ids
from kvlab.memory.deployment import ENGINES as ALL_ENGINES
from kvlab.memory.deployment import deployment
from kvlab.memory.engines import MXFP4_BACKENDS, VLLM_SAMPLERS, VLLM_VERSION_ALIASES, VLLM_VERSIONS
from kvlab.memory.verdict import ENGINES, TENSOR_PARALLEL, verdict
from kvlab.memory.weights import WEIGHT_FORMATS
from kvlab.reuse.context import spans
from kvlab.widgets.attention import attention_figure
from kvlab.widgets.eviction import context_shift_timeline, eviction_timeline
from kvlab.widgets.kv_cache import step_through
from kvlab.widgets.prefix import prefix_cache_demo
from kvlab.widgets.wall import quadratic_wall, race
from kvlab.wording import plural


class _Parser(argparse.ArgumentParser):
    """argparse, except that an error repeats at most a few dozen characters of a value given."""

    def error(self, message: str):
        long_quoted = re.compile(rf"'([^']{{{SHOWN_CHARS + 1},}})'")
        super().error(long_quoted.sub(lambda m: short_repr(m[1]), message))


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(
        prog="python -m kvlab",
        description="kvlab: exact numbers about the LLM KV cache.",
    )
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_attention_commands(sub)
    _add_memory_commands(sub)
    _add_cache_commands(sub)
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except ValueError as exc:  # bad input: say what, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2


# ---------------------------------------------------------------------------- attention


def _add_attention_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("attention", help="softmax(QKᵀ/√d)·V on the demo sentence (JSON)")
    p.add_argument("--d", type=int, default=8, help="head dimension (2-64)")
    p.add_argument("--temperature", type=float, default=1.0, help="softmax temperature (0.1-5)")
    p.add_argument("--seed", type=int, default=0, help="seed for the random Q, K, V")
    p.add_argument("--no-causal", action="store_true", help="let every token see every other")
    p.set_defaults(func=_run_attention)


def _run_attention(args: argparse.Namespace) -> int:
    data = attention_figure(d=args.d, temperature=args.temperature, seed=args.seed, causal=not args.no_causal)
    print(json.dumps(data, indent=1))
    return 0


# ---------------------------------------------------------------------------- memory and serving (kvlab.memory)


def _add_memory_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help="exact KV cache size of a model (catalogue id or config.json)")
    _model_args(p)
    p.add_argument("--kv-type", default="f16", choices=sorted(KV_TYPES), help="K cache type (default f16)")
    p.add_argument("--v-type", default=None, choices=sorted(KV_TYPES), help="V cache type (default: same as K)")
    p.add_argument(
        "--mode",
        default="llamacpp",
        choices=MODES,
        help="llamacpp: what llama.cpp allocates; vllm: PagedAttention pages; exact: no padding",
    )
    p.add_argument(
        "--batch",
        type=int,
        default=1,
        help="sequences of --context tokens each, held at once (as in fit and serve): llama.cpp "
        "-c context x batch -np batch, vLLM batch concurrent requests",
    )
    p.add_argument("--ubatch", type=int, default=512, help="llama.cpp --ubatch-size (sizes the SWA cache)")
    p.add_argument(
        "--kv-unified",
        action="store_true",
        help="llama.cpp with --kv-unified: one shared stream of context x batch cells (default: one stream per sequence)",
    )
    p.add_argument(
        "--max-num-batched-tokens",
        type=int,
        default=None,
        help="vLLM mode: sizes the sliding-window layers (default 2048; vLLM uses 8192 on cards of 70 GiB+ but A100s)",
    )
    p.set_defaults(func=_run_memory)

    p = sub.add_parser("fit", help="weights + KV cache + compute buffer against a GPU or a RAM size")
    _model_args(p)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--gpu", help="catalogue GPU id (see `python -m kvlab gpus`)")
    where.add_argument("--memory-gib", type=float, help="memory available, in GiB")
    p.add_argument("--weights", default="Q4_K_M", help=f"weights format ({', '.join(WEIGHT_FORMATS)})")
    p.add_argument(
        "--checkpoint",
        default=None,
        help="count the weights as this checkpoint stores them: a directory (safetensors index or headers), a "
        ".gguf file, or org/name on the Hub (read over the network); --weights still names the format",
    )
    p.add_argument("--kv-type", default="f16", choices=sorted(KV_TYPES))
    p.add_argument(
        "--engine",
        "--mode",
        dest="engine",
        default="llamacpp",
        choices=(*ALL_ENGINES, "all"),
        help="llamacpp (-c context x batch, -np batch), vllm (--max-model-len context), sglang or trtllm (their KV "
        "budget, step by step), or all: the four side by side (--gpu, --n-gpus, --weights, --context only)",
    )
    p.add_argument("--batch", type=int, default=1, help="sequences of --context tokens each, held at once")
    p.add_argument(
        "--n-gpus",
        type=int,
        default=1,
        choices=TENSOR_PARALLEL,
        help="GPUs (llama.cpp: layer split; vLLM: tensor parallel)",
    )
    p.add_argument(
        "--pipeline-parallel-size",
        "--pp",
        dest="pp",
        type=int,
        default=1,
        help="vLLM mode: pipeline stages, each of --n-gpus GPUs (layers split as vLLM's get_pp_indices does)",
    )
    p.add_argument(
        "--language-model-only",
        action="store_true",
        help="vLLM mode: the vision tower is off (--language-model-only, or every modality at 0 in "
        "--limit-mm-per-prompt), so its profile run takes nothing",
    )
    p.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=None,
        help="vLLM mode only (default as vLLM sets it: 0.92 for --engine-version 0.20+, else 0.9)",
    )
    p.add_argument(
        "--max-num-batched-tokens",
        type=int,
        default=None,
        help="vLLM mode: default as vLLM picks it for the card (8192 on 70 GiB+ cards but A100s, else 2048)",
    )
    p.add_argument(
        "--max-num-seqs", type=int, default=None, help="vLLM mode: default 1024 on 70 GiB+ cards but A100s, else 256"
    )
    p.add_argument(
        "--engine-version",
        default="v1",
        choices=(*VLLM_VERSIONS, *VLLM_VERSION_ALIASES),
        help="vLLM mode: v1 (0.8-0.19, the default), v0 (0.6-0.10 with the V0 engine), 0.20+ (CUDA graph "
        "estimate subtracted from the budget, null block, a hybrid model's max_num_seqs checked against its "
        "Mamba cache blocks; 0.21+ is its former name) or v0-pre-mla (0.4-0.7.0: DeepSeek-V2/V3 cache every head's K "
        "and V, not the latent)",
    )
    p.add_argument(
        "--enable-prefix-caching",
        action="store_true",
        help="vLLM mode: a hybrid model's recurrent state then takes 2 blocks per request ('align' mode)",
    )
    p.add_argument(
        "--num-speculative-tokens",
        type=int,
        default=0,
        help="vLLM mode: speculative decoding; each drafted token is one more state block per request (hybrids)",
    )
    p.add_argument(
        "--speculative-method",
        choices=("mtp", "other"),
        default="other",
        help="vLLM mode: mtp drafts with the checkpoint's own MTP layers, which cache K and V in the same pool",
    )
    p.add_argument(
        "--drafter",
        default=None,
        help="vLLM mode: a separate draft model (the speculative config's model), one kvlab knows: "
        + ", ".join(drafter_ids())
        + "; its weights load beside the model's and its KV layers join the pool",
    )
    p.add_argument(
        "--allow-long-context",
        action="store_true",
        help="accept a context beyond the model's trained length (llama.cpp runs it; vLLM needs "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)",
    )
    _mxfp4_backend_flag(p)
    _custom_all_reduce_flag(p)
    p.set_defaults(func=_run_fit)

    p = sub.add_parser(
        "serve", help="decode speed (roofline x calibrated efficiency), chats per GPU and $ per million tokens"
    )
    _model_args(p, context_required=False)
    p.add_argument("--gpu", required=True, help="catalogue GPU id")
    p.add_argument("--batch", type=int, default=1, help="chats decoded together")
    p.add_argument("--weights", default="BF16", help="weights format")
    p.add_argument("--kv-type", default="f16", choices=sorted(KV_TYPES))
    p.add_argument(
        "--engine",
        default="vllm",
        choices=(*ENGINES, "sglang"),
        help="whose memory accounting decides the fit (sglang: the benchmark simulation only)",
    )
    p.add_argument("--answer", type=int, default=512, help="tokens of answer per chat (the rest is prompt)")
    p.add_argument("--price", type=float, default=None, help="$/hour (default: the catalogue price)")
    p.add_argument(
        "--efficiency",
        type=float,
        default=None,
        help="share of the roofline reached (default: calibrated per batch on published benchmarks; 1.0 = roofline)",
    )
    p.add_argument(
        "--max-num-seqs", type=int, default=None, help="vLLM: sequences run at once (default: vLLM's for the GPU)"
    )
    p.add_argument("--n-gpus", type=int, default=1, help="GPUs in tensor parallel")
    p.add_argument("--pipeline-parallel-size", "--pp", dest="pp", type=int, default=1, help="vLLM: pipeline stages")
    sim = p.add_argument_group(
        "benchmark simulation",
        "any of these flags simulates `vllm bench serve` against the engine's scheduler (kvlab.memory.scheduler: "
        "vLLM V1, or SGLang with --engine sglang) and prints its Serving Benchmark Result; --context is then "
        "vLLM's --max-model-len (SGLang's --context-length)",
    )
    sim.add_argument("--request-rate", default=None, help="requests per second, or inf (default inf)")
    sim.add_argument("--max-concurrency", type=int, default=None, help="requests in flight at most")
    sim.add_argument("--num-prompts", type=int, default=None, help="requests sent (default 1000)")
    sim.add_argument(
        "--dataset", "--dataset-name", dest="dataset", default=None, choices=DATASETS, help="lengths (default random)"
    )
    sim.add_argument("--input-len", "--random-input-len", dest="input_len", type=int, default=None, help="default 1024")
    sim.add_argument(
        "--output-len", "--random-output-len", dest="output_len", type=int, default=None, help="default 128"
    )
    sim.add_argument("--random-range-ratio", type=float, default=None, help="random dataset: lengths in L x [1-r, 1+r]")
    sim.add_argument(
        "--prefix-len", "--random-prefix-len", dest="prefix_len", type=int, default=None, help="shared prompt prefix"
    )
    sim.add_argument(
        "--burstiness",
        type=float,
        default=None,
        help="gamma shape of the gaps (1: Poisson; inf: evenly spaced, as guidellm's constant profile)",
    )
    sim.add_argument("--max-num-batched-tokens", type=int, default=None, help="token budget per step")
    sim.add_argument(
        "--enable-prefix-caching",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="vLLM V1's prefix cache (on by default): the shared prefix, and a preempted request's own blocks",
    )
    sim.add_argument("--gpu-memory-utilization", type=float, default=None, help="vLLM (default 0.9)")
    sim.add_argument("--compute-efficiency", type=float, default=None, help="share of peak compute reached")
    sim.add_argument("--seed", type=int, default=None, help="random seed (default 0)")
    sim.add_argument(
        "--async-scheduling",
        action="store_const",
        const=True,
        default=None,
        help="vLLM: schedule the next step while the GPU runs this one (the CPU's time hides under the GPU's)",
    )
    sim.add_argument(
        "--enforce-eager",
        action="store_const",
        const=True,
        default=None,
        help="vLLM: no CUDA graphs (every step launches each layer's kernels from Python; slower steps)",
    )
    sim.add_argument(
        "--chat-template-ms",
        type=float,
        default=None,
        help="the API server's extra time per request to parse a chat template: vLLM 0.11.0's chat endpoint "
        "repeats it for every request (about 16 ms for Qwen3's, measured by bench/chat_template_cost.py; "
        "gpt-oss and completions: 0, the default)",
    )
    for flag, kind, what in (
        ("--chunked-prefill-size", int, "SGLang (--engine sglang): prompt tokens per prefill batch (default by card)"),
        ("--max-running-requests", int, "SGLang: requests running at most (default from its pool)"),
        ("--mem-fraction-static", float, "SGLang: share of memory for weights + KV (default by card)"),
        ("--schedule-conservativeness", float, "SGLang: scales new_token_ratio's start (default 1.0)"),
    ):
        sim.add_argument(flag, type=kind, default=None, help=what)
    _mxfp4_backend_flag(sim)
    _custom_all_reduce_flag(p)
    p.set_defaults(func=_run_serve)

    p = sub.add_parser(
        "explain-log",
        help="a llama.cpp, vLLM, SGLang or TensorRT-LLM start-up log, rebuilt term by term from the config",
    )
    p.add_argument("log", help="the log file ('-' reads standard input)")
    p.add_argument(
        "--model",
        default=None,
        help="catalogue id, Hugging Face id in the catalogue, or config.json path; without it the log's own "
        "figures are checked against each other (llama.cpp needs it)",
    )
    p.add_argument(
        "--engine",
        choices=("llama.cpp", "vllm", "sglang", "tensorrt-llm"),
        default=None,
        help="default: read from the log",
    )
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    for flag, kind, what in (
        ("--n-ctx", int, "llama.cpp -c, if the log does not show it"),
        ("--n-seq", int, "llama.cpp --parallel"),
        ("--type-k", str, "llama.cpp -ctk"),
        ("--type-v", str, "llama.cpp -ctv"),
        ("--n-ubatch", int, "llama.cpp -ub"),
        (
            "--mla-cache",
            str,
            "llama.cpp: how the build and GGUF cache an MLA model: latent (since PR 19067, 2026), latent+v (PR 12801 "
            "to PR 19067), per-head (before PR 12801); default: today's, or the one the log's figures show",
        ),
        ("--max-model-len", int, "vLLM --max-model-len"),
        ("--kv-cache-dtype", str, "vLLM --kv-cache-dtype"),
        ("--block-size", int, "vLLM --block-size"),
        ("--max-num-batched-tokens", int, "vLLM --max-num-batched-tokens"),
        ("--gpu-memory-gib", float, "the GPU's memory, to account for what vLLM did not log"),
        ("--tensor-parallel-size", int, "vLLM / SGLang / TensorRT-LLM tensor parallel, if the log does not show it"),
        ("--pipeline-parallel-size", int, "vLLM --pipeline-parallel-size"),
        ("--num-speculative-tokens", int, "vLLM num_speculative_tokens, if the log does not show it"),
        ("--speculative-method", str, "vLLM speculative method (mtp counts the model's own MTP layers)"),
        ("--speculative-model", str, "vLLM speculative config's model: a separate drafter kvlab knows (--drafter)"),
    ):
        p.add_argument(flag, type=kind, default=None, help=what)
    p.add_argument("--swa-full", action="store_true", default=None, help="llama.cpp --swa-full")
    p.add_argument(
        "--enable-prefix-caching",
        action="store_true",
        default=None,
        help="vLLM --enable-prefix-caching, if the log does not show it",
    )
    p.set_defaults(func=_run_explain_log)

    p = sub.add_parser("models", help="the model catalogue")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_models)
    p = sub.add_parser("gpus", help="the GPU catalogue")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_gpus)
    p = sub.add_parser(
        "checkpoint",
        help="a checkpoint's weights as stored: a local directory (index + shard headers), a .gguf file, or a "
        "Hugging Face id (fetched when online: config.json and the index, never the weights)",
    )
    p.add_argument("source", help="a directory, a .gguf file, or org/name on the Hub")
    p.add_argument("--revision", default="main", help="Hub revision (branch, tag or commit)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_checkpoint)


def _model_args(p: argparse.ArgumentParser, context_required: bool = True) -> None:
    p.add_argument("--model", required=True, help="catalogue id, Hugging Face id in the catalogue, or config.json path")
    p.add_argument(
        "--context",
        "--max-model-len",
        type=int,
        required=context_required,
        help="tokens of context (llama.cpp --ctx-size / vLLM max_model_len)"
        + ("" if context_required else "; with a workload flag, default: the model's trained context"),
    )
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument(
        "--params",
        type=float,
        default=None,
        help="parameter count, for a config.json outside the catalogue (e.g. 8.03e9)",
    )


def _size(nbytes: float) -> str:
    return f"{nbytes / GIB:,.2f} GiB" if abs(nbytes) >= GIB else f"{nbytes / MIB:,.2f} MiB"


def _check_context_and_batch(args: argparse.Namespace) -> None:
    """--context and --batch within the calculators' limits (the same for memory, fit and serve)."""
    if args.context is not None:
        finite_number("--context", args.context, minimum=1, maximum=MAX_CONTEXT, integer=True)
    finite_number("--batch", args.batch, minimum=1, maximum=MAX_SEQUENCES, integer=True)


def _run_memory(args: argparse.Namespace) -> int:
    arch = model_architecture(args.model, args.params)
    _check_context_and_batch(args)
    # --batch means the same everywhere: `batch` sequences of --context tokens each (llama.cpp's -c is the total)
    total_ctx = args.context * args.batch if args.mode == "llamacpp" else args.context
    extra = {"max_num_batched_tokens": args.max_num_batched_tokens} if args.max_num_batched_tokens else {}
    r = memory_report(
        arch,
        total_ctx,
        kv=args.kv_type,
        mode=args.mode,
        n_seq=args.batch,
        v_kv=args.v_type,
        n_ubatch=args.ubatch,
        kv_unified=args.kv_unified or args.batch == 1,
        **extra,
    )
    r["notes"] = list(r["architecture"]["notes"]) + r["detail"].get("notes", []) + r["detail"].get("assumptions", [])
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    a = r["architecture"]
    print(
        f"{r['model']}  ({a['attention']}, layers {a['layers_by_kind']}, kv_heads {a['kv_heads']}, head_dim {a['head_dim']})"
    )
    per = r["per_token"]
    print(f"per token: {r['bytes_per_token']:,} B = {r['kib_per_token']:,.2f} KiB   [{r['formula']}]")
    bounded = r["by_layer_kind_bytes"]["sliding"] + r["by_layer_kind_bytes"]["linear"]
    if bounded:
        grow = per["bytes_per_token_beyond_windows"]
        print(
            f"  of which grows with every token: {grow:,} B = {grow / 1024:,.2f} KiB; "
            f"stops growing (windows, recurrent state): {_size(bounded)}"
        )
    for kind, nbytes in r["by_layer_kind_bytes"].items():
        if nbytes:
            print(f"  {kind:8s} layers: {_size(nbytes)}")
    print(
        f"total ({r['mode']}, {plural(r['context'], 'token')} x {plural(r['n_seq'], 'sequence')}): "
        f"{_size(r['total_bytes'])} ({r['total_bytes']:,} B)"
    )
    for line in r["detail"].get("log_lines", []):
        print(f"  {line}")
    if args.mode == "llamacpp" and args.batch == 1:
        # llama-server without -np: AUTO_SLOTS slots over one unified cache of the same cells (llama_server.py)
        auto = llamacpp_kv_cache(arch, total_ctx, args.kv_type, args.v_type, n_seq=AUTO_SLOTS, kv_unified=True)
        print(
            f"  llama-server without -np runs {AUTO_SLOTS} slots sharing these {total_ctx:,} cells "
            f"(--kv-unified): {_size(auto['total_bytes'])}"
            + (" (the same: every layer holds the whole context)" if auto["total_bytes"] == r["total_bytes"] else "")
        )
    for note in r["notes"]:
        print(f"  note: {note}")
    for warning in r["warnings"]:
        print(f"  WARNING: {warning}")
    return 0


def _run_fit_all(args: argparse.Namespace) -> int:
    """fit --engine all: what each engine sets aside for the KV cache, side by side."""
    if not args.gpu:
        raise ValueError("--engine all needs --gpu (each engine's rule starts from the card)")
    r = engines_side_by_side(
        model_architecture(args.model, args.params),
        args.gpu,
        args.context,
        n_gpus=args.n_gpus,
        weights=args.weights,
        checkpoint=_stored(args),
    )
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(
        f"{r['model']} on {r['n_gpus']} x {r['gpu']}, {args.weights} weights, {plural(r['context'], 'token')} of context"
    )
    print(
        f"  {'engine':14s} {'KV cache / GPU':>15s} {'tokens it holds':>16s} {'sequences at ctx':>17s} {'longest context':>16s}"
    )
    for row in r["rows"]:
        seqs = f"{row['max_sequences_at_context']:,}" if row["fits"] else "refuses"
        print(
            f"  {row['engine_name']:14s} {_size(row['kv_budget_bytes']):>15s} {row['max_tokens']:>16,} {seqs:>17s} "
            f"{row['longest_context'] or 0:>16,}"
        )
    for row in r["rows"]:
        print(f"  {row['engine_name']} ({row['version_modelled']}): {row['rule']}")
        if row["refusal"]:
            print(f"    refuses: {row['refusal']}")
        for doubt in row["unsure"]:
            print(f"    unsure: {doubt}")
    return 0


def _stored(args: argparse.Namespace) -> dict | None:
    """fit --checkpoint: the weights as stored (kvlab.memory.checkpoint), named by where they were read."""
    if not args.checkpoint:
        return None
    r = read_hub_checkpoint(args.checkpoint) if is_hub_id(args.checkpoint) else read_checkpoint_dir(args.checkpoint)
    return dict(r, name=args.checkpoint)


def _run_fit_budget(args: argparse.Namespace) -> int:
    """fit --engine sglang|trtllm: the engine's KV budget for this deployment, step by step."""
    if not args.gpu:
        raise ValueError(f"--engine {args.engine} needs --gpu (its rule starts from the card)")
    dep = deployment(
        model_architecture(args.model, args.params),
        gpu=args.gpu,
        weights=args.weights,
        kv="auto" if args.kv_type == "f16" else args.kv_type,
        engine=args.engine,
        tp=args.n_gpus,
        checkpoint=_stored(args),
    )
    r = engine_budget(dep, args.context)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"{dep.arch.name} on {dep.where()}, {dep.weights['format']} weights ({r['version_modelled']})")
    width = max(len(step["label"]) for step in r["steps"])
    for step in r["steps"]:
        amount = _size(step["bytes"]) if step["bytes"] is not None else ""
        print(f"  {step['label']:{width}s} {amount:>10s}   {step['how']}")
    held = f"{r['max_tokens']:,} tokens; {plural(r['max_sequences_at_context'], 'sequence')} of {args.context:,}"
    print(f"  {'starts' if r['fits'] else 'refuses'}: {held}" + (f" ({r['refusal']})" if r["refusal"] else ""))
    print(f"  rule: {r['rule']}")
    for doubt in r["unsure"]:
        print(f"  unsure: {doubt}")
    return 0


def _mxfp4_backend_flag(p) -> None:
    p.add_argument(
        "--mxfp4-backend",
        choices=MXFP4_BACKENDS,
        default=None,
        help="vLLM mode, MXFP4 weights: the MoE kernel path (default: the card's, Triton on H100/H200 with "
        "triton_kernels installed; an install without them, or VLLM_MXFP4_USE_MARLIN=1, runs marlin)",
    )
    p.add_argument(
        "--sampler",
        choices=VLLM_SAMPLERS,
        default=None,
        help="vLLM mode: the top-k/top-p path of the start-up's sampler warm-up, which sets part of the reserve "
        "(default: the version's: native sort for v0 and v1 as pip installs up to 0.16 run it; flashinfer for 0.20+ "
        "(0.20 runs triton, the same peak); 0.17-0.19 run triton, and the Docker images of 0.9-0.11.0 flashinfer)",
    )


def _custom_all_reduce_flag(p) -> None:
    p.add_argument(
        "--disable-custom-all-reduce",
        action="store_true",
        help="vLLM mode: as vllm serve's flag (and what vLLM does itself when the tensor-parallel GPUs span nodes): "
        "the reserve keeps NCCL's memory without custom all-reduce buffers",
    )


def _run_fit(args: argparse.Namespace) -> int:
    _check_context_and_batch(args)
    if args.engine == "all":
        return _run_fit_all(args)
    if args.engine not in ENGINES:
        return _run_fit_budget(args)
    dep = deployment(
        model_architecture(args.model, args.params),
        gpu=args.gpu,
        memory_gib=args.memory_gib,
        weights=args.weights,
        kv=args.kv_type,
        engine=args.engine,
        version=args.engine_version,
        tp=args.n_gpus,
        pp=args.pp,
        gpu_memory_utilization=args.gpu_memory_utilization,
        allow_long_context=args.allow_long_context,
        max_num_batched_tokens=args.max_num_batched_tokens,
        max_num_seqs=args.max_num_seqs,
        checkpoint=_stored(args),
        prefix_caching=args.enable_prefix_caching,
        speculative_tokens=args.num_speculative_tokens,
        mtp=args.speculative_method == "mtp" and args.num_speculative_tokens > 0,
        mxfp4_backend=args.mxfp4_backend,
        sampler=args.sampler,
        multimodal=not args.language_model_only,
        drafter=args.drafter,
        custom_all_reduce=not args.disable_custom_all_reduce,
    )
    r = verdict(dep, args.context, args.batch)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(
        f"{r['model']} on {r['where']}, {plural(r['n_seq'], 'sequence')} of {plural(r['context'], 'token')}, "
        f"{r['weights_format']} weights, {r['kv_type']} KV ({r['engine_name']}: {r['flags']})"
    )
    fullest = r["stages"] or (r["engine"] == "llamacpp" and r["n_gpus"] > 1)  # llama.cpp's uneven layer split
    per = " (fullest GPU)" if fullest else " per GPU" if r["n_gpus"] > 1 else ""
    for c in r["components"]:
        print(f"  {c['name']:18s} {_size(c['bytes']):>12s}   {c['how']}")
    print(f"  {'total' + per:18s} {_size(r['total_bytes']):>12s}   of {_size(r['budget_bytes'])} ({r['budget_how']})")
    for stage in r["stages"]:
        print(f"    {stage['text']}")
    print(f"  {r['headline'].upper()[:1] + r['headline'][1:]}")
    if r["long_context"] and r["binding"] != "trained_context":
        print(f"  note: {r['long_context']['text']}")
    print(f"  largest context at {plural(r['n_seq'], 'sequence')}: {r['max_context_text']}")
    print(f"  most sequences at {plural(r['context'], 'token')}: {r['max_sequences_text']}")
    for warning in r["warnings"]:
        print(f"  WARNING: {warning}")
    print(f"  engine model: {r['engine_model']['version']}; confidence {r['confidence']}")
    if r["engine_model"].get("mxfp4_kernel_how"):
        print(f"  {r['engine_model']['mxfp4_kernel_how']}")
    return 0


SIMULATION_FLAGS = (
    "request_rate",
    "max_concurrency",
    "num_prompts",
    "dataset",
    "input_len",
    "output_len",
    "random_range_ratio",
    "prefix_len",
    "burstiness",
    "max_num_batched_tokens",
    "enable_prefix_caching",
    "gpu_memory_utilization",
    "compute_efficiency",
    "seed",
    "async_scheduling",
    "enforce_eager",
    "chat_template_ms",
    "chunked_prefill_size",
    "max_running_requests",
    "mem_fraction_static",
    "schedule_conservativeness",
)


def _run_serve(args: argparse.Namespace) -> int:
    _check_context_and_batch(args)
    if any(getattr(args, name) is not None for name in SIMULATION_FLAGS):
        return _run_serve_simulation(args)
    if args.engine == "sglang":
        raise ValueError(
            "--engine sglang: give a workload flag (e.g. --max-concurrency) to simulate a benchmark against SGLang's "
            "scheduler; the closed form sizes llama.cpp and vLLM"
        )
    if args.context is None:
        raise ValueError(
            "--context is required (or give a workload flag, e.g. --max-concurrency, to simulate a benchmark)"
        )
    r = serving_estimate(
        model_architecture(args.model, args.params),
        args.gpu,
        args.context,
        batch=args.batch,
        weights_format=args.weights,
        kv=args.kv_type,
        price_per_hour=args.price,
        bandwidth_efficiency=args.efficiency,
        engine=args.engine,
        answer_tokens=args.answer,
        max_num_seqs=args.max_num_seqs,
        n_gpus=args.n_gpus,
        pipeline_parallel=args.pp,
        mxfp4_backend=args.mxfp4_backend,
        sampler=args.sampler,
        custom_all_reduce=not args.disable_custom_all_reduce,
    )
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    v = r["verdict"]
    print(f"{r['model']} on {r['where']}: {plural(r['batch'], 'chat')} of {plural(r['context_per_chat'], 'token')}")
    print(f"  memory ({v['engine_name']}): {v['headline']}; at most {v['max_sequences_text']}")
    if r["fits"]:
        print(
            f"  {r['seconds_per_token'] * 1000:.1f} ms per step at efficiency {r['efficiency']:.2f} "
            f"({'calibrated, ' + r['efficiency_regime'] if r['efficiency_calibrated'] else 'given'}; roofline "
            f"{r['roofline_seconds_per_token'] * 1000:.2f} ms, {r['bound']}-bound: bandwidth "
            f"{r['memory_seconds'] * 1000:.2f} ms, compute {r['compute_seconds'] * 1000:.2f} ms), "
            f"{r['tokens_per_second_per_chat']:.1f} tok/s per chat, {r['total_tokens_per_second']:.0f} tok/s total "
            f"(KV is {r['kv_share_of_reads']:.0%} of bytes read)"
        )
        if r["usd_per_million_tokens"] is not None:
            print(
                f"  ${r['usd_per_million_tokens']:.3f} per million generated tokens (prefill included) at "
                f"${r['price_per_hour']:.2f}/h ({r['price_kind']}), efficiency {r['efficiency']:.2f} "
                f"(roofline: ${r['usd_per_million_tokens_roofline']:.3f})"
            )
    else:
        print("  not timed or priced: the batch does not fit")
    print(f"  {r['bounds']['memory']}")
    print(f"  {r['bounds']['speed']}")
    for n in r["notes"]:
        print(f"  note: {n}")
    for a in r["assumptions"]:
        print(f"  assumes: {a}")
    return 0


def _run_serve_simulation(args: argparse.Namespace) -> int:
    """`serve` with workload flags: vllm bench serve, simulated; its result block, then kvlab's extras."""
    if args.pp != 1:
        raise ValueError("--pipeline-parallel-size: the benchmark simulation models one pipeline stage")
    # the workload and engine flags go to simulate() by their own names; the two below are passed apart
    given = {
        name: getattr(args, name)
        for name in SIMULATION_FLAGS
        if name not in ("enable_prefix_caching", "compute_efficiency") and getattr(args, name) is not None
    }
    if args.random_range_ratio is not None and args.dataset is None:
        given["dataset"] = "random"
    r = simulate(
        model_architecture(args.model, args.params),
        args.gpu,
        weights_format=args.weights,
        kv=args.kv_type,
        n_gpus=args.n_gpus,
        engine=args.engine,
        max_model_len=args.context,
        max_num_seqs=args.max_num_seqs,
        enable_prefix_caching=args.enable_prefix_caching,
        mxfp4_backend=args.mxfp4_backend,
        sampler=args.sampler,
        custom_all_reduce=not args.disable_custom_all_reduce,
        bandwidth_efficiency=args.efficiency,
        compute_efficiency=args.compute_efficiency if args.compute_efficiency is not None else args.efficiency,
        price_per_hour=args.price,
        **given,
    )
    if r["efficiency"]["calibrated"]:  # how far the fitted constants are from runs they were not fitted on
        r["accuracy"] = serving_accuracy()
        r["accuracy_of_kind"] = accuracy_of_kind(args.gpu, args.model, r["n_gpus"]) if args.gpu else None
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(_bench_block(r))
    e = r["engine_settings"]
    pool = r["kv_pool"]
    print(f"simulated by kvlab: {r['model']} on {r['gpu']}" + (f" x {r['n_gpus']}" if r["n_gpus"] > 1 else ""))
    launch = "python -m sglang.launch_server --model-path <model>" if r["engine"] == "sglang" else "vllm serve"
    print(f"  {launch} {r['flags'].strip()}")
    w = r["workload"]
    print(
        f"  vllm bench serve --dataset {w['dataset']} --num-prompts {w['num_prompts']} --input-len {w['input_len']} "
        f"--output-len {w['output_len']} --request-rate {w['request_rate_text']}"
        + (f" --max-concurrency {w['max_concurrency']}" if w["max_concurrency"] else "")
        + (f" --random-range-ratio {w['random_range_ratio']:g}" if w["random_range_ratio"] else "")
        + (f" --random-prefix-len {w['prefix_len']}" if w["prefix_len"] else "")
        + (f" --burstiness {w['burstiness']:g}" if w["burstiness"] not in (None, 1.0) else "")
        + f" --seed {w['seed']}"
        + (" (sent evenly spaced, as guidellm's constant profile)" if w.get("evenly_spaced") else "")
    )
    pool_text = (
        f"{pool['tokens']:,} tokens (SGLang's token pool)"
        if r["engine"] == "sglang"
        else f"{pool['blocks']:,} blocks of {e['block_size']} tokens ({pool['tokens']:,} tokens)"
    )
    cap = e.get("max_running_requests", e.get("max_num_seqs"))
    cap_name = "max_running_requests" if r["engine"] == "sglang" else "max_num_seqs"
    print(
        f"  KV pool: {pool_text}; at most {r['max_running']:,} running ({cap_name} {cap:,}); "
        f"{r['preemptions']:,} preemptions ({r['requests_preempted']:,} requests); {r['steps']:,} steps, "
        f"{r['compute_bound_share']:.0%} of the time compute-bound"
    )
    if pool["close_call"]:
        print(f"  {pool['close_call']}")
    lo_hi = r["efficiency"]["range"]
    print(
        "  efficiency: "
        + (
            f"bandwidth {r['efficiency']['bandwidth']:g}, compute {r['efficiency']['compute']:g} (given)"
            if not r["efficiency"]["calibrated"]
            else f"{lo_hi[0]:.2f}-{lo_hi[1]:.2f} ({r['efficiency']['how']})"
        )
        + (
            f"; compute at {r['efficiency']['compute_used']:.3g}: {path}"
            if (path := r["efficiency"]["compute_path"])
            else ""
        )
    )
    template_ms = r["efficiency"]["chat_template_ms"]
    print(
        f"  API server: {r['efficiency']['frontend_ms']:.3g} ms per request"
        + (f" + {template_ms:g} ms for the chat template's parse (--chat-template-ms)" if template_ms else "")
        + "; requests sent together are taken in together"
    )
    share = r["efficiency"].get("async_hidden_share")
    if share is not None and r["engine"] == "vllm":
        print(
            f"  --async-scheduling: the per-step CPU time and {share:.0%} of the per-request time hide under the "
            "GPU's (bench/serving_async_calibration.py)"
        )
    if r["usd_per_million_output_tokens"] is not None:
        print(
            f"  ${r['usd_per_million_output_tokens']:.3f} per million output tokens at ${r['price_per_hour']:.2f}/h "
            f"({r['price_kind']})"
        )
    print("  not modelled: " + "; ".join(r["engine_rules"]["not_modelled"]))
    if "accuracy" in r:
        print(f"  accuracy: {r['accuracy']['sentence']} (bench/serving_validation.py)")
        kind = r["accuracy_of_kind"]
        print(f"  this kind of run: {kind['sentence'] if kind else NO_KIND_SENTENCE}")
    return 0


def _bench_block(r: dict) -> str:
    """The result in the layout vllm bench serve prints (vllm/benchmarks/serve.py)."""
    lines = ["{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="=")]

    def row(label: str, value, fmt: str = ".2f") -> None:
        text = "n/a" if value is None else format(value, fmt)
        lines.append(f"{label:<40} {text:<10}")

    row("Successful requests:", r["completed"], "d")
    if r["workload"]["max_concurrency"]:
        row("Maximum request concurrency:", r["workload"]["max_concurrency"], "d")
    row("Benchmark duration (s):", r["duration_s"])
    row("Total input tokens:", r["total_input_tokens"], "d")
    row("Total generated tokens:", r["total_output_tokens"], "d")
    row("Request throughput (req/s):", r["request_throughput"])
    row("Output token throughput (tok/s):", r["output_tok_s"])
    row("Total Token throughput (tok/s):", r["total_tok_s"])
    for title, key, short in (
        ("Time to First Token", "ttft_ms", "TTFT"),
        ("Time per Output Token (excl. 1st token)", "tpot_ms", "TPOT"),
        ("Inter-token Latency", "itl_ms", "ITL"),
    ):
        lines.append("{s:{c}^{n}}".format(s=title, n=50, c="-"))
        row(f"Mean {short} (ms):", r[key]["mean"])
        row(f"Median {short} (ms):", r[key]["median"])
        row(f"P99 {short} (ms):", r[key]["p99"])
    lines.append("=" * 50)
    return "\n".join(lines)


def _run_explain_log(args: argparse.Namespace) -> int:
    text = read_text(args.log, MAX_LOG_BYTES, "log", lenient=True)
    stated = {
        k: getattr(args, k)
        for k in (
            "n_ctx",
            "n_seq",
            "type_k",
            "type_v",
            "n_ubatch",
            "mla_cache",
            "max_model_len",
            "kv_cache_dtype",
            "block_size",
            "max_num_batched_tokens",
            "gpu_memory_gib",
            "swa_full",
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "num_speculative_tokens",
            "speculative_method",
            "speculative_model",
            "enable_prefix_caching",
        )
    }
    r = explain_engine_log(text, args.model, engine=args.engine, **stated)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"{r['model'] or 'model not given'}, {r['engine'] or 'no engine recognised'}: {r['summary']}")
    for s in r["settings"]:
        print(f"  setting: {s['name']} = {s['value']}  ({s['from']})")
    for c in r["checks"]:
        where = f"line {c['line']}" if c["line"] else "not in the log"
        print(f"  [{c['status']}] {c['figure']} ({where})")
        if c["logged"]:
            print(f"      logged:  {c['logged']}")
        if c["rebuilt"]:
            print(f"      rebuilt: {c['rebuilt']}")
        for t in c["terms"]:
            mark = "=" if t["ok"] else "!="
            print(f"      {t['term']:>12s}: {t['logged'] or '-'} {mark} {t['rebuilt']}   [{t['how']}]")
        if c["why"]:
            print(f"      why: {c['why']}")
    for note in r["notes"]:
        print(f"  note: {note}")
    return 0


def _run_models(args: argparse.Namespace) -> int:
    rows = list_models()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for m in rows:
        kinds = ", ".join(f"{n} {k}" for k, n in m["layers_by_kind"].items() if n)
        flag = "" if m["confirmed"] else "  (some fields unconfirmed)"
        print(f"{m['id']:20s} {m['attention']:4s} {kinds:24s} {m['params'] / 1e9:7.2f}B  {m['hf_id']}{flag}")
    return 0


def _run_checkpoint(args: argparse.Namespace) -> int:
    if is_hub_id(args.source):
        r = read_hub_checkpoint(args.source, args.revision)
    else:
        r = read_checkpoint_dir(args.source)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"{args.source}: {_size(r['bytes'])} ({r['bytes']:,} bytes) as stored, from the {r['source']}")
    for part, v in r["parts"].items():
        if not v["tensors"]:
            continue
        size = _size(v["bytes"]) if v.get("bytes") is not None else "size not in the index"
        print(f"  {part:12s} {size:>22s}   {v['tensors']:,} tensors")
    for dtype, n in r["dtypes"].items():
        print(f"  {dtype:12s} {_size(n):>22s}")
    for note in r["notes"]:
        print(f"  note: {note}")
    return 0


def _run_gpus(args: argparse.Namespace) -> int:
    rows = list_gpus()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for g in rows:
        price = (
            f"${g['price_per_hour_usd']:.2f}/h ({g['price_date']})"
            if g["price_per_hour_usd"] is not None
            else "no price"
        )
        print(f"{g['id']:14s} {g['memory_gib']:5g} GiB {g['bandwidth_gb_s']:6g} GB/s  {price:22s} {g['name']}")
    return 0


# ---------------------------------------------------------------------------- the cache figures as tables (race, wall, steps, evict, context, prefix)


def _add_cache_commands(sub: argparse._SubParsersAction) -> None:
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

    p = sub.add_parser(
        "steps", help="prefill then decode, step by step: cache length before/after, cells computed vs read"
    )
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
    d = race(args.n)
    rows = [
        [t, d["no_cache"]["per_step"][i], d["no_cache"]["cumulative"][i], d["cache"]["cumulative"][i], d["ratio"][i]]
        for i, t in enumerate(d["tokens"])
    ][-40:]
    t = d["totals"]
    text = _table(["token", "no-cache step", "no-cache total", "cache total", "ratio"], rows)
    text += f"\n\n{d['params']['n']} tokens: {t['no_cache']:,} vs {t['cache']:,} token-computations ({t['ratio']:.4g}x)"
    return _emit(args, d, text)


def _wall(args: argparse.Namespace) -> int:
    d = quadratic_wall(args.n, args.layers, args.d_model, args.heads, args.kv_heads, args.d_ff)
    n = len(d["tokens"])
    every = args.every if args.every > 0 else max(1, n // 16)
    idx = sorted(set(list(range(0, n, every)) + [n - 1]))
    nc, c = d["no_cache"], d["cache"]
    rows = [
        [
            d["tokens"][i],
            nc["weight_macs"][i],
            nc["attention_macs"][i],
            c["weight_macs"][i],
            c["attention_macs"][i],
            d["ratio_cumulative"][i],
        ]
        for i in idx
    ]
    text = _table(
        ["token", "no-cache weights", "no-cache attn", "cache weights", "cache attn", "cumulative ratio"], rows
    )
    return _emit(args, d, text)


def _steps(args: argparse.Namespace) -> int:
    d = step_through(args.prompt_len, args.steps, args.layers, args.seed)
    rows = []
    for s in d["steps"]:
        lay = s["layers"][0]
        rows.append(
            [
                s["step"],
                s["phase"],
                s["cache_len_before"],
                s["cache_len_after"],
                _span(lay["read"]),
                _span(lay["computed"]),
                len(s["without_cache_recomputed"]),
                s["bytes_read"],
                s["bytes_written"],
            ]
        )
    text = _table(
        [
            "step",
            "phase",
            "cache before",
            "cache after",
            "read",
            "computed",
            "no-cache recomputes",
            "bytes read",
            "bytes written",
        ],
        rows,
    )
    text += f"\n\n(read/computed are positions, the same in each of the {d['params']['layers']} layers)"
    return _emit(args, d, text)


def _span(positions: list[int]) -> str:
    if not positions:
        return "-"
    return str(positions[0]) if len(positions) == 1 else f"{positions[0]}..{positions[-1]}"


def _evict(args: argparse.Namespace) -> int:
    d = eviction_timeline(args.policy, args.n, args.window, args.sinks, args.budget, args.recent, args.seed)
    rows = [
        [
            s["step"],
            s["cache_len_after"],
            ",".join(map(str, s["evicted"])) or "-",
            s["attention_kept"],
            _runs(s["cached"]),
        ]
        for s in d["steps"]
    ]
    text = _table(["step", "cached", "evicted", "attn kept", "positions cached after the step"], rows)
    text += f"\n\npolicy {d['policy']}; mean attention kept {d['mean_attention_kept']:.3f}"
    return _emit(args, d, text)


def _runs(positions: list[int]) -> str:
    return " ".join(f"{a}" if b == a + 1 else f"{a}-{b - 1}" for a, b in spans(positions))


def _context(args: argparse.Namespace) -> int:
    d = context_shift_timeline(args.prompt_len, args.n_generate, args.n_ctx, args.n_keep, args.mode)
    rows = [
        [
            s["step"],
            s["phase"],
            "-" if s["token"] is None else s["token"],
            s["n_past_before"],
            s["n_past_after"],
            s["n_discarded"] or "-",
            " ".join(f"{a}-{b - 1}" for a, b in s["visible"]),
        ]
        for s in d["steps"]
    ]
    text = _table(
        ["step", "phase", "token", "n_past before", "n_past after", "discarded", "text tokens the model sees"], rows
    )
    end = (
        f"stopped at step {d['stopped_at']} (context full)"
        if d["stopped_at"]
        else f"{len(d['shifts'])} shift(s), {d['total_discarded']} tokens discarded"
    )
    text += f"\n\nn_ctx {d['n_ctx']}, n_keep {d['n_keep']}, mode {d['mode']}: {end}"
    return _emit(args, d, text)


def _prefix(args: argparse.Namespace) -> int:
    d = prefix_cache_demo(
        args.requests, args.prefix_len, args.suffix_len, args.block_size, args.capacity, args.flops_per_token
    )
    tg, bl = d["token_granular"], d["blocks"]
    rows = [
        ["token-granular (radix)", tg["tokens_reused"], tg["tokens_computed"], tg["flops_saved"], tg["hit_rate"]],
        [
            f"blocks of {bl['block_size']}",
            bl["tokens_reused"],
            bl["tokens_computed"],
            bl["flops_saved"],
            bl["hit_rate"],
        ],
    ]
    text = _table(["cache", "tokens reused", "tokens computed", "FLOPs saved", "hit rate"], rows)
    text += "\n\nblock granularity:\n" + _table(
        ["block size", "tokens reused", "per request", "prefix tokens in a partial block"],
        [
            [g["block_size"], g["tokens_reused"], g["tokens_reused_per_request"], g["partial_block_tokens"]]
            for g in d["granularity"]
        ],
    )
    return _emit(args, d, text)
