"""Which of Pyodide's standard library the first Python widget needs (issue 42, route 3).

Boots Pyodide 0.27.7 in Node (node_modules/pyodide, as sitebuild/bytecode.mjs), installs the site's
numpy wheel and kvlab zip, imports every kvlab module (bridge.warm_one until done, numpy.random,
numpy.linalg) and calls every widget function through kvlab.bridge.call_json with its defaults and
every input of tests/python/widget_calls.py's CALLS; then lists the modules in sys.modules that were
imported from the standard library zip (/lib/python312.zip). It writes a trimmed zip with only those
(plus the packages above them), boots Pyodide again with the trimmed zip in the full one's place, runs
the same calls, and says whether every call gave the same answer as with the full library.

    .venv/bin/python bench/runtime_stdlib.py --site /tmp/site42 [--out /tmp/python_stdlib.min.zip]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"

NODE = r"""
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { loadPyodide } from "pyodide";
const [indexURL, wheel, kvlabZip, callsFile, weights, out] = process.argv.slice(2);
const py = await loadPyodide({ indexURL, stdout: () => {}, stderr: (s) => console.error(s) });
await py.loadPackage(pathToFileURL(wheel).href, { messageCallback: () => {}, errorCallback: (s) => console.error(s) });
const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
py.unpackArchive(new Uint8Array(readFileSync(kvlabZip)), "zip", { extractDir: site });
py.globals.set("calls_json", readFileSync(callsFile, "utf8"));
py.globals.set("weights", new Uint8Array(readFileSync(weights)));
const res = py.runPython(`
import json, sys, os
import kvlab, kvlab.bridge
while kvlab.bridge.warm_one():
    pass
import numpy.random, numpy.linalg
answers = {}
for fn, inputs in json.loads(calls_json).items():
    for path in json.loads(kvlab.bridge.files_json(fn))["files"].values():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "wb").write(bytes(weights.to_py()))
    for i, kw in enumerate(inputs):
        answers[f"{fn}#{i}"] = kvlab.bridge.call_json(fn, json.dumps(kw))
mods = {}
for name, m in list(sys.modules.items()):
    spec = getattr(m, "__spec__", None)
    origin = getattr(spec, "origin", None) or ""
    if origin.startswith("/lib/python312.zip/"):
        mods[name] = origin[len("/lib/python312.zip/"):]
json.dumps({"modules": mods, "answers": answers})
`);
writeFileSync(out, res);
"""


def calls() -> dict[str, list[dict]]:
    sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "pycode")]
    import widget_calls

    out = {}
    for fn in widget_calls.FUNCTIONS:
        out[fn] = [{}] + list(widget_calls.CALLS.get(fn, []))
    return out


def run(index: Path, wheel: Path, kvlab_zip: Path, calls_file: Path, work: Path) -> dict:
    script = ROOT / "sitebuild" / ".stdlib-probe.mjs"  # beside node_modules, so `import "pyodide"` resolves
    script.write_text(NODE)
    try:
        out = work / "probe.json"
        subprocess.run(
            [
                "node",
                str(script),
                str(index) + "/",
                str(wheel),
                str(kvlab_zip),
                str(calls_file),
                str(ROOT / "models" / "tiny" / "weights.npz"),
                str(out),
            ],
            check=True,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        return json.loads(out.read_text())
    finally:
        script.unlink(missing_ok=True)


def trimmed(full: Path, modules: dict[str, str], out: Path) -> list[str]:
    keep = set(modules.values())
    with zipfile.ZipFile(full) as src:
        names = src.namelist()
        for path in list(keep):  # the packages above each module (their __init__ and directory entries)
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                keep.update(n for n in (d + "/", d + "/__init__.py") if n in names)
        kept = [n for n in names if n in keep]
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
            for n in kept:
                info = src.getinfo(n)
                info.compress_type = zipfile.ZIP_DEFLATED
                dst.writestr(info, src.read(n), compresslevel=9)
    return kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=Path("site"))
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "python_stdlib.min.zip")
    args = ap.parse_args()
    site = args.site.resolve()
    manifest = json.loads((site / "assets/kvlab/manifest.js").read_text().split("=", 1)[1].strip().rstrip(";"))
    wheel = site / "assets/vendor/pyodide" / NUMPY_WHEEL
    kvlab_zip = site / "assets" / manifest["kvlabZip"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        calls_file = work / "calls.json"
        calls_file.write_text(json.dumps(calls()))
        n_calls = sum(len(v) for v in json.loads(calls_file.read_text()).values())
        full = run(ROOT / "node_modules/pyodide", wheel, kvlab_zip, calls_file, work)
        full_zip = ROOT / "node_modules/pyodide/python_stdlib.zip"
        kept = trimmed(full_zip, full["modules"], args.out)
        # the same calls with the trimmed library in the full one's place
        index = work / "pyodide"
        shutil.copytree(ROOT / "node_modules/pyodide", index)
        shutil.copy2(args.out, index / "python_stdlib.zip")
        again = run(index, wheel, kvlab_zip, calls_file, work)
    same = sum(again["answers"].get(k) == v for k, v in full["answers"].items())
    errors = [k for k, v in full["answers"].items() if '"error"' in v[:12]]
    f, t = full_zip.stat().st_size, args.out.stat().st_size
    print(f"calls: {n_calls} ({len(errors)} answered with an error under the full library, as the tests expect)")
    print(
        f"stdlib modules imported from the zip: {len(full['modules'])}; entries kept: {len(kept)} "
        f"of {len(zipfile.ZipFile(full_zip).namelist())}"
    )
    print(
        f"python_stdlib.zip: {f / 1e6:.2f} MB → trimmed {t / 1e6:.2f} MB ({args.out}); "
        f"gzip of the trimmed one {len(gzip.compress(args.out.read_bytes(), 6)) / 1e6:.2f} MB"
    )
    print(
        f"with the trimmed library: {same} of {len(full['answers'])} answers identical; "
        f"extra modules imported from it: {sorted(set(again['modules']) - set(full['modules']))}"
    )
    print("modules:", " ".join(sorted(full["modules"])))


if __name__ == "__main__":
    sys.exit(main())
