"""Disaggregated prefill and decode: the KV cache a prefill worker hands to a decode worker.

In a disaggregated deployment (vLLM's disaggregated prefilling, SGLang's P/D mode,
NVIDIA Dynamo, llm-d) one GPU prefills the prompt and another decodes the answer,
so the prompt's whole KV cache travels between them:

    bytes per request = the cache of a prompt of P tokens (kvlab.memory.kv_bytes)
    transfer time     = bytes / the link's one-way line rate (an upper bound on speed)

Colocated (one GPU does both, vLLM's chunked prefill), a new prompt is cut into
chunks that ride along the running requests' decode steps: each of those steps also
does a chunk's share of the prefill, so every running request's next token waits
for it. Disaggregated, the decode GPU only decodes; the new request waits for the
transfer instead. The simple model here, in numbers:

    n chunks        = ceil(P / chunk), chunk = vLLM's token budget per step - the decode batch
    colocated       TTFT = n x (decode step + prefill / n);  a step during a prefill: decode step + prefill / n
    disaggregated   TTFT = prefill + transfer + decode step;  every step: the decode step

Prefill is timed at the compute roofline and the decode step with the serving page's
calibrated efficiency (kvlab.memory.serving). Same work, moved: vLLM's docs say that
disaggregated prefill does not improve throughput (interconnects.json).

>>> link = get_link("roce-200")
>>> link["gb_per_s"]
25
>>> round(transfer_seconds(1e9, link), 3)
0.04
"""

from __future__ import annotations

import json
import math
from functools import cache

from kvlab.memory.architecture import Architecture
from kvlab.memory.catalogue import DATA_DIR
from kvlab.memory.engines import vllm_batch_defaults
from kvlab.memory.kv_bytes import kv_cache_bytes
from kvlab.memory.serving import prefill_flops, serving_estimate
from kvlab.memory.weights import model_weights_bytes
from kvlab.inputs import short_repr

INTERCONNECTS_FILE = DATA_DIR / "interconnects.json"


@cache
def interconnects() -> dict:
    """kvlab/data/interconnects.json: links, disaggregation facts and routers, each with its source."""
    return json.loads(INTERCONNECTS_FILE.read_text(encoding="utf-8"))


def links() -> list[dict]:
    """Every link (copies, safe to modify), fastest first as the file lists them."""
    return [dict(link) for link in interconnects()["links"]]


def get_link(link_id: str) -> dict:
    """A link by id, or a ValueError naming the field and the ids there are."""
    for link in interconnects()["links"]:
        if link["id"] == str(link_id).strip().lower():
            return dict(link)
    raise ValueError(
        f"link must be one of {', '.join(x['id'] for x in interconnects()['links'])}, got {short_repr(link_id)}"
    )


def transfer_seconds(n_bytes: float, link: dict) -> float:
    """Seconds to move `n_bytes` over `link` at its one-way line rate."""
    return n_bytes / (link["gb_per_s"] * 1e9)


def kv_bytes_per_request(arch: Architecture, prompt_tokens: int, kv: str = "f16") -> int:
    """The KV cache a prefill worker hands over for one prompt: every layer's K and V for the prompt's tokens
    (sliding layers their window, linear layers their state in bf16, as vLLM keeps it)."""
    return kv_cache_bytes(arch, prompt_tokens, kv, state_type="bf16")["total_bytes"]


def prefill_seconds(arch: Architecture, card: dict, prompt_tokens: int, weights_format: str = "BF16") -> float:
    """One prompt's prefill at the roofline: the longer of its FLOPs / peak compute and one read of the weights
    / bandwidth (what kvlab.memory.serving.serving_estimate reports as prefill_seconds_per_chat)."""
    flops = prefill_flops(arch, prompt_tokens)
    weights = model_weights_bytes(arch, weights_format)["bytes"]
    peak = card.get("bf16_dense_tflops")
    return max(flops / (peak * 1e12) if peak else 0.0, weights / (card["bandwidth_gb_s"] * 1e9))


def chunk_tokens(card: dict, batch: int, max_num_batched_tokens: int | None = None) -> dict:
    """Prompt tokens one colocated step can prefill: vLLM's token budget per step (its default for the card
    unless given) less one token for each running request's decode."""
    if max_num_batched_tokens is None:
        d = vllm_batch_defaults(card)
        budget, how = d["max_num_batched_tokens"], f"vLLM's default for this GPU ({d['source']})"
    else:
        budget, how = max_num_batched_tokens, "--max-num-batched-tokens given"
    return {"budget": budget, "chunk": max(1, budget - batch), "how": how}


def pd_compare(
    arch: Architecture,
    card: dict,
    link: dict,
    prompt_tokens: int,
    batch: int,
    output_tokens: int,
    max_num_batched_tokens: int | None = None,
    kv: str = "f16",
) -> dict:
    """KV bytes, transfer time, and colocated vs disaggregated TTFT and decode steps for one new request
    arriving while `batch` requests decode on the GPU. Times are None when the batch does not fit."""
    n_bytes = kv_bytes_per_request(arch, prompt_tokens, kv)
    transfer = transfer_seconds(n_bytes, link)
    est = serving_estimate(
        arch, card["id"], prompt_tokens + output_tokens, batch, kv=kv, answer_tokens=output_tokens, solve=False
    )
    chunk = chunk_tokens(card, batch, max_num_batched_tokens)
    n_chunks = math.ceil(prompt_tokens / chunk["chunk"])
    out = {
        "kv_bytes": n_bytes,
        "transfer_seconds": transfer,
        "fits": est["fits"],
        "verdict": est["verdict"]["headline"],
        "chunk": chunk,
        "n_chunks": n_chunks,
        "prefill_seconds": None,
        "step_seconds": None,
        "colocated": None,
        "disaggregated": None,
        "transfer_share": None,
    }
    if not est["fits"]:
        return out
    pre = est["prefill_seconds_per_chat"]
    step = est["seconds_per_token"]
    stall = pre / n_chunks
    out.update(
        prefill_seconds=pre,
        step_seconds=step,
        efficiency=est["efficiency"],
        transfer_share=transfer / pre,
        colocated={
            "ttft": n_chunks * (step + stall),
            "step_during_prefill": step + stall,
            "step_otherwise": step,
            "delay_per_running_request": n_chunks * stall,
        },
        disaggregated={
            "ttft": pre + transfer + step,
            "step_during_prefill": step,
            "step_otherwise": step,
            "delay_per_running_request": 0.0,
        },
    )
    return out
