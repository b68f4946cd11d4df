"""A memory snapshot of the started Python runtime, for the http site (issue 42).

`snapshot.mjs` starts Pyodide in Node with the trimmed standard library, writes numpy's wheel and
kvlab's zip into its file system, imports numpy and kvlab, and saves the memory image (with the
files later imports still read) as one gzip file. The worker restores Python from it instead of
starting Python and importing: the first Python widget was live in 0.27x the time of a bare
Pyodide + numpy page cold and in ~1 s warm (bench/results/2026-12-05-runtime-snapshot-session2.md),
at the price of 5.6 MB more to download (14.7 MB against 9.2 MB from a gzip host). The page drops
it where the reader's browser asks to save data (site_src/runtime/loader.js), and the worker falls
back to the usual start on any failure of it.

Only the http site carries it: from file:// (the offline zip) the worker cannot fetch, and the
zip would grow by 10 MB for a start the offline reader's browser could not use.

The result is cached (~/.cache/kvlab, by the inputs' hashes), as bytecode.py's: a Node run takes
5-15 s, once for each change of kvlab's code. Two runs give the same bytes (snapshot.mjs).
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from pathlib import Path

import vendor

SCRIPT = Path(__file__).with_name("snapshot.mjs")


def snapshot_gz(kvlab_zip: bytes, log=print) -> bytes:
    """The gzipped snapshot of Python with numpy and this kvlab imported (snapshot.mjs's format)."""
    wheel = vendor.ensure_numpy_wheel(log)
    stdlib = vendor.ensure_stdlib_min(log)
    key = hashlib.sha256()
    for part in (
        vendor.PYODIDE_VERSION.encode(),
        wheel.name.encode(),
        SCRIPT.read_bytes(),
        stdlib.read_bytes(),
        kvlab_zip,
    ):
        key.update(hashlib.sha256(part).digest())
    cached = vendor.cache_dir() / f"python-{key.hexdigest()[:16]}.snap.gz"
    if cached.is_file():
        return cached.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "kvlab.zip", Path(tmp) / "python.snap.gz"
        src.write_bytes(kvlab_zip)
        cmd = ["node", str(SCRIPT), str(vendor.PYODIDE_DIR), str(wheel), str(src), str(stdlib), str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=vendor.ROOT)
        if done.returncode != 0 or not out.is_file():
            raise vendor.VendorError(f"making Python's memory snapshot in Pyodide failed:\n{done.stderr[-1500:]}")
        data = out.read_bytes()
    vendor.write_cached(cached, data)
    log(f"kvlab: Python's memory snapshot made in Pyodide {vendor.PYODIDE_VERSION} ({len(data) / 1e6:.1f} MB)")
    return data
