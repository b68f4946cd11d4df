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

from pathlib import Path

import vendor

SCRIPT = Path(__file__).with_name("snapshot.mjs")


def snapshot_gz(kvlab_zip: bytes, log=print) -> bytes:
    """The gzipped snapshot of Python with numpy and this kvlab imported (snapshot.mjs's format)."""
    wheel = vendor.ensure_numpy_wheel(log)
    stdlib = vendor.ensure_stdlib_min(log)
    data, made = vendor.node_made(
        SCRIPT,
        "python-{key}.snap.gz",
        [vendor.PYODIDE_VERSION.encode(), wheel.name.encode(), stdlib.read_bytes(), kvlab_zip],
        {"kvlab.zip": kvlab_zip},
        [vendor.PYODIDE_DIR, wheel, "kvlab.zip", stdlib],
        "making Python's memory snapshot in Pyodide",
    )
    if made:
        log(f"kvlab: Python's memory snapshot made in Pyodide {vendor.PYODIDE_VERSION} ({len(data) / 1e6:.1f} MB)")
    return data
