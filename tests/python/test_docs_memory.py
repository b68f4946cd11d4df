"""docs/memory.md's worked example is kvlab's own output: every ```console block's command is run
through kvlab's CLI, and what it prints must start with the lines the guide shows (trailing spaces
aside), so a change in a number or a word shows up here before it misleads a reader."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kvlab.cli import main

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "memory.md"
BLOCKS = re.findall(r"```console\n\$ python -m kvlab (.+?)\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


def test_the_guide_has_its_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize(("command", "shown"), BLOCKS, ids=[b[0].split()[0] + str(i) for i, b in enumerate(BLOCKS)])
def test_each_example_prints_what_the_guide_shows(command, shown, capsys):
    argv = shlex.split(command)
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0
    got = [line.rstrip() for line in out.splitlines()]
    want = [line.rstrip() for line in shown.strip("\n").splitlines()]
    assert got[: len(want)] == want
