"""vLLM 0.11.0's per-request chat-template parse (bench/chat_template_cost.py, stored in serving_benchmarks.json
"chat_template"): the stored medians are of the templates kept in bench/data/chat_templates, and every published
chat run on vLLM 0.11.0 whose model is not gpt-oss has its template measured."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kvlab.memory.scheduler import PARSES_CHAT_TEMPLATE_PER_REQUEST, chat_template_ms
from kvlab.memory.serving import serving_benchmarks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import chat_template_cost  # noqa: E402

STORED = serving_benchmarks()["chat_template"]
RUNS = json.loads((ROOT / "tests" / "python" / "data" / "serving_runs.json").read_text(encoding="utf-8"))["runs"]


@pytest.mark.parametrize("key", sorted(chat_template_cost.TEMPLATES))
def test_the_stored_measurement_is_of_the_template_kept_here(key):
    spec = chat_template_cost.TEMPLATES[key]
    text = (chat_template_cost.TEMPLATE_DIR / spec["file"]).read_text(encoding="utf-8")
    row = STORED["templates"][key]
    assert row["chars"] == len(text)
    assert row["variables"] == sorted(chat_template_cost.per_request_parse(text))
    assert row["models"] == spec["models"] and row["of"].startswith("https://huggingface.co/")
    assert 0 < row["render_ms"] < row["parse_ms"]  # the render's compile is cached; the parse is not
    assert "messages" in row["variables"] and "add_generation_prompt" in row["variables"]


def test_every_jinja_chat_run_on_a_parsing_release_has_its_template_measured():
    jinja_chat = [
        r
        for r in RUNS
        if r["engine"] == "vllm"
        and r["engine_version"] in PARSES_CHAT_TEMPLATE_PER_REQUEST
        and r["endpoint"]["kind"] == "chat"
        and not r["model_hf"].startswith("openai/gpt-oss")
    ]
    assert len(jinja_chat) >= 30
    for r in jinja_chat:
        ms, how = chat_template_ms(r["engine"], r["engine_version"], r["model_hf"], "chat")
        assert ms > 0, (r["id"], how)


def test_the_parse_is_the_one_vllm_runs():
    # vLLM 0.11.0's parse reports the template's undeclared variables: the request's kwargs it keeps
    found = chat_template_cost.per_request_parse("{% generation %}{{ messages[0].content }}{% endgeneration %}{{ x }}")
    assert found == {"messages", "x"}


def test_only_adds_a_template_timed_on_another_cpu_scaled_to_the_stored_ones(tmp_path, monkeypatch):
    # session 28: this machine's CPU model changed ("AMD EPYC" where the medians say "Intel(R) Xeon(R) Processor"), and
    # --only refused to add a template; it now keeps the stored medians and their CPU, scales the new template by the
    # stored templates' timings beside it, and records where it was timed
    data = json.loads(chat_template_cost.serving.BENCHMARKS_FILE.read_text(encoding="utf-8"))
    data["chat_template"]["cpu"] = "a CPU this machine is not"
    target = tmp_path / "serving_benchmarks.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(chat_template_cost.serving, "BENCHMARKS_FILE", target)
    monkeypatch.setattr(chat_template_cost, "REPEATS", 1)  # real timings, fewer of them
    monkeypatch.setattr(chat_template_cost, "BATCH", 2)
    chat_template_cost.main(["--only", "glm-4.6", "--write"])
    written = json.loads(target.read_text(encoding="utf-8"))["chat_template"]
    assert written["cpu"] == "a CPU this machine is not"
    row = written["templates"]["glm-4.6"]
    assert row["timed_on"] == chat_template_cost.cpu_name()
    scale = float(row["scaled"].rsplit("scaled by ", 1)[1])
    assert row["parse_ms"] == pytest.approx(row["parse_ms_timed"] * scale, abs=0.01)
    for key in ("qwen3", "deepseek-r1-0528", "glm-4.5"):
        assert written["templates"][key] == STORED["templates"][key]
