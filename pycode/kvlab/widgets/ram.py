"""The RAM calculator at the top of the memory page (the brief's "RAM Calculator — Qwen3.6-27B"):
one model under llama-server, its `--ctx-size`, the weights' and the cache's formats, and where it
fits: CPU RAM of common sizes, and every catalogue GPU with at least 8 GiB.

Every figure is the gpu-fit widget's (kvlab.memory.verdict.verdict of a llama.cpp deployment), so the two
widgets on the page agree; this one asks fewer questions and answers for many machines at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlab.inputs import Param, Spec, takes
from kvlab.memory.catalogue import gpu_memory_bytes, list_gpus
from kvlab.memory.deployment import Deployment, deployment
from kvlab.memory.llamacpp import device_weights
from kvlab.memory.verdict import verdict
from kvlab.memory.weights import weight_format
from kvlab.widgets.pickers import check_kv_mode, model_groups, model_info
from kvlab.widgets.views import with_view
from kvlab.wording import human_bytes, plural

if TYPE_CHECKING:
    from kvlab.widgets.ram_types import RamCalcView, RamCalculatorResult, RamMachineView

INPUTS = Spec(ctx_size=Param(256, 262_144))
RAM_SIZES_GIB = (8, 16, 32, 64, 128)  # CPU RAM sizes of laptops and desktops people run llama.cpp on
SMALLEST_GPU_GIB = 8
VRAM_SIZES_GIB = (8, 12, 16)  # consumer cards below the catalogue's smallest (24 GiB), by memory alone
WEIGHTS = ("Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "BF16")  # the GGUF files people download most
KV_TYPES = ("f16", "q8_0", "q4_0")  # llama-server's -ctk / -ctv
CTX_STEPS = [2**k for k in range(8, 19)]  # 256 ... 262,144: the slider's stops
GIB = 2**30


def _row(where: str, kind: str, memory: int, v: dict | None, needed: int) -> dict:
    """One machine: its memory, what it needs there, and the longest context (a GPU's)."""
    return {
        "where": where,
        "kind": kind,
        "memory_bytes": memory,
        "spare_bytes": memory - needed,
        "fits": memory >= needed,
        "max_context_text": v["max_context_text"] if v else "",  # kvlab.memory.verdict's sentence
    }


# ---------------------------------------------------------------------------- the view: the words the widget shows


def _machine_view(m: dict) -> RamMachineView:
    spare = m["spare_bytes"]
    return {
        "where": m["where"],
        "memory": human_bytes(m["memory_bytes"]),
        "fits": m["fits"],
        "verdict": "fits" if m["fits"] else "does not fit",
        "margin": f"{human_bytes(spare)} to spare" if m["fits"] else f"{human_bytes(-spare)} short",
        "max_context": m["max_context_text"],
    }


def ram_calc_view(data: dict) -> RamCalcView:
    """The RAM calculator's words: the headline, the smallest machine that fits, each machine's verdict
    and margin, each part's size, and the status line."""
    p, info = data["params"], data["model_info"]
    smallest_ram = next((r["where"] for r in data["ram"] if r["fits"]), None)
    smallest_gpu = next((g["where"] for g in data["gpus"] if g["fits"]), None)
    on_cpu, on_gpu = human_bytes(data["needed_cpu_bytes"]), human_bytes(data["needed_gpu_bytes"])
    return {
        "status": f"Computed in your browser by kvlab.ram_calc_figure ({info['hf_id']}, --ctx-size {p['ctx_size']}).",
        "headline": (
            f"{info['hf_id']} ({p['weights']}) with {plural(p['ctx_size'], 'token')} of context needs "
            f"{on_cpu} of RAM, {human_bytes(data['kv_bytes'])} of it the KV cache"
        ),
        "smallest": (
            f"Smallest that fits: {smallest_ram or 'none of these RAM sizes'}; on a GPU, "
            f"{smallest_gpu or 'none of these'} ({on_gpu} with the CUDA reserve"
            + (
                f"; llama.cpp keeps the token embeddings, {human_bytes(data['embedding_in_ram_bytes'])}, in RAM"
                if data["embedding_in_ram_bytes"]
                else ""
            )
            + ")."
        ),
        "ctx_text": f"--ctx-size {p['ctx_size']} = {plural(p['ctx_size'], 'token')} of context the model can remember",
        "needed_cpu": on_cpu,
        "needed_gpu": on_gpu,
        "ram": [_machine_view(m) for m in data["ram"]],
        "gpus": [_machine_view(m) for m in data["gpus"]],
        "parts": [{"label": c["label"], "human": human_bytes(c["bytes"]), "how": c["how"]} for c in data["parts"]],
        "note": "In RAM the operating system and other programs need their share on top of this.",
    }


@takes(INPUTS)
@with_view(ram_calc_view)
def ram_calc_figure(
    model: str = "qwen3.6-27b", ctx_size: int = 8192, weights: str = "Q4_K_M", kv: str = "f16"
) -> RamCalculatorResult:
    """What `llama-server --ctx-size ctx_size` needs for `model`, and where it fits.

    On a GPU the need is what the gpu-fit widget counts (weights, KV cache, compute buffer and the
    CUDA reserve); in CPU RAM it is the same less the CUDA reserve, and the operating system needs
    its own share on top (not counted: it depends on the machine).

    >>> r = ram_calc_figure(ctx_size=8192)
    >>> r["command"].splitlines()[2].strip()
    '--ctx-size 8192 \\\\'
    >>> [row["where"] for row in r["ram"]][:2]
    ['8 GiB of RAM', '16 GiB of RAM']
    """
    clamped: dict = {}
    ctx_size = INPUTS.check({"ctx_size": ctx_size}, clamped)["ctx_size"]
    weights = weight_format(weights)
    if weights not in WEIGHTS:
        raise ValueError(f"weights: one of {', '.join(WEIGHTS)}")
    kv = check_kv_mode(kv, "llamacpp")
    if kv not in KV_TYPES:
        raise ValueError(f"kv: one of {', '.join(KV_TYPES)}")
    info = model_info(model)

    def llama_server(**where) -> Deployment:
        """llama-server with these formats on one machine: a catalogue card (gpu=) or a memory size (memory_gib=)."""
        return deployment(info["id"], weights=weights, kv=kv, engine="llamacpp", **where)

    base_dep = llama_server(memory_gib=1024)
    base = verdict(base_dep, ctx_size, solve=False)
    parts = {c["name"]: c for c in base["components"]}
    on_gpu = sum(c["bytes"] for c in base["components"])
    # on the CPU alone every byte of the file is in RAM, token_embd too (on a GPU llama.cpp keeps that one in RAM:
    # kvlab.memory.llamacpp.device_weights)
    embd_in_ram = device_weights(base_dep.arch, base_dep.weights)["cpu_bytes"]
    on_cpu = on_gpu - parts.get("runtime_reserve", {"bytes": 0})["bytes"] + embd_in_ram

    ram = []
    for gib in RAM_SIZES_GIB:
        ram.append(_row(f"{gib} GiB of RAM", "cpu", gib * GIB, None, on_cpu))
    gpus = []
    # the catalogue's cards start at 24 GiB: a GPU of each common smaller size, by its memory alone
    for gib in VRAM_SIZES_GIB:
        v = verdict(llama_server(memory_gib=gib), ctx_size)
        gpus.append(_row(f"a GPU with {gib} GiB", "gpu", gib * GIB, v, v["total_bytes"]))
    for card in sorted(list_gpus(), key=lambda g: (gpu_memory_bytes(g), g["name"])):
        memory = gpu_memory_bytes(card)
        if memory < SMALLEST_GPU_GIB * GIB or card.get("unified_memory"):
            continue
        v = verdict(llama_server(gpu=card["id"]), ctx_size)
        gpus.append(_row(card["name"], "gpu", memory, v, v["total_bytes"]))

    file = f"{info['hf_id'].split('/')[-1]}-{weights}.gguf"
    return {
        "params": {"model": info["id"], "ctx_size": ctx_size, "weights": weights, "kv": kv},
        "clamped": clamped,
        "model_info": info,
        "command": f"llama-server --model {file} \\\n  -ctk {kv} -ctv {kv} \\\n  --ctx-size {ctx_size} \\\n  --port 8080",
        "parts": [
            # the weights as the file holds them, all in RAM on the CPU (on a GPU, token_embd of them stays in RAM)
            {"name": c["name"], "label": c["label"], "bytes": base_dep.weights["bytes"], "how": base_dep.weights["how"]}
            if c["name"] == "weights"
            else {"name": c["name"], "label": c["label"], "bytes": c["bytes"], "how": c["how"]}
            for c in base["components"]
            if c["name"] != "runtime_reserve"
        ],
        "kv_bytes": parts["kv_cache"]["bytes"],
        "needed_cpu_bytes": on_cpu,
        "needed_gpu_bytes": on_gpu,
        "embedding_in_ram_bytes": embd_in_ram,
        "ram": ram,
        "gpus": gpus,
        "options": {
            "models": model_groups(),
            "weights": list(WEIGHTS),
            "kv": list(KV_TYPES),
            "ctx_steps": CTX_STEPS,
            "limits": INPUTS.limits(),
        },
    }
