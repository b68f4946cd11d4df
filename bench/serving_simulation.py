"""Wall time of the serving benchmark simulation (kvlab.memory.scheduler.simulate), by run size and load.

For 100, 1,000 and 5,000 requests (random dataset, 1024 input + 128 output tokens, Llama-3.1-8B
on one H100, vLLM's defaults), at several loads: all at once (rate inf), Poisson rates, and a
fixed number in flight (--max-concurrency). Each cell is the fastest of a few runs after a
warm-up; the ratio column divides by the 1,000-request time of the same load, so the table
reads as the scaling with the run's size. The steps column is how many engine steps the run
simulated (the cost grows with the events, not the steps: stretches of identical decode
steps are taken at once).

    .venv/bin/python bench/serving_simulation.py            # or --reps N --sizes 100,1000 --engine sglang
    .venv/bin/python bench/serving_simulation.py --pyodide http://127.0.0.1:8765/serving/

Pure Python + numpy + kvlab, so the same file runs in Pyodide: --pyodide opens a page of the built
site (served at that address) in Chromium and runs this file's main() in the page's own Pyodide
(kvlab.runPython), printing the same table from the browser.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if (ROOT / "pycode").is_dir():
    sys.path.insert(0, str(ROOT / "pycode"))

from kvlab.memory.scheduler import simulate  # noqa: E402

MODEL, GPU = "llama-3.1-8b", "h100-sxm"
SIZES = (100, 1000, 5000)
LOADS = (
    ("rate inf", {}),
    ("rate 5/s", {"request_rate": 5}),
    ("rate 20/s", {"request_rate": 20}),
    ("concurrency 16", {"max_concurrency": 16}),
    ("concurrency 64", {"max_concurrency": 64}),
    ("concurrency 256", {"max_concurrency": 256}),
)


def timed(reps: int, engine: str = "vllm", **kw) -> tuple[float, dict]:
    best, result = float("inf"), None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = simulate(MODEL, GPU, max_model_len=8192, engine=engine, **kw)
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(sizes=SIZES, reps: int = 3, engine: str = "vllm") -> None:
    simulate(MODEL, GPU, num_prompts=10, max_model_len=8192, engine=engine)  # warm-up: catalogue, calibration, caches
    print(f"# serving simulation wall time, {engine}'s scheduler ({platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()}; best of {reps})")  # fmt: skip
    print(f"{'load':<16} {'requests':>8} {'ms':>9} {'x 1,000':>8} {'steps':>8} {'preempt':>8} {'sim. s':>8}")
    for name, load in LOADS:
        times = {}
        rows = []
        for n in sizes:
            seconds, r = timed(reps, engine, num_prompts=n, **load)
            times[n] = seconds
            rows.append((n, seconds, r))
        base = times.get(1000)
        for n, seconds, r in rows:
            ratio = f"{seconds / base:.2f}" if base else "-"
            print(
                f"{name:<16} {n:>8,} {seconds * 1000:>9.1f} {ratio:>8} {r['steps']:>8,} {r['preemptions']:>8,} "
                f"{r['duration_s']:>8.1f}"
            )


def in_pyodide(url: str, sizes, reps: int, engine: str = "vllm") -> None:
    """This file's main() in the Pyodide of a built page (Debian's Chromium, headless)."""
    import json

    from playwright.sync_api import sync_playwright

    source = Path(__file__).read_text(encoding="utf-8")
    code = (
        "import io, contextlib\n"
        f"ns = {{'__name__': 'bench', '__file__': '/bench/serving_simulation.py'}}\n"
        f"exec(compile({json.dumps(source)}, 'serving_simulation.py', 'exec'), ns)\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    ns['main'](sizes={tuple(sizes)!r}, reps={reps}, engine={engine!r})\n"
        "out.getvalue()"
    )
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=flags)
        page = browser.new_page()
        page.set_default_timeout(600_000)
        page.goto(url)
        print(page.evaluate("(code) => kvlab.runPython(code)", code))
        browser.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyodide", metavar="URL", help="run in the Pyodide of this built page instead")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated request counts")
    ap.add_argument("--reps", type=int, default=3, help="runs per cell (the fastest is shown)")
    ap.add_argument("--engine", default="vllm", choices=("vllm", "sglang"), help="whose scheduler (default vllm)")
    args = ap.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    if args.pyodide:
        in_pyodide(args.pyodide, sizes, args.reps, args.engine)
    else:
        main(sizes, args.reps, args.engine)
