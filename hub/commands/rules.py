"""``domino-hub rules check FILE [--json]``: judge a table log step by step."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    rules = sub.add_parser("rules", help="the rules engine")
    rsub = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    check = rsub.add_parser("check", help="check a table log against the rules")
    check.add_argument("file", type=Path)
    check.add_argument("--json", action="store_true", help="one JSON object per step")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from scorekeeper.tablelog import LogFormatError, check, describe, loads

    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print(f"{args.file}: cannot read the table log: {e}", file=sys.stderr)
        return 2
    try:
        log = loads(text)
        results = check(log)
    except LogFormatError as e:
        print(f"{args.file}: not a valid table log: {e}", file=sys.stderr)
        return 2
    mismatches = 0
    for r in results:
        mismatches += bool(r.mismatch)
        if args.json:
            print(json.dumps(r.to_json(), ensure_ascii=False))
            continue
        verdict = "ok" if r.error is None else f"illegal {r.error.code.value}: {r.error.message}"
        print(f"{r.step:4d}  {describe(r.action):40s}  {verdict}")
        for m in r.mismatch:
            print(f"      MISMATCH {m}")
    if not args.json:
        print(f"{len(results)} steps, {mismatches} with mismatches")
    return 1 if mismatches else 0
