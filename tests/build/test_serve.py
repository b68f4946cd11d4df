"""`python build.py serve`: serves the site and rebuilds when site_src/ or pycode/ change."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode()
    except OSError:
        return None


def wait_for(predicate, timeout: float = 120, what: str = ""):
    end = time.time() + timeout
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def checkout_copy(where: Path) -> Path:
    """The repository's files in `where` (the installed .venv and node_modules linked, not
    copied): the test writes pages and modules there, never into the real tree, where a
    build running at the same time would pick them up."""
    skip = shutil.ignore_patterns(".git", ".venv", "node_modules", "site", "dist", "mutants", "runs", "__pycache__")
    repo = where / "repo"
    shutil.copytree(ROOT, repo, ignore=skip)
    for name in (".venv", "node_modules"):
        (repo / name).symlink_to(ROOT / name, target_is_directory=True)
    return repo


@pytest.mark.slow  # a build of its own: left out of `build.py test --fast`
def test_serve_rebuilds_when_pages_or_kvlab_change(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    repo = checkout_copy(tmp_path)
    page = repo / "site_src" / "pages" / "zz-serve-probe.md"
    module = repo / "pycode" / "kvlab" / "zz_serve_probe.py"
    proc = subprocess.Popen(
        [sys.executable, str(repo / "build.py"), "serve", "--port", str(port)],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the first build shares two cores with the run's own site build and the unit tests: minutes under load
        wait_for(lambda: fetch(base), timeout=360, what="the first build")
        manifest = wait_for(lambda: fetch(base + "assets/kvlab/manifest.js"), what="the manifest")
        page.write_text("# Serve probe\n\nWritten by a test.\n")
        wait_for(
            lambda: "Written by a test" in (fetch(base + "zz-serve-probe/") or ""),
            what="a rebuild after a page changed",
        )
        module.write_text('"""Written by a test: changes the packed kvlab."""\n')
        wait_for(
            lambda: (fetch(base + "assets/kvlab/manifest.js") or manifest) != manifest,
            what="a rebuild after pycode changed",
        )
    finally:
        page.unlink(missing_ok=True)
        module.unlink(missing_ok=True)
        proc.terminate()
        proc.wait(timeout=30)
    # stopping build.py stops the server (a child mkdocs that outlived it would keep rebuilding on every edit)
    wait_for(lambda: port_is_free(port), timeout=15, what="the server to stop with build.py")


def port_is_free(port: int) -> bool:
    """Nothing listens on it (SO_REUSEADDR: the closed connections' TIME_WAIT does not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
