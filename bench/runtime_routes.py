"""The first Python widget, cold and warm, by route (issue 42): a bare Pyodide page, today's
worker, the worker that lets Pyodide stream its wasm, and that worker starting from a memory
snapshot. Headless Chromium, side by side in one run, rotated order; each variant in a fresh
browser profile (cold cache), then the same page again in that profile (warm: a second visit,
from its disk cache, as GitHub Pages serves with Cache-Control: max-age=600).

  bare      the page loads Pyodide + numpy on its main thread (as bench/runtime.py's bare page)
  today     the site's own runtime (runtime.js, the worker of git HEAD: every file fetched by
            the worker and handed to Pyodide from memory)
  stream    the same with this checkout's worker.js: pyodide.asm.wasm handed over as the
            browser's Response (instantiateStreaming; Chromium caches the compiled code), and the
            trimmed standard library when the site has one (python_stdlib.min.zip)
  snapshot  this checkout's worker.js with a manifest that names a snapshot (the site's own, as
            every http build makes one since session 3; made here by sitebuild/snapshot.mjs for a
            site without one): Python restored from it (streamed
            wasm, the trimmed standard library; numpy's files and kvlab's inside the snapshot,
            so neither the wheel nor kvlab's zip downloads)
  snapshot-head  the same snapshot with git HEAD's worker.js and snapshot.js

The site variants run the real page runtime: a page with the site's CSP loads
assets/kvlab/manifest.js and runtime.js and calls kvlab.runPython("import numpy, kvlab,
kvlab.bridge; ...") — "ready" is when that answer is back, timed from navigation start. Bytes:
bodies of 200 answers (a 304 sends none), per file on the cold visit.

    python build.py build --site-dir /tmp/site42
    .venv/bin/python bench/runtime_routes.py --site /tmp/site42 --reps 3 [--gzip] [--throttle 10,25,50,100]

--throttle MBPS[,MBPS…]: every page of every variant gets Chromium's network emulation at that
download throughput (CDP Network.emulateNetworkConditions on the page's target, --latency ms per
request, upload ample; 0 = none). Verified (2026-12-05-runtime-snapshot-session4.md, Chromium 156)
by timing downloads: it throttles the page's dedicated Web Worker's fetches too, one budget shared
by all of a page's requests, and counts the bytes on the wire (a gzipped answer's compressed bytes).
Each speed is its own table; a last table fits cold = a + k / speed per variant and names the
speed where the snapshot and the usual start take the same time.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from local_site import CHROMIUM, CHROMIUM_ARGS, SiteHandler
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
STDLIB_MIN = "vendor/pyodide/python_stdlib.min.zip"
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' blob:; worker-src 'self' blob:; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'"
)

BARE = """<!doctype html><meta charset="utf-8"><title>bare</title>
<script src="pyodide/pyodide.js"></script>
<script>
window.result = (async () => {
  const py = await loadPyodide({indexURL: new URL("pyodide/", location.href).href});
  await py.loadPackage("numpy");
  py.runPython("import numpy; numpy.arange(10).sum()");
  return {ms: performance.now()};
})();
</script>
"""

PAGE = f"""<!doctype html><meta charset="utf-8"><title>{{variant}}</title>
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<script src="assets/kvlab/manifest.js"></script>
<script src="assets/kvlab/runtime.js"></script>
<script src="bench.js"></script>
"""

BENCH_JS = """
window.progress = [];
kvlab.onProgress((p) => window.progress.push([Math.round(performance.now()), p.what, p.loaded, p.total, p.done]));
window.result = kvlab.runPython("import numpy, kvlab, kvlab.bridge; int(numpy.arange(10).sum())")
  .then((v) => ({ms: performance.now(), v}));
"""

VARIANTS = ["bare", "today", "stream", "snapshot", "snapshot-head"]

# --check-throttle: the same files timed from the page and from its dedicated worker, then two at
# once from the worker (one budget for the page, or one each?); cache: no-store, a fresh query each
CHECK_PAGE = """<!doctype html><meta charset="utf-8"><title>check</title>"""
CHECK_WORKER = """
const get = async (u) => (await (await fetch(u, {cache: "no-store"})).arrayBuffer()).byteLength;
onmessage = async (e) => { const t0 = performance.now(); const n = await Promise.all(e.data.map(get));
  postMessage({ms: performance.now() - t0, n}); };
"""
CHECK_JS = """async ([where, urls]) => {
  if (where === "page") {
    const t0 = performance.now();
    const n = await Promise.all(urls.map(async (u) => (await (await fetch(u, {cache: "no-store"})).arrayBuffer()).byteLength));
    return {ms: performance.now() - t0, n};
  }
  return await new Promise((resolve) => {
    const w = new Worker("check-worker.js");
    w.onmessage = (e) => (w.terminate(), resolve(e.data));
    w.postMessage(urls);
  });
}"""


class Handler(SiteHandler):
    """/<variant>/… is the site, with a few files replaced per variant (overrides); /bare.html and
    /pyodide/ the bare page. Counts the bytes of each answer's body by path."""

    overrides: dict[str, Path] = {}
    sent: dict[str, int] = defaultdict(int)
    lock = threading.Lock()
    site: Path = Path("site")
    use_gzip = False

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def translate_path(self, path):
        clean = path.split("?")[0].split("#")[0]
        if clean in self.overrides:
            return str(self.overrides[clean])
        if clean.startswith("/pyodide/"):
            return str(self.site / "assets/vendor" / clean.lstrip("/"))
        for v in VARIANTS:
            if clean.startswith(f"/{v}/"):
                return str(self.site / clean[len(v) + 2 :])
        return super().translate_path(path)

    def copyfile(self, source, outputfile):
        data = source.read()
        self._count(len(data))
        outputfile.write(data)

    def _count(self, n):
        with self.lock:
            self.sent[self.path.split("?")[0]] += n

    def do_GET(self):
        # gzip (when asked) as GitHub Pages: .js/.json/.html/.wasm, see the results file
        path = Path(self.translate_path(self.path))
        if self.use_gzip and path.is_file() and path.suffix in (".js", ".json", ".html", ".wasm", ".css"):
            if "gzip" in self.headers.get("Accept-Encoding", ""):
                body = gzip_cached(path)
                self.send_response(200)
                self.send_header("Content-Type", self.guess_type(str(path)))
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self._count(len(body))
                self.wfile.write(body)
                return
        return http.server.SimpleHTTPRequestHandler.do_GET(self)


@functools.cache
def gzip_cached(path: Path) -> bytes:
    return gzip.compress(path.read_bytes(), 6)


def prepare(site: Path, work: Path, snapshot: Path | None, make_snapshot: bool = True) -> dict:
    (work / "bare.html").write_text(BARE)
    (work / "check.html").write_text(CHECK_PAGE)
    (work / "check-worker.js").write_text(CHECK_WORKER)
    (work / "bench.js").write_text(BENCH_JS)
    today_worker = work / "worker-head.js"
    today_worker.write_text(
        subprocess.run(
            ["git", "show", "HEAD:site_src/runtime/worker.js"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    )
    manifest_text = (site / "assets/kvlab/manifest.js").read_text()
    manifest = json.loads(manifest_text.split("=", 1)[1].strip().rstrip(";"))
    info = {}
    if snapshot is None and "snapshot" not in manifest and make_snapshot:
        snapshot = work / "python.snap.gz"
        kvlab_zip = site / "assets" / manifest["kvlabZip"]
        made = subprocess.run(
            [
                "node",
                str(ROOT / "sitebuild/snapshot.mjs"),
                str(ROOT / "node_modules/pyodide"),
                str(site / "assets/vendor/pyodide" / NUMPY_WHEEL),
                str(kvlab_zip),
                str(site / "assets" / STDLIB_MIN),
                str(snapshot),
            ],
            check=True,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        info["snapshot_log"] = made.stdout.strip().splitlines()[-1]
    overrides = {}
    for v in VARIANTS[1:]:
        (work / f"{v}.html").write_text(PAGE.format(variant=v))
        overrides[f"/{v}/bench.html"] = work / f"{v}.html"
        overrides[f"/{v}/bench.js"] = work / "bench.js"
    overrides["/bare.html"] = work / "bare.html"
    overrides["/today/assets/kvlab/worker.js"] = today_worker
    # this checkout's files as they are now (an edit during the run changes no variant)
    for name in ("worker.js", "snapshot.js"):
        shutil.copy(ROOT / "site_src/runtime" / name, work / name)
    overrides["/stream/assets/kvlab/worker.js"] = work / "worker.js"
    overrides["/snapshot/assets/kvlab/worker.js"] = work / "worker.js"
    overrides["/snapshot/assets/kvlab/snapshot.js"] = work / "snapshot.js"
    # snapshot-head: git HEAD's worker.js and snapshot.js with the same snapshot (a change to the
    # restore, on either side of their interface, measured against the last commit)
    head_snapshot_js = work / "snapshot-head.js"
    head_snapshot_js.write_text(
        subprocess.run(
            ["git", "show", "HEAD:site_src/runtime/snapshot.js"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    )
    overrides["/snapshot-head/assets/kvlab/worker.js"] = today_worker
    overrides["/snapshot-head/assets/kvlab/snapshot.js"] = head_snapshot_js
    # today / stream: the manifest without a snapshot; snapshot: with one
    plain = dict(manifest)
    plain.pop("snapshot", None)
    (work / "manifest-plain.js").write_text("window.kvlabManifest = " + json.dumps(plain) + ";\n")
    overrides["/today/assets/kvlab/manifest.js"] = work / "manifest-plain.js"
    overrides["/stream/assets/kvlab/manifest.js"] = work / "manifest-plain.js"
    if snapshot is not None:
        with_snap = dict(manifest, snapshot={"file": "kvlab/python.snap.gz", "stdlib": STDLIB_MIN})
        with_snap["files"] = dict(manifest["files"], **{"kvlab/python.snap.gz": {"size": snapshot.stat().st_size}})
        (work / "manifest-snap.js").write_text("window.kvlabManifest = " + json.dumps(with_snap) + ";\n")
        for v in ("snapshot", "snapshot-head"):
            overrides[f"/{v}/assets/kvlab/manifest.js"] = work / "manifest-snap.js"
            overrides[f"/{v}/assets/kvlab/python.snap.gz"] = snapshot
    info["overrides"] = overrides
    return info


def visit_result(page, url: str) -> dict:
    """Open `url` and wait for the page's window.result (a dict with "ms": ready, from navigation start)."""
    errors = []
    page.on("console", lambda m: m.type in ("warning", "error") and errors.append(m.text))
    page.goto(url)
    res = page.evaluate("window.result")
    if errors:
        print("   console:", " | ".join(e[:160] for e in errors[:3]), flush=True)
    return res


@dataclass
class Reps:
    """What cold_warm_reps measured, by variant: seconds, bytes sent, the pages' own results."""

    cold: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    warm: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    sent: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    sent_warm: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    files: dict[str, list[dict[str, int]]] = field(default_factory=lambda: defaultdict(list))
    results: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    results_warm: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    loads: list[float] = field(default_factory=list)


def throttle(mbps: float, latency_ms: float = 20):
    """A page hook (cold_warm_reps's on_page): Chromium's network emulation at `mbps` down.
    Set on the page's target, it also paces the requests of the page's dedicated workers."""

    def apply(page) -> None:
        cdp = page.context.new_cdp_session(page)
        cdp.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": latency_ms,
                "downloadThroughput": mbps * 1e6 / 8,
                "uploadThroughput": max(mbps, 100) * 1e6 / 8,
            },
        )

    return apply


def check_throttle(p, base: str, sent: dict, mbps: float, latency_ms: float) -> None:
    """Time downloads under the emulation, from the page and from a dedicated worker: the numpy wheel
    (a zip: never gzipped) and pyodide.asm.wasm (gzipped with --gzip: its bytes on the wire are the
    compressed ones), then both at once from the worker. Prints the bytes the server sent and the
    throughput they imply."""
    ctx = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = ctx.new_page()
        if mbps:
            throttle(mbps, latency_ms)(page)
        page.goto(base + "check.html")
        wheel, wasm = "pyodide/" + NUMPY_WHEEL, "pyodide/pyodide.asm.wasm"
        for i, (where, urls) in enumerate(
            [("page", [wheel]), ("worker", [wheel]), ("page", [wasm]), ("worker", [wasm]), ("worker", [wheel, wasm])]
        ):
            sent.clear()
            got = page.evaluate(CHECK_JS, [where, [f"{u}?check{i}" for u in urls]])
            wire = sum(sent.values())
            print(
                f"  {where}: {' + '.join(u.rsplit('/', 1)[-1] for u in urls)}: {sum(got['n']) / 1e6:.2f} MB read, "
                f"{wire / 1e6:.2f} MB on the wire, {got['ms'] / 1000:.2f} s: {wire * 8 / got['ms'] / 1e3:.1f} Mbps",
                flush=True,
            )
    finally:
        ctx.close()


def cold_warm_reps(
    p, variants: list[str], reps: int, url_of, sent: dict, warm_wait_ms: int = 3000, on_page=None
) -> Reps:
    """The rep loop the runtime benches share. Each rep runs every variant, in rotated order (no
    variant always first), in a fresh persistent Chromium profile: the page once (cold cache), then,
    after `warm_wait_ms` on another tab, the same page again in that profile (warm: its disk cache,
    which an ephemeral context's in-memory cache would not keep for the 10 MB wasm). `url_of(v)` is
    the variant's page; `sent` the server's bytes-by-path dict, cleared before each visit;
    `on_page(page)` runs on each visit's page before it opens (throttle). Prints one line per rep,
    with the load average after it."""
    out = Reps()

    def visit(ctx, v):
        """One visit to variant v's page in a new tab of ctx, with `sent` counting only it."""
        sent.clear()
        page = ctx.new_page()
        if on_page:
            on_page(page)
        return visit_result(page, url_of(v)), page

    for rep in range(reps):
        k = rep % len(variants)
        for v in variants[k:] + variants[:k]:
            profile = tempfile.mkdtemp(prefix="kvbench-profile-")
            ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                res, page = visit(ctx, v)
                out.cold[v].append(res["ms"] / 1000)
                out.results[v].append(res)
                out.sent[v].append(sum(sent.values()))
                out.files[v].append(dict(sent))
                page.close()
                if warm_wait_ms:
                    # let Chromium write its code cache (V8 caches a streamed module after it tiers
                    # up, or a few seconds on), as a reader reading the page would
                    ctx.new_page().wait_for_timeout(warm_wait_ms)
                res, _ = visit(ctx, v)
                out.warm[v].append(res["ms"] / 1000)
                out.results_warm[v].append(res)
                out.sent_warm[v].append(sum(sent.values()))
            finally:
                ctx.close()
                shutil.rmtree(profile, ignore_errors=True)
        out.loads.append(os.getloadavg()[0])
        print(
            f"rep {rep + 1}: "
            + ", ".join(f"{v} {out.cold[v][-1]:.2f}/{out.warm[v][-1]:.2f} s" for v in variants)
            + f" (load {out.loads[-1]:.2f})",
            flush=True,
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--gzip", action="store_true", help="gzip .js/.json/.wasm/.html as GitHub Pages does")
    ap.add_argument("--snapshot", type=Path, help="a snapshot file (default: made here in Node)")
    ap.add_argument(
        "--throttle", default="0", help="download Mbps, comma-separated for several runs (0: not throttled)"
    )
    ap.add_argument("--latency", type=float, default=20, help="ms added to each request when throttled")
    ap.add_argument(
        "--check-throttle", action="store_true", help="time downloads from the page and its worker at each speed first"
    )
    args = ap.parse_args()
    variants = args.variants.split(",")
    speeds = [float(x) for x in args.throttle.split(",")]
    work = Path(tempfile.mkdtemp(prefix="kvroutes-"))
    site = args.site.resolve()
    runs: dict[float, Reps] = {}
    try:
        info = prepare(site, work, args.snapshot.resolve() if args.snapshot else None, "snapshot" in variants)
        Handler.overrides = info["overrides"]
        Handler.site = site
        Handler.use_gzip = args.gzip
        if args.gzip:  # compressed once before timing, not on the first visit that asks
            for f in [*site.joinpath("assets/vendor/pyodide").iterdir(), *site.joinpath("assets/kvlab").iterdir()]:
                if f.suffix in (".js", ".json", ".wasm", ".css"):
                    gzip_cached(f)
            for f in info["overrides"].values():
                if f.suffix in (".js", ".html"):
                    gzip_cached(f)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(work)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        print(
            f"load average at start: {os.getloadavg()} ({os.cpu_count()} cores); Chromium {CHROMIUM}; gzip {args.gzip}"
        )
        if "snapshot_log" in info:
            print(f"snapshot made in Node: {info['snapshot_log']}", flush=True)
        with sync_playwright() as p:
            for mbps in speeds:
                print(f"\n== {f'{mbps:g} Mbps down, {args.latency:g} ms latency' if mbps else 'not throttled'}")
                if args.check_throttle:
                    check_throttle(p, base, Handler.sent, mbps, args.latency)
                runs[mbps] = cold_warm_reps(
                    p,
                    variants,
                    args.reps,
                    lambda v: base + ("bare.html" if v == "bare" else f"{v}/bench.html"),
                    Handler.sent,
                    on_page=throttle(mbps, args.latency) if mbps else None,
                )
        server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for mbps, r in runs.items():
        print(f"\n## {f'{mbps:g} Mbps' if mbps else 'not throttled'}")
        report(r, variants, args.reps)
    if len([m for m in speeds if m]) >= 2:
        break_even(runs, variants)


def report(r: Reps, variants: list[str], reps: int) -> None:
    cold, warm, sent, sent_warm, files, loads = r.cold, r.warm, r.sent, r.sent_warm, r.files, r.loads
    med = statistics.median
    b = med(cold["bare"]) if cold.get("bare") else None
    t, tw = med(cold.get("today") or [1]), med(warm.get("today") or [1])
    print(
        "\n| variant | cold: ready (s) | × bare | × today | warm: ready (s) | × today warm | MB sent cold | MB sent warm |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for v in variants:
        print(
            f"| {v} | {med(cold[v]):.2f} | {f'{med(cold[v]) / b:.2f}×' if b else '—'} | {med(cold[v]) / t:.2f}× | {med(warm[v]):.2f} "
            f"| {med(warm[v]) / tw:.2f}× | {med(sent[v]) / 1e6:.2f} | {med(sent_warm[v]) / 1e6:.2f} |"
        )
    print(f"\nmedians of {reps}; all runs (cold / warm, s):")
    for v in variants:
        print(f"  {v}: cold {[round(x, 2) for x in cold[v]]}, warm {[round(x, 2) for x in warm[v]]}")
    print(f"load average per rep: {[round(x, 2) for x in loads]}; at the end: {os.getloadavg()}")
    print("\nbytes sent on the first cold visit, by file:")
    for v in variants:
        big = sorted(((n, f) for f, n in files[v][0].items() if n > 20_000), reverse=True)
        print(f"  {v}: " + ", ".join(f"{f.rsplit('/', 1)[-1]} {n / 1e6:.2f}" for n, f in big))


def break_even(runs: dict[float, Reps], variants: list[str]) -> None:
    """Cold time against the link: a least-squares fit of cold = a + k / Mbps per variant over the
    throttled runs (every rep a point; a: the CPU's part, k / 8: the MB the link waits for), and
    the speed above which each variant is faster than the usual start (today)."""
    fits = {}
    for v in variants:
        pts = [(1 / mbps, x) for mbps, r in runs.items() if mbps for x in r.cold[v]]
        n = len(pts)
        mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
        k = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        fits[v] = (my - k * mx, k)
    print("\n## Cold against the link: cold (s) = a + k / Mbps, fitted over the throttled reps\n")
    print("| variant | a (s) | k (s·Mbps) | k / 8 (MB waited for) | faster cold than today |")
    print("|---|---|---|---|---|")
    at, kt = fits.get("today", (None, None))
    for v, (a, k) in fits.items():
        if at is None or v == "today":
            even = "—"
        elif a >= at and k >= kt:
            even = "never"
        elif a <= at and k <= kt:
            even = "always"
        else:
            s = (k - kt) / (at - a)
            even = f"above {s:.1f} Mbps" if a < at else f"below {s:.1f} Mbps"
        print(f"| {v} | {a:.2f} | {k:.1f} | {k / 8:.2f} | {even} |")


if __name__ == "__main__":
    sys.exit(main())
