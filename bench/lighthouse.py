"""Lighthouse 12 on every content page and three embeds, mobile and desktop presets.

    .venv/bin/python bench/lighthouse.py                 # builds the site into a temp dir
    .venv/bin/python bench/lighthouse.py --site /tmp/s   # or audits an existing build
    .venv/bin/python bench/lighthouse.py --pages attention/ embed/generate/
    .venv/bin/python bench/lighthouse.py --presets mobile --reps 3   # medians of 3 runs

Lighthouse comes from node_modules (package-lock.json pins it), Chromium is
Debian's (/usr/bin/chromium, or $KVLAB_CHROMIUM), served over http from
127.0.0.1 with gzip for text files, as GitHub Pages serves them (an uncompressed
local server made Lighthouse's simulated slow 4G see 4× the bytes). Prints one
table: performance, accessibility, best practices, SEO and Total Blocking Time per
page and preset; with --reps N each is the median of N runs, and every run's TBT is
shown (on these shared 2-core machines a page's TBT moves by ±70 ms from run to run).
Embed pages are `noindex` on purpose, so their SEO is scored without the
`is-crawlable` audit (marked *).
Not part of the test run: scores depend on the machine's load (`uptime`).

How the default (simulated) throttling counts: Lighthouse loads the page at full speed and
then simulates a slow phone (Lantern); each main-thread task's observed time is multiplied
by 4, but by 2 if the task ran a Layout (`layoutTaskMultiplier` 0.5 in
node_modules/@paulirish/trace_engine/models/trace/lantern/simulation/Simulator.js). So a
change that takes a forced layout out of a long task can raise the simulated TBT while the
page does less work. `--throttling devtools` runs the page with Chromium's own 4x CPU and
network throttling instead: slower and noisier, but it counts the work the page does.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import local_site

ROOT = Path(__file__).resolve().parents[1]
LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "cli" / "index.js"
CHROMIUM = local_site.CHROMIUM
CHROME_FLAGS = " ".join(local_site.CHROMIUM_ARGS)  # the same flags as the other bench scripts
EMBEDS = ["embed/attention/", "embed/generate/", "embed/kv-memory/"]
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    return local_site.serve(site, gzip_text=True)


def content_pages(site: Path) -> list[str]:
    """Every page in the nav's folders: index.html files outside assets/, search/ and embed/."""
    pages = []
    for html in sorted(site.rglob("index.html")):
        rel = html.relative_to(site).as_posix()
        if rel.startswith(("assets/", "search/", "embed/")) and rel != "embed/index.html":
            continue
        pages.append(rel.removesuffix("index.html"))
    return pages


def seo_score(report: dict, without: set[str]) -> float | None:
    """The SEO category's weighted mean, leaving out the audits in `without`."""
    total = weight = 0.0
    for ref in report["categories"]["seo"]["auditRefs"]:
        audit = report["audits"][ref["id"]]
        if (
            ref["id"] in without
            or ref["weight"] == 0
            or audit["scoreDisplayMode"] in ("notApplicable", "manual", "informative")
        ):
            continue
        if audit["score"] is None:
            continue
        total += ref["weight"] * audit["score"]
        weight += ref["weight"]
    return total / weight if weight else None


def run_lighthouse(url: str, preset: str, out: Path, throttling: str = "simulate") -> dict:
    cmd = [
        "node",
        str(LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={out}",
        f"--only-categories={','.join(CATEGORIES)}",
        f"--chrome-flags={CHROME_FLAGS}",
        "--max-wait-for-load=90000",
    ]
    if preset == "desktop":
        cmd.append("--preset=desktop")
    if throttling != "simulate":
        cmd.append(f"--throttling-method={throttling}")
    env = {**os.environ, "CHROME_PATH": CHROMIUM}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"lighthouse failed on {url} ({preset}):\n{done.stderr[-2000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


def row(page: str, preset: str, report: dict) -> dict:
    cats = report["categories"]
    embed = page.startswith("embed/") and page != "embed/"
    score = {c: cats[c]["score"] for c in CATEGORIES}
    if embed:
        score["seo"] = seo_score(report, {"is-crawlable"})
    failed = sorted(
        ref["id"]
        for c in ("accessibility", "best-practices", "seo")
        for ref in cats[c]["auditRefs"]
        if ref["weight"] > 0
        and report["audits"][ref["id"]]["score"] is not None
        and report["audits"][ref["id"]]["score"] < 1
        and not (embed and ref["id"] == "is-crawlable")
    )
    return {
        "page": page or "(home)",
        "preset": preset,
        **{c: None if s is None else round(100 * s) for c, s in score.items()},
        "seo_note": "*" if embed else "",
        "tbt_ms": round(report["audits"]["total-blocking-time"]["numericValue"]),
        "failed": failed,
    }


def median_row(runs: list[dict]) -> dict:
    """One row from N runs of a page and preset: the median of each score and of TBT (a low
    median: an even N takes the lower middle run), every run's TBT, every failed audit."""

    def med(values):
        values = sorted(v for v in values if v is not None)
        return values[(len(values) - 1) // 2] if values else None

    first = runs[0]
    return {
        **first,
        **{c: med(r[c] for r in runs) for c in CATEGORIES},
        "tbt_ms": med(r["tbt_ms"] for r in runs),
        "tbt_runs": [r["tbt_ms"] for r in runs],
        "failed": sorted({a for r in runs for a in r["failed"]}),
    }


def table(rows: list[dict]) -> str:
    head = "| page | preset | perf | a11y | best practices | SEO | TBT (ms) | TBT of each run | audits below 100 (a11y, BP, SEO) |\n|---|---|--:|--:|--:|--:|--:|---|---|"
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['page']} | {r['preset']} | {r['performance']} | {r['accessibility']} | {r['best-practices']} | "
            f"{r['seo']}{r['seo_note']} | {r['tbt_ms']} | {', '.join(map(str, r['tbt_runs']))} | {', '.join(r['failed']) or '—'} |"
        )
    return "\n".join(lines)


def build_site(where: Path) -> Path:
    subprocess.run([sys.executable, str(ROOT / "build.py"), "build", "--site-dir", str(where)], check=True, cwd=ROOT)
    return where


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, help="an existing build (default: build one into a temp dir)")
    ap.add_argument("--pages", nargs="*", help="URL paths to audit (default: every content page and three embeds)")
    ap.add_argument("--presets", nargs="*", default=["mobile", "desktop"], choices=["mobile", "desktop"])
    ap.add_argument("--reps", type=int, default=1, help="runs per page and preset; the table shows medians")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    ap.add_argument(
        "--throttling",
        default="simulate",
        choices=["simulate", "devtools"],
        help="simulate: the presets' default (Lantern); devtools: the page really runs 4x slower (see above)",
    )
    args = ap.parse_args()
    if not LIGHTHOUSE.exists():
        sys.exit("bench/lighthouse.py: node_modules/lighthouse is missing: run `python3 build.py build` (npm ci) first")
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build_site(Path(tmp) / "site")
        pages = args.pages or content_pages(site) + EMBEDS
        server, base = serve(site)
        rows = []
        try:
            for page in pages:
                for preset in args.presets:
                    runs = [
                        row(
                            page,
                            preset,
                            run_lighthouse(base + page, preset, Path(tmp) / "report.json", args.throttling),
                        )
                        for _ in range(args.reps)
                    ]
                    rows.append(median_row(runs))
                    r = rows[-1]
                    print(
                        f"  {r['page']:<22} {preset:<8} perf {r['performance']} a11y {r['accessibility']} "
                        f"bp {r['best-practices']} seo {r['seo']}{r['seo_note']} tbt {r['tbt_ms']} ms {r['tbt_runs']}",
                        file=sys.stderr,
                        flush=True,
                    )
        finally:
            server.shutdown()
    print(table(rows))
    print("\n\\* embed pages are `noindex` on purpose: SEO without the `is-crawlable` audit.")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
