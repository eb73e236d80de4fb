"""``domino-hub watch DIR --table-log OUT.json``: the hub watches a filmed synthetic game, flat out.

The frames go through the same pipeline as at a real table (reader, tracker, reconciler,
Table). The players' button and phone presses recorded with the game are fed in at
their frames; when the camera asks a question, the answer a player at the table would
give is taken from the game's truth, and counted. The table log the hub observed is
written out and compared with what really happened.

With ``--store FILE`` the game is kept in a SQLite store and a journal beside it, so a
watch killed at any moment (``SIGKILL``) and started again resumes the same game.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hub.pipeline import FrameReader
    from hub.watching import WatchReport


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("watch", help="replay a filmed synthetic game through the hub and write what it saw")
    p.add_argument("dir", type=Path, help="a folder written by `domino-hub synth game`")
    p.add_argument("--table-log", type=Path, required=True, help="where to write the observed table log")
    p.add_argument("--reader", choices=("models", "truth"), default="models",
                   help="models: the ONNX models (default); truth: a test double that reads the game's truth")
    p.add_argument("--models", type=Path, default=None, help="folder holding the ONNX models")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--store", type=Path, default=None,
                   help="keep the game in this SQLite file (and a journal beside it); resume it if it exists")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def kinds_text(counts: Mapping[str, int]) -> str:
    """False alerts by kind, most first: "5 draw not-your-turn, 1 play no-match" ("" when there are none)."""
    return ", ".join(f"{n} {kind}" for kind, n in Counter(counts).most_common())


def print_report(report: WatchReport, out: Any = sys.stdout) -> None:
    r = report
    part = " (the first part of the game)" if r.partial else ""
    print(f"{r.name}: {'OK' if r.ok else 'FAILED'}  {r.frames} frames in {r.seconds:.1f} s "
          f"({r.frames / max(r.seconds, 1e-9):.1f} frames/s), {r.game_seconds:.0f} s of game{part}", file=out)
    if r.error:
        print(f"  error: {r.error}", file=out)
    print(f"  table log: {r.observed_steps} steps observed, {r.true_steps} true, "
          f"{'equal' if r.equal else 'DIFFERENT'}", file=out)
    if r.first_mismatch:
        print(f"  first difference: {r.first_mismatch}", file=out)
    for e in r.input_errors[:5]:
        print(f"  press refused: {e}", file=out)
    delays = f", slowest {max(r.flag_delays):.2f} s" if r.flag_delays else ""
    kinds = kinds_text(r.false_alert_kinds)
    print(f"  illegal plays: {r.illegal_flagged}/{r.illegal_true} flagged{delays}; false alerts: {r.false_alerts}"
          + (f" ({kinds})" if kinds else ""), file=out)
    print(f"  round scores from the camera: {'equal to the truth' if r.scores_equal else 'DIFFERENT'}; "
          f"questions asked: {r.questions}; engines given by phone: {r.engine_from_phone}; "
          f"alerts left showing: {r.alerts_left}; false knocks: {r.knocks}", file=out)


def run(args: argparse.Namespace) -> int:
    from hub.watching import FolderRecording, model_reader, truth_reader, watch
    from scorekeeper import rules_from_spec
    from vision.onnx_session import ModelMissingError

    try:
        recording = FolderRecording(args.dir)
    except (ValueError, KeyError) as e:
        print(f"domino-hub watch: {e}", file=sys.stderr)
        return 2
    top = rules_from_spec(recording.rules_spec).set
    if args.reader == "truth":
        print("reading tiles from the game's truth (a test double), not from the pixels", file=sys.stderr)
        read: FrameReader = truth_reader(recording, top)
    else:
        try:
            read = model_reader(args.models, args.threads, top)
        except ModelMissingError as e:
            print(f"domino-hub watch: {e}; or pass --reader truth", file=sys.stderr)
            return 2
    report, observed = watch(recording, read, name=str(args.dir), store_path=args.store)
    args.table_log.write_text(json.dumps(observed, indent=1), encoding="utf-8")
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print_report(report)
        print(f"observed table log: {args.table_log}")
    return 0 if report.ok else 1
