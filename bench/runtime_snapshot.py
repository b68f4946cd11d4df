"""Python from a memory snapshot vs today's start vs a bare Pyodide + numpy page (issue 42, route 1).

In headless Chromium, side by side in one run, each variant in a fresh browser profile (cold
cache), then the same page again in that profile (warm: second visit, from its disk cache):

  bare      the page loads Pyodide + numpy the usual way on the main thread (bench/runtime.py's
            bare page): loadPyodide, loadPackage("numpy"), import numpy
  today     a worker as site_src/runtime/worker.js starts Python: Pyodide's files fetched at once
            and served to it from memory, loadPyodide, loadPackage(numpy), kvlab's zip unpacked,
            kvlab and kvlab.bridge imported
  snapshot  a worker that fetches the same files plus the snapshot (sitebuild/snapshot.mjs, made
            here in Node) and starts with site_src/runtime/snapshot.js: Python restored with numpy
            and kvlab imported, numpy's side modules instantiated again, the files later imports
            read written from the snapshot into the file system (it still fetches the wheel and
            kvlab's zip, unused: bench/runtime_routes.py measures the route as the worker runs it)

Each ends with the same check (numpy computes; kvlab.bridge imported): "Python ready with numpy
and kvlab imported", timed in the page from navigation start. Bytes are what the server sent
(bodies of 200 answers; a 304 sends none), served with Cache-Control: max-age=600 as GitHub
Pages serves.

    python build.py build --site-dir /tmp/site_snap
    .venv/bin/python bench/runtime_snapshot.py --site /tmp/site_snap --reps 3
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections import defaultdict
from pathlib import Path

from local_site import CHROMIUM, SiteHandler
from playwright.sync_api import sync_playwright
from runtime_routes import cold_warm_reps

ROOT = Path(__file__).resolve().parents[1]
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"

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

WORKER_PAGE = """<!doctype html><meta charset="utf-8"><title>{variant}</title>
<script>
window.result = new Promise((resolve, reject) => {{
  const w = new Worker("bench-worker.js");
  w.onmessage = (ev) => ev.data.error ? reject(new Error(ev.data.error)) : resolve({{ms: performance.now(), inner: ev.data}});
  w.postMessage({{variant: "{variant}"}});
}});
</script>
"""

WORKER = """
const base = new URL("./", self.location.href).href;
const get = (p) => fetch(base + p).then((r) => { if (!r.ok) throw new Error(p + " " + r.status); return r.arrayBuffer(); }).then((b) => new Uint8Array(b));
function shim(served) {  // as worker.js's withFetchShim: Pyodide's own fetches answered from memory
  const real = self.fetch;
  self.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), base).href;
    const bytes = served.get(url);
    if (!bytes) return real.call(self, input, init);
    served.delete(url);
    const type = url.endsWith(".wasm") ? "application/wasm" : "application/octet-stream";
    return Promise.resolve(bytes).then((b) => new Response(b, {status: 200, headers: {"Content-Type": type}}));
  };
}
self.onmessage = async (ev) => {
  const t0 = performance.now();
  try {
    const v = ev.data.variant;
    const names = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json", "NUMPY"];
    const files = Object.fromEntries(names.map((n) => [n, get("pyodide/" + n)]));
    const kvlab = get("kvlab.zip");
    const snap = v === "snapshot" ? get("kvsnap.bin.gz") : null;
    importScripts(base + "pyodide/pyodide.asm.js", base + "pyodide/pyodide.js");
    shim(new Map(names.map((n) => [base + "pyodide/" + n, files[n]])));
    let py;
    if (v === "snapshot") {
      importScripts(base + "snapshot.js");
      py = await self.kvlabSnapshot.loadFromSnapshot({indexURL: base + "pyodide/", snapshotGz: snap,
        stdout: () => {}, stderr: (s) => console.warn(s)});
    } else {
      py = await loadPyodide({indexURL: base + "pyodide/", stdout: () => {}, stderr: (s) => console.warn(s)});
      await py.loadPackage("numpy", {messageCallback: () => {}});
      const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
      py.unpackArchive(await kvlab, "zip", {extractDir: site});
    }
    py.runPython("import numpy, kvlab, kvlab.bridge; assert int(numpy.arange(10).sum()) == 45");
    postMessage({worker_ms: performance.now() - t0});
  } catch (err) {
    postMessage({error: String(err && err.stack || err)});
  }
};
""".replace("NUMPY", NUMPY_WHEEL)


class CountingHandler(SiteHandler):
    sent: dict[str, int] = defaultdict(int)
    lock = threading.Lock()

    def end_headers(self):
        # as GitHub Pages: cacheable for 10 minutes, so a second visit is the browser cache's
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def copyfile(self, source, outputfile):
        data = source.read()
        with self.lock:
            self.sent["bytes"] += len(data)
        outputfile.write(data)


def prepare(site: Path, out: Path) -> dict:
    pyo = site / "assets" / "vendor" / "pyodide"
    (out / "pyodide").mkdir(parents=True)
    for f in pyo.iterdir():
        shutil.copy2(f, out / "pyodide" / f.name)
    kvlab_zip = sorted((site / "assets" / "kvlab").glob("kvlab-*.zip"))[0]
    shutil.copy2(kvlab_zip, out / "kvlab.zip")
    shutil.copy2(ROOT / "site_src" / "runtime" / "snapshot.js", out / "snapshot.js")
    made = subprocess.run(
        [
            "node",
            str(ROOT / "sitebuild" / "snapshot.mjs"),
            str(ROOT / "node_modules" / "pyodide"),
            str(out / "pyodide" / NUMPY_WHEEL),
            str(out / "kvlab.zip"),
            str(out / "pyodide" / "python_stdlib.zip"),  # the one this bench's worker serves
            str(out / "kvsnap.bin.gz"),
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    (out / "bare.html").write_text(BARE)
    for v in ("today", "snapshot"):
        (out / f"{v}.html").write_text(WORKER_PAGE.format(variant=v))
    (out / "bench-worker.js").write_text(WORKER)
    return {"snapshot_log": made.stdout.strip().splitlines()[-1], "kvlab_zip": kvlab_zip.stat().st_size}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kvsnap-bench-"))
    try:
        info = prepare(args.site.resolve(), work)
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(CountingHandler, directory=str(work))
        )
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores); Chromium {CHROMIUM}")
        print(f"snapshot made in Node: {info['snapshot_log']}", flush=True)
        variants = ["bare", "today", "snapshot"]
        with sync_playwright() as p:
            # no pause before the warm visit (as this bench was first run; runtime_routes waits 3 s)
            r = cold_warm_reps(p, variants, args.reps, lambda v: base + f"{v}.html", CountingHandler.sent, 0)
        server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cold, warm, sent, sent_warm, loads = r.cold, r.warm, r.sent, r.sent_warm, r.loads
    med = statistics.median
    b = med(cold["bare"])
    print("\n| variant | cold: ready (s) | × bare | warm: ready (s) | × bare warm | MB sent cold | MB sent warm |")
    print("|---|---|---|---|---|---|---|")
    bw = med(warm["bare"])
    for v in variants:
        print(
            f"| {v} | {med(cold[v]):.2f} | {med(cold[v]) / b:.2f}× | {med(warm[v]):.2f} | {med(warm[v]) / bw:.2f}× "
            f"| {med(sent[v]) / 1e6:.1f} | {med(sent_warm[v]) / 1e6:.1f} |"
        )
    s, t = med(cold["snapshot"]), med(cold["today"])
    print(f"\nsnapshot / today: cold {s / t:.2f}×, warm {med(warm['snapshot']) / med(warm['today']):.2f}×")
    print(f"medians of {args.reps}; all runs: " + "; ".join(f"{v} {[round(x, 2) for x in cold[v]]}" for v in variants))
    print(f"load average per rep: {[round(x, 2) for x in loads]}; at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
