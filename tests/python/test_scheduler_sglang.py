"""The serving simulation with SGLang's scheduler (kvlab.memory.scheduler.simulate(engine="sglang")).

Each test pins one rule of SGLang's (scheduler.py get_next_batch_to_run / update_running_batch,
schedule_policy.py PrefillAdder) that differs from vLLM V1's, and can fail when the rule is not followed."""

from __future__ import annotations

import json

import pytest

from kvlab.memory import scheduler, sglang
from kvlab.memory.catalogue import get_gpu
from kvlab.memory.deployment import deployment
from kvlab.memory.scheduler import simulate

MODEL, GPU = "llama-3.1-8b", "h100-sxm"


def run(**kw):
    kw.setdefault("num_prompts", 200)
    return simulate(MODEL, GPU, engine="sglang", **kw)


def test_every_request_completes_and_every_token_is_computed_once():
    r = run(trace=True, max_timeline_rows=10**5, max_concurrency=32, input_len=1024, output_len=128)
    assert r["completed"] == 200 and r["preemptions"] == 0
    assert r["engine"] == "sglang"
    computed = sum(e["tokens_per_step"] * e["steps"] for e in r["trace"])
    assert computed == r["total_input_tokens"] + r["total_output_tokens"] - 200
    tl = r["timeline"]
    for arrival, sched, first, finish in zip(
        tl["arrival_s"], tl["first_scheduled_s"], tl["first_token_s"], tl["finish_s"]
    ):
        assert arrival <= sched < first <= finish <= r["duration_s"]
    json.dumps(r, allow_nan=False)


def test_a_prefill_batch_runs_alone_where_vllm_mixes_it_with_decodes():
    kw = {"trace": True, "request_rate": 8, "input_len": 2048, "output_len": 256, "num_prompts": 100}
    sg = run(**kw)
    prefills = [e for e in sg["trace"] if e["prefill_tokens"]]
    assert prefills and all(e["tokens_per_step"] == e["prefill_tokens"] for e in prefills)
    assert all(e["prefill_tokens"] == 0 for e in sg["trace"] if e not in prefills)
    vllm = simulate(MODEL, GPU, **kw)
    assert any(0 < e["prefill_tokens"] < e["tokens_per_step"] for e in vllm["trace"])
    # decodes wait while a prompt is prefilled: SGLang's ITLs spread wider than its median step
    assert sg["itl_ms"]["mean"] > sg["itl_ms"]["median"]


def test_admission_reserves_each_new_request_its_whole_answer():
    # a pool of ~70k tokens; 64 requests of 512 + 3,584 all in the queue (no frontend spacing), token budgets wide
    # enough not to bind: about pool / 4,096 are admitted together at first, as their answers are reserved
    kw = {"mem_fraction_static": 0.3, "max_model_len": 8192, "input_len": 512, "frontend_ms": 0}
    wide = {"chunked_prefill_size": 65536, "max_prefill_tokens": 65536}
    r = run(trace=True, num_prompts=64, output_len=3584, **kw, **wide)
    pool = r["kv_pool"]["tokens"]
    admitted = r["trace"][0]["prefill_tokens"] // 512
    assert pool // (512 + 3584) - 1 <= admitted <= pool // (512 + 3584) < 64
    # the same prompts with short answers: all 64 fit the pool at once, and all are admitted
    short = run(trace=True, num_prompts=64, output_len=16, **kw, **wide)
    assert short["trace"][0]["prefill_tokens"] == 64 * 512


def test_retraction_frees_the_least_advanced_and_they_prefill_again():
    # a scheduler that reserves almost nothing for running requests' answers over-admits, then retracts
    kw = {"mem_fraction_static": 0.3, "max_model_len": 8192, "input_len": 512, "output_len": 2048}
    r = run(trace=True, max_timeline_rows=10**5, num_prompts=64, schedule_conservativeness=0.02, **kw)
    assert r["completed"] == 64 and r["preemptions"] > 0 and r["requests_preempted"] > 0
    computed = sum(e["tokens_per_step"] * e["steps"] for e in r["trace"])
    assert computed > r["total_input_tokens"] + r["total_output_tokens"] - 64  # recomputed work
    calm = run(num_prompts=64, **kw)
    assert calm["preemptions"] < r["preemptions"]


def test_the_pool_is_the_one_kvlab_fit_gives_for_sglang():
    r = run(num_prompts=8, max_model_len=8192)
    dep = deployment(MODEL, weights="BF16", kv="f16", gpu=get_gpu(GPU), engine="sglang")
    b = sglang.budget(dep, 8192)
    assert r["kv_pool"]["tokens"] == b["max_tokens"]
    assert r["engine_settings"]["chunked_prefill_size"] == b["settings"]["chunked_prefill_size"]["value"]
    assert r["engine_settings"]["max_running_requests"] == b["settings"]["max_running_requests"]["value"]
    assert "--chunked-prefill-size" in r["flags"] and "--max-running-requests" in r["flags"]


def test_max_running_requests_caps_the_batch():
    r = run(trace=True, num_prompts=64, max_running_requests=8, input_len=256, output_len=64)
    assert r["max_running"] == 8
    assert all(e["running"] <= 8 for e in r["trace"])


def test_a_chunked_prompt_takes_the_chunk_budget_and_continues_first():
    r = run(trace=True, num_prompts=4, chunked_prefill_size=1024, input_len=3000, output_len=8)
    prefills = [e["prefill_tokens"] for e in r["trace"] if e["prefill_tokens"]]
    assert max(prefills) <= 1024
    assert sum(prefills) == 4 * 3000


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_num_seqs": 8}, "max_num_seqs is a vLLM setting"),
        ({"gpu_memory_utilization": 0.5}, "gpu_memory_utilization is a vLLM setting"),
        ({"enforce_eager": True}, "enforce_eager is a vLLM setting"),
        ({"schedule_conservativeness": 0}, "schedule_conservativeness"),
        ({"max_prefill_tokens": 0}, "max_prefill_tokens"),
    ],
)
def test_bad_inputs_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        run(num_prompts=4, **kwargs)


def test_sglang_settings_are_refused_for_vllm():
    with pytest.raises(ValueError, match="chunked_prefill_size is a SGLang setting"):
        simulate(MODEL, GPU, num_prompts=4, chunked_prefill_size=2048)
    with pytest.raises(ValueError, match="engine"):
        simulate(MODEL, GPU, num_prompts=4, engine="tensorrt-llm")


def test_a_request_longer_than_the_pool_is_refused_by_its_field():
    with pytest.raises(ValueError, match="input_len: .*SGLang's whole KV pool"):
        run(num_prompts=2, mem_fraction_static=0.2, input_len=60000, output_len=16)


def test_the_rules_are_listed_with_their_source():
    r = run(num_prompts=4)
    assert r["engine_rules"]["modelled"] == scheduler.SGLANG_MODELLED
    assert any("sgl-project/sglang" in a for a in r["assumptions"])


def test_the_radix_cache_serves_a_shared_prefix_once():
    kw = {
        "trace": True,
        "num_prompts": 40,
        # sent 0.2 s apart (evenly: gamma gaps of shape 1,000), so each finds the prefix already computed; requests
        # sent together are taken in together (scheduler module docstring, frontend_ms) and share a prefill step
        "request_rate": 5.0,
        "burstiness": 1e3,
        "input_len": 512,
        "output_len": 32,
        "prefix_len": 1024,
    }
    cached, plain = run(**kw), run(enable_prefix_caching=False, **kw)
    assert cached["preemptions"] == plain["preemptions"] == 0
    work = {
        name: sum(e["tokens_per_step"] * e["steps"] for e in r["trace"]) for name, r in (("c", cached), ("p", plain))
    }
    # the first request computes the prefix; the other 39 take its 1,024 tokens from the cache
    assert work["p"] - work["c"] == 39 * 1024
    assert "--disable-radix-cache" in plain["flags"] and "--disable-radix-cache" not in cached["flags"]


def test_the_widget_says_why_sglang_serves_no_chat():
    import kvlab

    r = kvlab.serving_sim_figure(
        model="qwen3-32b", gpu="rtx-3090", weights="Q4_K_M", engine="sglang", input_len=32768, output_len=1024
    )
    assert r["run"] is None and "SGLang would reject requests" in r["refused"]
    assert r["command"].startswith("python -m sglang.launch_server")
