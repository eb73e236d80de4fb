"""``domino-hub bench TOPIC``: the speed targets, measured. Each topic is its own module."""

from __future__ import annotations

import argparse
import importlib

# topic -> module with ``add_arguments(parser)`` and ``run(args) -> int``
TOPICS = {
    "rules": "hub.commands.bench_rules",
    "web": "hub.commands.bench_web",
    "vision": "hub.commands.bench_vision",
    "synth": "hub.commands.bench_synth",
    "hub": "hub.commands.bench_hub",
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="benchmarks for the speed targets")
    bsub = bench.add_subparsers(dest="topic", required=True, metavar="TOPIC")
    for topic, module in TOPICS.items():
        mod = importlib.import_module(module)
        p = bsub.add_parser(topic, help=(mod.__doc__ or "").strip().splitlines()[0])
        mod.add_arguments(p)
        p.set_defaults(func=mod.run)
