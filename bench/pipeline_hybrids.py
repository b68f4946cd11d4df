#!/usr/bin/env python3
"""What a pipeline stage of a hybrid model pays for its KV cache in vLLM: the whole model's layer groups
projected onto the stage (what vLLM does, and kvlab since 2026-12-04) against grouping the stage's own
layers (kvlab before).

    .venv/bin/python bench/pipeline_hybrids.py     # the table (results/*-pipeline-hybrids.md)

For every hybrid in the catalogue and 2, 4 and 8 stages (bf16 KV, 32k tokens, vLLM's defaults), the stage
whose per-request bytes differ most: its layers, both layouts (groups x pages per block, blocks per request)
and the bytes one request takes on that stage. Ratio = own-layers / projected: below 1 the old way was
optimistic (it said more requests fit than vLLM allocates room for).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))

from kvlab.memory import catalogue  # noqa: E402
from kvlab.memory.kv_bytes import ssm_state_bytes, vllm_kv_cache, vllm_kv_layout  # noqa: E402

CONTEXT = 32768


def rows():
    for entry in catalogue.models():
        arch = catalogue.model_architecture(entry["id"])
        if not vllm_kv_cache(arch, CONTEXT)["layout"]["hybrid"]:
            continue
        for pp in (2, 4, 8):
            worst = None
            for stage in vllm_kv_cache(arch, CONTEXT, pp=pp)["stages"]:
                a, b = stage["layers"]
                proj = stage["layout"]
                part = replace(arch, layers=arch.layers[a:b])
                own = vllm_kv_layout(part, CONTEXT, "bf16", 2, ssm_state_bytes(arch))  # as vllm_kv_cache sizes it
                ratio = own["bytes_per_request"] / proj["bytes_per_request"]
                if worst is None or abs(ratio - 1) > abs(worst[-1] - 1):
                    worst = (entry["id"], pp, f"{a}-{b - 1}", own, proj, ratio)
            yield worst


def layout_text(layout: dict) -> str:
    return f"{layout['n_groups']} x {layout['group_size']}, {layout['blocks_per_request']:,} blocks"


def main() -> None:
    print("| model | stages | layers | own layers grouped | projected (vLLM) | MiB per request (own / vLLM) | ratio |")
    print("|---|---|---|---|---|---|---|")
    for model, pp, layers, own, proj, ratio in rows():
        mib = f"{own['bytes_per_request'] / 2**20:,.1f} / {proj['bytes_per_request'] / 2**20:,.1f}"
        print(f"| {model} | {pp} | {layers} | {layout_text(own)} | {layout_text(proj)} | {mib} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
