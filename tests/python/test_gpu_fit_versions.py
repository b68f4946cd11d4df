"""The gpu-fit widget's vLLM version: 0.20 and later by default (0.92 of the card, the CUDA-graph estimate off the KV
budget), 0.8-0.19 (V1: 0.9, no such term) on request; the share field's default follows the version, and the picker
is rendered by the shared vllm_controls macro for a widget whose function takes `engine_version`."""

from __future__ import annotations

import inspect
import json
import re
import sys

import pytest

import kvlab
from kvlab.bridge import call_json
from kvlab.dtypes import GIB
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.engines import reserve_features, sampler_peak, vllm_cuda_graph_estimate
from kvlab.wording import human_bytes
from tests.python.widget_calls import ROOT, WIDGET_FUNCTION, WIDGETS

LLAMA = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "weights": "BF16", "kv": "f16", "context": 32768, "mode": "vllm"}


def _segments(data: dict) -> dict[str, int]:
    return {s["name"]: s["bytes"] for s in data["segments"]}


def _core(version: str, **settings):
    """kvlab's own verdict for LLAMA at `version` (the widget must show exactly this)."""
    dep = kvlab.deployment(
        "llama-3.1-8b", weights="BF16", kv="f16", gpu="h100-sxm", engine="vllm", version=version, **settings
    )
    return kvlab.verdict(dep, 32768)


def test_the_default_is_vllm_0_21_and_later_at_its_own_share():
    assert inspect.signature(kvlab.gpu_fit_figure).parameters["engine_version"].default == "0.20+"
    data = kvlab.gpu_fit_figure(**LLAMA)
    core = _core("0.20+")
    assert data["params"]["engine_version"] == "0.20+" and data["params"]["gpu_memory_utilization"] == 0.92
    assert "--gpu-memory-utilization 0.92" in data["flags"]
    assert data["budget"]["bytes"] == core["budget_bytes"] and data["total"]["bytes"] == core["total_bytes"]
    assert data["view"]["engine_text"].startswith("Modelled on vLLM 0.20 and later (V1 engine, an estimate of its CUDA")
    assert data["options"]["vllm_defaults"]["gpu_memory_utilization"] == 0.92


def test_the_version_changes_the_budget_for_the_same_inputs():
    new, old = (kvlab.gpu_fit_figure(**LLAMA, engine_version=v) for v in ("0.20+", "v1"))
    # each at its own default share: 0.92 of what the driver reports against 0.9
    usable = _core("v1")["engine_model"]["usable_bytes"]
    assert new["budget"]["bytes"] == int(usable * 0.92) and old["budget"]["bytes"] == int(usable * 0.9)
    assert new["budget"]["bytes"] > old["budget"]["bytes"]
    assert (new["params"]["gpu_memory_utilization"], old["params"]["gpu_memory_utilization"]) == (0.92, 0.9)
    assert old["budget"]["bytes"] == _core("v1")["budget_bytes"] and old["total"]["bytes"] == _core("v1")["total_bytes"]
    assert old["view"]["engine_text"].startswith("Modelled on vLLM 0.8-0.19 (V1 engine): ")
    # the catalogue table asks every GPU the same question, at the same version
    for data, version in ((new, "0.20+"), (old, "v1")):
        for row in data["gpus"][:4]:
            dep = kvlab.deployment(
                "llama-3.1-8b", weights="BF16", kv="f16", gpu=row["id"], engine="vllm", version=version
            )
            assert row["headroom"]["bytes"] == kvlab.verdict(dep, 32768)["headroom_bytes"], (version, row["id"])


def test_0_21_subtracts_the_cuda_graph_estimate_as_a_segment_of_its_own():
    share = {"gpu_memory_utilization": 0.9}  # the same share: only what the version does differs
    new, old = (kvlab.gpu_fit_figure(**LLAMA, **share, engine_version=v) for v in ("0.20+", "v1"))
    assert new["budget"] == old["budget"]
    graphs = vllm_cuda_graph_estimate()["bytes"]
    assert graphs > 0 and _core("0.20+", **share)["engine_model"]["cuda_graphs_bytes"] == graphs
    seg_new, seg_old = _segments(new), _segments(old)
    assert "cuda_graphs" not in seg_old and seg_new["cuda_graphs"] == graphs
    # the verdict's reserve, split: what the profile keeps, then the estimate; the profile's peak differs by the
    # sampler warm-up alone (V1 up to 0.16 sorts 1,024 rows of logits natively, 0.20 and later run a kernel without the sort)
    feats = reserve_features(model_architecture("llama-3.1-8b"), 8192, 1024)
    warm_up = (sampler_peak(feats, "native")[0] - sampler_peak(feats, "flashinfer")[0]) * GIB
    assert seg_old["activation_reserve"] - seg_new["activation_reserve"] == pytest.approx(warm_up, abs=2)
    reserve = next(c for c in _core("0.20+", **share)["components"] if c["name"] == "activation_reserve")
    assert seg_new["activation_reserve"] + seg_new["cuda_graphs"] == reserve["bytes"]
    # the KV room shrinks by the estimate (and 0.20+'s null block, one block of 16 tokens) and grows by the warm-up
    null_block = 16 * 32 * 2 * 8 * 128 * 2
    assert old["headroom"]["bytes"] - new["headroom"]["bytes"] == pytest.approx(graphs + null_block - warm_up, abs=2)
    assert new["total"]["bytes"] == sum(seg_new.values())
    row = {s["name"]: s for s in new["segments"]}
    assert row["cuda_graphs"]["label"] == "CUDA graphs (estimate)" and "0.20+" in row["cuda_graphs"]["how"]
    assert "CUDA graphs" not in row["activation_reserve"]["how"] and row["activation_reserve"]["label"] == (
        "activation reserve"
    )
    assert f"CUDA graphs (estimate) {human_bytes(graphs)}, " in new["view"]["bar_label"]
    # the terms move the verdict's numbers, not just its words: here the warm-up 0.20 no longer sorts frees more than
    # the estimate and the null block take, so more sequences fit
    assert warm_up > graphs + null_block and new["max_sequences"] > old["max_sequences"]


def test_llama_cpp_ignores_the_version_but_keeps_it():
    base = {**LLAMA, "mode": "llamacpp", "kv": "q8_0", "weights": "Q4_K_M"}
    new, old = (kvlab.gpu_fit_figure(**base, engine_version=v) for v in ("0.20+", "v1"))
    assert new["budget"] == old["budget"] and new["segments"] == old["segments"]
    assert old["params"]["engine_version"] == "v1" and old["params"]["gpu_memory_utilization"] == 0.9
    assert new["view"]["engine_text"] == old["view"]["engine_text"]
    assert new["view"]["engine_text"].startswith("Modelled on llama.cpp")


def test_the_former_name_of_the_range_is_taken_as_it():
    """The range was "0.21+" until the 0.20.0 sdist showed the same defaults (vllm/envs.py, vllm/config/cache.py): a
    share link or a script that says "0.21+" gets "0.20+", in the widget, the deployment and the picker's option."""
    old, new = (kvlab.gpu_fit_figure(**LLAMA, engine_version=v) for v in ("0.21+", "0.20+"))
    assert old["params"]["engine_version"] == "0.20+" and old["headroom"] == new["headroom"]
    dep = kvlab.deployment("llama-3.1-8b", weights="BF16", gpu="h100-sxm", engine="vllm", version="0.21+")
    assert dep.version == "0.20+" and dep.gpu_memory_utilization == 0.92
    (recent,) = [v for v in new["options"]["vllm_versions"] if v["id"] == "0.20+"]
    assert recent["aliases"] == ["0.21+"]


@pytest.mark.parametrize("bad", ["v0", "v0-pre-mla", "0.21", "", None, 21, ["0.20+"]])
def test_a_version_not_offered_is_a_value_error_naming_the_field(bad):
    for mode in ("vllm", "llamacpp"):
        with pytest.raises(ValueError, match=r"^engine_version must be one of 0\.20\+, v1, got "):
            kvlab.gpu_fit_figure(**{**LLAMA, "mode": mode, "kv": "f16"}, engine_version=bad)
    reply = json.loads(call_json("gpu_fit_figure", json.dumps({"mode": "vllm", "kv": "fp8", "engine_version": bad})))
    assert reply["error"].startswith("ValueError: engine_version must be one of") and "\n" not in reply["error"]


def test_the_share_follows_the_version_unless_given_and_junk_names_the_field():
    assert (
        kvlab.gpu_fit_figure(**LLAMA, engine_version="v1", gpu_memory_utilization=None)["params"][
            "gpu_memory_utilization"
        ]
        == 0.9
    )
    given = kvlab.gpu_fit_figure(**LLAMA, engine_version="v1", gpu_memory_utilization=0.92)
    assert given["params"]["gpu_memory_utilization"] == 0.92 and "--gpu-memory-utilization 0.92" in given["flags"]
    # the parameter's default is None now (the version's share), so the registry's numeric grid no longer walks it
    for junk in ('"x"', "NaN", "Infinity", "1e308", "[1]", "true"):
        reply = json.loads(
            call_json("gpu_fit_figure", f'{{"mode": "vllm", "kv": "fp8", "gpu_memory_utilization": {junk}}}')
        )
        if "error" in reply:
            assert reply["error"].startswith("ValueError: gpu_memory_utilization"), (junk, reply)
        else:
            assert list(reply) == ["result"], (junk, reply)
    null = json.loads(call_json("gpu_fit_figure", '{"mode": "vllm", "kv": "fp8", "gpu_memory_utilization": null}'))
    assert null["result"]["params"]["gpu_memory_utilization"] == 0.92


def _render(widget: str, data: dict) -> str:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from sitebuild.widget_blocks import WidgetRenderer, discover_widgets

    return WidgetRenderer(discover_widgets()).render_template(widget, json.loads(json.dumps(data)), {}, uid="w")


def _select(html: str, name: str) -> str | None:
    m = re.search(rf'<select name="{name}"[^>]*>.*?</select>', html, re.S)
    return m.group(0) if m else None


def test_the_picker_renders_the_versions_and_is_off_unless_vllm():
    html = _render("gpu-fit", kvlab.gpu_fit_figure(**LLAMA, engine_version="v1"))
    select = _select(html, "engine_version")
    assert select and "disabled" not in select.split(">")[0]
    options = re.findall(
        r'<option value="([^"]+)"\s*(?:data-aliases="([^"]*)"\s*)?(selected)?>([^<]+)</option>', select
    )
    assert [(v, aliases, label) for v, aliases, _, label in options] == [
        ("0.20+", "0.21+", "0.20 and later (current)"),  # an old link's 0.21+ picks it (embed.js applyQueryParams)
        ("v1", "", "0.8-0.19 (V1 engine)"),
    ]
    assert [v for v, _, chosen, _ in options if chosen] == ["v1"]
    assert re.search(r'name="gpu_memory_utilization"[^>]*value="0\.9"', html)
    label = re.search(r"<span>vLLM's share of GPU memory \(.*?\)</span>", html).group(0)
    assert "default 0.92 from vLLM 0.20, 0.9 before" in label
    llama = _render("gpu-fit", kvlab.gpu_fit_figure())
    assert "disabled" in _select(llama, "engine_version").split(">")[0]
    assert re.search(r'name="gpu_memory_utilization"[^>]*value="0\.92"', llama)  # the page's static default


@pytest.mark.parametrize(
    "widget", [w for w in WIDGET_FUNCTION if "vllm_controls(" in (WIDGETS / w / "template.html").read_text()]
)
def test_a_widget_gets_the_picker_exactly_when_its_function_takes_the_version(widget):
    fn = getattr(kvlab, WIDGET_FUNCTION[widget])
    takes = "engine_version" in inspect.signature(fn).parameters
    html = _render(widget, fn())
    assert (_select(html, "engine_version") is not None) == takes, widget


def test_the_engine_line_ends_vllms_own_refusal_with_one_full_stop():
    # Qwen3.6-27B on a 24 GiB card: vLLM 0.20+ refuses (max_num_seqs above the Mamba cache blocks), in its own words
    text = kvlab.gpu_fit_figure(mode="vllm", kv="fp8")["view"]["engine_text"]
    assert "vLLM 0.20+ refuses to start: " in text and text.endswith("gpu_memory_utilization.")
    assert ".." not in text
