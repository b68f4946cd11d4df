"""Shared fixtures: one real build of the site per test session.

Set KVLAB_SITE_DIR to test an existing build instead (it is not rebuilt).

No silent skips: a skipped test fails the run (a missing dependency is an error, not a
skip). KVLAB_ALLOW_SKIPS=1 lets a local run through.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def site_port() -> int:
    """The port the browser tests serve the site on, known before the build:
    the site's URL goes into its sitemap, which instant navigation follows."""
    return int(os.environ.get("KVLAB_SITE_PORT") or free_port())


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, site_port) -> Path:
    """A full `build.py build` into a temp dir (strict mkdocs, vendored runtimes)."""
    given = os.environ.get("KVLAB_SITE_DIR")
    if given:
        return Path(given)
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "build", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "KVLAB_SITE_URL": f"http://127.0.0.1:{site_port}/"},
    )
    assert done.returncode == 0, f"build failed:\n{done.stdout}\n{done.stderr}"
    return site


def pytest_sessionfinish(session, exitstatus):
    """A run with skipped tests fails: every dependency is pinned in requirements.txt."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped and exitstatus == pytest.ExitCode.OK and not os.environ.get("KVLAB_ALLOW_SKIPS"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter.write("\n")
        reporter.write_line(
            f"FAILED: {len(skipped)} test(s) skipped; a skip hides a missing dependency or a broken "
            "precondition (set KVLAB_ALLOW_SKIPS=1 to allow skips locally)",
            red=True,
            bold=True,
        )
