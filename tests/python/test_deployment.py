"""One deployment value: every input checked in one place, the verdict and the four engines' budgets take it."""

from __future__ import annotations

import pytest

from kvlab.memory.compare import engine_budget, engines_side_by_side
from kvlab.memory.deployment import ENGINES, Deployment, Refused, deployment
from kvlab.memory.verdict import verdict


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"tp": 3}, "n_gpus"),
        ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
        ({"engine": "tgi"}, "engine"),
        ({"engine": "vllm", "version": "0.99"}, "engine_version"),
        ({"engine": "vllm", "kv": "q4_0"}, "kv"),
        ({"engine": "llamacpp", "pp": 2}, "pipeline_parallel"),
        ({"engine": "sglang", "pp": 2}, "pipeline_parallel"),
        ({"engine": "sglang", "kv": "q8_0"}, "kv"),
        ({"gpu": None}, "gpu"),
        ({"weights": "Q9_X"}, "weights"),
        ({"engine": "vllm", "max_num_seqs": 0}, "max_num_seqs"),
        ({"engine": "llamacpp", "max_model_len_auto": True}, "max_model_len_auto"),
    ],
)
def test_each_bad_field_is_named(fields, field):
    args = {"gpu": "h100-sxm"} | fields
    with pytest.raises(ValueError) as err:
        deployment("llama-3.1-8b", **args)
    assert field in str(err.value), err.value


def test_the_value_carries_what_every_calculator_needs():
    d = deployment("qwen3-32b", weights="FP8", kv="fp8", gpu="h100-sxm", tp=2, pp=2, engine="vllm", version="0.20+")
    assert isinstance(d, Deployment) and d.gpus == 4 and d.engine_name == "vLLM"
    assert d.where() == "4 x NVIDIA H100 SXM 80GB (2 pipeline stages of 2 tensor-parallel GPUs)"
    assert d.weights["format"] == "FP8" and d.weights["bytes"] > 30e9
    assert d.memory_bytes == 80 * 2**30 and d.card["id"] == "h100-sxm"
    with pytest.raises(AttributeError):
        d.tp = 8  # frozen: one value flows through, nobody changes it on the way


def test_the_verdict_answers_for_the_deployment_it_is_given():
    fields = {"weights": "BF16", "kv": "fp8", "gpu": "h100-sxm", "engine": "vllm", "max_num_seqs": 64}
    v = verdict(deployment("llama-3.1-8b", tp=2, version="0.20+", **fields), 65536, 3)
    assert (
        v["fits"] and v["engine_model"]["max_num_seqs"] == 64 and v["engine_model"]["version"].startswith("vLLM 0.20+")
    )
    assert (v["n_gpus"], v["n_seq"], v["context"]) == (2, 3, 65536) and "--tensor-parallel-size 2" in v["flags"]


def test_the_verdict_refuses_an_engine_it_does_not_model_and_says_where_to_go():
    dep = deployment("llama-3.1-8b", gpu="h100-sxm", engine="sglang", weights="BF16", kv="auto")
    with pytest.raises(ValueError, match="engine_budget"):
        verdict(dep, 4096)


def test_every_engine_answers_through_the_one_protocol():
    rows = engines_side_by_side("qwen3-32b", "h100-sxm", 32768, weights="BF16")["rows"]
    assert {r["engine"] for r in rows} == {"vllm", "sglang", "tensorrt-llm", "llamacpp"}
    for engine in ENGINES:
        kv = "auto" if engine in ("sglang", "trtllm") else "f16"
        row = engine_budget(deployment("qwen3-32b", gpu="h100-sxm", weights="BF16", kv=kv, engine=engine), 32768)
        twin = next(r for r in rows if r["engine_name"] == row["engine_name"])
        assert row["kv_budget_bytes"] == twin["kv_budget_bytes"] and row["max_tokens"] == twin["max_tokens"]


def test_a_lower_utilization_shrinks_vllms_pool_in_its_budget_row():
    rows = [
        engine_budget(
            deployment("qwen3-32b", gpu="h100-sxm", weights="BF16", engine="vllm", gpu_memory_utilization=u), 8192
        )
        for u in (0.9, 0.8)
    ]
    assert rows[1]["kv_budget_bytes"] < rows[0]["kv_budget_bytes"] and "0.8 of the card" in rows[1]["rule"]


def test_a_refusal_is_a_value_error_that_names_its_field():
    r = Refused("max_model_len", "one request of 131,072 tokens needs 16 GiB, 9 GiB are free")
    assert isinstance(r, ValueError) and r.field == "max_model_len" and str(r).startswith("max_model_len: ")


def test_the_mxfp4_kernel_path_is_checked_and_names_its_field():
    dep = deployment("gpt-oss-120b", gpu="h100-sxm", weights="MXFP4", engine="vllm", mxfp4_backend="marlin")
    assert dep.mxfp4_backend == "marlin"
    for bad, kw in (
        ("cutlass", {"weights": "MXFP4", "engine": "vllm"}),
        ("marlin", {"weights": "BF16", "engine": "vllm"}),
        ("marlin", {"weights": "MXFP4", "engine": "llamacpp"}),
    ):
        with pytest.raises(ValueError, match="^mxfp4_backend"):
            deployment("gpt-oss-120b", gpu="h100-sxm", mxfp4_backend=bad, **kw)


def test_vllm_loads_a_qwen3_6_checkpoints_mtp_head_only_for_an_mtp_drafter():
    """Qwen/Qwen3.6-27B-FP8 stores its MTP head in mtp.safetensors (477,202,224 B, checkpoints.json mtp_bytes);
    vLLM's Qwen3.5/3.6 loader skips mtp.* unless the drafter is the MTP head (qwen3_5.py load_weights)."""
    kw = {"weights": "FP8", "gpu": "rtx-3090", "tp": 2, "engine": "vllm", "version": "0.20+"}
    plain = deployment("qwen3.6-27b", **kw)
    drafting = deployment("qwen3.6-27b", **kw, mtp=True, speculative_tokens=3)
    other_drafter = deployment("qwen3.6-27b", **kw, speculative_tokens=3)  # e.g. a DFlash or EAGLE drafter
    assert drafting.weights["bytes"] == 30_866_866_928  # the whole checkpoint, as stored
    assert plain.weights["bytes"] == other_drafter.weights["bytes"] == 30_866_866_928 - 477_202_224
    assert "less its MTP head's 0.44 GiB" in plain.weights["how"]
    assert any("qwen3_5.py" in note for note in plain.weights["notes"])
    # another engine, or a checkpoint whose file list does not give the MTP head apart: as stored
    assert deployment("qwen3.6-27b", **(kw | {"engine": "sglang"})).weights["bytes"] == 30_866_866_928
    assert deployment("qwen3.6-27b", **(kw | {"weights": "INT4"})).weights.get("mtp_skipped_bytes") is None
