"""`python build.py serve`: serves the site and rebuilds when site_src/ or pycode/ change."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

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


def test_serve_rebuilds_when_pages_or_kvlab_change():
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    page = ROOT / "site_src" / "pages" / "zz-serve-probe.md"
    module = ROOT / "pycode" / "kvlab" / "zz_serve_probe.py"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "build.py"), "serve", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: fetch(base), what="the first build")
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
