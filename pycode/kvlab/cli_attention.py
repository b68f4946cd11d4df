"""`python -m kvlab attention`: the attention demo's numbers as JSON."""
from __future__ import annotations

import argparse
import json

from kvlab.widgets import attention_demo


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("attention", help="softmax(QKᵀ/√d)·V on the demo sentence (JSON)")
    p.add_argument("--d", type=int, default=8, help="head dimension (2-64)")
    p.add_argument("--temperature", type=float, default=1.0, help="softmax temperature (0.1-5)")
    p.add_argument("--seed", type=int, default=0, help="seed for the random Q, K, V")
    p.add_argument("--no-causal", action="store_true", help="let every token see every other")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    data = attention_demo(d=args.d, temperature=args.temperature, seed=args.seed, causal=not args.no_causal)
    print(json.dumps(data, indent=1))
    return 0
