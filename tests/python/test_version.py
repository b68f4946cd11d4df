"""The version has one home, `kvlab.__version__`; the places that must repeat it agree.

pyproject.toml reads it (setuptools dynamic version), build.py reads it for the zip's
name, and package.json / package-lock.json repeat it because npm needs a literal.
"""

import importlib.util
import json
import re
import sys
import tomllib
from pathlib import Path

import kvlab

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_semver():
    assert re.fullmatch(r"\d+\.\d+\.\d+", kvlab.__version__)


def test_pyproject_takes_the_version_from_kvlab():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kvlab.__version__"}


def test_package_json_repeats_the_same_version():
    package = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert package["version"] == kvlab.__version__, "bump package.json (and npm install) with kvlab.__version__"
    assert lock["version"] == lock["packages"][""]["version"] == kvlab.__version__


def test_build_py_reads_the_same_version():
    spec = importlib.util.spec_from_file_location("kvlab_build_version", ROOT / "build.py")
    build = importlib.util.module_from_spec(spec)
    sys.modules["kvlab_build_version"] = build  # dataclasses look their module up
    spec.loader.exec_module(build)
    assert build.kvlab_version() == kvlab.__version__


def test_the_changelog_has_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
