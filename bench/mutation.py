#!/usr/bin/env python3
"""Mutation testing of kvlab's numeric modules with mutmut; prints the score table.

    pip install -r bench/requirements-mutation.txt     # once, into .venv (bench only)
    nice -n 19 .venv/bin/python bench/mutation.py      # every module (the long run)
    .venv/bin/python bench/mutation.py --modules eviction   # one module (memory: kv_bytes verdict serving)

mutmut changes one thing at a time in a module (a `<` into `<=`, a `+ 1` into `+ 2`,
a constant, an argument dropped...) and runs the unit tests that cover the mutated
function; a mutant the tests still pass on "survived": a wrong number nobody would
notice. The run happens in a scratch copy (the working tree is never touched), with
a flat layout mutmut understands: kvlab/ and the unit tests of these modules.

Score = killed / (killed + survived + timeouts + no tests). Record a run in
bench/results/YYYY-MM-DD-mutation-<modules>.md (with its machine, load and wall time) and its
score in bench/README.md's summary table. `--survivors` prints every surviving mutant's diff.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the numeric modules in scope: name -> path under kvlab/; and the unit tests that exercise them
MODULE_PATHS = {
    "eviction": "reuse/eviction",
    "cache": "core/cache",
    "prefix_cache": "reuse/prefix_cache",
    "context": "reuse/context",
    # memory and serving: KV sizes, the one fit verdict, serving times and prices
    "kv_bytes": "memory/kv_bytes",
    "verdict": "memory/verdict",
    "serving": "memory/serving",
}
MODULES = tuple(MODULE_PATHS)
REUSE_TESTS = (
    "test_eviction.py",
    "test_cache.py",
    "test_prefix_cache.py",
    "test_context.py",
    "test_figures.py",
    "test_figures_reuse.py",
    "test_figures_cache.py",
)
# the calculators' own tests (real engine logs, references, the golden grid); the widget-level
# tests (test_figures_memory.py) add little here and make each surviving mutant slow
MEMORY_TESTS = (
    "test_memory.py",
    "test_verdict.py",
    "test_serving.py",
    "test_layer_map.py",
    "test_engine_logs.py",
    "test_memory_golden.py",
    "test_pipeline_parallel.py",
    "test_families.py",
)
TESTS_FOR = {m: (MEMORY_TESTS if MODULE_PATHS[m].startswith("memory/") else REUSE_TESTS) for m in MODULE_PATHS}

CONFIG = """\
[tool.mutmut]
source_paths = ["kvlab"]
only_mutate = [{only}]
pytest_add_cli_args_test_selection = [{tests}]
pytest_add_cli_args = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
use_git_change_detection = false

[tool.pytest.ini_options]
pythonpath = ["."]
"""


def quoted(items) -> str:
    return ", ".join(f'"{x}"' for x in items)


def stage(scratch: Path, modules) -> None:
    shutil.copytree(ROOT / "pycode" / "kvlab", scratch / "kvlab", ignore=shutil.ignore_patterns("__pycache__"))
    (scratch / "tests").mkdir()
    tests = sorted({t for m in modules for t in TESTS_FOR[m]})
    for name in tests:
        if (ROOT / "tests" / "python" / name).exists():
            shutil.copy2(ROOT / "tests" / "python" / name, scratch / "tests" / name)
    if (ROOT / "tests" / "python" / "data").is_dir():  # real engine logs read by test_engine_logs.py
        shutil.copytree(ROOT / "tests" / "python" / "data", scratch / "tests" / "data")
    present = [f"tests/{n}" for n in tests if (scratch / "tests" / n).exists()]
    (scratch / "pyproject.toml").write_text(
        CONFIG.format(only=quoted(f"kvlab/{MODULE_PATHS[m]}.py" for m in modules), tests=quoted(present))
    )


def results(scratch: Path) -> dict[str, dict[str, list[str]]]:
    """{module: {status: [mutant names]}} from `mutmut results --all true`."""
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=scratch, capture_output=True, text=True
    ).stdout
    table: dict[str, dict[str, list[str]]] = {}
    for line in out.splitlines():
        m = re.match(r"\s*(kvlab\.(?:\w+\.)?(\w+)\.\S+): (.+)$", line)
        if m:
            table.setdefault(m.group(2), {}).setdefault(m.group(3).strip(), []).append(m.group(1))
    return table


def print_table(table, modules) -> None:
    print("| module | mutants | killed | survived | timeout | no tests | score |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tot = {"n": 0, "killed": 0, "survived": 0, "timeout": 0, "no tests": 0}
    for mod in modules:
        by = table.get(mod, {})
        n = sum(len(v) for v in by.values())
        k, s = len(by.get("killed", [])), len(by.get("survived", []))
        t, z = len(by.get("timeout", [])), len(by.get("no tests", []))
        for key, v in (("n", n), ("killed", k), ("survived", s), ("timeout", t), ("no tests", z)):
            tot[key] += v
        scored = k + s + t + z
        print(
            f"| {mod}.py | {n} | {k} | {s} | {t} | {z} | {100 * k / scored:.1f} % |"
            if scored
            else f"| {mod}.py | 0 | | | | | |"
        )
    scored = tot["killed"] + tot["survived"] + tot["timeout"] + tot["no tests"]
    print(
        f"| **all** | {tot['n']} | {tot['killed']} | {tot['survived']} | {tot['timeout']} | {tot['no tests']} | "
        f"**{100 * tot['killed'] / max(scored, 1):.1f} %** |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", nargs="+", default=list(MODULES), choices=MODULES)
    ap.add_argument("--survivors", action="store_true", help="print the diff of every surviving mutant")
    ap.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary folder)")
    args = ap.parse_args()
    try:
        import mutmut  # noqa: F401
    except ImportError:
        raise SystemExit("mutmut is missing: pip install -r bench/requirements-mutation.txt") from None

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="kvlab-mutation-"))
    if args.keep and scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        stage(scratch, args.modules)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", "2"],
            cwd=scratch,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise SystemExit(f"mutmut run failed ({done.returncode}); rerun with --keep DIR and look in DIR")
        table = results(scratch)
        print_table(table, args.modules)
        if args.survivors:
            for mod in args.modules:
                for name in table.get(mod, {}).get("survived", []):
                    diff = subprocess.run(
                        [sys.executable, "-m", "mutmut", "show", name], cwd=scratch, capture_output=True, text=True
                    ).stdout
                    print(f"\n# {name}\n{diff}")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
