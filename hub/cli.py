"""The ``domino-hub`` command. Each subcommand lives in its own module under ``hub.commands``.

Command modules keep heavy imports (OpenCV, onnxruntime, Flask) inside their functions,
so ``domino-hub rules check`` starts in a blink on a Pi.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> module with ``add_parser(subparsers)``; the parser's ``func(args) -> int`` runs it.
COMMANDS = {
    "rules": "hub.commands.rules",
    "bench": "hub.commands.bench",
    "demo": "hub.commands.demo",
    "run": "hub.commands.run",
    "doctor": "hub.commands.doctor",
    "detect": "hub.commands.detect",
    "eval": "hub.commands.eval",
    "synth": "hub.commands.synth",
    "watch": "hub.commands.watch",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="domino-hub", description="A companion for a Mexican Train table.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS.values():
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
