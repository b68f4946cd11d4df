"""Weights as stored vs kvlab's params x bits: the real indexes in tests/python/data/checkpoints/.

For each stored model.safetensors.index.json: its metadata.total_size (the bytes the shards hold),
kvlab's current estimate for the same model where the catalogue has it (model_weights_bytes: the
catalogue's params x the format's bits), and their ratio. Where the index also states
total_parameters, the stored bits per parameter. Sources: tests/python/data/checkpoints/SOURCES.md.

    .venv/bin/python bench/checkpoint_weights.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))

from kvlab.memory.catalogue import model_architecture  # noqa: E402
from kvlab.memory.checkpoint import checkpoint_weights_bytes, safetensors_index  # noqa: E402
from kvlab.memory.weights import model_weights_bytes  # noqa: E402

DATA = ROOT / "tests" / "python" / "data" / "checkpoints"
GB = 1e9

# index file -> (catalogue id or None, kvlab format matching the checkpoint, num_hidden_layers, why this pairing)
# Parameter counts for bits/param where the index has no (right) total_parameters: computed from the
# config.json stored beside the index (tests/python/test_checkpoint.py rebuilds those tensor lists),
# or the model card (DeepSeek-V3: 671B main model + 14B MTP module).
PARAMS = {
    "llama-3.1-8b-instruct-bnb-int8": 8_030_261_248,
    "medgemma-27b-it": 27_432_406_640,  # the index's total_parameters counts the tied embedding twice
    "qwen3-14b-mlx-4bit": 14_768_307_200,
    "deepseek-v3-awq-trimmed": 685e9,
}
MODELS = {
    "llama-3.1-8b-instruct-bnb-int8": ("llama-3.1-8b", "INT8", 32, "Instruct = base architecture; bitsandbytes int8"),
    "medgemma-27b-it": ("gemma-3-27b-it", "BF16", 62, "MedGemma 27B multimodal is a Gemma 3 27B fine-tune"),
    "deepseek-v3-awq-trimmed": ("deepseek-v3", "AWQ", 61, "AWQ of DeepSeek-V3 (index trimmed, total_size whole)"),
    "molmo-7b-d-bnb-nf4": (None, "INT4", 28, "bitsandbytes NF4; not in the catalogue"),
    "qwen3-14b-mlx-4bit": (None, "INT4", 40, "MLX 4-bit group 64; not in the catalogue"),
    "mimo-7b": (None, "BF16", 36, "MTP layers; not in the catalogue"),
    "devstral-small-2507": (None, "BF16", 40, "dense BF16; not in the catalogue"),
    "cosmos-reason2-qwen3-vl": (None, "BF16", 36, "index says total_size 0"),
    "mixtral-8x7b-v0.1": ("mixtral-8x7b", "BF16", 32, "GitHub mirror of mistralai/Mixtral-8x7B-v0.1"),
    "mistral-7b-instruct-v0.3": ("mistral-7b-v0.3", "BF16", 32, "Instruct v0.3 = base tensors"),
    "gpt-oss-20b": ("gpt-oss-20b", "MXFP4", 24, "GitHub mirror of openai/gpt-oss-20b"),
    "phi-3-mini-128k-instruct": ("phi-3-mini-4k", "BF16", 32, "128k sibling of the 4k model, same tensors"),
}
CATALOGUE = ROOT / "pycode" / "kvlab" / "data" / "checkpoints.json"


def main() -> None:
    print(
        "| checkpoint | stored (index total_size) | kvlab params x bits | stored / kvlab | bits/param stored | parts by name |"
    )
    print("|---|---|---|---|---|---|")
    for stem, (catalogue, fmt, layers, _why) in MODELS.items():
        text = (DATA / f"{stem}.index.json").read_text(encoding="utf-8")
        idx = safetensors_index(text, layers)
        stored = idx["total_size"]
        estimate = ratio = "—"
        if catalogue:
            w = model_weights_bytes(model_architecture(catalogue), fmt, as_stored=False)
            estimate = f"{w['bytes'] / GB:.2f} GB ({catalogue}, {w['format']} {w['bits_per_weight']:g} b)"
            if stored:
                ratio = f"{stored / w['bytes']:.3f}"
        params = PARAMS.get(stem) or idx["total_parameters"]
        bits = f"{stored * 8 / params:.2f}" if stored and params else "—"
        parts = ", ".join(f"{p} {v['tensors']}" for p, v in idx["parts"].items() if v["tensors"])
        shown = f"{stored / GB:.2f} GB" if stored else "0 (not a size)"
        print(f"| {stem} | {shown} | {estimate} | {ratio} | {bits} | {parts} |")
        if stored:
            assert checkpoint_weights_bytes(index=text)["bytes"] == stored
    print()
    for stem, (_, _, _, why) in MODELS.items():
        print(f"- {stem}: {why}")
    catalogue_rows()


def catalogue_rows() -> None:
    """pycode/kvlab/data/checkpoints.json: each catalogue entry's stored bytes against params x bits."""
    import json

    print()
    print("| catalogue model | checkpoint | format | stored | kvlab params x bits | stored / kvlab | how |")
    print("|---|---|---|---|---|---|---|")
    for e in json.loads(CATALOGUE.read_text(encoding="utf-8"))["checkpoints"]:
        w = model_weights_bytes(model_architecture(e["model"]), e["format"], as_stored=False)
        print(
            f"| {e['model']} | {e['hf_id']} | {e['format']} | {e['total_bytes'] / GB:.2f} GB | "
            f"{w['bytes'] / GB:.2f} GB ({w['bits_per_weight']:.3g} b) | {e['total_bytes'] / w['bytes']:.3f} | {e['how']} |"
        )


if __name__ == "__main__":
    main()
