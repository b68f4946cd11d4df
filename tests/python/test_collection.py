"""Every test folder runs: a folder under tests/ (or a package with doctests) that
contributes no collected test is a layer that silently stopped running.

pytest skips folders named `build` by default, so tests/build/ ran nowhere until
pyproject.toml set `norecursedirs`; this test fails if anything like it happens again.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def collected_per_folder() -> Counter:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    counts: Counter = Counter()
    for line in done.stdout.splitlines():
        if "::" in line:
            counts[str(Path(line.split("::", 1)[0]).parent)] += 1
    return counts


@pytest.mark.slow  # collects the whole suite again (its point is the full run's layout): not in `--fast`
def test_every_test_folder_contributes_tests():
    counts = collected_per_folder()
    folders = sorted({str(p.parent.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")})
    assert folders, "no test files found under tests/"
    silent = [f for f in folders if counts[f] == 0]
    assert not silent, f"these folders hold test files but pytest collects nothing from them: {silent}"
    # the doctests of both Python trees are collected too
    for tree in ("pycode/kvlab", "sitebuild"):
        assert any(k == tree or k.startswith(tree + "/") for k in counts), f"no doctest collected from {tree}/"
