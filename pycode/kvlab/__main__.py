"""`python -m kvlab`: the command line (kvlab.cli)."""

from __future__ import annotations

import sys

from kvlab.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
