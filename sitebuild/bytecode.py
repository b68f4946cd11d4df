"""Python bytecode for the browser, so Pyodide does not compile source on a reader's machine.

In the browser's worker, the first `import numpy` is mostly compiling numpy's .py files (the
wheel carries no .pyc), and kvlab's own modules add to it; .pyc files beside the sources cut
that to a fraction (bench/results/2026-12-02-runtime.md). The reader's first widget waits on
exactly that.

Only the Python that runs in the browser can make its .pyc (the magic number and bytecode are
CPython 3.12's; the build's Python may be another), so `bytecode.mjs` boots Pyodide from
node_modules in Node, installs the numpy wheel the site serves and kvlab's zip, imports every
kvlab module, and compiles each module imported from site-packages (kvlab's and the numpy
modules they pull in). The .pyc files are unchecked-hash ones (PEP 552): the importer uses
them without comparing the source's mtime, which unzipping in the browser does not keep.
The sources stay in the zip (tracebacks and `inspect` still read them).

The result is cached (~/.cache/kvlab, by the inputs' hashes): a Node run takes seconds.
"""

from __future__ import annotations

from pathlib import Path

import vendor

SCRIPT = Path(__file__).with_name("bytecode.mjs")


def pyc_zip(sources_zip: bytes, log=print) -> bytes:
    """A zip of `<package>/__pycache__/<module>.cpython-312.pyc` for kvlab and numpy."""
    wheel = vendor.ensure_numpy_wheel(log)
    data, made = vendor.node_made(
        SCRIPT,
        "pyc-{key}.zip",
        [vendor.PYODIDE_VERSION.encode(), wheel.name.encode(), sources_zip],
        {"kvlab.zip": sources_zip},
        [vendor.PYODIDE_DIR, wheel, "kvlab.zip"],
        "compiling kvlab and numpy to bytecode in Pyodide",
    )
    if made:
        log(f"kvlab: Python bytecode for the browser compiled in Pyodide {vendor.PYODIDE_VERSION}")
    return data
