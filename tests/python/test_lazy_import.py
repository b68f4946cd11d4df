"""kvlab imports its modules on first use; the worker imports the rest while idle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PYCODE = Path(__file__).resolve().parents[2] / "pycode"

SCRIPT = """
import sys
sys.path.insert(0, {pycode!r})
import kvlab
from kvlab import bridge
loaded = lambda: sorted(m for m in sys.modules if m.startswith("kvlab."))
print(loaded())
kvlab.attention_figure(d=4)
after_one = loaded()
print(after_one)
steps = 0
while bridge.warm_one():
    steps += 1
print(steps, sorted(set(kvlab.MODULES) - set(sys.modules)), bridge.warm_one())
"""


def test_import_reads_no_module_and_warm_one_imports_the_rest():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(pycode=str(PYCODE))], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "['kvlab.bridge']"  # `from kvlab import bridge`: nothing else yet
    assert "kvlab.widgets.attention" in out[1] and "kvlab.memory.kv_bytes" not in out[1]
    steps, missing, again = out[2].split(" ", 1)[0], out[2].split(" ", 1)[1].rsplit(" ", 1)[0], out[2].rsplit(" ", 1)[1]
    assert int(steps) > 10 and missing == "[]" and again == "False"


def test_every_public_name_resolves_to_its_module():
    import kvlab

    for name, module in kvlab._HOME.items():
        assert getattr(kvlab, name).__module__.startswith("kvlab"), name
        assert name in kvlab.__all__ and name in dir(kvlab)
        assert module in sys.modules
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        kvlab.no_such_name  # noqa: B018
