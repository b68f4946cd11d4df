"""Today's Pyodide (0.27, the site's) against newer lines (issue 42, route 2): start-up and bytes,
side by side in one run, as ratios. Headless Chromium, each variant in a fresh browser profile (cold
cache), then the same page again in that profile (warm: a second visit, from its disk cache), rotated
order (runtime_routes.cold_warm_reps, as the other runtime benches).

Each variant is a bare page (Pyodide on the main thread, as runtime_routes' "bare"):

  0.27+numpy  node_modules/pyodide (0.27.7) + the numpy wheel vendor.py verifies (today's bare page)
  0.27        the same Pyodide, no numpy
  <version>   each --pyodide DIR (an npm install of a newer `pyodide` made outside the repo), no numpy;
              + numpy too if DIR holds the numpy wheel its pyodide-lock.json names, with that sha256

The page times, from navigation start: `loadPyodide` done (core), the standard-library modules kvlab
and numpy import (sitebuild/stdlib_min.MODULES; a name the version lacks is skipped and not counted),
then numpy loaded and imported (where there is a wheel) = ready. It also times a pure-Python loop
inside Python (not part of ready). Bytes: what the server sent on the cold visit, by file, and the
core files on disk: raw, gzip -6 (what a host that gzips .js/.json/.wasm sends), and the standard
library trimmed as the site trims it over http.

    mkdir -p /tmp/pyo29 && (cd /tmp/pyo29 && npm install pyodide@0.29.5)
    mkdir -p /tmp/pyo314 && (cd /tmp/pyo314 && npm install pyodide@314.0.8)
    .venv/bin/python bench/runtime_pyodide_versions.py --reps 5 \\
        --pyodide /tmp/pyo29/node_modules/pyodide --pyodide /tmp/pyo314/node_modules/pyodide

--answers PY [PY ...] instead: kvlab's answers under other numpy versions, without Pyodide (no numpy
wheel for the newer lines to run it there): each PY is a Python with only numpy installed (e.g. a venv
with numpy==2.2.5, the 0.29 line's, or 2.4.6, the 314 line's); every widget function is called through
kvlab.bridge.call_json with its defaults and the inputs of tests/python/widget_calls.py (as
bench/runtime_stdlib.py), and every answer compared with the first PY's.

    .venv/bin/python bench/runtime_pyodide_versions.py --answers /tmp/np202/bin/python /tmp/np246/bin/python
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import http.server
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from local_site import CHROMIUM
from playwright.sync_api import sync_playwright
from runtime_routes import Handler, cold_warm_reps

ROOT = Path(__file__).resolve().parents[1]
TODAY = ROOT / "node_modules" / "pyodide"
GZIPPED = (".js", ".mjs", ".json", ".wasm")  # as runtime_routes --gzip: what GitHub Pages compresses


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


stdlib_min = _load("kvlab_stdlib_min", ROOT / "sitebuild" / "stdlib_min.py")

PAGE = """<!doctype html><meta charset="utf-8"><title>{name}</title><link rel="icon" href="data:,">
<script src="{root}pyodide.js"></script>
<script>
window.result = (async () => {{
  const t = {{}};
  const py = await loadPyodide({{indexURL: new URL("{root}", location.href).href}});
  t.core = performance.now();
  const imported = py.runPython(`
import importlib
n = 0
for m in {modules}:
    try:
        importlib.import_module(m)
        n += 1
    except Exception:
        pass
n`);
  t.stdlib = performance.now();
  let numpy = null;
  if ({numpy}) {{
    await py.loadPackage("numpy", {{messageCallback: () => {{}}}});
    numpy = py.runPython("import numpy; assert int(numpy.arange(10).sum()) == 45; numpy.__version__");
    t.numpy = performance.now();
  }}
  const ms = performance.now();
  const loop_ms = py.runPython(`
import time
t0 = time.perf_counter()
s = 0
for i in range(1_000_000):
    s += i * i
(time.perf_counter() - t0) * 1000`);
  return {{ms, t, imported, numpy, loop_ms, pyodide: py.version,
          python: py.runPython("import sys; sys.version.split()[0]")}};
}})();
</script>
"""


ANSWERS = """
import json, sys
import numpy, kvlab, kvlab.bridge
calls = json.load(open(sys.argv[1]))
out = {f"{fn}#{i}": kvlab.bridge.call_json(fn, json.dumps(kw)) for fn, inputs in calls.items() for i, kw in enumerate(inputs)}
json.dump({"numpy": numpy.__version__, "python": sys.version.split()[0], "answers": out}, open(sys.argv[2], "w"))
"""


def leaves(x, path=""):
    """(path, value) for every scalar in a JSON value."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, x


def compare_answers(pythons: list[str]) -> None:
    from runtime_stdlib import calls

    with tempfile.TemporaryDirectory() as tmp:
        calls_file = Path(tmp) / "calls.json"
        calls_file.write_text(json.dumps(calls()))
        runs = []
        for py in pythons:
            out = Path(tmp) / f"answers{len(runs)}.json"
            env = dict(os.environ, PYTHONPATH=str(ROOT / "pycode"))
            subprocess.run([py, "-c", ANSWERS, str(calls_file), str(out)], check=True, cwd=ROOT, env=env)
            runs.append(json.loads(out.read_text()))
    ref = runs[0]
    print(f"reference: Python {ref['python']}, numpy {ref['numpy']} ({pythons[0]}); {len(ref['answers'])} calls")
    for py, run in zip(pythons[1:], runs[1:], strict=True):
        same = [k for k, v in ref["answers"].items() if run["answers"].get(k) == v]
        print(f"\nPython {run['python']}, numpy {run['numpy']} ({py}): {len(same)} of {len(ref['answers'])} identical")
        for key, want in ref["answers"].items():
            got = run["answers"].get(key)
            if got == want:
                continue
            a, b = dict(leaves(json.loads(want))), dict(leaves(json.loads(got)))
            if a.keys() != b.keys():
                print(f"  {key}: different shape: {sorted(a.keys() ^ b.keys())[:5]}")
                continue
            diff = [k for k in a if a[k] != b[k]]
            num = [
                abs(a[k] - b[k]) / max(abs(a[k]), abs(b[k]), 1e-300)
                for k in diff
                if isinstance(a[k], float | int) and isinstance(b[k], float | int)
            ]
            text = [k for k in diff if not (isinstance(a[k], float | int) and isinstance(b[k], float | int))]
            worst = max(num, default=0.0)
            print(
                f"  {key}: {len(diff)} of {len(a)} values differ; numbers: {len(num)}, largest relative "
                f"difference {worst:.2e}; other values: {len(text)}"
                + (f" e.g. {text[0]}: {a[text[0]]!r} → {b[text[0]]!r}" if text else "")
            )


NODE = """
import { pathToFileURL } from "node:url";
const [dir, wheel, modules] = process.argv.slice(2);
const wall = () => performance.now(), cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const t0 = [wall(), cpu()];
const mark = () => [wall() - t0[0], cpu() - t0[1]];
const { loadPyodide } = await import(pathToFileURL(dir + "/pyodide.mjs").href);
const py = await loadPyodide({ indexURL: dir + "/", stdout: () => {}, stderr: () => {} });
const core = mark();
py.runPython(`
import importlib
for m in ${modules}:
    try:
        importlib.import_module(m)
    except Exception:
        pass`);
const stdlib = mark();
if (wheel) {
  await py.loadPackage(pathToFileURL(wheel).href, { messageCallback: () => {} });
  py.runPython("import numpy; assert int(numpy.arange(10).sum()) == 45");
}
console.log(JSON.stringify({ core, stdlib, ready: mark() }));
"""


def node_reps(versions: dict[str, Path], wheels: dict[str, Path | None], variants: list[str], reps: int) -> None:
    """The same start in Node (fresh process per run, files from disk, no cache): wall and CPU ms of
    this process (CPU time counts only while it runs, so it is less moved by other workers' load)."""
    modules = repr(sorted(stdlib_min.MODULES))
    out: dict[str, list[dict]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "start.mjs"
        script.write_text(NODE)
        for rep in range(reps):
            k = rep % len(variants)
            for name in variants[k:] + variants[:k]:
                v = name.removesuffix("+numpy")
                wheel = str(wheels[v]) if name.endswith("+numpy") else ""
                done = subprocess.run(
                    ["node", str(script), str(versions[v]), wheel, modules], capture_output=True, text=True, check=True
                )
                out[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"node rep {rep + 1} (load {os.getloadavg()[0]:.2f})", flush=True)
    med = statistics.median
    ref = variants[1]
    print(
        f"\nNode {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()}, medians of {reps} (s)\n"
    )
    print(f"| variant | wall: core | wall: ready | × {ref} | CPU: core | CPU: ready | CPU × {ref} |")
    print("|---|---|---|---|---|---|---|")
    m = {
        n: {k: (med(x[k][0] for x in out[n]) / 1000, med(x[k][1] for x in out[n]) / 1000) for k in ("core", "ready")}
        for n in variants
    }
    for n in variants:
        print(
            f"| {n} | {m[n]['core'][0]:.2f} | {m[n]['ready'][0]:.2f} | {m[n]['ready'][0] / m[ref]['ready'][0]:.2f}× "
            f"| {m[n]['core'][1]:.2f} | {m[n]['ready'][1]:.2f} | {m[n]['ready'][1] / m[ref]['ready'][1]:.2f}× |"
        )
    for n in variants:
        print(
            f"  {n}: ready wall/CPU "
            + ", ".join(f"{x['ready'][0] / 1000:.2f}/{x['ready'][1] / 1000:.2f}" for x in out[n])
        )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def numpy_wheel(pyodide: Path) -> tuple[Path | None, str]:
    """The numpy wheel beside this Pyodide's files whose sha256 its pyodide-lock.json pins, else None
    and why (for 0.27: the one vendor.py caches, after checking it the same way)."""
    entry = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]["numpy"]
    candidates = [pyodide / entry["file_name"]]
    if pyodide.resolve() == TODAY.resolve():
        sys.path.insert(0, str(ROOT))
        from sitebuild import vendor

        candidates.insert(0, vendor.ensure_numpy_wheel(log=lambda *_: None))
    for c in candidates:
        if c.is_file():
            got = sha256(c)
            if got == entry["sha256"]:
                return c, f"{entry['file_name']} sha256 {got[:16]}… = pyodide-lock.json"
            return None, f"{c} has sha256 {got}, the lock pins {entry['sha256']}: not used"
    return None, f"no {entry['file_name']} (lock sha256 {entry['sha256'][:16]}…) to be had"


def core_files(pyodide: Path) -> list[Path]:
    names = ["pyodide.js", "pyodide.asm.js", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"]
    return [pyodide / n for n in names + ["pyodide-lock.json"] if (pyodide / n).is_file()]


def bytes_table(versions: dict[str, Path], wheels: dict[str, Path | None]) -> list[str]:
    rows = ["| file | " + " | ".join(f"{v} raw / gzip (MB)" for v in versions) + " |"]
    rows.append("|---|" + "---|" * len(versions))
    per: dict[str, dict[str, tuple[int, int]]] = {}
    for v, d in versions.items():
        for f in core_files(d):
            key = "pyodide.asm.js / .mjs" if f.name.startswith("pyodide.asm.") and f.suffix != ".wasm" else f.name
            raw = f.read_bytes()
            per.setdefault(key, {})[v] = (len(raw), len(gzip.compress(raw, 6)) if f.suffix in GZIPPED else len(raw))
        small = stdlib_min.trimmed((d / "python_stdlib.zip").read_bytes())
        per.setdefault("python_stdlib.zip trimmed (stdlib_min)", {})[v] = (len(small), len(small))
        if wheels.get(v):
            n = wheels[v].stat().st_size
            per.setdefault("numpy wheel", {})[v] = (n, n)
    totals = {v: [0, 0] for v in versions}
    for key, by in per.items():
        cells = []
        for v in versions:
            if v in by:
                raw, gz = by[v]
                cells.append(f"{raw / 1e6:.2f} / {gz / 1e6:.2f}")
                if key not in ("python_stdlib.zip",) and not key.startswith("numpy"):
                    totals[v][0] += raw
                    totals[v][1] += gz
            else:
                cells.append("—")
        rows.append(f"| {key} | " + " | ".join(cells) + " |")
    rows.append(
        "| **core, trimmed stdlib, no numpy** | "
        + " | ".join(f"**{r / 1e6:.2f} / {g / 1e6:.2f}**" for r, g in totals.values())
        + " |"
    )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pyodide", type=Path, action="append", default=[], help="a newer node_modules/pyodide")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--node-reps", type=int, default=5, help="the same start in Node, this many reps (0: none)")
    ap.add_argument("--browser", action=argparse.BooleanOptionalAction, default=True, help="the Chromium runs")
    ap.add_argument("--answers", nargs="+", metavar="PY", help="compare kvlab's answers under these Pythons")
    args = ap.parse_args()
    if args.answers:
        return compare_answers(args.answers)
    version_of = lambda d: json.loads((d / "package.json").read_text())["version"]  # noqa: E731
    today = version_of(TODAY)
    versions = {today: TODAY} | {version_of(d): d.resolve() for d in args.pyodide}
    wheels, why = {}, {}
    for v, d in versions.items():
        wheels[v], why[v] = numpy_wheel(d)
    variants = [f"{today}+numpy", today]
    for v in versions:
        if v != today:
            variants.append(v)
            if wheels[v]:
                variants.append(f"{v}+numpy")
    if args.node_reps:
        node_reps(versions, wheels, variants, args.node_reps)
    if not args.browser:
        return None
    modules = sorted(stdlib_min.MODULES)
    work = Path(tempfile.mkdtemp(prefix="kvversions-"))
    try:
        roots = {}
        for i, (v, d) in enumerate(versions.items()):
            roots[v] = f"/v{i}/"
            for f in core_files(d):
                Handler.overrides[f"/v{i}/{f.name}"] = f
            if wheels[v]:
                lock = json.loads((d / "pyodide-lock.json").read_text())
                Handler.overrides[f"/v{i}/{lock['packages']['numpy']['file_name']}"] = wheels[v]
        for n, name in enumerate(variants):
            v = name.removesuffix("+numpy")
            page = PAGE.format(
                name=name, root=roots[v], modules=repr(modules), numpy=str(name.endswith("+numpy")).lower()
            )
            (work / f"p{n}.html").write_text(page)
        url_name = {name: f"p{n}.html" for n, name in enumerate(variants)}
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(work)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        print(f"load average at start: {os.getloadavg()} ({os.cpu_count()} cores); Chromium {CHROMIUM}")
        for v in versions:
            print(f"  pyodide {v} ({versions[v]}): numpy wheel: {why[v]}")
        print("variants:", ", ".join(variants), flush=True)
        with sync_playwright() as p:
            r = cold_warm_reps(p, variants, args.reps, lambda name: base + url_name[name], Handler.sent)
        server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    ref, ref_core = f"{today}+numpy", today

    def phase(results: list[dict], key: str) -> float:
        return med(res["t"][key] for res in results) / 1000

    print(f"\nmedians of {args.reps} (s from navigation start; × = ratio of medians)\n")
    print(
        f"| variant | Python | numpy | cold: core | cold: + stdlib | cold: ready | × {ref_core} | × {ref} "
        f"| warm: core | warm: ready | × {ref_core} warm | × {ref} warm | MB sent cold | loop 1e6 (ms) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in variants:
        res, resw = r.results[name], r.results_warm[name]
        c, w = med(r.cold[name]), med(r.warm[name])
        print(
            f"| {name} | {res[0]['python']} | {res[0]['numpy'] or '—'} | {phase(res, 'core'):.2f} "
            f"| {phase(res, 'stdlib'):.2f} | {c:.2f} | {c / med(r.cold[ref_core]):.2f}× | {c / med(r.cold[ref]):.2f}× "
            f"| {phase(resw, 'core'):.2f} | {w:.2f} | {w / med(r.warm[ref_core]):.2f}× | {w / med(r.warm[ref]):.2f}× "
            f"| {med(r.sent[name]) / 1e6:.2f} | {med(x['loop_ms'] for x in res):.0f} |"
        )
    print(
        f"\nstdlib modules imported (of {len(modules)} names): "
        + ", ".join(f"{n} {r.results[n][0]['imported']}" for n in variants)
    )
    print("all runs (cold / warm, s):")
    for name in variants:
        print(f"  {name}: " + ", ".join(f"{c:.2f}/{w:.2f}" for c, w in zip(r.cold[name], r.warm[name], strict=True)))
    print(f"load average after each rep: {[round(x, 2) for x in r.loads]}; at the end: {os.getloadavg()}")
    print("\nbytes sent on the first cold visit, by file (MB):")
    for name in variants:
        big = sorted(((n, f) for f, n in r.files[name][0].items() if n > 20_000), reverse=True)
        print(f"  {name}: " + ", ".join(f"{f.rsplit('/', 1)[-1]} {n / 1e6:.2f}" for n, f in big))
    print("\ncore files on disk (raw / gzip -6 for .js/.mjs/.json/.wasm; zips as they are):\n")
    print("\n".join(bytes_table(versions, wheels)))


if __name__ == "__main__":
    sys.exit(main())
