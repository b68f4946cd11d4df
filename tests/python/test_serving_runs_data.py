"""The published serving runs (tests/python/data/serving_runs.json): sourced, complete, and self-checking.

Every measured number must be readable in the run's own `verbatim` text, so a reviewer (or this test) can
check the figures against what the source printed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kvlab.memory.catalogue import gpus, models

DATA = Path(__file__).parent / "data" / "serving_runs.json"
RUNS = json.loads(DATA.read_text(encoding="utf-8"))["runs"]
RUN_IDS = [r["id"] for r in RUNS]

MEASURED_KEYS = {
    "request_throughput",
    "output_tok_s",
    "total_tok_s",
    "ttft_ms_mean",
    "ttft_ms_median",
    "ttft_ms_p99",
    "tpot_ms_mean",
    "tpot_ms_median",
    "tpot_ms_p99",
    "itl_ms_median",
    "duration_s",
    "completed",
    "preemptions",
}
RUN_KEYS = {
    "id",
    "url",
    "where",
    "date",
    "engine",
    "engine_version",
    "tool",
    "model_hf",
    "model",
    "weights",
    "gpu",
    "gpu_as_published",
    "tp",
    "pp",
    "dp",
    "settings",
    "workload",
    "measured",
    "verbatim",
    "note",
}
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def numbers_in(text: str) -> list[float]:
    """Every number printed in `text`, thousands separators ("1,047") removed."""
    return [float(m.replace(",", "")) for m in NUMBER.findall(text)]


def printed(value: float, text: str) -> bool:
    return any(abs(n - value) < 1e-9 for n in numbers_in(text))


def test_enough_runs_with_unique_ids():
    assert len(RUNS) >= 20
    assert len(RUN_IDS) == len(set(RUN_IDS))


def test_coverage_of_gpus_and_models():
    assert len({r["gpu_as_published"] for r in RUNS}) >= 4
    assert len({r["model_hf"] for r in RUNS}) >= 6
    assert len({r["engine"] for r in RUNS}) >= 2


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_run_is_sourced_and_well_formed(run):
    assert RUN_KEYS <= set(run)
    assert run["url"].startswith("https://")
    assert isinstance(run["verbatim"], str) and run["verbatim"].strip()
    assert run["where"] and run["model_hf"] and "/" in run["model_hf"]
    assert run["date"] is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", run["date"])
    assert MEASURED_KEYS <= set(run["measured"])


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_catalogue_ids_exist(run):
    assert run["gpu"] is None or run["gpu"] in {g["id"] for g in gpus()}
    assert run["model"] is None or run["model"] in {m["id"] for m in models()}


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_numbers_are_positive(run):
    for key, value in run["measured"].items():
        assert value is None or (isinstance(value, int | float) and value > 0), key
    w = run["workload"]
    for key in ("num_prompts", "max_concurrency", "input_len", "output_len"):
        assert w[key] is None or (isinstance(w[key], int) and w[key] > 0), key
    for key in ("tp", "pp", "dp"):
        assert run[key] is None or (isinstance(run[key], int) and run[key] >= 1), key


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_output_throughput_is_printed_in_the_verbatim_text(run):
    value = run["measured"]["output_tok_s"]
    assert value is not None, "every run here publishes an output throughput"
    assert printed(value, run["verbatim"])


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_every_measured_number_is_printed_in_the_verbatim_text(run):
    for key, value in run["measured"].items():
        if value is not None:
            assert printed(value, run["verbatim"]), key


def test_the_number_reader_handles_separators():
    assert printed(1047, "| 256 | 39,891 | 192.91 | 1,047 |")
    assert printed(735.4, "Output token throughput (tok/s):         735.40")
    assert not printed(735.41, "Output token throughput (tok/s):         735.40")


# The text that decides each kind of endpoint: a client flag or printout naming it (vllm bench serve
# `--backend openai-chat --endpoint /v1/chat/completions`, guidellm's default `chat_completions`, sglang.bench_serving
# `--backend sglang-oai-chat`; `--endpoint /v1/completions`, vLLM's `--backend vllm`, SGLang's `sglang-oai`;
# SGLang's native `--backend sglang` / "Backend: sglang")
ENDPOINT_EVIDENCE = {
    "chat": re.compile(r"/v1/chat/completions|chat_completions|--backend sglang-oai-chat"),
    "completions": re.compile(r"--endpoint /v1/completions|--backend vllm\b|sglang-oai(?!-chat)"),
    "generate": re.compile(r"--backend sglang(?![-\w])|Backend:\s+sglang\s*$", re.M),
}


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_endpoint_is_stated_with_the_text_that_decides_it(run):
    """Which API the client called matters to the simulation: vLLM 0.11.0 renders a chat template per chat request
    on the API server (bench/results/2026-12-07-serving-session21.md). Each run says which, with its evidence."""
    e = run["endpoint"]
    assert set(e) == {"kind", "quote", "quote_from", "note"}
    assert e["kind"] in {"chat", "completions", "generate", None}
    assert e["quote"].strip() and e["note"].strip()
    assert "https://" in e["quote_from"]
    if e["kind"] is None:
        assert not any(p.search(e["quote"]) for p in ENDPOINT_EVIDENCE.values()), "the quote names an endpoint"
    else:
        assert ENDPOINT_EVIDENCE[e["kind"]].search(e["quote"]), "the quote does not show this endpoint"
        others = [k for k, p in ENDPOINT_EVIDENCE.items() if k != e["kind"] and p.search(e["quote"])]
        assert not others, f"the quote also shows {others}"


def test_endpoint_evidence_tells_the_kinds_apart():
    kinds = lambda text: sorted(k for k, p in ENDPOINT_EVIDENCE.items() if p.search(text))  # noqa: E731
    assert kinds("vllm bench serve --backend openai-chat --endpoint /v1/chat/completions") == ["chat"]
    assert kinds("benchmark_serving.py --backend vllm --endpoint /v1/completions") == ["completions"]
    assert kinds("benchmark_args=Namespace(backend='sglang-oai'") == ["completions"]
    assert kinds("python -m sglang.bench_serving --backend sglang-oai-chat --model x") == ["chat"]
    assert kinds("python3 -m sglang.bench_serving --backend sglang --dataset-name random") == ["generate"]
    assert kinds("Backend:                                 sglang") == ["generate"]
    assert kinds("Backend:                                 sglang-oai") == ["completions"]


def test_the_pages_read_whole_give_their_stored_entries_again():
    """The pages of sessions 23 and 24 (kept in bench/data/gpustack) read again by bench/gpustack_intake.py give every
    stored entry of those intakes, field for field: an entry edited by hand, or a page changed, shows here."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import gpustack_intake
    import serving_validation

    made = {r["id"]: r for r in gpustack_intake.all_runs()}
    splits = {split for split, *_ in gpustack_intake.INTAKES.values()}
    stored = {r["id"]: r for r in RUNS if r.get("split") in splits}
    assert len(made) == 29 + 29 + 22 and made.keys() == stored.keys()
    assert [i for i in made if made[i] != stored[i]] == []
    # the EP runs are in the file and skipped by name; the rest have a model and a GPU the simulation knows
    assert sum("--enable-expert-parallel" in r["settings"]["other"] for r in made.values()) == 5
    assert sum("--ep-size" in r["settings"]["other"] for r in made.values()) == 16
    # the GLM-4.5-Air H100 page prints the A100 page's 'Other Benchmark Cases' blocks again (its own Conclusion table
    # gives other totals): those 8 are marked as copies and skipped; the blocks they copy are not marked
    copies = {i: r["copy_of"] for i, r in made.items() if r.get("page_error")}
    assert len(copies) == 8 and all(i.startswith("gpustack-h100-glm45air-") for i in copies)
    assert all(made[i]["verbatim"] == made[j]["verbatim"] and not made[j].get("page_error") for i, j in copies.items())
    assert all("copy of" in serving_validation.settings_of(made[i])[1] for i in copies)
    assert [i for i, r in made.items() if r["settings"].get("not_stated")] == [
        "gpustack-h100-glm45air-sglang-tp2-sharegpt"
    ]
    # the GLM-4.x H200 page prints its SGLang FP8 TP8 run twice (section 3 repeats section 2's as its baseline): one run
    assert (
        sum(r["verbatim"] == made["gpustack-h200-glm46-fp8-sglang-tp8-sharegpt"]["verbatim"] for r in made.values())
        == 1
    )
    # its '# ShareGPT batch size 4' block is a --max-concurrency 4 run, and the H100 page's --gpu-memory-utilization is
    # read from its command
    assert made["gpustack-h200-glm46-vllm-tp8-sharegpt-c4"]["workload"]["max_concurrency"] == 4
    assert made["gpustack-h100-glm46-fp8-vllm-tp8-sharegpt"]["settings"]["gpu_memory_utilization"] == 0.85
