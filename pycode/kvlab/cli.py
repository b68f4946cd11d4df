"""`python -m kvlab memory | fit | serve | models | gpus`: the memory and serving calculators.

    python -m kvlab memory --model llama-3.1-8b --context 131072 --kv-type q8_0
    python -m kvlab memory --model path/to/config.json --context 32768 --mode vllm --json
    python -m kvlab fit --model qwen3.6-27b --gpu rtx-4090 --weights Q4_K_M --context 65536
    python -m kvlab serve --model llama-3.1-8b --gpu h100-sxm --context 8192 --batch 32
"""
from __future__ import annotations

import argparse
import json

from kvlab.catalogue import list_gpus, list_models, model_architecture
from kvlab.memory import GIB, KV_TYPES, MIB, MODES, fit_report, memory_report
from kvlab.serving import serving_estimate
from kvlab.verdict import ENGINES, TENSOR_PARALLEL, long_context_check
from kvlab.weights import WEIGHT_FORMATS
from kvlab.wording import plural


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help="exact KV cache size of a model (catalogue id or config.json)")
    _model_args(p)
    p.add_argument("--kv-type", default="f16", choices=sorted(KV_TYPES), help="K cache type (default f16)")
    p.add_argument("--v-type", default=None, choices=sorted(KV_TYPES), help="V cache type (default: same as K)")
    p.add_argument("--mode", default="llamacpp", choices=MODES,
                   help="llamacpp: what llama.cpp allocates; vllm: PagedAttention pages; exact: no padding")
    p.add_argument("--batch", type=int, default=1, help="sequences (llama.cpp --parallel, vLLM concurrent requests)")
    p.add_argument("--ubatch", type=int, default=512, help="llama.cpp --ubatch-size (sizes the SWA cache)")
    p.add_argument("--no-unified", action="store_true", help="llama.cpp without --kv-unified (one stream per sequence)")
    p.set_defaults(func=_run_memory)

    p = sub.add_parser("fit", help="weights + KV cache + compute buffer against a GPU or a RAM size")
    _model_args(p)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--gpu", help="catalogue GPU id (see `python -m kvlab gpus`)")
    where.add_argument("--memory-gib", type=float, help="memory available, in GiB")
    p.add_argument("--weights", default="Q4_K_M", help=f"weights format ({', '.join(WEIGHT_FORMATS)})")
    p.add_argument("--kv-type", default="f16", choices=sorted(KV_TYPES))
    p.add_argument("--mode", "--engine", dest="mode", default="llamacpp", choices=ENGINES,
                   help="llamacpp (-c context x batch, -np batch) or vllm (--max-model-len context)")
    p.add_argument("--batch", type=int, default=1, help="sequences of --context tokens each, held at once")
    p.add_argument("--n-gpus", type=int, default=1, choices=TENSOR_PARALLEL,
                   help="GPUs (llama.cpp: layer split; vLLM: tensor parallel)")
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9, help="vLLM mode only")
    p.add_argument("--allow-long-context", action="store_true",
                   help="accept a context beyond the model's trained length (llama.cpp runs it; vLLM needs "
                        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)")
    p.set_defaults(func=_run_fit)

    p = sub.add_parser("serve", help="decode speed (bandwidth roofline), chats per GPU and $ per million tokens")
    _model_args(p)
    p.add_argument("--gpu", required=True, help="catalogue GPU id")
    p.add_argument("--batch", type=int, default=1, help="chats decoded together")
    p.add_argument("--weights", default="BF16", help="weights format")
    p.add_argument("--kv-type", default="f16", choices=sorted(KV_TYPES))
    p.add_argument("--engine", default="vllm", choices=ENGINES, help="whose memory accounting decides the fit")
    p.add_argument("--answer", type=int, default=512, help="tokens of answer per chat (the rest is prompt)")
    p.add_argument("--price", type=float, default=None, help="$/hour (default: the catalogue price)")
    p.add_argument("--efficiency", type=float, default=1.0, help="fraction of peak bandwidth reached (default 1.0)")
    p.set_defaults(func=_run_serve)

    p = sub.add_parser("models", help="the model catalogue")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_models)
    p = sub.add_parser("gpus", help="the GPU catalogue")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_gpus)


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="catalogue id, Hugging Face id in the catalogue, or config.json path")
    p.add_argument("--context", type=int, required=True, help="tokens of context (llama.cpp --ctx-size / vLLM max_model_len)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--params", type=float, default=None,
                   help="parameter count, for a config.json outside the catalogue (e.g. 8.03e9)")


def _size(nbytes: float) -> str:
    return f"{nbytes / GIB:,.2f} GiB" if abs(nbytes) >= GIB else f"{nbytes / MIB:,.2f} MiB"


def _run_memory(args: argparse.Namespace) -> int:
    arch = model_architecture(args.model, args.params)
    r = memory_report(arch, args.context, kv=args.kv_type, mode=args.mode, n_seq=args.batch,
                      v_kv=args.v_type, n_ubatch=args.ubatch, kv_unified=not args.no_unified)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    a = r["architecture"]
    print(f"{r['model']}  ({a['attention']}, layers {a['layers_by_kind']}, kv_heads {a['kv_heads']}, head_dim {a['head_dim']})")
    per = r["per_token"]
    print(f"per token: {r['bytes_per_token']:,} B = {r['kib_per_token']:,.2f} KiB   [{r['formula']}]")
    bounded = r["by_layer_kind_bytes"]["sliding"] + r["by_layer_kind_bytes"]["linear"]
    if bounded:
        grow = per["bytes_per_token_beyond_windows"]
        print(f"  of which grows with every token: {grow:,} B = {grow / 1024:,.2f} KiB; "
              f"stops growing (windows, recurrent state): {_size(bounded)}")
    for kind, nbytes in r["by_layer_kind_bytes"].items():
        if nbytes:
            print(f"  {kind:8s} layers: {_size(nbytes)}")
    print(f"total ({r['mode']}, {plural(r['context'], 'token')} x {plural(r['n_seq'], 'sequence')}): "
          f"{_size(r['total_bytes'])} ({r['total_bytes']:,} B)")
    for line in r["detail"].get("log_lines", []):
        print(f"  {line}")
    for note in list(a["notes"]) + r["detail"].get("notes", []) + r["detail"].get("assumptions", []):
        print(f"  note: {note}")
    check = long_context_check(arch, args.context)
    if check:
        print(f"  WARNING: {check['text']}: {check['llamacpp']}; {check['vllm']}")
    return 0


def _run_fit(args: argparse.Namespace) -> int:
    r = fit_report(model_architecture(args.model, args.params), args.context, gpu=args.gpu,
                   memory_gib=args.memory_gib, weights=args.weights, kv=args.kv_type, mode=args.mode,
                   n_seq=args.batch, gpu_memory_utilization=args.gpu_memory_utilization, n_gpus=args.n_gpus,
                   allow_long_context=args.allow_long_context)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"{r['model']} on {r['where']}, {plural(r['n_seq'], 'sequence')} of {plural(r['context'], 'token')}, "
          f"{r['weights_format']} weights, {r['kv_type']} KV ({r['engine_name']}: {r['flags']})")
    per = " per GPU" if r["n_gpus"] > 1 else ""
    for c in r["components"]:
        print(f"  {c['name']:18s} {_size(c['bytes']):>12s}   {c['how']}")
    print(f"  {'total' + per:18s} {_size(r['total_bytes']):>12s}   of {_size(r['budget_bytes'])} ({r['budget_how']})")
    print(f"  {r['headline'].upper()[:1] + r['headline'][1:]}")
    if r["long_context"] and r["binding"] != "trained_context":
        print(f"  note: {r['long_context']['text']}")
    print(f"  largest context at {plural(r['n_seq'], 'sequence')}: {r['max_context_text']}")
    print(f"  most sequences at {plural(r['context'], 'token')}: {r['max_sequences_text']}")
    return 0


def _run_serve(args: argparse.Namespace) -> int:
    r = serving_estimate(model_architecture(args.model, args.params), args.gpu, args.context, batch=args.batch,
                         weights_format=args.weights, kv=args.kv_type, price_per_hour=args.price,
                         bandwidth_efficiency=args.efficiency, engine=args.engine, answer_tokens=args.answer)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    v = r["verdict"]
    print(f"{r['model']} on {r['gpu']}: {plural(r['batch'], 'chat')} of {plural(r['context_per_chat'], 'token')}")
    print(f"  memory ({v['engine_name']}): {v['headline']}; at most {v['max_sequences_text']}")
    if r["fits"]:
        print(f"  {r['seconds_per_token'] * 1000:.1f} ms per step ({r['bound']}-bound: bandwidth "
              f"{r['memory_seconds'] * 1000:.2f} ms, compute {r['compute_seconds'] * 1000:.2f} ms), "
              f"{r['tokens_per_second_per_chat']:.1f} tok/s per chat, {r['total_tokens_per_second']:.0f} tok/s total "
              f"(KV is {r['kv_share_of_reads']:.0%} of bytes read)")
        if r["usd_per_million_tokens"] is not None:
            print(f"  ${r['usd_per_million_tokens']:.3f} per million generated tokens (prefill included) at "
                  f"${r['price_per_hour']:.2f}/h ({r['price_kind']})")
    else:
        print("  not timed or priced: the batch does not fit")
    for a in r["assumptions"]:
        print(f"  assumes: {a}")
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


def _run_gpus(args: argparse.Namespace) -> int:
    rows = list_gpus()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for g in rows:
        price = f"${g['price_per_hour_usd']:.2f}/h ({g['price_date']})" if g["price_per_hour_usd"] is not None else "no price"
        print(f"{g['id']:14s} {g['memory_gib']:5g} GiB {g['bandwidth_gb_s']:6g} GB/s  {price:22s} {g['name']}")
    return 0
