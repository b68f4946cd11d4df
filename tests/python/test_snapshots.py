"""Snapshots of every widget function's default JSON (Observable Plot style).

Each function a widget calls (FUNCTIONS of the registry, tests/python/widget_calls.py:
site_src/widgets/*/widget.json "function", and any name a widget's JS passes to
ctx.call / ctx.live) is called with no arguments through the browser's own door,
`kvlab.bridge.call_json`, and its JSON compared
with tests/python/snapshots/<name>.json. The build draws each static figure from
the same call, so a snapshot is what the page shows before the reader touches it.

On a mismatch the new JSON is written beside the snapshot as <name>-changed.json
(git-ignored) and the test fails: diff the two files, and if the change is meant,
rewrite the snapshots with

    KVLAB_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/python/test_snapshots.py

Numbers are compared to 1e-9 relative (a last-bit difference between CPUs or BLAS
builds is not a change); everything else must be equal.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from kvlab.bridge import call_json
from tests.python.widget_calls import FUNCTIONS, slow_if

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE = os.environ.get("KVLAB_UPDATE_SNAPSHOTS") == "1"


def as_text(value) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# Functions whose numbers come out of the tiny model's float32 forward pass (numpy): another
# CPU picks another OpenBLAS kernel (DYNAMIC_ARCH), whose summation order moves the last float32
# bits. Differences between fp32 and a quantized cache (max |dlogit| ~ 1e-2) amplify that to a
# few 1e-3 relative; every other function is plain float64 arithmetic and compared to 1e-9.
MODEL_DERIVED_REL_TOL = 5e-3
MODEL_DERIVED = {"generate_figure", "model_attention_figure", "kv_quant_figure", "kv_quant_table"}
# A 4-bit cache rounds each value to one of 16 levels: when the last float32 bits move a value
# across a level boundary, the largest logit change moves by about a percent (q4_0's max |dlogit|
# was 1.718 on one CI machine and 1.73 on another). A wrong computation moves it by far more.
KEY_REL_TOL = {"max_abs_dlogit": 3e-2}
# The same number as the page writes it (kv_quant_table's view): compared as that number, same tolerance.
NUMBER_TEXT_KEYS = {"dlogit": 3e-2}


def first_difference(old, new, path="$", rel_tol=1e-9):
    """Where `new` differs from `old` beyond float noise, or None.

    Widgets round to 6 decimals, so a value can land on the other side of a rounding boundary:
    two units in the 6th decimal are noise, anything larger (relative to `rel_tol`) is a change."""
    if isinstance(old, bool) or isinstance(new, bool):
        return None if old is new else path
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return None if math.isclose(old, new, rel_tol=rel_tol, abs_tol=2.5e-6) else path
    if type(old) is not type(new):
        return path
    if isinstance(old, dict):
        if list(old) != list(new):
            return f"{path} (keys {sorted(set(old) ^ set(new)) or 'reordered'})"
        for key in old:
            if key in NUMBER_TEXT_KEYS and isinstance(old[key], str) and isinstance(new[key], str):
                close = math.isclose(float(old[key]), float(new[key]), rel_tol=NUMBER_TEXT_KEYS[key])
                if not close:
                    return f"{path}.{key}"
                continue
            where = first_difference(old[key], new[key], f"{path}.{key}", max(rel_tol, KEY_REL_TOL.get(key, 0)))
            if where:
                return where
        return None
    if isinstance(old, list):
        if len(old) != len(new):
            return f"{path} (length {len(old)} -> {len(new)})"
        for i, (a, b) in enumerate(zip(old, new)):
            where = first_difference(a, b, f"{path}[{i}]", rel_tol)
            if where:
                return where
        return None
    return None if old == new else path


def test_no_snapshot_is_left_without_a_function():
    stale = sorted(
        p.stem for p in SNAPSHOTS.glob("*.json") if not p.stem.endswith("-changed") and p.stem not in FUNCTIONS
    )
    assert stale == [], f"snapshots of functions no widget calls any more: {stale} (delete them)"


@pytest.mark.parametrize("name", [pytest.param(n, marks=slow_if(n)) for n in FUNCTIONS])
def test_default_json_matches_the_snapshot(name):
    reply = json.loads(call_json(name, "{}"))
    assert "error" not in reply, reply.get("error")
    new = reply["result"]
    snapshot = SNAPSHOTS / f"{name}.json"
    changed = SNAPSHOTS / f"{name}-changed.json"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(as_text(new))
        changed.unlink(missing_ok=True)
        return
    if not snapshot.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        changed.write_text(as_text(new))
        pytest.fail(
            f"no snapshot for {name}: wrote {changed.relative_to(ROOT)}; KVLAB_UPDATE_SNAPSHOTS=1 makes it the snapshot"
        )
    rel_tol = MODEL_DERIVED_REL_TOL if name in MODEL_DERIVED else 1e-9
    where = first_difference(json.loads(snapshot.read_text()), new, rel_tol=rel_tol)
    if where is None:
        changed.unlink(missing_ok=True)
        return
    changed.write_text(as_text(new))
    pytest.fail(
        f"{name}() default JSON differs from its snapshot at {where}: "
        f"diff {snapshot.relative_to(ROOT)} {changed.relative_to(ROOT)}; "
        "if the change is meant, rerun with KVLAB_UPDATE_SNAPSHOTS=1"
    )


def test_a_number_written_as_text_is_compared_as_that_number():
    # q4_0's max |dlogit| as the kv-quant table writes it: 1.72 on one machine, 1.73 on another
    assert first_difference({"dlogit": "1.72"}, {"dlogit": "1.73"}) is None
    assert first_difference({"dlogit": "1.72"}, {"dlogit": "2.5"}) == "$.dlogit"
    assert first_difference({"other": "1.72"}, {"other": "1.73"}) == "$.other"
