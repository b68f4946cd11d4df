"""Shared fixtures: one real build of the site per test session.

Set KVLAB_SITE_DIR to test an existing build instead (it is not rebuilt).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """A full `build.py build` into a temp dir (strict mkdocs, vendored runtimes)."""
    given = os.environ.get("KVLAB_SITE_DIR")
    if given:
        return Path(given)
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "build", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0, f"build failed:\n{done.stdout}\n{done.stderr}"
    return site
