"""The model and GPU catalogue (pycode/kvlab/data/*.json), every entry with its source.

Loaded relative to this file, so it works from a source checkout, an
installed wheel and the zip Pyodide unpacks into site-packages.

>>> get_model("llama-3.1-8b")["hf_id"]
'meta-llama/Llama-3.1-8B'
>>> get_gpu("h100-sxm")["memory_gib"]
80
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from functools import cache
from pathlib import Path

from kvlab.inputs import finite_number, short_repr
from kvlab.memory.architecture import Architecture
from kvlab.memory.hf_config import load_config, parse_hf_config

DATA_DIR = Path(__file__).resolve().parents[1] / "data"  # kvlab/data
GIB = 2**30


@cache
def _load(name: str) -> dict:
    return json.loads((DATA_DIR / name).read_text(encoding="utf-8"))


def models() -> list[dict]:
    """Every catalogue model (copies, safe to modify)."""
    return [dict(entry) for entry in _load("models.json")["models"]]


def engine_log_examples() -> list[dict]:
    """Real llama.cpp and vLLM start-up logs (kvlab/data/engine_logs.json), each with its source URL."""
    return [dict(entry) for entry in _load("engine_logs.json")["examples"]]


def gpus() -> list[dict]:
    """Every catalogue GPU (copies, safe to modify)."""
    return [dict(entry) for entry in _load("gpus.json")["gpus"]]


def get_model(model_id: str) -> dict:
    """A catalogue model by its short id or its Hugging Face id (case-insensitive)."""
    if not isinstance(model_id, str):
        raise ValueError(f"model must be a catalogue id (text), got {short_repr(model_id)}")
    key = model_id.strip().lower()
    for entry in _load("models.json")["models"]:
        if key in (entry["id"].lower(), entry["hf_id"].lower()):
            return dict(entry)
    raise ValueError(
        f"model {short_repr(model_id)} is not in the catalogue; try one of: "
        + ", ".join(e["id"] for e in _load("models.json")["models"])
    )


def get_gpu(gpu_id: str) -> dict:
    """A catalogue GPU by id (case-insensitive)."""
    if not isinstance(gpu_id, str):
        raise ValueError(f"gpu must be a catalogue id (text), got {short_repr(gpu_id)}")
    key = gpu_id.strip().lower()
    for entry in _load("gpus.json")["gpus"]:
        if entry["id"] == key:
            return dict(entry)
    raise ValueError(
        f"gpu {short_repr(gpu_id)} is not in the catalogue; try one of: "
        + ", ".join(e["id"] for e in _load("gpus.json")["gpus"])
    )


def gpu_memory_bytes(gpu: dict) -> int:
    """Memory the GPU can use for a model: gpu_usable_gib (Apple's GPU share; nvidia-smi's size where ECC takes a
    share: the L40S, the L4) or the nominal memory."""
    return int((gpu.get("gpu_usable_gib") or gpu["memory_gib"]) * GIB)


def model_architecture(model, params: float | None = None) -> Architecture:
    """An Architecture from a catalogue id, a Hugging Face id in the catalogue, a config path/dict/JSON text.

    Catalogue entries carry their parameter counts; for other configs pass `params` (a positive
    number). A name that reads as a path (`.json`, or starting with / . ~) and names no file is
    said to be a missing file, not a catalogue miss.
    """
    if params is not None:
        params = finite_number("params", params, minimum=1)
    if isinstance(model, Architecture):
        return model
    if isinstance(model, str) and not model.strip().startswith("{"):
        try:
            entry = get_model(model)
        except ValueError as exc:
            if not os.path.lexists(model):
                if model.strip().endswith(".json") or model.strip().startswith(("/", ".", "~")):
                    raise ValueError(f"config {short_repr(model.strip(), 200)}: the file does not exist") from None
                raise ValueError(f"{exc} (nor is it an existing config.json path)") from None
        else:
            cfg = dict(entry["config"])
            cfg["_source"] = entry["source"]
            arch = parse_hf_config(
                cfg, name=entry["hf_id"], params=params or entry["params"], active_params=entry.get("active_params")
            )
            if entry.get("expert_params"):
                arch = replace(arch, expert_params=entry["expert_params"])
            if entry.get("active_vocab_tables") is not None:
                arch = replace(arch, active_vocab_tables=int(entry["active_vocab_tables"]))
            return arch
    return parse_hf_config(load_config(model), params=params)


def list_models() -> list[dict]:
    """One row per catalogue model for a picker: id, name, attention kind, layer counts, params, notes."""
    rows = []
    for entry in _load("models.json")["models"]:
        arch = model_architecture(entry["id"])
        summary = arch.summary()
        rows.append(
            {
                "id": entry["id"],
                "hf_id": entry["hf_id"],
                "source": entry["source"],
                "attention": summary["attention"],
                "layers_by_kind": summary["layers_by_kind"],
                "kv_heads": summary["kv_heads"],
                "head_dim": summary["head_dim"],
                "params": entry["params"],
                "active_params": entry.get("active_params"),
                "weights_dtype": entry["weights_dtype"],
                "confirmed": entry["confirmed"],
                "note": entry["note"],
            }
        )
    return rows


def list_gpus() -> list[dict]:
    """One row per catalogue GPU: memory, bandwidth, price with its source and date."""
    return gpus()
