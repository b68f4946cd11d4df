#!/usr/bin/env python3
"""kvlab: build, serve, package and test the KV cache explainer.

    python build.py            build the site into site/
    python build.py serve      build, serve on http://127.0.0.1:8000, rebuild on change
    python build.py zip        the offline zip for classrooms, into dist/
    python build.py test       lint (ruff), then every test (unit, build, real-browser)
    python build.py test --fast  lint, unit tests, doctests and the build checks: no browser

On first use it makes a virtual environment in .venv/ with the pinned Python
packages (requirements.txt) and installs the pinned npm packages (package-lock.json)
with `npm ci`; later runs reuse both until the pins change. Needs Python 3.11+
and Node 20+; `test` installs Debian's Chromium (/usr/bin/chromium) if it is missing.

This file uses only the standard library until it has re-started itself inside
.venv/. The site's build steps themselves run as mkdocs hooks
(sitebuild/kvlab_hooks.py), so `serve` rebuilds exactly as `build` does.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Config:
    venv: Path = ROOT / ".venv"
    requirements: Path = ROOT / "requirements.txt"
    package_lock: Path = ROOT / "package-lock.json"
    node_modules: Path = ROOT / "node_modules"
    site_dir: Path = ROOT / "site"
    dist_dir: Path = ROOT / "dist"
    chromium: str = os.environ.get("KVLAB_CHROMIUM", "/usr/bin/chromium")
    min_python: tuple = (3, 11)
    min_node: int = 20


CONFIG = Config()


class StepFailed(SystemExit):
    """A step failed: print what to do and exit non-zero (no traceback)."""

    def __init__(self, message: str):
        super().__init__(f"\nbuild.py: {message}")


def say(msg: str) -> None:
    print(f"build.py: {msg}", flush=True)


def run(cmd: list[str], what: str, **kwargs) -> None:
    done = subprocess.run(cmd, cwd=ROOT, **kwargs)
    if done.returncode != 0:
        raise StepFailed(f"{what} failed (exit {done.returncode}): {' '.join(map(str, cmd))}")


def stamp(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------------------- bootstrap


def venv_python() -> Path:
    return CONFIG.venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def inside_venv() -> bool:
    return Path(sys.prefix).resolve() == CONFIG.venv.resolve()


def ensure_python_env() -> None:
    """Create .venv and install the pinned packages when the pins changed."""
    if sys.version_info < CONFIG.min_python:
        raise StepFailed(f"Python {'.'.join(map(str, CONFIG.min_python))}+ is needed, this is {sys.version.split()[0]}")
    want = stamp(CONFIG.requirements, ROOT / "pyproject.toml")
    marker = CONFIG.venv / ".kvlab-stamp"
    if marker.is_file() and marker.read_text() == want and venv_python().exists():
        return
    if not venv_python().exists():
        say("creating .venv (first run)")
        run([sys.executable, "-m", "venv", str(CONFIG.venv)], "creating the virtual environment")
    say("installing the pinned Python packages into .venv (requirements.txt)")
    pip = [str(venv_python()), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    run(pip + ["-r", str(CONFIG.requirements)], "pip install -r requirements.txt")
    run(pip + ["--no-deps", "-e", str(ROOT)], "pip install -e . (the kvlab package)")
    marker.write_text(want)


def start_npm_ci() -> subprocess.Popen | None:
    """`npm ci` started when node_modules/ is missing or older than package-lock.json (None: nothing to do)."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if not node or not npm:
        raise StepFailed(
            f"Node {CONFIG.min_node}+ and npm are needed to vendor the browser runtimes "
            "(Pyodide, onnxruntime-web, Plotly). Install Node.js (e.g. `apt-get install nodejs npm`) and run again."
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < CONFIG.min_node:
        raise StepFailed(f"Node {CONFIG.min_node}+ is needed, found {version}")
    marker = CONFIG.node_modules / ".kvlab-stamp"
    if marker.is_file() and marker.read_text() == stamp(CONFIG.package_lock):
        return None
    say("installing the pinned npm packages (npm ci)")
    return subprocess.Popen([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=ROOT)


def ensure_tools() -> None:
    """.venv's pinned Python packages and node_modules' pinned npm packages, installed at once when
    their pins changed (neither install needs the other: on a fresh clone pip takes about 45 s and
    npm ci 18 s, so this saves the shorter one); then this script runs in .venv."""
    npm = start_npm_ci()
    try:
        ensure_python_env()
    finally:
        if npm and npm.wait() != 0:
            raise StepFailed(f"npm ci failed (exit {npm.returncode})")
    if npm:
        (CONFIG.node_modules / ".kvlab-stamp").write_text(stamp(CONFIG.package_lock))
    if not inside_venv():
        os.execv(str(venv_python()), [str(venv_python()), str(Path(__file__).resolve()), *sys.argv[1:]])


# ---------------------------------------------------------------------------- steps


def mkdocs_env(offline: bool = False) -> dict:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if offline:
        env["KVLAB_OFFLINE"] = "true"
        env["KVLAB_DIRECTORY_URLS"] = "false"
    return env


def build_site(site_dir: Path, offline: bool = False, url: str | None = None) -> Path:
    """mkdocs build --strict: any warning (a broken link, a bad widget) fails it. `url`: where it
    will be served (its sitemap, which instant navigation follows, names it)."""
    say(f"building the site into {site_dir}" + (" (offline variant)" if offline else ""))
    env = mkdocs_env(offline)
    if url:
        env["KVLAB_SITE_URL"] = url
    run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "--site-dir", str(site_dir)],
        "mkdocs build",
        env=env,
    )
    pages = [p for p in site_dir.rglob("*.html") if p.name != "404.html"]
    say(f"built {len(pages)} pages into {site_dir}")
    return site_dir


TEACHERS_README = """kvlab: the KV cache, explained by running it (offline copy, version {version})

How to open it
  1. Unzip this file anywhere (a USB stick is fine).
  2. Open the folder and double-click index.html.
  It opens in your web browser with no internet connection and no server.
  Use Chrome, Chromium or Edge: every interactive figure works there from
  the file system. (Firefox and Safari show the pages and the figures as
  they were computed when the site was built.)

What is inside
  Every page of the site, with its interactive widgets: the Python code that
  computes the numbers (Pyodide + numpy) and the tiny language model run in
  the browser itself. The first widget you use on a page loads the Python
  runtime (about 15 MB, a few seconds); nothing is sent anywhere.

Search works offline too (the search box at the top of every page).
"""


def make_offline_zip(dist_dir: Path) -> Path:
    """dist/kvlab-offline-<version>.zip: the file:// build, deterministic bytes."""
    import zipfile

    version = kvlab_version()
    with tempfile.TemporaryDirectory() as tmp:
        site = build_site(Path(tmp) / "site", offline=True)
        dist_dir.mkdir(parents=True, exist_ok=True)
        out = dist_dir / f"kvlab-offline-{version}.zip"
        top = f"kvlab-offline-{version}"
        # The sitemap carries build dates and is of no use offline; payload
        # scripts replace the raw binaries (file:// can't fetch them).
        skip = {"sitemap.xml", "sitemap.xml.gz"}
        entries = {f"{top}/README.txt": TEACHERS_README.format(version=version).encode()}
        for path in sorted(site.rglob("*")):
            rel = path.relative_to(site).as_posix()
            has_payload = path.with_name(path.name + ".js").is_file()
            if path.is_dir() or rel in skip or has_payload:
                continue
            entries[f"{top}/{rel}"] = path.read_bytes()
        part = out.with_suffix(".part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for name in sorted(entries):
                info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                info.create_system = 3
                zf.writestr(info, entries[name], compresslevel=9)
        part.replace(out)
    size = out.stat().st_size
    say(
        f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {size / 1e6:.1f} MB, "
        f"{len(entries)} files, sha256 {hashlib.sha256(out.read_bytes()).hexdigest()[:16]}…"
    )
    return out


def kvlab_version() -> str:
    """The version's one home: `__version__` in pycode/kvlab/__init__.py (read, not imported)."""
    text = (ROOT / "pycode" / "kvlab" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    if not found:
        raise StepFailed('pycode/kvlab/__init__.py has no `__version__ = "X.Y.Z"` line')
    return found.group(1)


def serve_site(port: int) -> None:
    """mkdocs serve: rebuilds when site_src/, pycode/ or models/ change."""
    say(f"serving on http://127.0.0.1:{port}/ (Ctrl+C stops)")
    env = mkdocs_env()
    # instant navigation (one runtime per visit) follows the sitemap, which needs the site's URL
    env.setdefault("KVLAB_SITE_URL", f"http://127.0.0.1:{port}/")
    # mkdocs takes this process's place: whoever stops it (Ctrl+C, a supervisor's SIGTERM, a
    # test) stops the server; as a child process, mkdocs outlived a SIGTERM and kept rebuilding
    os.chdir(ROOT)
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--strict", "--dev-addr", f"127.0.0.1:{port}"]
    os.execve(sys.executable, cmd, env)


def ensure_chromium() -> None:
    """The browser tests drive Debian's Chromium: install it when it is missing and
    this is a Debian/Ubuntu machine where we are root; otherwise say what to do."""
    if Path(CONFIG.chromium).exists():
        return
    if CONFIG.chromium == "/usr/bin/chromium" and shutil.which("apt-get") and os.geteuid() == 0:
        say("installing Debian's chromium for the browser tests (apt-get)")
        run(["apt-get", "update", "-qq"], "apt-get update")
        run(
            ["apt-get", "install", "-y", "-qq", "chromium"],
            "apt-get install chromium",
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            stdout=subprocess.DEVNULL,
        )
        return
    raise StepFailed(
        f"the browser tests need Chromium at {CONFIG.chromium}: `apt-get install -y chromium` "
        "(Debian/Ubuntu), or set KVLAB_CHROMIUM to its path."
    )


def lint() -> None:
    """ruff check and ruff format --check (rules in pyproject.toml) over the whole tree;
    a finding fails the test run before any test starts."""
    say("linting: ruff check and ruff format --check (pyproject.toml [tool.ruff])")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT)
    if done.returncode != 0:
        raise StepFailed(
            "lint failed: ruff check found the problems above (the tests did not run). Fix them, "
            "or try `.venv/bin/ruff check --fix`; rules and per-file ignores are in pyproject.toml."
        )
    done = subprocess.run([sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "."], cwd=ROOT)
    if done.returncode != 0:
        raise StepFailed(
            "lint failed: the files above are not formatted (the tests did not run). "
            "Run `.venv/bin/ruff format` (settings in pyproject.toml [tool.ruff.format])."
        )


# The full run: the unit layer (CPython alone) and the site layer in two shards, side by side
# on the machine's two cores (a browser test waits on Chromium, a unit test on nothing). The
# site is built once and served once, here, for both shards: its URL is in its sitemap, which
# instant navigation follows. Each is a pytest session of its own; a test file added to
# tests/browser lands in the second shard.
UNIT_LAYER = ["tests/python", "pycode", "sitebuild"]
# balanced by time on a quiet machine (2026-12-05: shard 1 399 s, shard 2 674 s before test_typing.py moved)
SHARD_1_BROWSER = ["tests/browser/test_gates.py", "tests/browser/test_distribution.py", "tests/browser/test_typing.py"]
SITE_SHARDS = (
    ["tests/build", *SHARD_1_BROWSER],
    ["tests/browser", *(f"--ignore={path}" for path in SHARD_1_BROWSER)],
)


class StaticHandler(http.server.SimpleHTTPRequestHandler):
    """A built site over http, as GitHub Pages serves it (the tests' servers too)."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
    }

    def log_message(self, *args):  # keep the test output readable
        pass


class StaticServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a browser that navigates away drops its downloads: not worth a traceback
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def serve_static(directory: Path, port: int = 0, handler=StaticHandler) -> StaticServer:
    """Serve `directory` on 127.0.0.1:`port` (0: the OS picks) from a thread; `server_address[1]` is the port."""
    server = StaticServer(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_tests(pytest_args: list[str], fast: bool = False) -> None:
    """Lint, then pytest. `fast`: everything but tests/browser/ and the tests marked slow (the inner loop;
    CI runs all). The full run with no arguments builds the site and the offline zip, then runs the unit layer and the two
    site shards at once (SITE_SHARDS, above), the first shard's report as it goes, the others' after it;
    with arguments (`-k name`, a path, -x) one pytest session runs them as given."""
    lint()
    pytest = [sys.executable, "-m", "pytest"]
    if fast:
        pytest_args = ["--ignore=tests/browser", "-m", "not slow", *pytest_args]
    else:
        ensure_chromium()
    if fast or pytest_args:
        say("running the tests: " + " ".join(["pytest", *pytest_args]))
        raise SystemExit(subprocess.run([*pytest, *pytest_args], cwd=ROOT).returncode)
    # three sessions on two cores: numpy's second BLAS thread would spin waiting for a core
    # (the unit layer alone: 104 CPU-s with it, 76 without, in the same 75 s)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as tmp:
        logs = {name: Path(tmp) / f"{name}.log" for name in ("unit", "site-2", "zip")}
        say(f"running the unit tests: pytest {' '.join(UNIT_LAYER)} (alongside the site's build and tests)")
        unit = subprocess.Popen(
            [*pytest, *UNIT_LAYER], cwd=ROOT, stdout=logs["unit"].open("w"), stderr=subprocess.STDOUT
        )
        server = serve_static(Path(tmp) / "site")  # the port first: the build writes the site's URL
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        # the offline zip, built beside the site: both shards test it (file://)
        zipping = subprocess.Popen(
            [sys.executable, str(ROOT / "build.py"), "zip", "--dist-dir", str(Path(tmp) / "dist")],
            cwd=ROOT,
            stdout=logs["zip"].open("w"),
            stderr=subprocess.STDOUT,
        )
        try:
            build_site(Path(tmp) / "site", url=url)
            if zipping.wait():
                raise StepFailed(f"build.py zip failed:\n{logs['zip'].read_text()}")
        except StepFailed:
            unit.kill()
            zipping.kill()
            raise
        (offline_zip,) = (Path(tmp) / "dist").glob("kvlab-offline-*.zip")
        env = dict(
            os.environ,
            KVLAB_SITE_DIR=str(Path(tmp) / "site"),
            KVLAB_SITE_SERVED=url,
            KVLAB_OFFLINE_ZIP=str(offline_zip),
        )
        say(
            f"running the site tests in two shards: pytest {' '.join(SITE_SHARDS[0])} | pytest {' '.join(SITE_SHARDS[1])}"
        )
        second = subprocess.Popen(
            [*pytest, *SITE_SHARDS[1]], cwd=ROOT, env=env, stdout=logs["site-2"].open("w"), stderr=subprocess.STDOUT
        )
        codes = {"site shard 1": subprocess.run([*pytest, *SITE_SHARDS[0]], cwd=ROOT, env=env).returncode}
        codes["site shard 2"] = second.wait()
        codes["unit"] = unit.wait()
        server.shutdown()
        for name, log in (("site shard 2", logs["site-2"]), ("unit", logs["unit"])):
            say(f"the {name} tests, run alongside:")
            sys.stdout.write(log.read_text())
            sys.stdout.flush()
    for name, code in codes.items():
        if code:
            say(f"the {name} tests failed (pytest exit status {code})")
    raise SystemExit(1 if any(codes.values()) else 0)


# ---------------------------------------------------------------------------- CLI


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python build.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_build = sub.add_parser("build", help="build the site into site/ (mkdocs --strict)")
    p_build.add_argument(
        "--site-dir", type=Path, default=CONFIG.site_dir, help="where to write the site (default: site/)"
    )
    p_serve = sub.add_parser("serve", help="build, serve on http://127.0.0.1:8000 and rebuild on change")
    p_serve.add_argument("--port", type=int, default=8000, help="port to serve on (default 8000)")
    p_zip = sub.add_parser("zip", help="the offline zip (works from file://) into dist/kvlab-offline-<version>.zip")
    p_zip.add_argument("--dist-dir", type=Path, default=CONFIG.dist_dir, help="where to write the zip (default: dist/)")
    p_test = sub.add_parser(
        "test",
        help="run every test (unit, build, browser), or with --fast all but the browser tests; "
        "extra arguments go to pytest, e.g. -k attention -x",
        allow_abbrev=False,
    )
    p_test.add_argument(
        "--fast",
        action="store_true",
        help="lint, unit tests, doctests and the build checks, without the browser tests (the inner loop)",
    )
    # `test` has one option of its own (--fast): whatever else follows it (-x, -k name, paths) is pytest's
    args, pytest_args = parser.parse_known_args()
    if pytest_args and args.command != "test":
        parser.error(f"unrecognized arguments: {' '.join(pytest_args)}")

    ensure_tools()
    command = args.command or "build"
    if command == "build":
        build_site(getattr(args, "site_dir", CONFIG.site_dir).resolve())
    elif command == "zip":
        make_offline_zip(args.dist_dir.resolve())
    elif command == "serve":
        serve_site(args.port)
    elif command == "test":
        run_tests(pytest_args, fast=args.fast)


if __name__ == "__main__":
    main()
