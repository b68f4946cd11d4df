"""Shared fixtures: one real build of the site per test session, started in the background
as soon as the tests are collected; the tests that need it run after the others.

Set KVLAB_SITE_DIR to test an existing build instead (it is not rebuilt).

No silent skips: a skipped test fails the run (a missing dependency is an error, not a
skip). KVLAB_ALLOW_SKIPS=1 lets a local run through.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def build_py():
    """build.py as a module (it is a script at the repository's root, not a package)."""
    spec = importlib.util.spec_from_file_location("kvlab_build_py", ROOT / "build.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up there
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SiteBuild:
    """The session's one build of the site, started in the background as soon as the tests
    are collected (pytest_collection_modifyitems), so that it runs on the second core while
    the tests that need no site run first."""

    def __init__(self, config):
        self.port = int(os.environ.get("KVLAB_SITE_PORT") or free_port())
        self.given = os.environ.get("KVLAB_SITE_DIR")
        self.proc = None
        self.site = None
        if not self.given:
            self.site = config._tmp_path_factory.mktemp("site")
            self.log = self.site.parent / "site-build.log"
            self.proc = subprocess.Popen(
                [sys.executable, str(ROOT / "build.py"), "build", "--site-dir", str(self.site)],
                cwd=ROOT,
                stdout=self.log.open("w"),
                stderr=subprocess.STDOUT,
                env={**os.environ, "KVLAB_SITE_URL": f"http://127.0.0.1:{self.port}/"},
            )

    def wait(self) -> Path:
        if self.given:
            return Path(self.given)
        code = self.proc.wait()
        assert code == 0, f"build failed:\n{self.log.read_text()}"
        return self.site

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def pytest_collection_modifyitems(session, config, items):
    """The tests that need the built site run after the others, and the build starts now. (Slow tests carry
    `@pytest.mark.slow` themselves: `build.py test --fast` leaves them out.)"""
    needs = [item for item in items if "built_site" in getattr(item, "fixturenames", ())]
    if not needs or config.option.collectonly:
        return
    later = {id(item) for item in needs}
    items[:] = [item for item in items if id(item) not in later] + needs
    config.kv_site_build = SiteBuild(config)


def pytest_unconfigure(config):
    build = getattr(config, "kv_site_build", None)
    if build:
        build.stop()


@pytest.fixture(scope="session")
def site_port(request) -> int:
    """The port the browser tests serve the site on, known before the build:
    the site's URL goes into its sitemap, which instant navigation follows."""
    build = getattr(request.config, "kv_site_build", None)
    return build.port if build else int(os.environ.get("KVLAB_SITE_PORT") or free_port())


@pytest.fixture(scope="session")
def built_site(request) -> Path:
    """A full `build.py build` into a temp dir (strict mkdocs, vendored runtimes), or
    KVLAB_SITE_DIR as it is."""
    build = getattr(request.config, "kv_site_build", None)
    if build is None:  # e.g. a test that asks for the fixture by name
        build = request.config.kv_site_build = SiteBuild(request.config)
    return build.wait()


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
