"""The serving benchmark simulation (kvlab.memory.scheduler): vLLM V1's scheduler, timed by the roofline."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from kvlab.memory import engines, scheduler
from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.kv_bytes import kv_cache_bytes
from kvlab.memory.scheduler import simulate
from kvlab.memory.serving import (
    attention_flops,
    calibrated_efficiency,
    linear_flops,
    prefill_flops,
    serving_estimate,
)

MODEL, GPU = "llama-3.1-8b", "h100-sxm"
# a deployment whose pool holds about 10 requests of 1024 + 128 tokens: preemption territory
# a pool of about 900 blocks (0.28 of the card less Llama-3.1-8B's weights and the reserve, whose sampler warm-up
# sorts 1,024 rows of logits natively: 4.65 GiB)
SMALL_POOL = {"gpu_memory_utilization": 0.28, "max_model_len": 2048}


def plain_roofline(eff: float) -> dict:
    """Step-time arguments for a bare roofline at `eff`: no fitted overheads."""
    return {
        "bandwidth_efficiency": eff,
        "compute_efficiency": eff,
        "step_overhead_ms": 0,
        "request_overhead_us": 0,
        "allreduce_latency_us": 0,
        "frontend_ms": 0,
        "moe_half_rows": 0,  # an MoE's expert GEMMs at the same efficiency as the rest
    }


def run(**kw):
    kw.setdefault("num_prompts", 200)
    return simulate(MODEL, GPU, **kw)


def scheduled_tokens(result: dict) -> int:
    return sum(entry["tokens_per_step"] * entry["steps"] for entry in result["trace"])


# ---------------------------------------------------------------------------- conservation


@pytest.mark.parametrize(
    "workload",
    [
        {},
        {"request_rate": 20},
        {"max_concurrency": 16, "dataset": "random", "random_range_ratio": 0.5},
        {"dataset": "sharegpt-like", "request_rate": 40},
    ],
)
def test_every_request_completes_and_every_token_is_computed_once(workload):
    r = run(trace=True, max_timeline_rows=10**5, **workload)
    tl = r["timeline"]
    assert r["completed"] == 200 and len(tl["request"]) == 200
    assert r["total_output_tokens"] == sum(tl["output_len"])
    assert r["total_input_tokens"] == sum(tl["input_len"])
    assert r["preemptions"] == 0
    # without preemption each request computes its prompt and all its tokens but the last, once
    assert scheduled_tokens(r) == r["total_input_tokens"] + r["total_output_tokens"] - 200
    assert r["steps"] == sum(e["steps"] for e in r["trace"])
    for arrival, sched, first, finish in zip(
        tl["arrival_s"], tl["first_scheduled_s"], tl["first_token_s"], tl["finish_s"]
    ):
        assert arrival <= sched < first <= finish <= r["duration_s"]
    assert r["output_tok_s"] == pytest.approx(r["total_output_tokens"] / r["duration_s"])
    json.dumps(r, allow_nan=False)


def test_preempted_requests_recompute_what_they_had():
    r = run(trace=True, max_timeline_rows=200, enable_prefix_caching=False, **SMALL_POOL)
    assert r["completed"] == 200 and r["preemptions"] > 0 and r["requests_preempted"] > 0
    # the victim is the request admitted last: the first ones admitted (all sent at 0) keep running
    assert r["timeline"]["preempted"][:5] == [0] * 5
    # recompute: more tokens go through the model than the requests hold
    assert scheduled_tokens(r) > r["total_input_tokens"] + r["total_output_tokens"] - 200
    assert max(r["timeline"]["preempted"]) >= 1


# ---------------------------------------------------------------------------- the engine's rules


def test_with_prefix_caching_a_preempted_request_takes_its_own_blocks_back():
    """vLLM V1's default: a preempted request's full blocks keep their hashes in the free queue, and its readmission
    hits them unless they were reused. Preemption frees blocks because a running request needs some: those are
    reused at once (the victim's tail first), the rest is taken back, so less is computed again and the run is
    faster."""
    kw = dict(trace=True, max_timeline_rows=200, **SMALL_POOL)
    off, on = run(enable_prefix_caching=False, **kw), run(**kw)
    assert on["engine_settings"]["enable_prefix_caching"] and "--enable-prefix-caching" in on["flags"]
    assert off["preemptions"] > 0 and on["preemptions"] > 0
    need = on["total_input_tokens"] + on["total_output_tokens"] - 200
    again_off, again_on = scheduled_tokens(off) - need, scheduled_tokens(on) - need
    assert 0 <= again_on < 0.75 * again_off
    assert on["duration_s"] < off["duration_s"]


def test_a_recurrent_state_is_not_taken_back_after_a_preemption():
    """A Mamba state's pages are not a block count the simulation can hit: hybrids with linear-attention layers
    recompute as with prefix caching off."""
    kw = {"trace": True, "gpu_memory_utilization": 0.38, "max_model_len": 4096, "num_prompts": 60, "input_len": 2048}
    on = simulate("qwen3.5-9b", GPU, **kw)
    off = simulate("qwen3.5-9b", GPU, enable_prefix_caching=False, **kw)
    assert on["preemptions"] > 0 and scheduled_tokens(on) == scheduled_tokens(off)


def test_preemption_happens_when_the_pool_is_small_and_never_when_it_is_large():
    assert run(**SMALL_POOL)["preemptions"] > 0
    large = run(max_model_len=2048)
    assert large["preemptions"] == 0 and large["kv_pool"]["blocks"] > 10 * run(**SMALL_POOL)["kv_pool"]["blocks"]


@pytest.mark.parametrize(
    "settings",
    [
        {"max_num_batched_tokens": 2048, "max_num_seqs": 64},
        {"max_num_batched_tokens": 512, "max_num_seqs": 256, "input_len": 3000, "max_model_len": 4096},
        {**SMALL_POOL, "max_num_batched_tokens": 1024},
    ],
)
def test_no_step_exceeds_the_token_budget_the_sequence_cap_or_the_pool(settings):
    r = run(trace=True, **settings)
    budget = r["engine_settings"]["max_num_batched_tokens"]
    assert budget == settings["max_num_batched_tokens"]
    assert all(e["tokens_per_step"] <= budget for e in r["trace"])
    assert max(e["tokens_per_step"] for e in r["trace"]) == budget  # the budget binds at all (inf rate)
    assert all(e["running"] <= r["engine_settings"]["max_num_seqs"] for e in r["trace"])
    assert all(e["free_blocks"] >= 0 for e in r["trace"])
    assert max(r["series"]["kv_utilisation"]) <= 1.0
    assert r["max_running"] <= r["engine_settings"]["max_num_seqs"]


def test_long_prompts_are_prefilled_in_chunks():
    r = run(num_prompts=3, max_concurrency=1, input_len=5000, max_num_batched_tokens=2048, trace=True)
    chunks = [e["prefill_tokens"] for e in r["trace"] if e["prefill_tokens"]]
    assert chunks[:3] == [2048, 2048, 5000 - 4096]


def test_ttft_grows_with_the_queue():
    means = [run(num_prompts=n, max_num_seqs=32)["ttft_ms"]["mean"] for n in (32, 128, 512)]
    assert means[0] < means[1] < means[2]
    r = run(num_prompts=256, max_num_seqs=32, max_timeline_rows=256)
    ttft = np.array(r["timeline"]["first_token_s"]) - np.array(r["timeline"]["arrival_s"])
    assert ttft[-1] > 4 * ttft[0]  # all sent at 0: the last waits for 7 batches ahead of it
    # a light load keeps TTFT at about one prefill (at worst a request that arrives behind another's)
    one = run(num_prompts=1)["ttft_ms"]["median"]
    light = run(request_rate=1, num_prompts=20)
    assert light["ttft_ms"]["p99"] < 3 * one < r["ttft_ms"]["median"]


def test_one_request_at_a_time_decodes_as_serving_estimate_says():
    # serving_estimate's decode step at batch 1: its calibrated efficiency, no per-step overheads
    e = serving_estimate(MODEL, GPU, 1024 + 128, batch=1, answer_tokens=128)
    eff = calibrated_efficiency(1)["value"]
    r = run(num_prompts=2, max_concurrency=1, input_len=1024, output_len=128, **plain_roofline(eff))
    assert r["tpot_ms"]["mean"] == pytest.approx(e["seconds_per_token"] * 1000, rel=0.02)
    assert r["itl_ms"]["median"] == pytest.approx(e["seconds_per_token"] * 1000, rel=0.02)
    assert r["max_running"] == 1


def test_given_efficiencies_scale_the_times():
    # one chat at a time (no batching that a slower step would change): every decode step is memory-bound and
    # takes exactly twice as long at half the efficiency
    full = run(num_prompts=4, max_concurrency=1, **plain_roofline(1))
    half = run(num_prompts=4, max_concurrency=1, **plain_roofline(0.5))
    assert half["tpot_ms"]["mean"] == pytest.approx(2 * full["tpot_ms"]["mean"], rel=1e-9)
    assert not half["efficiency"]["calibrated"] and half["efficiency"]["range"] == [0.5, 0.5]
    assert half["efficiency"]["how"] == "given"
    assert run(num_prompts=5)["efficiency"]["calibrated"]


def test_overheads_add_to_each_step():
    base = run(num_prompts=2, max_concurrency=1, output_len=64, **plain_roofline(0.5))
    more = run(num_prompts=2, max_concurrency=1, output_len=64, **(plain_roofline(0.5) | {"step_overhead_ms": 1.0}))
    assert more["tpot_ms"]["mean"] == pytest.approx(base["tpot_ms"]["mean"] + 1.0, rel=1e-6)
    per_req = run(
        num_prompts=2, max_concurrency=1, output_len=64, **(plain_roofline(0.5) | {"request_overhead_us": 500})
    )
    assert per_req["tpot_ms"]["mean"] == pytest.approx(base["tpot_ms"]["mean"] + 0.5, rel=1e-6)


def test_tensor_parallel_pays_for_its_all_reduces():
    kw = {"num_prompts": 4, "max_concurrency": 1, "output_len": 64, "n_gpus": 2}
    free = run(**kw, **plain_roofline(0.5))
    slow = run(**kw, **(plain_roofline(0.5) | {"allreduce_latency_us": 10.0}))
    layers = model_architecture(MODEL).n_layers
    assert slow["efficiency"]["allreduces_per_step"] == 2 * layers
    assert slow["efficiency"]["allreduce_gb_s"] == 450  # NVLink 4 of the H100 SXM (gpus.json)
    # one decode token per step: 2 x layers x (a ring of 2 x (2 - 1) steps of 10 us + 2 x 4096 x 2 bytes x 1/2
    # over 450 GB/s) more per token
    extra_ms = 2 * layers * (2 * 10e-6 + 4096 * 2 * 2 * 0.5 / 450e9) * 1e3
    assert slow["tpot_ms"]["mean"] - free["tpot_ms"]["mean"] == pytest.approx(extra_ms, rel=0.01)
    assert run(num_prompts=2)["efficiency"]["allreduces_per_step"] == 0  # one GPU: none
    # 4 GPUs: a ring of 2 x 3 steps, each with its latency; 3/4 of the activations cross each link
    free4 = run(**(kw | {"n_gpus": 4}), **plain_roofline(0.5))
    slow4 = run(**(kw | {"n_gpus": 4}), **(plain_roofline(0.5) | {"allreduce_latency_us": 10.0}))
    extra4_ms = 2 * layers * (6 * 10e-6 + 4096 * 2 * 2 * 0.75 / 450e9) * 1e3
    assert slow4["tpot_ms"]["mean"] - free4["tpot_ms"]["mean"] == pytest.approx(extra4_ms, rel=0.01)


def test_the_api_server_takes_requests_sent_together_in_together():
    # vLLM's API server is one asyncio loop: handlers ready at once take their steps in turn and finish their intake
    # together (scheduler module docstring, frontend_ms), so 20 requests sent at once all reach the engine after
    # 20 x 10 ms, none before
    kw = {"num_prompts": 20, "input_len": 64, "output_len": 4, "max_timeline_rows": 20, **plain_roofline(0.5)}
    at_once = run(**kw)["timeline"]
    paced = run(**(kw | {"frontend_ms": 10.0}))["timeline"]
    assert max(at_once["first_scheduled_s"]) < 0.01  # no frontend time: the first step admits them all
    assert min(paced["first_scheduled_s"]) >= 20 * 0.010 - 1e-9
    assert max(paced["first_scheduled_s"]) < 20 * 0.010 + 0.05
    assert all(a == 0 for a in paced["arrival_s"])  # the client's clock starts when it sends: TTFT includes the wait
    # the chat template's parse is more of the same time per request
    chat = run(**(kw | {"frontend_ms": 4.0, "chat_template_ms": 6.0}))["timeline"]
    assert chat["first_scheduled_s"] == pytest.approx(paced["first_scheduled_s"])


def test_the_api_server_takes_spaced_requests_in_one_at_a_time_each_after_its_own_turn():
    # sent 0.1 s apart (10 requests per second, evenly), each request waits only for its own 10 ms
    kw = {"num_prompts": 8, "input_len": 64, "output_len": 4, "max_timeline_rows": 8, **plain_roofline(0.5)}
    kw |= {"request_rate": 10.0, "burstiness": 1e3}  # gamma gaps of shape 1,000: 0.1 s within a few percent
    tl = run(**(kw | {"frontend_ms": 10.0}))["timeline"]
    for sent, scheduled in zip(tl["arrival_s"], tl["first_scheduled_s"]):
        assert sent + 0.010 - 1e-9 <= scheduled < sent + 0.010 + 0.01
    # a closed loop (--max-concurrency 4): the first four are sent together and enter together after 4 x 10 ms
    loop = run(**(kw | {"request_rate": math.inf, "max_concurrency": 4, "frontend_ms": 10.0}))["timeline"]
    firsts = sorted(loop["first_scheduled_s"])[:4]
    assert firsts[0] >= 0.040 - 1e-9 and firsts[-1] < 0.040 + 0.01


def test_chat_template_time_is_vllm_0_11_0s_chat_endpoint_only():
    ms, how = scheduler.chat_template_ms("vllm", "0.11.0", "Qwen/Qwen3-14B", "chat")
    stored = scheduler.serving_benchmarks()["chat_template"]["templates"]
    assert ms == stored["qwen3"]["parse_ms"] > 0 and "measured" in how
    assert (
        scheduler.chat_template_ms("vllm", "0.11.0", "deepseek-ai/DeepSeek-R1-0528", "chat")[0]
        == (stored["deepseek-r1-0528"]["parse_ms"])
    )
    for args in (
        ("vllm", "0.11.0", "openai/gpt-oss-20b", "chat"),  # rendered by openai_harmony
        ("vllm", "0.11.0", "Qwen/Qwen3-14B", "completions"),  # no template
        ("vllm", "0.11.1", "Qwen/Qwen3-14B", "chat"),  # cached from 0.11.1
        ("vllm", "0.17.1", "Qwen/Qwen3.5-9B", "chat"),
        ("vllm", None, "Qwen/Qwen3-14B", "chat"),  # release not stated
        ("sglang", "0.5.2", "Qwen/Qwen3-14B", "chat"),
        ("vllm", "0.11.0", "Qwen/Qwen3-14B", None),  # endpoint not stated
    ):
        assert scheduler.chat_template_ms(*args)[0] == 0.0, args


def test_mla_prefill_counts_the_expanded_heads_and_decode_the_latent():
    arch = model_architecture("deepseek-v3")
    c = 10_000
    latent = attention_flops(arch, c)  # absorbed form: 2 x heads x c x (576 + 576) per layer
    expanded = scheduler._mla_prefill_attention_flops(arch, c)
    assert expanded == pytest.approx(arch.n_layers * 2 * c * 128 * (192 + 128))  # qk_nope + qk_rope, v_head_dim
    assert expanded / latent == pytest.approx((192 + 128) / (2 * 576))
    # one 8k prompt on 8 H200, compute-bound: its prefill time is its FLOPs with the expanded attention
    kw = {"num_prompts": 1, "input_len": 8192, "output_len": 2, "n_gpus": 8, "weights_format": "FP8"}
    kw |= {"max_model_len": 16384, "max_num_batched_tokens": 8192, "allreduce_gb_s": 1e5, "trace": True}
    r = simulate("deepseek-v3", "h200", **kw, **plain_roofline(0.5))
    first = r["trace"][0]
    assert first["prefill_tokens"] == 8192
    positions = np.arange(1, 8193)
    table = arch.vocab_size * arch.hidden_size  # untied: the embedding (a gather) and the lm_head (one position)
    flops = (
        2 * (arch.active_params - 2 * table) * 8192
        + 2 * table
        + sum(scheduler._mla_prefill_attention_flops(arch, int(t)) for t in positions[::64]) * 64
    )
    seconds = flops / (8 * 989.5e12 * 0.5)
    assert r["ttft_ms"]["median"] / 1000 == pytest.approx(seconds, rel=0.02)


def test_mxfp4_on_a_card_without_fp4_tensor_cores_prefills_at_its_own_efficiency():
    fitted = scheduler.simulation_constants()
    kw = {"num_prompts": 2, "input_len": 256, "output_len": 4}
    on_h100 = simulate("gpt-oss-20b", "h100-sxm", weights_format="MXFP4", **kw)["efficiency"]
    on_b200 = simulate("gpt-oss-20b", "b200", weights_format="MXFP4", **kw)["efficiency"]
    bf16 = simulate("gpt-oss-20b", "h100-sxm", weights_format="BF16", **kw)["efficiency"]
    on_a100 = simulate("gpt-oss-20b", "a100-80gb", weights_format="MXFP4", **kw)["efficiency"]
    assert on_h100["compute_used"] == fitted["weight_only_fp4_triton_compute_efficiency"]
    assert on_a100["compute_used"] == fitted["weight_only_fp4_compute_efficiency"]
    # on FP4 tensor cores, and in BF16, gpt-oss's experts run through vLLM's fused-MoE kernels: their own constant
    assert on_b200["compute_used"] == bf16["compute_used"] == fitted["moe_compute_efficiency"]
    given = simulate("gpt-oss-20b", "a100-80gb", weights_format="MXFP4", weight_only_fp4_compute_efficiency=0.2, **kw)
    assert given["efficiency"]["compute_used"] == 0.2


def test_mxfp4_runs_at_the_efficiency_of_the_kernel_vllm_picks_for_the_card():
    # vLLM's get_mxfp4_backend: Marlin below compute capability 9.0, Triton (triton_kernels matmul_ogs) on 9.x and
    # ROCm, FP4 tensor cores on Blackwell (engines.VLLM_MXFP4_BACKEND_SOURCE)
    kernel = {g: engines.mxfp4_kernel(get_gpu(g)) for g in ("a100-80gb", "l40s", "rtx-3090", "h100-sxm", "h200")}
    assert kernel == {
        "a100-80gb": "marlin",
        "l40s": "marlin",
        "rtx-3090": "marlin",
        "h100-sxm": "triton",
        "h200": "triton",
    }
    assert engines.mxfp4_kernel(get_gpu("b200")) == "native"
    assert engines.mxfp4_kernel(get_gpu("mi300x")) == "triton"
    kw = {"num_prompts": 2, "input_len": 4096, "output_len": 4, "weights_format": "MXFP4"}
    paths = {"weight_only_fp4_compute_efficiency": 0.2, "weight_only_fp4_triton_compute_efficiency": 0.6}
    used = {
        g: simulate("gpt-oss-20b", g, **kw, **paths)["efficiency"]["compute_used"]
        for g in ("a100-80gb", "h100-sxm", "l40s", "h200")
    }
    assert used == {"a100-80gb": 0.2, "h100-sxm": 0.6, "l40s": 0.2, "h200": 0.6}
    # the Triton constant moves an H100's prefill and leaves an A100's alone
    slow_triton = {**paths, "weight_only_fp4_triton_compute_efficiency": 0.3}
    h100 = [simulate("gpt-oss-20b", "h100-sxm", **kw, **p)["ttft_ms"]["median"] for p in (paths, slow_triton)]
    a100 = [simulate("gpt-oss-20b", "a100-80gb", **kw, **p)["ttft_ms"]["median"] for p in (paths, slow_triton)]
    assert h100[1] > 1.3 * h100[0] and a100[1] == a100[0]


def test_int4_and_fp8_without_fp8_tensor_cores_run_weight_only_through_marlin():
    # vLLM runs AWQ/GPTQ through Marlin from compute capability 8.0 and FP8 checkpoints as weight-only W8A16 (FP8
    # Marlin) below 8.9 (engines.WEIGHT_ONLY_MARLIN_SOURCE); FP8 on Ada and Hopper has its own tensor cores
    kernel = {
        (g, f): engines.weight_only_kernel(get_gpu(g), f)
        for g in ("a100-80gb", "rtx-3090", "l40s", "h100-sxm", "mi300x")
        for f in ("INT4", "FP8", "BF16")
    }
    assert kernel == {
        ("a100-80gb", "INT4"): "marlin",
        ("a100-80gb", "FP8"): "marlin",
        ("a100-80gb", "BF16"): None,
        ("rtx-3090", "INT4"): "marlin",
        ("rtx-3090", "FP8"): "marlin",
        ("rtx-3090", "BF16"): None,
        ("l40s", "INT4"): "marlin",
        ("l40s", "FP8"): None,
        ("l40s", "BF16"): None,
        ("h100-sxm", "INT4"): "marlin",
        ("h100-sxm", "FP8"): None,
        ("h100-sxm", "BF16"): None,
        ("mi300x", "INT4"): None,  # ROCm: Triton AWQ kernels, not modelled apart
        ("mi300x", "FP8"): None,
        ("mi300x", "BF16"): None,
    }
    assert engines.weight_only_kernel(get_gpu("a100-80gb"), "MXFP4") == engines.mxfp4_kernel(get_gpu("a100-80gb"))
    # the weight-only constant sets a compute-bound prefill of FP8 on an A100 and of INT4 anywhere on CUDA (MXFP4's
    # Marlin path has its own: session 25); an FP8 prefill on an H100 stays at compute_efficiency
    kw = {"num_prompts": 2, "input_len": 4096, "output_len": 4, "max_model_len": 8192}
    consts = {
        "compute_efficiency": 0.6,
        "weight_only_compute_efficiency": 0.2,
        "weight_only_fp4_compute_efficiency": 0.3,
    }
    used = {
        (m, g, f): simulate(m, g, weights_format=f, **kw, **consts)["efficiency"]["compute_used"]
        for m, g, f in (
            ("qwen3-8b", "a100-80gb", "FP8"),
            ("qwen3-8b", "a100-80gb", "AWQ"),
            ("qwen3-8b", "h100-sxm", "INT4"),
            ("qwen3-8b", "h100-sxm", "FP8"),
            ("gpt-oss-20b", "a100-80gb", "MXFP4"),
        )
    }
    assert used == {
        ("qwen3-8b", "a100-80gb", "FP8"): 0.2,
        ("qwen3-8b", "a100-80gb", "AWQ"): 0.2,
        ("qwen3-8b", "h100-sxm", "INT4"): 0.2,
        ("qwen3-8b", "h100-sxm", "FP8"): 0.6,
        ("gpt-oss-20b", "a100-80gb", "MXFP4"): 0.3,
    }
    ttft = [
        simulate("qwen3-8b", "a100-80gb", weights_format="FP8", **kw, **c)["ttft_ms"]["median"]
        for c in (consts, {**consts, "weight_only_compute_efficiency": 0.4})
    ]
    assert ttft[0] > 1.5 * ttft[1]
    # and the run says why its compute efficiency is the Marlin one
    said = {
        f: " ".join(simulate("qwen3-8b", "a100-80gb", weights_format=f, **kw)["assumptions"]) for f in ("AWQ", "BF16")
    }
    assert "INT4 weights dequantized inside each GEMM: vLLM's Marlin path" in said["AWQ"]
    assert "dequantized" not in said["BF16"]


def _an_8k_prefill_on_an_a100(model: str, weights: str) -> tuple:
    """One 8,192-token prompt in one step on an A100, the Marlin constants (MXFP4's and FP8/INT4's) at 0.2 and the
    BF16 one at 0.6: the model's architecture, the prefill's seconds and the attention FLOPs over its context."""
    arch = model_architecture(model)
    kw = {"num_prompts": 1, "input_len": 8192, "output_len": 2, "weights_format": weights, "max_model_len": 16384}
    kw |= {"max_num_batched_tokens": 8192, "trace": True}
    marlin = {"weight_only_fp4_compute_efficiency": 0.2, "weight_only_compute_efficiency": 0.2}
    r = simulate(model, "a100-80gb", **kw, **plain_roofline(0.6), **marlin)
    assert r["trace"][0]["prefill_tokens"] == 8192
    attn = sum(attention_flops(arch, int(t)) for t in np.arange(1, 8193)[::64]) * 64
    return arch, r["ttft_ms"]["median"] / 1000, attn


A100_PEAK = 312e12  # dense BF16


def test_an_moes_experts_on_the_fused_moe_path_run_at_their_own_constant():
    # a BF16 MoE (no weight-only path): its routed experts' FLOPs at moe_compute_efficiency, the rest at
    # compute_efficiency. Only the experts' time moves with the MoE constant, by their FLOPs: Qwen3-30B-A3B's
    # config, 48 layers x 8 experts per token x 3 x 2,048 x 768 = 1.81B parameters per token, x 2 x 8,192 tokens
    kw = {"num_prompts": 1, "input_len": 8192, "output_len": 2, "max_model_len": 16384, "max_num_batched_tokens": 8192}
    slow, fast = (
        simulate("qwen3-30b-a3b", "a100-80gb", **kw, **plain_roofline(0.6), moe_compute_efficiency=e)["ttft_ms"][
            "median"
        ]
        / 1000
        for e in (0.2, 0.4)
    )
    experts = (slow - fast) * A100_PEAK / (1 / 0.2 - 1 / 0.4)
    assert experts == pytest.approx(2 * 8192 * 48 * 8 * 3 * 2048 * 768, rel=0.03)
    # a dense model has no experts: the constant changes nothing
    dense = {
        simulate("qwen3-8b", "a100-80gb", **kw, **plain_roofline(0.6), moe_compute_efficiency=e)["ttft_ms"]["median"]
        for e in (0.2, 0.4)
    }
    assert len(dense) == 1


def test_every_linear_layer_of_a_weight_only_int4_model_runs_at_the_marlin_efficiency():
    # AWQ quantizes every linear layer (MXFP4 only the experts): the layers' FLOPs at the Marlin constant, attention
    # over the context at compute_efficiency
    # (the embedding is a gather; the lm_head, BF16 in AWQ checkpoints, runs at the one position the step samples)
    arch, seconds, attn = _an_8k_prefill_on_an_a100("qwen3-8b", "INT4")
    table = arch.vocab_size * arch.hidden_size
    expected = 2 * (arch.params - 2 * table) * 8192 / (A100_PEAK * 0.2) + (2 * table + attn) / (A100_PEAK * 0.6)
    assert seconds == pytest.approx(expected, rel=0.02)


def test_only_the_experts_of_an_mxfp4_model_run_at_the_weight_only_fp4_efficiency():
    # gpt-oss's MXFP4 checkpoint quantizes the experts only; attention, router, embeddings and lm_head stay BF16
    # (vLLM's Mxfp4Config.get_quant_method), so their FLOPs run at compute_efficiency
    # (the card's Table 1, arXiv 2508.10925: active 3.61B = 4/32 of the 19.12B MLP + 0.64B attention + the 0.58B
    # unembedding; the embedding is a gather, the lm_head runs at the one position the step samples)
    arch, seconds, attn = _an_8k_prefill_on_an_a100("gpt-oss-20b", "MXFP4")
    table = arch.vocab_size * arch.hidden_size
    attention_params = arch.params - arch.expert_params - 2 * table  # 0.64B
    experts = arch.expert_params * 4 / 32
    assert experts + attention_params + table == pytest.approx(arch.active_params, rel=0.01)
    expected = 2 * experts * 8192 / (A100_PEAK * 0.2) + (2 * attention_params * 8192 + 2 * table + attn) / (
        A100_PEAK * 0.6
    )
    assert seconds == pytest.approx(expected, rel=0.02)


def test_the_vocab_tables_cost_a_gather_and_one_lm_head_per_request_in_the_step():
    # a step of 16 prompts of 512 tokens (8,192 tokens, one step) against one of 8,192: the same linear FLOPs but
    # the lm_head, which runs 16 times instead of once; a dense BF16 model on a plain roofline, compute-bound
    arch = model_architecture("qwen3-8b")
    table = arch.vocab_size * arch.hidden_size
    kw = {"output_len": 2, "max_model_len": 16384, "max_num_batched_tokens": 8192, "trace": True}
    kw |= {**plain_roofline(0.5), "step_overhead_ms": 0.0, "request_overhead_us": 0.0, "frontend_ms": 0.0}
    one = simulate("qwen3-8b", "h100-sxm", num_prompts=1, input_len=8192, **kw)
    many = simulate("qwen3-8b", "h100-sxm", num_prompts=16, input_len=512, **kw)
    assert one["trace"][0]["prefill_tokens"] == many["trace"][0]["prefill_tokens"] == 8192
    attn_one = sum(attention_flops(arch, int(t)) for t in range(1, 8193))
    attn_many = 16 * sum(attention_flops(arch, int(t)) for t in range(1, 513))
    peak = get_gpu("h100-sxm")["bf16_dense_tflops"] * 1e12 * 0.5
    first = {"one": one["ttft_ms"]["median"] / 1e3, "many": many["ttft_ms"]["median"] / 1e3}
    linear = 2 * (arch.params - 2 * table) * 8192  # untied: embedding and lm_head both in the 8.2B
    assert first["one"] == pytest.approx((linear + 2 * table + attn_one) / peak, rel=1e-3)
    assert first["many"] == pytest.approx((linear + 16 * 2 * table + attn_many) / peak, rel=1e-3)
    # the old count (2 x params per token, the tables' included) would be 2 x 2 x table x 8,192 FLOPs more
    assert first["one"] < (2 * arch.params * 8192 + attn_one) / peak * 0.9


def test_the_fitted_fp4_efficiency_applies_when_every_constant_is_given_as_the_fit_gives_them():
    # bench/serving_sim_calibration.py passes every constant: simulate's defaults must run the model the fit ran
    # (before session 6 a given compute_efficiency won, so the fit never used the FP4 constant it stored)
    kw = {"num_prompts": 4, "input_len": 4096, "output_len": 8, "weights_format": "MXFP4"}
    fitted = scheduler.simulation_constants()
    given = {k: fitted[k] for k in scheduler.SIMULATION_KEYS}
    by_default = simulate("gpt-oss-20b", "a100-80gb", **kw)
    as_the_fit = simulate("gpt-oss-20b", "a100-80gb", **kw, **given)
    assert as_the_fit["efficiency"]["compute_used"] == fitted["weight_only_fp4_compute_efficiency"]
    assert as_the_fit["output_tok_s"] == by_default["output_tok_s"]
    assert as_the_fit["ttft_ms"] == by_default["ttft_ms"]
    # a compute efficiency given alone still sets a plain roofline for every weights format
    assert simulate("gpt-oss-20b", "a100-80gb", **kw, compute_efficiency=0.3)["efficiency"]["compute_used"] == 0.3


def test_every_gpu_reads_the_whole_mla_latent_under_tensor_parallelism(monkeypatch):
    # ModelConfig.get_num_kv_heads (vLLM): an MLA model has one KV "head" per GPU, KV heads below one per GPU are
    # replicated: the GPUs together read the latent tp times, GQA heads that divide evenly once
    assert scheduler.kv_read_replication(model_architecture("deepseek-v3"), 8) == 8
    assert scheduler.kv_read_replication(model_architecture("deepseek-v3"), 1) == 1
    assert scheduler.kv_read_replication(model_architecture("gpt-oss-120b"), 8) == 1  # 8 KV heads on 8 GPUs
    assert scheduler.kv_read_replication(model_architecture("qwen3-30b-a3b"), 8) == 2  # 4 KV heads on 8 GPUs
    # one long request decoding on 8 H200: each step reads the latent 8 times over the summed bandwidth of 8 GPUs
    kw = {"num_prompts": 1, "input_len": 16000, "output_len": 64, "n_gpus": 8, "weights_format": "FP8"}
    kw |= {"max_model_len": 16384, "allreduce_gb_s": 1e5, **plain_roofline(0.5)}
    replicated = simulate("deepseek-v3", "h200", **kw)
    monkeypatch.setattr(scheduler, "kv_read_replication", lambda arch, tp: 1.0)
    once = simulate("deepseek-v3", "h200", **kw)
    kv = kv_cache_bytes(model_architecture("deepseek-v3"), 16032, "f16", state_type="bf16")["total_bytes"]
    extra_ms = 7 * kv / (8 * scheduler.get_gpu("h200")["bandwidth_gb_s"] * 1e9 * 0.5) * 1e3
    assert replicated["tpot_ms"]["mean"] - once["tpot_ms"]["mean"] == pytest.approx(extra_ms, rel=0.01)


def test_prefix_caching_skips_the_shared_prefix():
    kw = {"num_prompts": 100, "prefix_len": 512, "input_len": 256, "trace": True, "max_concurrency": 8}
    off, on = run(enable_prefix_caching=False, **kw), run(enable_prefix_caching=True, **kw)
    # every request but the first ones (admitted before the prefix was cached) skips 512 tokens
    saved = scheduled_tokens(off) - scheduled_tokens(on)
    assert saved % 512 == 0 and 80 * 512 <= saved <= 99 * 512
    assert on["ttft_ms"]["mean"] < off["ttft_ms"]["mean"]
    with pytest.raises(ValueError, match="enable_prefix_caching"):
        simulate("gemma-2-9b", GPU, enable_prefix_caching=True, prefix_len=64, num_prompts=5)


def test_the_client_holds_max_concurrency_in_flight():
    r = run(max_concurrency=4, max_timeline_rows=200)
    tl = r["timeline"]
    events = sorted([(a, 1) for a in tl["arrival_s"]] + [(f, -1) for f in tl["finish_s"]], key=lambda x: (x[0], x[1]))
    in_flight = np.cumsum([d for _, d in events])
    assert in_flight.max() == 4 and r["max_running"] == 4


def test_burstiness_inf_sends_evenly_spaced_as_guidellms_constant_profile():
    r = run(num_prompts=40, request_rate=8, burstiness=math.inf, output_len=4, input_len=16, max_timeline_rows=40)
    assert r["timeline"]["arrival_s"] == pytest.approx([k / 8 for k in range(40)], abs=1e-6)
    assert r["workload"]["burstiness"] is None and r["workload"]["evenly_spaced"] is True
    poisson = run(num_prompts=40, request_rate=8, output_len=4, input_len=16, max_timeline_rows=40)
    assert poisson["timeline"]["arrival_s"] != pytest.approx(r["timeline"]["arrival_s"], abs=1e-3)
    assert poisson["workload"]["burstiness"] == 1.0 and poisson["workload"]["evenly_spaced"] is False


def test_poisson_arrivals_have_the_rate_asked():
    r = run(num_prompts=2000, request_rate=50, output_len=4, input_len=16, max_timeline_rows=2000)
    span = max(r["timeline"]["arrival_s"])
    assert 2000 / span == pytest.approx(50, rel=0.1)


# ---------------------------------------------------------------------------- the vectorised stretches


@pytest.mark.parametrize(
    "workload",
    [{"request_rate": 10}, {"max_concurrency": 32, "dataset": "sharegpt-like"}, SMALL_POOL],
)
def test_stretches_of_decode_steps_match_one_step_at_a_time(monkeypatch, workload):
    many = run(**workload)
    monkeypatch.setattr(scheduler, "JUMP_STEPS", 1)
    one = run(**workload)
    assert one["steps"] == many["steps"] and one["preemptions"] == many["preemptions"]
    for key in ("duration_s", "output_tok_s"):
        assert one[key] == pytest.approx(many[key], rel=1e-9)
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"):
        for stat in ("mean", "median", "p99"):
            assert one[key][stat] == pytest.approx(many[key][stat], rel=1e-9), (key, stat)


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gemma-2-9b", "gpt-oss-20b", "qwen3-next-80b-a3b"])
def test_costs_piecewise_in_the_context_match_their_sources(model):
    arch = model_architecture(model)
    windows = scheduler._windows(arch)
    kv = scheduler._Piecewise(lambda c: kv_cache_bytes(arch, c, "f16", state_type="bf16")["total_bytes"], windows)
    attn = scheduler._Piecewise(lambda c: attention_flops(arch, c), windows)
    for c in (1, 2, 3, 127, 4095, 4096, 4097, 9000, 131072):
        assert kv.at(c) == kv_cache_bytes(arch, c, "f16", state_type="bf16")["total_bytes"]
        assert attn.at(c) == pytest.approx(attention_flops(arch, c), rel=1e-12)
    body, head = linear_flops(arch)  # the linear layers per token, less the vocab tables; one lm_head row
    for p in (1, 100, 5000):
        assert body * p + head + attn.span(np.array([0]), np.array([p]))[0] == pytest.approx(prefill_flops(arch, p))
    ctx = np.array([5, 700, 4000, 4096, 30000], dtype=np.int64)
    js = np.arange(1, 300, dtype=np.float64)
    brute = [float(kv.at(ctx + j).sum()) for j in js]
    assert np.allclose(kv.totals_ahead(ctx, js, float(ctx.sum())), brute, rtol=1e-12)


def test_the_pool_is_the_fit_verdicts():
    r = run(num_prompts=5, max_model_len=8192)
    pool = r["kv_pool"]
    assert pool["blocks"] == pool["available_bytes"] // pool["bytes_per_block"]
    assert pool["bytes_per_block"] == 16 * 32 * 2 * 8 * 128 * 2  # 16 tokens x 32 layers x K,V x 8 heads x 128 x 2 B
    assert "--gpu-memory-utilization 0.9" in pool["how"]


# ---------------------------------------------------------------------------- determinism, outputs, inputs


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    kw = {"dataset": "random", "random_range_ratio": 0.8, "request_rate": 30, "num_prompts": 100}
    a, b, c = run(seed=1, **kw), run(seed=1, **kw), run(seed=2, **kw)
    assert a == b
    assert a["timeline"]["input_len"] != c["timeline"]["input_len"] and a["duration_s"] != c["duration_s"]


def test_random_lengths_fall_in_vllms_range():
    r = run(dataset="random", random_range_ratio=0.25, input_len=1000, output_len=100, max_timeline_rows=200)
    assert 750 <= min(r["timeline"]["input_len"]) and max(r["timeline"]["input_len"]) <= 1250
    assert 75 <= min(r["timeline"]["output_len"]) and max(r["timeline"]["output_len"]) <= 125
    fixed = run(dataset="fixed", max_timeline_rows=200)
    assert set(fixed["timeline"]["input_len"]) == {1024} and set(fixed["timeline"]["output_len"]) == {128}


def test_series_and_timeline_are_capped_for_plotting():
    r = run(num_prompts=1000, request_rate=50, max_points=150, max_timeline_rows=40)
    assert len(r["series"]["t_s"]) <= 150 < r["series"]["points_of"]
    assert len(r["timeline"]["request"]) == 40 and r["timeline"]["rows_of"] == 1000
    assert r["series"]["t_s"] == sorted(r["series"]["t_s"])


def test_cost_per_million_output_tokens():
    r = run(num_prompts=50, price_per_hour=2.0)
    assert r["usd_per_million_output_tokens"] == pytest.approx(2.0 * r["duration_s"] / 3600 / (50 * 128 / 1e6))
    assert run(num_prompts=5)["price_kind"] == "on-demand"  # the catalogue's price
    assert r["engine_rules"]["modelled"] and r["engine_rules"]["not_modelled"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"request_rate": 0}, "request_rate"),
        ({"request_rate": -1}, "request_rate"),
        ({"request_rate": "fast"}, "request_rate"),
        ({"num_prompts": 0}, "num_prompts"),
        ({"num_prompts": 100_001}, "num_prompts"),
        ({"input_len": float("nan")}, "input_len"),
        ({"input_len": 4000, "max_model_len": 4096}, "output_len"),
        ({"input_len": 5000, "max_model_len": 4096}, "input_len"),
        ({"random_range_ratio": 1}, "random_range_ratio"),
        ({"dataset": "fixed", "random_range_ratio": 0.5}, "random_range_ratio"),
        ({"dataset": "sharegpt"}, "dataset"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"bandwidth_efficiency": 2}, "bandwidth_efficiency"),
        ({"compute_efficiency": 0}, "compute_efficiency"),
        ({"weight_only_fp4_compute_efficiency": 1.5}, "weight_only_fp4_compute_efficiency"),
        ({"frontend_ms": -1}, "frontend_ms"),
        ({"chat_template_ms": -1}, "chat_template_ms"),
        ({"chat_template_ms": float("nan")}, "chat_template_ms"),
        ({"engine": "llamacpp"}, "engine"),
        ({"max_model_len": 10**9}, "max_model_len"),
        ({"gpu_memory_utilization": 0.05}, "max_model_len"),
        ({"max_num_batched_tokens": 64, "max_num_seqs": 128}, "max_num_batched_tokens"),
        ({"seed": -1}, "seed"),
        ({"burstiness": float("nan")}, "burstiness"),
        ({"burstiness": -math.inf}, "burstiness"),
    ],
)
def test_bad_inputs_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        run(**kwargs)


def test_inf_rate_spellings():
    for rate in (math.inf, "inf", None):
        assert run(num_prompts=5, request_rate=rate)["workload"]["request_rate_text"] == "inf"


def test_a_close_call_refusal_is_simulated_at_the_estimates_optimistic_edge_and_said_so():
    """gpt-oss-120b on one H100 at 65,536 (Triton path, FlashInfer's sampler as in vLLM 0.10.2's Docker image):
    kvlab expects a refusal by 37 MiB, inside the estimate's band, so the simulation runs with the KV the band leaves
    and says so; far past the band (131,072) it refuses."""
    r = simulate(
        "gpt-oss-120b",
        "h100-sxm",
        weights_format="MXFP4",
        max_model_len=65536,
        num_prompts=8,
        input_len=512,
        output_len=64,
        sampler="flashinfer",
    )
    assert r["completed"] == 8
    note = r["kv_pool"]["close_call"]
    assert note.startswith("close call: kvlab expects vLLM to refuse this") and "optimistic edge" in note
    assert 3 * 2**30 < r["kv_pool"]["available_bytes"] < 5 * 2**30
    assert run()["kv_pool"]["close_call"] is None
    with pytest.raises(ValueError, match="max_model_len: .*would not start"):
        simulate(
            "gpt-oss-120b",
            "h100-sxm",
            weights_format="MXFP4",
            max_model_len=131072,
            num_prompts=8,
            sampler="flashinfer",
        )


# ---------------------------------------------------------------------------- session 4: engine behaviour


def test_a_sliding_window_group_holds_only_the_blocks_its_window_still_covers():
    # gpt-oss-20b: 12 sliding (window 128) and 12 full layers, one group each in vLLM's hybrid layout
    arch = model_architecture("gpt-oss-20b")
    layout_kv = scheduler.vllm_kv_cache(arch, 8192, "auto", block_size=16, max_num_batched_tokens=2048, tp=1)
    blocks = scheduler.RequestBlocks(scheduler.gpu_stages(layout_kv)[0]["layout"], 8192, 2048)
    # decoding token 4001 with 4000 computed: blocks wholly before token 4000 - 128 + 1 = 3873 are freed
    # (3873 // 16 = 242 of them), so the sliding group keeps 251 - 242 = 9 and the full group all 251
    assert blocks.one(4001, 4000) == 251 + 9
    assert blocks.of(np.array([4001]), np.array([4000]))[0] == 251 + 9
    # before the window has filled nothing is freed
    assert blocks.one(100, 99) == 2 * 7
    # a 2,048-token chunk from 4,000 computed: the window's last 127 tokens plus the chunk
    assert blocks.one(6048, 4000) == 378 + (378 - 242)
    # without the computed count: the memory estimate's cap (window - 1 + max_num_batched_tokens)
    assert blocks.one(6048) == 378 + min(378, -(-(127 + 2048) // 16) + 1)


def test_decoding_sliding_window_requests_leave_the_pool_for_others():
    r = simulate(
        "gpt-oss-20b",
        GPU,
        weights_format="MXFP4",
        num_prompts=4,
        max_concurrency=4,
        dataset="fixed",
        input_len=4000,
        output_len=64,
        max_model_len=8192,
        trace=True,
    )
    used = [r["kv_pool"]["blocks"] - e["free_blocks"] for e in r["trace"] if e["running"] == 4 and e["steps"] > 1]
    assert used
    # 4 requests of at most 4,064 tokens: 254 full-layer blocks each + at most 9 sliding ones (not 254 + 254)
    assert max(used) <= 4 * (254 + 9)
    assert min(used) >= 4 * (251 + 8)


def test_async_scheduling_overlaps_the_cpu_time_with_the_gpu():
    kw = {"num_prompts": 2, "max_concurrency": 1, "output_len": 64, **plain_roofline(0.5)}
    gpu_only = run(**kw)["tpot_ms"]["mean"]
    cpu = {"step_overhead_ms": 1.0, "request_overhead_us": 500}
    sync = run(**(kw | cpu))["tpot_ms"]["mean"]
    overlapped = run(**(kw | cpu), async_scheduling=True, async_hidden_share=1.0)
    assert sync == pytest.approx(gpu_only + 1.5, rel=1e-6)
    assert overlapped["tpot_ms"]["mean"] == pytest.approx(gpu_only, rel=1e-6)  # 1.5 ms of CPU hides under the GPU
    assert overlapped["engine_settings"]["async_scheduling"] and "--async-scheduling" in overlapped["flags"]
    # CPU longer than the GPU: the step takes the CPU's time
    slow_cpu = run(**(kw | {"step_overhead_ms": 100.0}), async_scheduling=True)["tpot_ms"]["mean"]
    assert slow_cpu == pytest.approx(100.0, rel=1e-6)
    with pytest.raises(ValueError, match="async_scheduling"):
        run(num_prompts=2, async_scheduling="yes")


def test_vllms_async_scheduling_hides_the_step_time_and_a_share_of_the_request_time():
    """The per-step time hides whole; of the per-request time (0.5 ms for the one request here) only
    async_hidden_share hides, the rest stays in the step: the stored share unless one is given."""
    from kvlab.memory.scheduler import async_scheduling_fit

    kw = {"num_prompts": 2, "max_concurrency": 1, "output_len": 64, **plain_roofline(0.5)}
    kw |= {"step_overhead_ms": 1.0, "request_overhead_us": 500, "async_scheduling": True}
    gpu_only = run(**(kw | {"step_overhead_ms": 0, "request_overhead_us": 0}))["tpot_ms"]["mean"]
    for share in (0.0, 0.5):
        r = run(**kw, async_hidden_share=share)
        assert r["tpot_ms"]["mean"] == pytest.approx(gpu_only + (1 - share) * 0.5, rel=1e-6)
        assert r["efficiency"]["async_hidden_share"] == share
    stored = async_scheduling_fit()["hidden_share"]
    assert 0 <= stored <= 1
    default = run(**kw)
    assert default["efficiency"]["async_hidden_share"] == stored
    assert default["tpot_ms"]["mean"] == pytest.approx(gpu_only + (1 - stored) * 0.5, rel=1e-6)
    assert run(**(kw | {"async_scheduling": False}))["efficiency"]["async_hidden_share"] is None
    with pytest.raises(ValueError, match="async_hidden_share"):
        run(**kw, async_hidden_share=1.5)


def test_the_async_share_keeps_the_same_bits_on_both_paths(monkeypatch):
    """Small running batches and short stretches are simulated in Python floats, large ones with numpy, with the same
    operations in the same order (module docstring, "Speed"): under async scheduling with a share below 1 too, forcing
    numpy everywhere gives the same bits."""
    from kvlab.memory import scheduler

    kw = {"num_prompts": 96, "max_concurrency": 80, "output_len": 96, "input_len": 256, "async_scheduling": True}
    # memory-bound stretches; compute-bound ones (a low compute efficiency); steps with all-reduces (TP2)
    for extra in ({}, {"compute_efficiency": 0.01}, {"n_gpus": 2}):
        for share in (0.34, 1.0):
            mixed = run(**kw, **extra, async_hidden_share=share)
            with monkeypatch.context() as m:
                m.setattr(scheduler, "SMALL_BATCH", 0)
                m.setattr(scheduler, "SMALL_BATCH_BACK", -1)
                m.setattr(scheduler, "SMALL_STEPS", 0)
                numpy_only = run(**kw, **extra, async_hidden_share=share)
            for key in ("duration_s", "ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"):
                assert mixed[key] == numpy_only[key], (extra, share, key)
    assert run(**kw, async_hidden_share=0.34)["duration_s"] > run(**kw, async_hidden_share=1.0)["duration_s"]


def test_enforce_eager_adds_each_layers_launch_time_to_every_step():
    kw = {"num_prompts": 2, "max_concurrency": 1, "output_len": 64, **plain_roofline(0.5)}
    graphs = run(**kw)
    eager = run(**kw, enforce_eager=True)
    layers = model_architecture(MODEL).n_layers
    per_step_ms = layers * scheduler.EAGER_LAYER_MS
    # one decode token per step: every step is EAGER_LAYER_MS x layers longer, so is TPOT
    assert eager["tpot_ms"]["mean"] == pytest.approx(graphs["tpot_ms"]["mean"] + per_step_ms, rel=1e-6)
    # the prefill step too: TTFT grows by at least one step's launches
    assert eager["ttft_ms"]["mean"] >= graphs["ttft_ms"]["mean"] + per_step_ms * (1 - 1e-9)
    assert eager["engine_settings"]["enforce_eager"] and "--enforce-eager" in eager["flags"]
    assert "--enforce-eager" not in graphs["flags"] and not graphs["engine_settings"]["enforce_eager"]
    assert eager["efficiency"]["eager_ms_per_step"] == pytest.approx(per_step_ms)
    assert any(scheduler.EAGER_SOURCE in a for a in eager["assumptions"])
    with pytest.raises(ValueError, match="enforce_eager"):
        run(num_prompts=2, enforce_eager="yes")


def _one_prefill_step(model: str, half_rows: float) -> float:
    """Seconds of one 8,192-token prompt prefilled in one step on an H100 at a bare roofline (compute-bound)."""
    kw = {"num_prompts": 1, "input_len": 8192, "output_len": 2, "max_model_len": 16384, "max_num_batched_tokens": 8192}
    r = simulate(model, "h100-sxm", **kw, trace=True, **(plain_roofline(0.5) | {"moe_half_rows": half_rows}))
    assert (
        r["trace"][0]["prefill_tokens"] == 8192 and r["compute_bound_share"] > 0.95
    )  # (the one decode step after it is memory-bound)
    return r["ttft_ms"]["median"] / 1000


def test_an_moe_step_pays_half_rows_worth_of_flops_for_each_expert_it_touches():
    # session 24: an expert's GEMM of m rows runs at efficiency x m / (m + h), i.e. its m rows' FLOPs plus h rows' more;
    # 8,192 tokens touch every one of Qwen3-30B-A3B's 128 experts (8 per token), so the step computes 128 x h rows of
    # each expert's FLOPs (3 x hidden x moe_intermediate x 2 per MoE layer) on top of the same step without it
    arch = model_architecture("qwen3-30b-a3b")
    h = 64
    per_expert_row = 2 * 3 * arch.hidden_size * 768 * arch.n_layers  # 768: its moe_intermediate_size
    routed = (arch.active_params - arch.params * 8 / 128) / (1 - 8 / 128)  # the catalogue's solve for the rest
    per_expert_row_catalogue = 2 * (arch.active_params - routed) / 8  # active experts' FLOPs per token / k
    assert per_expert_row_catalogue == pytest.approx(per_expert_row, rel=0.15)  # the catalogue's counts agree
    touched = 128 * (1 - (1 - 8 / 128) ** 8192)
    extra = touched * h * per_expert_row_catalogue
    slower = _one_prefill_step("qwen3-30b-a3b", h) - _one_prefill_step("qwen3-30b-a3b", 0)
    assert slower == pytest.approx(extra / (989.5e12 * 0.5), rel=1e-6)
    # a dense model has no experts: nothing changes
    assert _one_prefill_step("qwen3-8b", h) == _one_prefill_step("qwen3-8b", 0)


def test_fewer_rows_per_expert_cost_an_moe_more_per_token():
    # the same prompt in 4,096-token chunks against one 16,384-token step, every step compute-bound: four steps each
    # paying the experts' h rows, against one (A100's default budget, 2,048, against H100's 8,192 is the same ratio)
    kw = {"num_prompts": 1, "input_len": 16384, "output_len": 2, "max_model_len": 32768}

    def ttft(budget: int, h: float) -> float:
        roofline = plain_roofline(0.5) | {"moe_half_rows": h}
        r = simulate("qwen3-30b-a3b", "h100-sxm", **kw, max_num_batched_tokens=budget, **roofline)
        assert r["compute_bound_share"] > 0.95  # (the one decode step after it is memory-bound)
        return r["ttft_ms"]["median"]

    small, large = ttft(4096, 64) - ttft(4096, 0), ttft(16384, 64) - ttft(16384, 0)
    assert small == pytest.approx(4 * large, rel=1e-3)
