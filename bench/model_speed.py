"""The tiny model's speed per token, with and without the KV cache, in headless
Chromium (onnxruntime-web, wasm, 1 thread: what the site's readers run) next to
native onnxruntime (Python, 1 thread), on the same machine and the same
models/tiny/model.onnx.

A step at position p:
  cached    prefill p tokens (untimed), then time the next decode step: 1 new
            token reading a past of p entries;
  uncached  time the full forward over p + 1 tokens with an empty past (what
            generation without a cache does at every step).
Medians over several repetitions, after a warm-up. Prints one table.

    python build.py build                       # the site, into site/
    .venv/bin/python bench/model_speed.py       # or --site DIR --reps N

Needs Chromium at /usr/bin/chromium (KVLAB_CHROMIUM to change) and Playwright
(both in the project's .venv); nothing is fetched from the network.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from local_site import CHROMIUM, CHROMIUM_ARGS, serve

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "tiny" / "model.onnx"
CARD = ROOT / "models" / "tiny" / "card.json"
POSITIONS = (32, 128, 256, 508)  # 508: prefill 508 + 1 new token fits the 512-token context


def token_ids(n: int, vocab: int, seed: int = 0) -> list[int]:
    """Fixed, seeded token ids: the content doesn't change the time of a step."""
    return np.random.default_rng(seed).integers(0, vocab, size=n).tolist()


# ---------------------------------------------------------------------------- native onnxruntime


def native_times(ids: list[int], positions, reps: int, config: dict) -> dict:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(MODEL), opts, providers=["CPUExecutionProvider"])
    n_layer, heads = config["n_layer"], config.get("n_kv_head", config["n_head"])
    head_dim = config["n_embd"] // config["n_head"]
    fetches = ["logits"] + [f"present.{i}.{kv}" for i in range(n_layer) for kv in ("key", "value")]

    def run(chunk: list[int], start: int, past: list[np.ndarray] | None):
        T = len(chunk)
        feeds = {
            "input_ids": np.array([chunk], dtype=np.int64),
            "attention_mask": np.ones((1, start + T), dtype=np.int64),
            "position_ids": np.arange(start, start + T, dtype=np.int64)[None],
        }
        empty = np.zeros((1, heads, 0, head_dim), dtype=np.float32)
        for i in range(n_layer):
            feeds[f"past_key_values.{i}.key"] = past[2 * i] if past else empty
            feeds[f"past_key_values.{i}.value"] = past[2 * i + 1] if past else empty
        t0 = time.perf_counter()
        out = session.run(fetches, feeds)
        return (time.perf_counter() - t0) * 1000, out[1:]

    result = {}
    for p in positions:
        cached, uncached = [], []
        for r in range(reps + 2):  # two warm-up rounds
            _, past = run(ids[:p], 0, None)
            ms_c, _ = run(ids[p : p + 1], p, past)
            ms_u, _ = run(ids[: p + 1], 0, None)
            if r >= 2:
                cached.append(ms_c)
                uncached.append(ms_u)
        result[p] = {"cached": statistics.median(cached), "uncached": statistics.median(uncached)}
    return result


# ---------------------------------------------------------------------------- browser (onnxruntime-web)

BROWSER_JS = """async ([ids, positions, reps]) => {
    // the session exactly as the site's model worker makes it (model.js load()), here on the page
    await kvlab.loadScript(kvlab.assets + "kvlab/worker.js");
    await kvlab.loadScript(kvlab.assets + "kvlab/model.js");
    const env = { role: "model", assets: kvlab.assets, manifest: kvlab.manifest, progress() {} };
    env.importScript = (p) => kvlab.loadScript(kvlab.assets + p);
    env.bytes = (task, what, paths) => kvlabWorker.fetchAll(env, task, what, paths, async (p, onBytes) => {
        const b = new Uint8Array(await (await fetch(kvlab.assets + p)).arrayBuffer());
        onBytes(b.length);
        return b;
    });
    const { ort, session, config } = await kvlabModel.load(env, kvlab.manifest.model);
    const L = config.n_layer, H = config.n_kv_head || config.n_head, D = config.n_embd / config.n_head;
    const fetches = ["logits"];
    for (let i = 0; i < L; i++) fetches.push(`present.${i}.key`, `present.${i}.value`);
    const int64 = (values, dims) => new ort.Tensor("int64", BigInt64Array.from(values, (v) => BigInt(v)), dims);
    async function run(chunk, start, past) {
        const T = chunk.length;
        const feeds = {
            input_ids: int64(chunk, [1, T]),
            attention_mask: int64(new Array(start + T).fill(1), [1, start + T]),
            position_ids: int64(chunk.map((_, i) => start + i), [1, T]),
        };
        for (let i = 0; i < L; i++) {
            feeds[`past_key_values.${i}.key`] = past ? past[2 * i] : new ort.Tensor("float32", new Float32Array(0), [1, H, 0, D]);
            feeds[`past_key_values.${i}.value`] = past ? past[2 * i + 1] : new ort.Tensor("float32", new Float32Array(0), [1, H, 0, D]);
        }
        const t0 = performance.now();
        const out = await session.run(feeds, fetches);
        const ms = performance.now() - t0;
        Object.values(feeds).forEach((t) => t.dispose());
        out.logits.dispose();
        return { ms, present: fetches.slice(1).map((name) => out[name]) };
    }
    const dispose = (ts) => ts.forEach((t) => t.dispose());
    const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
    const result = {};
    for (const p of positions) {
        const cached = [], uncached = [];
        for (let r = 0; r < reps + 2; r++) {  // two warm-up rounds
            const pre = await run(ids.slice(0, p), 0, null);
            const dec = await run(ids.slice(p, p + 1), p, pre.present);
            dispose(pre.present); dispose(dec.present);
            const full = await run(ids.slice(0, p + 1), 0, null);
            dispose(full.present);
            if (r >= 2) { cached.push(dec.ms); uncached.push(full.ms); }
        }
        result[p] = { cached: median(cached), uncached: median(uncached) };
    }
    return { result, ua: navigator.userAgent, ortVersion: ort.env.versions ? ort.env.versions.web || ort.env.versions.common : "" };
}"""


def browser_times(site: Path, ids, positions, reps: int) -> dict:
    from playwright.sync_api import sync_playwright

    server, base = serve(site)
    url = base + "embed/model-race/"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(600_000)
            page.goto(url)
            out = page.evaluate(BROWSER_JS, [ids, list(positions), reps])
            out["chromium"] = browser.version
            browser.close()
    finally:
        server.shutdown()
    out["result"] = {int(k): v for k, v in out["result"].items()}
    return out


# ---------------------------------------------------------------------------- table


def table(browser: dict, native: dict, positions) -> str:
    head = (
        "position",
        "browser cached ms",
        "browser uncached ms",
        "native cached ms",
        "native uncached ms",
        "browser/native (cached)",
        "uncached/cached (browser)",
        "uncached/cached (native)",
    )
    rows = []
    for p in positions:
        b, n = browser[p], native[p]
        rows.append(
            (
                str(p),
                f"{b['cached']:.2f}",
                f"{b['uncached']:.2f}",
                f"{n['cached']:.3f}",
                f"{n['uncached']:.2f}",
                f"{b['cached'] / n['cached']:.1f}×",
                f"{b['uncached'] / b['cached']:.1f}×",
                f"{n['uncached'] / n['cached']:.1f}×",
            )
        )
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--site", type=Path, default=ROOT / "site", help="a built site (python build.py build); default site/"
    )
    parser.add_argument(
        "--reps", type=int, default=15, help="timed repetitions per position (median), after 2 warm-ups"
    )
    parser.add_argument("--positions", type=int, nargs="+", default=list(POSITIONS))
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)

    config = json.loads(CARD.read_text())["config"]
    if max(args.positions) + 1 > config["block_size"]:
        parser.error(f"positions must leave room for one new token in the {config['block_size']}-token context")
    if not (args.site / "embed" / "model-race" / "index.html").is_file():
        parser.error(f"no built site at {args.site}: run `python build.py build` first (or pass --site)")
    ids = token_ids(max(args.positions) + 1, config["vocab_size"])

    import onnxruntime

    print(
        f"tiny model: {MODEL.relative_to(ROOT)}, {config['n_layer']} layers × {config['n_head']} heads, "
        f"d={config['n_embd']}; medians of {args.reps} runs after 2 warm-ups",
        file=sys.stderr,
    )
    print("native onnxruntime…", file=sys.stderr)
    native = native_times(ids, args.positions, args.reps, config)
    print("headless Chromium (onnxruntime-web)…", file=sys.stderr)
    browser = browser_times(args.site, ids, args.positions, args.reps)

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} CPUs visible, {platform.system()} {platform.release()}, load average {load}"
    )
    print(
        f"native: onnxruntime {onnxruntime.__version__} (Python, CPU, 1 thread); "
        f"browser: Chromium {browser['chromium']}, onnxruntime-web {browser['ortVersion']} (wasm, 1 thread)\n"
    )
    print(table(browser["result"], native, args.positions))
    if args.json:
        args.json.write_text(json.dumps({"native": native, "browser": browser}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
