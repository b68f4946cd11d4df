#!/usr/bin/env python3
"""What vLLM 0.11.0's API server spends per chat request on the model's chat template, measured here.

    .venv/bin/python bench/chat_template_cost.py           # print the table
    .venv/bin/python bench/chat_template_cost.py --write   # also store the medians in
                                                           # kvlab/data/serving_benchmarks.json, "chat_template"

vLLM 0.11.0 serves /v1/chat/completions for every model but gpt-oss (rendered by openai_harmony) through
`apply_hf_chat_template` (vllm/entrypoints/chat_utils.py). That calls `resolve_chat_template_kwargs`, which builds a
Jinja sandbox and parses the whole chat template on every request, on the API server's event loop:

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    parsed_content = env.parse(chat_template)
    template_vars = jinja2.meta.find_undeclared_variables(parsed_content)

(https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/entrypoints/chat_utils.py, read from the PyPI wheel
vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl). vLLM 0.11.1 caches it (`_cached_resolve_chat_template_kwargs =
lru_cache(resolve_chat_template_kwargs)`, in the 0.11.1, 0.11.2 and 0.12.0 wheels). The template's render that
follows (transformers' `apply_chat_template`) compiles through an lru_cache, so only the render itself is per request.

This script runs that code (the three lines above, AssistantTracker as vLLM defines it) on the chat templates of the
models whose published runs are chat runs on vLLM 0.11.0 (bench/data/chat_templates, sources in TEMPLATES) and
prints the median time per request of the parse and of one render of a one-message chat. It measures this machine's
CPU, not the benchmark hosts': `--write` stores the medians with the CPU they were measured on, and
kvlab.memory.scheduler.chat_template_ms reads them.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import jinja2
import jinja2.ext
import jinja2.meta
import jinja2.nodes
import jinja2.sandbox

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))

from kvlab.memory import serving  # noqa: E402

TEMPLATE_DIR = ROOT / "bench" / "data" / "chat_templates"
# each template's text, where it was copied from, and the model card it is the chat_template of (the Hugging Face Hub
# is out of reach here: the copies are public repositories' quotes of the tokenizer_config.json value)
TEMPLATES = {
    "qwen3": {
        "file": "qwen3.jinja",
        # the FP8 and AWQ checkpoints Qwen published beside them carry the same tokenizer_config.json (assumed: the
        # Hub is out of reach here)
        "models": [
            "Qwen/Qwen3-8B",
            "Qwen/Qwen3-14B",
            "Qwen/Qwen3-14B-FP8",
            "Qwen/Qwen3-14B-AWQ",
            "Qwen/Qwen3-32B",
            "Qwen/Qwen3-32B-FP8",
            "Qwen/Qwen3-32B-AWQ",
            # the 2507 releases: the Thinking-2507 template, read in a public copy of its tokenizer_config.json
            # (akougkas/warpio-cli warpio-docs/ai-docs/model_cards/qwen3:4b.md), reads as Qwen3's with another
            # generation prompt. The Instruct-2507 one is not Qwen3-8B's: session 28 found its two texts (the launch
            # one, 4,040 bytes, parsing in 16.5 ms here, and the one Qwen pinned later, 2,630 bytes, 8.2 ms) and judged
            # charging the later one's parse (V) or none (T) against the held-out runs; neither passed its
            # pre-registered rule, so these checkpoints still take Qwen3-8B's parse, which their all-at-once runs
            # contradict on both of GPUStack's hosts: their median TTFTs (A100 12.4 s, H100 5.5-8.7 s) come before
            # 1,000 requests at 14.6 ms each could have entered (bench/results/2026-12-07-serving-session28.md; the
            # H100 host's bound was first noted in bench/results/2026-12-07-serving-session23.md)
            "Qwen/Qwen3-235B-A22B-Instruct-2507",
            "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        ],
        "of": "https://huggingface.co/Qwen/Qwen3-8B/blob/895c8d171bc03c30e113cd7a28c02494b5e068b7/tokenizer_config.json#L230",
        "copied_from": "a public repository's copy labelled 'Qwen-3 chat templates' (gen_chat_template, a SkyRL-based "
        "agent), the same text as wangling03/BioReason bioreason/models/dl/chat_template_dl.py apart from the "
        "later 'message.content is string' guards; tyler-griggs/SkyRL skyrl-train/skyrl_train/utils/templates/"
        "README.md links the official template above",
    },
    "deepseek-r1-0528": {
        "file": "deepseek-r1-0528.jinja",
        "models": ["deepseek-ai/DeepSeek-R1-0528"],
        "of": "https://huggingface.co/deepseek-ai/DeepSeek-R1-0528/blob/main/tokenizer_config.json",
        "copied_from": "ShishirPatil/gorilla berkeley-function-call-leaderboard/bfcl/model_handler/local_inference/"
        "deepseek_reasoning.py (the DeepseekReasoningHandler._format_prompt docstring quotes tokenizer_config.json; "
        "the is_first_sp system-prompt handling is the 0528 revision's)",
    },
    "glm-4.5": {
        "file": "glm-4.5.jinja",
        # GLM-4.5 and GLM-4.5-Air ship the same template (zai-org's Hub repositories; the Hub is out of reach here)
        "models": ["zai-org/GLM-4.5-Air", "zai-org/GLM-4.5-Air-FP8"],
        "of": "https://huggingface.co/zai-org/GLM-4.5-Air/blob/main/chat_template.jinja",
        "copied_from": "ggml-org/llama.cpp models/templates/glm_4_5.jinja at 623f3dd04b05999ffcb598a88d4f79fa9c3af849 "
        "(llama.cpp's copy of GLM-4.5's template: the same statements, with tojson's ensure_ascii argument dropped and "
        "a string-arguments branch added for its own Jinja engine; added in session 24 for GPUStack's GLM-4.5-Air "
        "pages, so its parse is an estimate of the official text's)",
    },
    "glm-4.6": {
        "file": "glm-4.6.jinja",
        "models": ["zai-org/GLM-4.6", "zai-org/GLM-4.6-FP8"],
        "of": "https://huggingface.co/zai-org/GLM-4.6/blob/main/chat_template.jinja",
        "copied_from": "ggml-org/llama.cpp models/templates/GLM-4.6.jinja at afefa651447358ae477f31a0ea1b97adff04c64f "
        "(llama.cpp keeps the models' own templates there to test its Jinja engine against; added in session 24 for "
        "GPUStack's GLM-4.6 pages)",
    },
}
REPEATS = 7  # timed batches per template; the median is reported
BATCH = 40  # requests per batch


class AssistantTracker(jinja2.ext.Extension):
    """vLLM 0.11.0's extension (vllm/entrypoints/chat_utils.py), as the parse sees it: a {% generation %} block."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        call = self.call_method("_generation_support")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _generation_support(self, caller):
        return caller()


def environment() -> jinja2.sandbox.ImmutableSandboxedEnvironment:
    """The sandbox vLLM 0.11.0 builds on every request (transformers compiles its cached template in the same one)."""
    return jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, jinja2.ext.loopcontrols]
    )


def per_request_parse(template: str) -> set[str]:
    """What resolve_chat_template_kwargs does with the template on every request in vLLM 0.11.0."""
    return jinja2.meta.find_undeclared_variables(environment().parse(template))


def renderer(template: str):
    """transformers' cached compile, rendered per request."""
    compiled = environment().from_string(template)
    messages = [{"role": "user", "content": "word " * 128}]
    return lambda: compiled.render(messages=messages, add_generation_prompt=True, bos_token="<s>", tools=None)


def median_ms(fn) -> float:
    fn()  # warm
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(BATCH):
            fn()
        times.append((time.perf_counter() - t0) / BATCH * 1e3)
    return statistics.median(times)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure() -> dict:
    rows = {}
    for key, t in TEMPLATES.items():
        text = (TEMPLATE_DIR / t["file"]).read_text(encoding="utf-8")
        rows[key] = {
            "parse_ms": round(median_ms(lambda text=text: per_request_parse(text)), 2),
            "render_ms": round(median_ms(renderer(text)), 3),
            "chars": len(text),
            "variables": sorted(per_request_parse(text)),
            **{k: t[k] for k in ("models", "of", "copied_from")},
        }
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="store the medians in serving_benchmarks.json")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(TEMPLATES),
        help="add these templates and keep the stored ones (a new model's template without moving the medians every "
        "other run was simulated with): the stored templates are timed beside them, and the new medians are scaled by "
        "the stored / timed ratio of theirs (this shared CPU's speed drifts between sessions)",
    )
    args = parser.parse_args(argv)
    rows = measure()
    if args.only:
        stored = json.loads(serving.BENCHMARKS_FILE.read_text(encoding="utf-8"))["chat_template"]["templates"]
        refs = [k for k in stored if k not in args.only]
        scale = statistics.median(stored[k]["parse_ms"] / rows[k]["parse_ms"] for k in refs)
        print(f"--only: the stored templates ({', '.join(refs)}) time {1 / scale:.2f}x their stored medians now")
        for k in args.only:
            rows[k] |= {"parse_ms_timed": rows[k]["parse_ms"], "parse_ms": round(rows[k]["parse_ms"] * scale, 2)}
            rows[k]["scaled"] = f"timed {rows[k]['parse_ms_timed']} ms beside {', '.join(refs)}, scaled by {scale:.3f}"
        rows = {k: (rows[k] if k in args.only else stored[k]) for k in [*stored, *args.only]}
    cpu = cpu_name()
    print(f"CPU: {cpu}; Python {platform.python_version()}, Jinja2 {jinja2.__version__}")
    print("| template | chars | parse per request (vLLM 0.11.0) | render per request |")
    print("|---|---|---|---|")
    for key, r in rows.items():
        print(f"| {key} | {r['chars']:,} | {r['parse_ms']:.2f} ms | {r['render_ms']:.3f} ms |")
    if args.write:
        data = json.loads(serving.BENCHMARKS_FILE.read_text(encoding="utf-8"))
        if args.only and data["chat_template"]["cpu"] != cpu:
            # the stored medians stay, with the CPU they were measured on; the new templates are scaled to them by the
            # stored templates' timings beside them here, so what is kept is their parse relative to those templates
            # (session 28: this machine's CPU model changed between sessions, and --only refused to add a template)
            for k in args.only:
                rows[k]["timed_on"] = cpu
            cpu = data["chat_template"]["cpu"]
        data["chat_template"] = {
            "about": "vLLM 0.11.0's per-request chat-template parse (resolve_chat_template_kwargs) on each model's "
            "template, measured by bench/chat_template_cost.py on the CPU below; the render, whose compile is "
            "cached, is shown beside it. vLLM 0.11.1 and later cache the parse; gpt-oss is rendered by "
            "openai_harmony and never parsed.",
            "cpu": cpu,
            "python": platform.python_version(),
            "jinja2": jinja2.__version__,
            "templates": rows,
            "measured_by": "bench/chat_template_cost.py --write",
        }
        serving.BENCHMARKS_FILE.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {serving.BENCHMARKS_FILE}")


if __name__ == "__main__":
    main()
