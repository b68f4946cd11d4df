"""`python -m kvlab`: the calculators from the command line.

Each module that offers commands defines `add_commands(subparsers)`; list it
in COMMAND_MODULES and its subcommands appear under `python -m kvlab --help`.
Every command sets `func(args) -> int` on its parser.
"""
from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = [
    "kvlab.cli_attention",
    "kvlab.cli_memory",
    "kvlab.cli_core",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kvlab",
        description="kvlab: exact numbers about the LLM KV cache.",
    )
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(sub)
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except ValueError as exc:  # bad input: say what, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
