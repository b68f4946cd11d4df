"""The same numbers in Pyodide: every function a widget calls, run in the reader's
runtime (Pyodide 0.27.7, numpy 2.0.2, in real Chromium, through the worker and
kvlab.bridge exactly as widgets call it) against CPython (numpy 2.2.x here),
with its defaults and with extreme inputs. Results must agree to 1e-9 relative;
refusals must carry the same one-line message.
"""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path

import pytest

import kvlab
from kvlab import bridge

ROOT = Path(__file__).resolve().parents[2]
# Functions that read the tiny model's weights (weights.npz): they draw the
# model widgets' build-time figures; in the browser the model itself runs on
# onnxruntime-web (tested against them in test_model_widgets.py).
NEEDS_WEIGHTS = {
    "generate_figure",
    "model_attention_figure",
    "next_token_figure",
    "model_eviction_figure",
    "kv_quant_figure",
}


def widget_functions() -> list[str]:
    names = {json.loads(p.read_text())["function"] for p in (ROOT / "site_src" / "widgets").glob("*/widget.json")}
    names.add("race_theory")  # model-race's JS calls it
    return sorted(names - NEEDS_WEIGHTS)


def extreme_inputs(name: str) -> list[dict]:
    """Defaults, then each numeric parameter far above and below its default."""
    cases: list[dict] = [{}]
    for p in inspect.signature(getattr(kvlab, name)).parameters.values():
        d = p.default
        if isinstance(d, bool) or not isinstance(d, (int, float)):
            continue
        cases.append({p.name: type(d)(d * 1000 + 1000)})
        cases.append({p.name: type(d)(-1)})
    return cases


def cpython(name: str, kwargs: dict) -> dict:
    return json.loads(bridge.call_json(name, json.dumps(kwargs)))


def close(a, b, path="") -> str | None:
    """None if equal (numbers to 1e-9 relative), else where they differ."""
    if isinstance(a, float) or isinstance(b, float):
        if (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        ):
            return None
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a.keys() ^ b.keys())}"
        for k in a:
            if (diff := close(a[k], b[k], f"{path}.{k}")) is not None:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if (diff := close(x, y, f"{path}[{i}]")) is not None:
                return diff
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


@pytest.fixture(scope="module")
def pyodide_page(browser, site_url):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(180_000)
    page.goto(site_url + "attention/")
    assert page.evaluate("kvlab.runPython('import numpy; numpy.__version__')") == "2.0.2"
    yield page
    context.close()


@pytest.mark.parametrize("name", widget_functions())
def test_widget_function_gives_the_same_json_in_pyodide(pyodide_page, name):
    cases = extreme_inputs(name)
    # one round trip for all the cases of this function, the way widgets call it
    got = pyodide_page.evaluate(
        """async ([name, cases]) => {
            const out = [];
            for (const kwargs of cases) out.push(await kvlab.runtimes.python.run("call", {fn: name, kwargs}));
            return out;
        }""",
        [name, cases],
    )
    for kwargs, browser_reply in zip(cases, got):
        want = cpython(name, kwargs)
        assert close(browser_reply, want) is None, f"{name}({kwargs}): {close(browser_reply, want)}"


def test_model_weight_functions_are_not_called_in_the_browser():
    """The widgets that draw with them call the model (onnxruntime-web) live instead."""
    for folder in (ROOT / "site_src" / "widgets").iterdir():
        js = folder / "widget.js"
        if js.is_file():
            for name in NEEDS_WEIGHTS:
                assert f'"{name}"' not in js.read_text(), f"{folder.name} calls {name} in Pyodide"
