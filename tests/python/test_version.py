"""The version has one home, `kvlab.__version__`; the places that must repeat it agree.

pyproject.toml reads it (setuptools dynamic version), build.py reads it for the zip's
name, and package.json / package-lock.json repeat it because npm needs a literal.
"""

import json
import re
import tomllib
from pathlib import Path

import kvlab
from tests.conftest import build_py

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
    assert build_py().kvlab_version() == kvlab.__version__


def test_the_changelog_has_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
