"""The offline zip for classrooms (`build.py zip`): its layout and its bytes. Opened from
file:// in real Chromium: tests/browser/test_distribution.py."""

from __future__ import annotations

import hashlib
import zipfile

from tests.conftest import make_zip


def test_zip_has_a_readme_for_teachers_at_the_top(offline_zip):
    with zipfile.ZipFile(offline_zip) as zf:
        names = zf.namelist()
    top = names[0].split("/")[0]
    assert f"{top}/README.txt" in names and f"{top}/index.html" in names
    assert all(n.startswith(top + "/") for n in names)


def test_zip_is_deterministic(offline_zip, tmp_path):
    again = make_zip(tmp_path)
    assert hashlib.sha256(again.read_bytes()).hexdigest() == hashlib.sha256(offline_zip.read_bytes()).hexdigest()
