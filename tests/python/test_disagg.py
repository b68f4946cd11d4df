"""Disaggregated prefill and decode (kvlab.reuse.disagg, kvlab.pd_transfer_figure): bytes per request from
the model's config by hand, transfer time from the link's rate, prefill as the serving page times it,
colocated vs disaggregated from the model's own equations, every link sourced, bad input named."""

from __future__ import annotations

import json
import math
import re
import typing

import pytest
from typeguard import CollectionCheckStrategy, check_type

import kvlab
from kvlab.bridge import call_json
from kvlab.memory.catalogue import get_gpu, get_model, model_architecture
from kvlab.memory.serving import serving_estimate
from kvlab.reuse.disagg import (
    chunk_tokens,
    get_link,
    interconnects,
    kv_bytes_per_request,
    links,
    pd_compare,
    prefill_seconds,
    transfer_seconds,
)
from kvlab.widgets import disagg_types


def test_bytes_per_request_is_two_tensors_per_layer_per_kv_head_per_token():
    cfg = get_model("llama-3.1-8b")["config"]
    head_dim = cfg["hidden_size"] // cfg["num_attention_heads"]
    per_token = 2 * cfg["num_hidden_layers"] * cfg["num_key_value_heads"] * head_dim * 2  # K and V, f16
    arch = model_architecture("llama-3.1-8b")
    assert kv_bytes_per_request(arch, 8192) == 8192 * per_token
    assert kv_bytes_per_request(arch, 100) == 100 * per_token


def test_a_sliding_window_model_sends_at_most_its_windows():
    arch = model_architecture("gemma-2-9b")
    grow = kv_bytes_per_request(arch, 64_000) - kv_bytes_per_request(arch, 32_000)
    full = kv_bytes_per_request(arch, 32_000) - kv_bytes_per_request(arch, 16_000)
    assert grow == pytest.approx(2 * full, rel=1e-9)  # beyond the windows only the full layers grow
    assert kv_bytes_per_request(arch, 32_000) < 32_000 * kvlab.kv_bytes_per_token(arch)["bytes_per_token"]


@pytest.mark.parametrize("link_id", [x["id"] for x in links()])
def test_transfer_time_is_bytes_over_the_line_rate(link_id):
    link = get_link(link_id)
    assert transfer_seconds(2e9, link) == pytest.approx(2e9 / (link["gb_per_s"] * 1e9))
    assert transfer_seconds(4e9, link) == pytest.approx(2 * transfer_seconds(2e9, link))


def test_every_link_and_fact_carries_a_source_and_a_date():
    data = interconnects()
    entries = data["links"] + data["routers"] + list(data["disaggregation"].values())
    for e in entries:
        assert re.match(r"https://\S+$", e["source"]), e
        assert re.match(r"\d{4}-\d{2}-\d{2}$", e["read"]), e
    for link in data["links"]:
        assert link["status"] in ("vendor", "quoted", "definition")
        assert link["gb_per_s"] > 0
    rates = [x["gb_per_s"] for x in data["links"]]
    assert rates == sorted(rates, reverse=True)  # fastest first, as the tables list them


def test_unknown_link_names_the_field():
    with pytest.raises(ValueError, match="^link must be one of"):
        get_link("carrier-pigeon")


@pytest.mark.parametrize(
    ("model", "gpu", "prompt"), [("llama-3.1-8b", "h100-sxm", 8192), ("qwen3-32b", "a100-80gb", 30000)]
)
def test_prefill_is_timed_as_the_serving_page_times_it(model, gpu, prompt):
    arch = model_architecture(model)
    est = serving_estimate(arch, gpu, prompt + 100, 1, answer_tokens=100, solve=False)
    assert prefill_seconds(arch, get_gpu(gpu), prompt) == pytest.approx(est["prefill_seconds_per_chat"], rel=1e-12)


def test_chunk_is_vllms_budget_less_the_decode_tokens():
    h100 = chunk_tokens(get_gpu("h100-sxm"), 32)
    assert (h100["budget"], h100["chunk"]) == (8192, 8160)
    assert chunk_tokens(get_gpu("a100-80gb"), 32)["chunk"] == 2048 - 32
    assert chunk_tokens(get_gpu("h100-sxm"), 1, max_num_batched_tokens=512)["chunk"] == 511


def test_colocated_and_disaggregated_follow_their_equations():
    arch, card, link = model_architecture("llama-3.1-8b"), get_gpu("a100-80gb"), get_link("roce-100")
    c = pd_compare(arch, card, link, 20_000, 16, 256)
    pre, step, n = c["prefill_seconds"], c["step_seconds"], c["n_chunks"]
    assert n == math.ceil(20_000 / (2048 - 16))
    assert c["colocated"]["ttft"] == pytest.approx(pre + n * step)
    assert c["colocated"]["step_during_prefill"] == pytest.approx(step + pre / n)
    assert c["colocated"]["delay_per_running_request"] == pytest.approx(pre)
    assert c["disaggregated"]["ttft"] == pytest.approx(pre + c["transfer_seconds"] + step)
    assert c["disaggregated"]["step_during_prefill"] == step
    assert c["transfer_share"] == pytest.approx(c["transfer_seconds"] / pre)


def test_a_batch_that_does_not_fit_is_not_timed_but_its_bytes_are():
    d = kvlab.pd_transfer_figure(model="llama-3.1-70b", gpu="l4", prompt_tokens=131072)
    assert d["fits"] is False and d["view"]["rows"] == [] and d["prefill_seconds"] is None
    assert d["kv"]["bytes"] == kv_bytes_per_request(model_architecture("llama-3.1-70b"), 131072)
    assert "Not timed" in d["view"]["headline"]


def test_figure_sentences_carry_the_computed_numbers():
    d = kvlab.pd_transfer_figure()
    v = d["view"]
    assert v["transfer"] in v["headline"] and v["prefill"] in v["headline"]
    chosen = [r for r in d["link_rows"] if r["chosen"]]
    assert [r["id"] for r in chosen] == ["roce-200"] and chosen[0]["time"] == v["transfer"]
    assert v["rows"][0]["label"].startswith("time to first token")
    faster = [r["seconds"] for r in d["link_rows"]]
    assert faster == sorted(faster)
    assert d["throughput"]["vllm"].startswith("“Disaggregated prefill DOES NOT improve throughput.”")


def test_out_of_range_is_clamped_and_said():
    d = kvlab.pd_transfer_figure(prompt_tokens=10**9, batch=0, output_tokens=2.4)
    assert d["params"]["prompt_tokens"] == 2**17 and d["params"]["batch"] == 1 and d["params"]["output_tokens"] == 2
    assert set(d["clamped"]) == {"prompt_tokens", "batch", "output_tokens"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"prompt_tokens": "long"}, "prompt_tokens"),
        ({"batch": float("nan")}, "batch"),
        ({"link": "fax"}, "link"),
        ({"gpu": "tpu"}, "gpu"),
        ({"model": "gpt-2"}, "model"),
        ({"output_tokens": None}, "output_tokens"),
    ],
)
def test_bad_input_names_the_field(kwargs, field):
    reply = json.loads(call_json("pd_transfer_figure", json.dumps(kwargs, allow_nan=True)))
    assert reply["error"].startswith(f"ValueError: {field} ")


@pytest.mark.parametrize(
    "kwargs", [{}, {"model": "llama-3.1-70b", "gpu": "l4"}, {"link": "tcp-25", "prompt_tokens": 16, "batch": 256}]
)
def test_result_matches_its_typed_dict(kwargs):
    hint = typing.get_type_hints(kvlab.pd_transfer_figure, localns=vars(disagg_types))["return"]
    assert hint is disagg_types.PdTransferFigureResult
    check_type(kvlab.pd_transfer_figure(**kwargs), hint, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)
