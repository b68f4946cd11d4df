"""The trimmed standard library the worker serves (sitebuild/stdlib_min.py) holds every stdlib module that
kvlab and the widget functions import.

bench/runtime_stdlib.py makes the list in Pyodide itself; this is the cheap guard that runs with every
test: in a fresh CPython, import kvlab's modules and call every widget function with its defaults (the
registry's list), then ask that each stdlib module loaded from source is in the list. A miss is not a
failure on the site (the worker fetches the full library once), so the message names what to add."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import stdlib_min

from tests.python.widget_calls import FUNCTIONS

ROOT = Path(__file__).resolve().parents[2]
PROBE = r"""
import importlib, pkgutil, sys
before = set(sys.modules)  # the interpreter's start (frozen or built in) and the probe's two helpers
sys.path[:0] = ["pycode", "."]
import kvlab
# not in the browser's zip (sitebuild/kvlab_hooks.py BROWSER_LEAVES_OUT), or never imported there (the CLI)
leaves_out = {"kvlab.memory.calibration", "kvlab.cli", "kvlab.__main__"}
for info in pkgutil.walk_packages(kvlab.__path__, "kvlab."):
    if info.name not in leaves_out and not info.name.endswith("_types"):
        importlib.import_module(info.name)
calls = 0
for name in sys.argv[1].split(","):
    fn = getattr(kvlab, name, None)
    if fn is None:
        continue
    try:
        fn()
        calls += 1
    except (ValueError, TypeError, FileNotFoundError):
        pass
after = set(sys.modules) - before
import json, sysconfig
from pathlib import Path
stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
def source(name):
    f = getattr(sys.modules.get(name), "__file__", None) or ""
    return f.endswith(".py") and stdlib in Path(f).resolve().parents and "site-packages" not in f
print(json.dumps({"calls": calls, "loaded": sorted(n for n in after if source(n))}))
"""
# CPython helpers with no counterpart in Pyodide's zip, or that only the probe itself pulls in
# (lzma: a separate Pyodide package, which zipfile tries and does without; ntpath: CPython 3.11's pathlib imports it)
NOT_IN_PYODIDE = {"_sysconfigdata", "sitecustomize", "_distutils_hack", "_pydecimal", "_pyio", "lzma", "ntpath"}


def test_every_stdlib_module_the_widgets_import_is_in_the_trimmed_library():
    out = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(sorted(FUNCTIONS))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    assert probe["calls"] >= 20, probe
    missing = sorted(
        n for n in probe["loaded"] if n not in stdlib_min.MODULES and not any(n.startswith(x) for x in NOT_IN_PYODIDE)
    )
    assert not missing, (
        f"{len(missing)} stdlib modules are imported but not in sitebuild/stdlib_min.py (run "
        f"bench/runtime_stdlib.py to regenerate it): {', '.join(missing)}"
    )
