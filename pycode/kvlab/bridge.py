"""The one door from JavaScript into kvlab (used by the browser runtime's worker).

JSON in, JSON out, so the page sees exactly the numbers CPython would give,
and a Python error reaches the page as one readable line, not a traceback.

>>> import json
>>> json.loads(call_json("attention_figure", '{"d": 4}'))["result"]["d"]
4
>>> json.loads(call_json("attention_figure", '{"d": "x"}'))["error"]
"ValueError: d must be a number, got 'x'"
>>> json.loads(call_json("os", '{}'))["error"]
'NameError: kvlab has no public function os'
>>> json.loads(run_json("x = 6\\nx * 7"))["result"]
42
>>> json.loads(run_json("1 / 0"))["error"]
'ZeroDivisionError: division by zero'
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path

import kvlab

# Files a function reads that the kvlab zip leaves out: what they are (the progress line) and
# {site asset path: where kvlab reads it}. In the browser the worker downloads them on the
# function's first call and writes them there (site_src/runtime/worker.js); the build serves
# them (sitebuild/kvlab_hooks.py, MODEL_FILES). The path is kvlab.core.tiny.PACKED_WEIGHTS, spelled
# out so that importing the bridge imports nothing more (tests/python/test_lazy_import.py).
PACKED_WEIGHTS = Path(kvlab.__file__).resolve().parent / "data" / "tiny" / "weights.npz"
TINY_WEIGHTS = {"what": "The tiny model's weights", "files": {"models/tiny/weights.npz": str(PACKED_WEIGHTS)}}
BROWSER_FILES = {"spec_decode_figure": TINY_WEIGHTS, "qkv_figure": TINY_WEIGHTS}


def _error(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return json.dumps({"error": f"{type(exc).__name__}: {text}"[:500]})


def call_json(name: str, kwargs_json: str) -> str:
    """Call kvlab.<name>(**kwargs) for a name in kvlab.__all__; reply with JSON."""
    if name not in kvlab.__all__:
        return json.dumps({"error": f"NameError: kvlab has no public function {name}"})
    try:
        kwargs = json.loads(kwargs_json)
        result = getattr(kvlab, name)(**kwargs)
        return json.dumps({"result": result}, allow_nan=False)
    except (Exception, RecursionError, MemoryError) as exc:  # one line for the page, never a traceback
        return _error(exc)


def files_json(name: str) -> str:
    """The files kvlab.<name> needs beyond the zip: JSON {"what", "files": {asset path: file path}}.

    >>> json.loads(files_json("spec_decode_figure"))["files"]
    {'models/tiny/weights.npz': '...weights.npz'}
    >>> json.loads(files_json("attention_figure"))
    {'what': '', 'files': {}}
    """
    return json.dumps(BROWSER_FILES.get(name, {"what": "", "files": {}}))


def run_json(code: str) -> str:
    """Run Python code; reply with the JSON of its last expression (None if there is none)."""
    try:
        tree = ast.parse(code, mode="exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        scope: dict = {"kvlab": kvlab, "__name__": "__kvlab_console__"}
        exec(compile(tree, "<kvlab.runPython>", "exec"), scope)
        value = eval(compile(ast.Expression(last.value), "<kvlab.runPython>", "eval"), scope) if last else None
        return json.dumps({"result": value})
    except (Exception, RecursionError, MemoryError) as exc:
        return _error(exc)


def warm_one() -> bool:
    """Import the next kvlab module nothing has imported yet; False once all are.

    kvlab imports its modules on first use (kvlab/__init__.py); the worker calls this
    while it has nothing else to do, one module per call, so a later widget's first
    call finds its module ready without the first widget waiting for all of them.
    """
    for module in kvlab.MODULES:
        if module not in sys.modules:
            importlib.import_module(module)
            return True
    return False
