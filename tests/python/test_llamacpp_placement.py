"""Where llama.cpp puts a model (kvlab.memory.llamacpp.device_weights, layer_split, device_split): token_embd in
system memory, the layers split over the GPUs as src/llama-model.cpp's load_tensors does, and the fit verdict's
fullest GPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvlab.memory.catalogue import model_architecture
from kvlab.memory.deployment import deployment
from kvlab.memory.llamacpp import device_split, device_weights, layer_split
from kvlab.memory.verdict import verdict

LOGS = Path(__file__).parent / "data" / "engine_logs"
MIB = 2**20


def parts(v: dict) -> dict:
    return {c["name"]: c["bytes"] for c in v["components"]}


def test_token_embd_stays_in_system_memory_for_an_untied_model():
    # Llama-3.1-8B: 128,256 x 4,096 in Q4_K (a Q4_K_M file's token_embd): the 281.81 MiB llama.cpp prints as its
    # "CPU_Mapped model buffer size" with every layer offloaded
    arch = model_architecture("llama-3.1-8b")
    dep = deployment(arch, weights="Q4_K_M", gpu="rtx-3090")
    on_gpu = device_weights(arch, dep.weights)
    assert on_gpu["cpu_bytes"] / MIB == pytest.approx(281.8125)
    assert on_gpu["bytes"] == dep.weights["bytes"] - on_gpu["cpu_bytes"]
    assert parts(verdict(dep, 8192))["weights"] == on_gpu["bytes"]
    assert "system memory" in verdict(dep, 8192)["components"][0]["how"]


@pytest.mark.parametrize(
    ("model", "gpu", "why"),
    [
        ("qwen3-0.6b", "rtx-3090", "tied: the output layer holds a copy"),
        ("qwen3.5-9b", "rtx-3090", "the config does not say"),
        ("llama-3.1-8b", "m4-max-128gb", "unified"),
    ],
)
def test_the_whole_file_counts_on_the_gpu_where_llama_cpp_puts_it_there(model, gpu, why):
    arch = model_architecture(model)
    dep = deployment(arch, weights="Q8_0", gpu=gpu)
    on_gpu = device_weights(arch, dep.weights, dep.device["unified_memory"])
    assert on_gpu["bytes"] == dep.weights["bytes"] and on_gpu["cpu_bytes"] == 0
    assert why.split(":")[0] in on_gpu["how"]
    assert parts(verdict(dep, 4096))["weights"] == dep.weights["bytes"]


def test_layers_split_as_load_tensors_splits_them():
    # 61 layers + the output layer over 8 alike GPUs: the first three get 8, the fourth 7, the last the output layer
    split = layer_split(61, 8)
    assert split["layers"] == [8, 8, 8, 7, 8, 8, 8, 6] and split["output_device"] == 7
    assert layer_split(32, 2)["layers"] == [17, 15] and layer_split(32, 1) == {**layer_split(32, 1), "layers": [32]}
    assert sum(layer_split(80, 3)["layers"]) == 80
    # the stored log of DeepSeek (61 layers) on 8 GPUs prints KV buffers in the proportion of those layer counts
    text = (LOGS / "calibration" / "llamacpp_deepseek_61l_8gpu_8slots_q4_0k.txt").read_text()
    buffers = [float(x) for x in re.findall(r"CUDA\d KV buffer size =\s*([\d.]+) MiB", text)][:4]
    assert len(buffers) == 4
    first = split["layers"][: len(buffers)]
    assert [b / buffers[0] for b in buffers] == pytest.approx([n / first[0] for n in first])


def test_the_verdict_sizes_the_fullest_gpu_of_a_layer_split():
    arch = model_architecture("llama-3.1-70b")
    dep = deployment(arch, weights="Q4_K_M", gpu="rtx-3090", tp=2)
    v = verdict(dep, 8192)
    place = device_split(arch, dep.weights, 0, 2)
    worst = place["devices"][place["worst"]]
    assert parts(v)["weights"] == worst["weights"]
    even = -(-device_weights(arch, dep.weights)["bytes"] // 2)
    assert parts(v)["weights"] > even  # one GPU holds 41 of 80 layers (or the output layer): more than half
    assert v["kv_share_per_gpu"] == pytest.approx(worst["layers"] / arch.n_layers)
    assert "fullest GPU" in v["headline"]
