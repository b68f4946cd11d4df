"""GPUStack Performance Lab pages read into tests/python/data/serving_runs.json entries, every result block of a page.

    .venv/bin/python bench/gpustack_intake.py            # print the entries the kept pages give (JSON)
    .venv/bin/python bench/gpustack_intake.py --check    # compare them with the stored entries; 0 if they agree

The validation set grows by whole pages (docs/memory.md, section 5): each `??? info "... result(s)"` block of a page
becomes one run per `Serving Benchmark Result` printout, with the serving command of the block before it, the
page's engine versions, hardware and benchmark commands. The pages are kept in bench/data/gpustack as the
gpustack/gpustack repository had them at COMMIT (Apache-2.0), so the entries can be made again and checked.
Session 23 read the two Qwen3-235B-A22B pages this way (bench/results/2026-12-07-serving-session23.md), session 24
the two GLM-4.5-Air pages (bench/results/2026-12-07-serving-session24.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))

from kvlab.memory.serving import run_totals  # noqa: E402

RUNS = ROOT / "tests" / "python" / "data" / "serving_runs.json"
PAGE_DIR = ROOT / "bench" / "data" / "gpustack"
COMMIT = "1f37f1b8bd79c6b424a0cb55c7abd08a5c2132dc"
# each intake: the split its runs are held out under, the session that read them (for the runs' note), kvlab's model
# id, the name in the run ids, and the Hugging Face organisation of the page's checkpoints
INTAKES = {
    "qwen3-235b": ("held-out (added 2026-12-07, session 23)", 23, "qwen3-235b-a22b-2507", "qwen3-235b", "Qwen"),
    "glm-4.5-air": ("held-out (added 2026-12-07, session 24)", 24, "glm-4.5-air", "glm45air", "zai-org"),
    "glm-4.6": ("held-out (added 2026-12-07, session 24, GLM-4.6)", 24, "glm-4.6", "glm46", "zai-org"),
}
# kept file: (the page's path in gpustack/gpustack, kvlab's GPU id, the page's "Hardware" line, its intake)
PAGES = {
    "qwen3-235b-a22b-a100.md": (
        "docs/performance-lab/qwen3-235b-a22b/a100.md",
        "a100-80gb",
        "8 x NVIDIA A100 SXM 80GB GPUs on a single node",
        "qwen3-235b",
    ),
    "qwen3-235b-a22b-h100.md": (
        "docs/performance-lab/qwen3-235b-a22b/h100.md",
        "h100-sxm",
        "8 x NVIDIA H100 SXM GPUs on a single node",
        "qwen3-235b",
    ),
    "glm-4.5-air-a100.md": (
        "docs/performance-lab/glm-4.5-air/a100.md",
        "a100-80gb",
        "4 x NVIDIA A100 SXM 80GB GPUs on a single node",
        "glm-4.5-air",
    ),
    "glm-4.5-air-h100.md": (
        "docs/performance-lab/glm-4.5-air/h100.md",
        "h100-sxm",
        "4 x NVIDIA H100 SXM GPUs on a single node",
        "glm-4.5-air",
    ),
    # GPUStack's "GLM-4.x" pages: the model they name and serve is GLM-4.6 (BF16 on the H200, FP8 on the A100 and H100)
    "glm-4.x-a100.md": (
        "docs/performance-lab/glm-4.x/a100.md",
        "a100-80gb",
        "8 x NVIDIA A100 SXM 80GB GPUs on a single node",
        "glm-4.6",
    ),
    "glm-4.x-h100.md": (
        "docs/performance-lab/glm-4.x/h100.md",
        "h100-sxm",
        "8 x NVIDIA H100 SXM GPUs on a single node",
        "glm-4.6",
    ),
    "glm-4.x-h200.md": (
        "docs/performance-lab/glm-4.x/h200.md",
        "h200",
        "8 x NVIDIA H200 SXM GPUs on a single node",
        "glm-4.6",
    ),
}
# blocks whose printed launch command cannot be the one that ran (settings.not_stated: bench/serving_validation.py
# skips them and says why), decided from the command and the card, before the run was simulated
NOT_STATED = {
    "gpustack-h100-glm45air-sglang-tp2-sharegpt": (
        "the page prints `python3 -m sglang.launch_server --model-path zai-org/GLM-4.5-Air --tp-size 2`, which cannot "
        "start on this card: GLM-4.5-Air's BF16 weights are 106B x 2 bytes = 212 GB (197 GiB), more than two H100s "
        "hold (2 x 79.2 GiB); the page's recommended command (its Conclusion) serves zai-org/GLM-4.5-Air-FP8, which "
        "its section 2 chose, so the sections after it likely ran the FP8 checkpoint under the BF16 name"
    ),
}
# the random cases of the page's "Benchmark Dataset" list: (prompts, input, output, id suffix)
CASES = {
    "random 32K input": (100, 32000, 100, "32k"),
    "random 4K input": (500, 4000, 200, "4k"),
    "random 2K input": (500, 2000, 100, "2k"),
    "random 128 input": (1000, 128, 4, "128"),
}
# printed label -> measured key (a float, but the count of requests)
FIELDS = {
    "Request throughput (req/s):": "request_throughput",
    "Output token throughput (tok/s):": "output_tok_s",
    "Total Token throughput (tok/s):": "total_tok_s",
    "Mean TTFT (ms):": "ttft_ms_mean",
    "Median TTFT (ms):": "ttft_ms_median",
    "P99 TTFT (ms):": "ttft_ms_p99",
    "Mean TPOT (ms):": "tpot_ms_mean",
    "Median TPOT (ms):": "tpot_ms_median",
    "P99 TPOT (ms):": "tpot_ms_p99",
    "Median ITL (ms):": "itl_ms_median",
    "Benchmark duration (s):": "duration_s",
    "Successful requests:": "completed",
}
# the sampler the page's vLLM ran, as every other GPUStack vLLM 0.11.0 entry states it (copied from this one)
SAMPLER_FROM = "gpustack-h100-qwen3-14b-vllm-random4k"


def printed(text: str, label: str) -> str | None:
    m = re.search(re.escape(label) + r"\s+([\d.,]+)", text)
    return m.group(1).replace(",", "") if m else None


def measured(verbatim: str) -> dict:
    out = {}
    for label, key in FIELDS.items():
        value = printed(verbatim, label)
        out[key] = None if value is None else int(value) if key == "completed" else float(value)
    out["preemptions"] = None
    return out


def info_blocks(text: str) -> list[tuple[str | None, str | None, str, list[str]]]:
    """(section, label, title, code lines) of every `??? info` block: its `###` section, the plain line above it
    ("vLLM", "TP4", ...; None where there is none) and its fenced code, unindented."""
    lines = text.split("\n")
    section, label, out, i = None, None, [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            section, label = line[4:].strip(), None
        elif line.startswith('??? info "'):
            title = line.split('"')[1]
            j = i + 1
            while not lines[j].strip().startswith("```"):
                j += 1
            k, code = j + 1, []
            while not lines[k].strip().startswith("```"):
                code.append(lines[k][4:].rstrip() if lines[k].startswith("    ") else lines[k].rstrip())
                k += 1
            out.append((section, label, title, code))
            i = k
        elif line.strip() and not line.startswith(("|", "!!!", "Result", "We ", "Running", "    ", "#", "```", "![")):
            label = line.strip()
        i += 1
    return out


def results(code: list[str]) -> list[tuple[str | None, str]]:
    """(the `# ...` comment above it or None, its text) of each printed benchmark result in a code block; a
    `# Crash ...` comment is a run that printed none."""
    found, current, label = [], [], None
    for line in code:
        if line.startswith("# "):
            if current:
                found.append((label, "\n".join(current).strip()))
            current, label = [], None if line.startswith("# Crash") else line[2:].strip()
        else:
            current.append(line)
    if current:
        found.append((label, "\n".join(current).strip()))
    return [(a, b) for a, b in found if "Serving Benchmark Result" in b]


def page_runs(name: str, sampler: dict) -> list[dict]:
    path, gpu, hardware, intake = PAGES[name]
    split, session, model, id_name, org = INTAKES[intake]
    url = f"https://github.com/gpustack/gpustack/blob/{COMMIT}/{path}"
    text = (PAGE_DIR / name).read_text(encoding="utf-8")
    clients = re.findall(r"vllm bench serve [^\n]+", text)
    endpoint = {
        "kind": "chat",
        "quote": clients[0].strip(),
        "quote_from": url,
        "note": f"'Benchmark Script' section: 'We use the **vLLM bench CLI** tool'; all {len(clients)} vllm bench "
        "serve command(s) on the page (ShareGPT and random) use --backend openai-chat --endpoint "
        "/v1/chat/completions. No other client command appears on the page; the SGLang and vLLM engine "
        "comparisons are all measured with this client.",
    }
    versions = dict(re.findall(r"^- (vLLM|SGLang): v([\w.]+)", text, re.M))
    runs: list[dict] = []
    serve, serve_comment = "", ""
    seen: set[tuple[str, str]] = set()
    for section, label, title, code in info_blocks(text):
        if "serving script" in title.lower():
            serve = " ".join(line for line in code if line and not line.startswith("#"))
            serve_comment = " ".join(line[2:] for line in code if line.startswith("# "))
            continue
        if "result" not in title.lower():
            continue
        for comment, verbatim in results(code):
            if (serve, verbatim) in seen:  # a section that prints an earlier section's run again as its baseline
                continue
            seen.add((serve, verbatim))
            engine = "sglang" if "sglang" in serve else "vllm"
            fp8 = "-FP8" in serve
            tp = re.search(r"(?:-tp|--tp-size) (\d+)", serve)
            tp = int(tp.group(1)) if tp else 1
            pp = re.search(r"--pp-size (\d+)", serve)
            pp = int(pp.group(1)) if pp else 1
            ep = "--enable-expert-parallel" in serve or "--ep-size" in serve
            backend = re.search(r"--attention-backend (\w+)", serve)
            graphs = re.search(r"--cuda-graph-max-bs (\d+)", serve)
            batched = comment if comment and "batched" in comment else serve
            mnbt = re.search(r"--max-num-batched-tokens (\d+)", batched)
            mnbt = int(mnbt.group(1)) if mnbt else None
            gmu = re.search(r"--gpu-memory-utilization ([\d.]+)", serve)
            other = serve
            if comment and "batched" in comment and str(mnbt) not in serve:
                other = re.sub(r"--max-num-batched-tokens \d+", f"--max-num-batched-tokens {mnbt}", serve)
                printed_mnbt = re.search(r"--max-num-batched-tokens (\d+)", serve)
                other += f" (the block's label '# {comment}'; the page prints the command with {printed_mnbt.group(1)})"
            if serve_comment:
                other += f" (page comment: '{serve_comment}')"
            n = int(printed(verbatim, "Successful requests:"))
            tokens_in, tokens_out = run_totals(verbatim)
            where = f"section '{section}'" + (f", {label}" if label and not section.startswith("Other") else "")
            where += f", '{title}'" + (f", '# {comment}'" if comment else "")
            concurrency = re.match(r"ShareGPT batch size (\d+)$", comment or "")
            if comment in CASES:
                prompts, input_len, output_len, suffix = CASES[comment]
                lengths = (
                    f"page: random dataset, '{comment}' (the page's 'Benchmark Dataset' list: {input_len} input "
                    f"tokens, {output_len} output tokens); the page shows the command for the 4K case only (vllm bench "
                    "serve --dataset-name random --random-input-len 4000 --random-output-len 200 --num-prompts 500 "
                    "--seed 42, no --ignore-eos, no --max-concurrency, no --request-rate: all sent at once); "
                    f"num_prompts read from 'Successful requests'; totals {tokens_in} in / {tokens_out} out"
                )
                if tokens_out < n * output_len:
                    lengths += (
                        f"; {tokens_out} generated < {n} x {output_len}: some answers stopped at EOS (no --ignore-eos)"
                    )
                workload = {"dataset": "random", "num_prompts": n, "request_rate": "inf", "max_concurrency": None}
                workload |= {"input_len": input_len, "output_len": output_len, "lengths_note": lengths}
            elif concurrency:  # the page's "# ShareGPT batch size N": a --max-concurrency N run of the ShareGPT client
                cap = int(printed(verbatim, "Maximum request concurrency:"))
                assert cap == int(concurrency.group(1)), comment
                suffix = f"sharegpt-c{cap}"
                workload = {"dataset": "sharegpt", "num_prompts": n, "request_rate": "inf", "max_concurrency": cap}
                workload |= {
                    "input_len": None,
                    "output_len": None,
                    "lengths_note": f"ShareGPT_V3_unfiltered_cleaned_split, the page's '# {comment}' block: 'Maximum "
                    f"request concurrency: {cap}', {n} successful requests (the page prints no command for it); totals "
                    f"{tokens_in} in / {tokens_out} out",
                }
            else:
                suffix = "sharegpt"
                workload = {"dataset": "sharegpt", "num_prompts": n, "request_rate": "inf", "max_concurrency": None}
                workload |= {
                    "input_len": None,
                    "output_len": None,
                    "lengths_note": "ShareGPT_V3_unfiltered_cleaned_split, vllm bench serve --dataset-name sharegpt "
                    "--num-prompts 1000 (no --max-concurrency and no --request-rate: all sent at once); "
                    f"{n} successful requests; totals {tokens_in} in / {tokens_out} out",
                }
            short = name.split("-")[-1].removesuffix(".md")
            run_id = f"gpustack-{short}-{id_name}{'-fp8' if fp8 else ''}-{engine}" + (
                f"-pp{pp}" if pp > 1 else f"-tp{tp}"
            )
            run_id += ("-ep" if ep else "") + (f"-mnbt{mnbt}" if mnbt else "")
            run_id += (f"-{backend.group(1)}" if backend else "") + (f"-cg{graphs.group(1)}" if graphs else "")
            run_id += f"-{suffix}"
            hf = re.search(rf"({org}/[\w.-]+)", serve)
            # a command that names the checkpoint without its organisation (GLM-4.5-Air's "optimized" SGLang run):
            # the page's Model line, which names the organisation
            hf = hf.group(1) if hf else re.search(rf"### Model\s+({org}/[\w.-]+)", text).group(1)
            entry = {
                "id": run_id,
                "url": url,
                "where": where,
                "date": "2026-01-06",  # the last commit touching each kept page (git log at COMMIT)
                "engine": engine,
                "engine_version": versions["vLLM" if engine == "vllm" else "SGLang"],
                "tool": "vllm bench serve",
                "model_hf": hf,
                "model": model,
                "weights": "FP8" if fp8 else "BF16",
                "gpu": gpu,
                "gpu_as_published": hardware,
                "tp": tp,
                "pp": pp,
                "dp": 1,
                "settings": {
                    "max_num_seqs": None,
                    "max_num_batched_tokens": mnbt,
                    "gpu_memory_utilization": float(gmu.group(1)) if gmu else None,
                    "max_model_len": None,
                    "kv_cache_dtype": None,
                    "enable_prefix_caching": None,
                    "other": other,
                }
                | ({"not_stated": NOT_STATED[run_id]} if run_id in NOT_STATED else {}),
                "workload": workload,
                "measured": measured(verbatim),
                "verbatim": verbatim,
                "note": "GPUStack Performance Lab page; engine versions listed on the page under 'Engine Version'. "
                "No cap on concurrency: 'Peak concurrent requests' in the block is the number in flight at once. "
                f"Added in session {session} as a whole page, held out (never used for a constant), the fresh test "
                f"pre-registered in bench/results/2026-12-07-serving-session{session}.md.",
                "split": split,
            }
            if engine == "vllm":
                entry |= {"sampler": sampler["sampler"], "sampler_why": sampler["sampler_why"]}
            entry["endpoint"] = endpoint
            runs.append(entry)
    return runs


def conclusion_totals(name: str) -> set[str]:
    """The 'Total TPS: X' figures of a kept page's Conclusion table (its baseline and optimized runs' totals)."""
    return set(re.findall(r"Total TPS: ([\d.]+)", (PAGE_DIR / name).read_text(encoding="utf-8")))


def mark_copied_blocks(runs: list[dict]) -> None:
    """A result block printed, figure for figure, on another kept page as well, whose total throughput is not in its
    own page's Conclusion table, is that page's copy of the other's block, not a run on its card: it gets a
    `page_error` (and bench/serving_validation.py skips it). GPUStack's GLM-4.5-Air H100 page repeats the A100 page's
    'Other Benchmark Cases' blocks (vLLM baseline and SGLang optimized, 8 blocks), while its own table gives other
    totals for the H100 (session 24)."""
    pages = {run["id"]: next(n for n, page in PAGES.items() if run["url"].endswith(page[0])) for run in runs}
    totals = {name: conclusion_totals(name) for name in PAGES}  # each page read once
    for run in runs:
        twins = [
            r for r in runs if r is not run and r["verbatim"] == run["verbatim"] and pages[r["id"]] != pages[run["id"]]
        ]
        total = printed(run["verbatim"], "Total Token throughput (tok/s):")
        if twins and f"{float(total):.2f}" not in totals[pages[run["id"]]]:
            twin = twins[0]
            run["page_error"] = (
                f"the block repeats, figure for figure, {twin['id']} ({twin['url']}, {twin['where']}), whose page's "
                f"Conclusion table gives its total, {total} tok/s; this page's table does not: a copy of the other page's "
                "block, not a run on this card"
            )
            run["copy_of"] = twin["id"]


def all_runs() -> list[dict]:
    stored = json.loads(RUNS.read_text(encoding="utf-8"))["runs"]
    sampler = next(r for r in stored if r["id"] == SAMPLER_FROM)
    runs = [run for name in PAGES for run in page_runs(name, sampler)]
    mark_copied_blocks(runs)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored entries; exit 1 if they differ")
    args = parser.parse_args(argv)
    made = all_runs()
    if not args.check:
        json.dump(made, sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    splits = {split for split, *_ in INTAKES.values()}
    stored = {r["id"]: r for r in json.loads(RUNS.read_text(encoding="utf-8"))["runs"] if r.get("split") in splits}
    differ = [r["id"] for r in made if stored.get(r["id"]) != r] + sorted(set(stored) - {r["id"] for r in made})
    print(f"{len(made)} runs from {len(PAGES)} pages; {len(differ)} differ from serving_runs.json {differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
