"""``domino-hub eval hub``: the whole hub, end to end, on filmed synthetic games, against their truth.

Each game is played by the renderer's random players (hands reaching in, shadows, illegal
plays taken back, draws, passes, a mistaken press undone, hands laid out at the end) and
filmed from a fixed camera; the hub watches it through the ONNX models. A game is judged
by its table log (equal to the true one, action for action), false illegal-play alerts
(none), how soon each illegal play was flagged (within 1 s of game time from the player
letting go of the tile), and the round's scores counted from the camera (equal to the
truth). Games in which the renderer laid a tile outside the camera's frame are skipped
and listed: no camera can judge a tile it cannot see.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections import Counter
from datetime import date
from pathlib import Path

FIRST_SEED = 5000  # the tests use seeds below 1000; these games are never tuned on


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--first-seed", type=int, default=FIRST_SEED)
    p.add_argument("--reader", choices=("models", "truth"), default="models",
                   help="models: the ONNX models (default); truth: a test double that reads the game's truth")
    p.add_argument("--models", type=Path, default=None, help="folder holding the ONNX models")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=960)
    p.add_argument("--out", type=Path, default=Path("eval-gallery/hub"), help="where report.json goes (git-ignored)")


def run(args: argparse.Namespace) -> int:
    from hub.commands.watch import kinds_text, print_report
    from hub.sources.synthetic import SyntheticSource
    from hub.watching import LiveRecording, model_reader, out_of_view, truth_reader, watch
    from scorekeeper import rules_from_spec
    from vision.onnx_session import ModelMissingError

    reports, skipped = [], []
    seed = args.first_seed
    reader = None
    while len(reports) < args.games:
        source = SyntheticSource(seed=seed, width=args.width, height=args.height)
        recording = LiveRecording(source)
        why = out_of_view(source.game)
        if why is not None:
            skipped.append({"seed": seed, "why": why})
            print(f"seed {seed}: skipped, {why}", file=sys.stderr)
            seed += 1
            continue
        top = rules_from_spec(recording.rules_spec).set
        if args.reader == "truth":
            read = truth_reader(recording, top)
        else:
            if reader is None:
                try:
                    reader = model_reader(args.models, args.threads, top)
                except ModelMissingError as e:
                    print(f"domino-hub eval hub: {e}; or pass --reader truth", file=sys.stderr)
                    return 2
            read = reader
        report, _ = watch(recording, read, name=f"seed {seed}")
        print_report(report)
        sys.stdout.flush()
        reports.append(report)
        seed += 1
    ok = sum(r.ok for r in reports)
    delays = [d for r in reports for d in r.flag_delays]
    summary = {
        "date": date.today().isoformat(),
        "machine": platform.machine(),
        "reader": args.reader,
        "frame": [args.width, args.height],
        "games": len(reports),
        "games_ok": ok,
        "logs_equal": sum(r.equal for r in reports),
        "false_alerts": sum(r.false_alerts for r in reports),
        "false_alert_kinds": dict(sum((Counter(r.false_alert_kinds) for r in reports), Counter()).most_common()),
        "illegal_flagged": sum(r.illegal_flagged for r in reports),
        "illegal_true": sum(r.illegal_true for r in reports),
        "slowest_flag_s": round(max(delays), 3) if delays else None,
        "scores_equal": sum(r.scores_equal for r in reports),
        "questions": sum(r.questions for r in reports),
        "frames_per_s": round(sum(r.frames for r in reports) / max(1e-9, sum(r.seconds for r in reports)), 2),
        "skipped": skipped,
        "results": [r.to_json() for r in reports],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(f"\n{ok}/{len(reports)} games fully right ({args.reader} reader, {args.width}x{args.height}): "
          f"{summary['logs_equal']} table logs equal, {summary['false_alerts']} false alerts "
          f"({kinds_text(summary['false_alert_kinds']) or 'none'}), "
          f"{summary['illegal_flagged']}/{summary['illegal_true']} illegal plays flagged "
          f"(slowest {summary['slowest_flag_s']} s), {summary['scores_equal']} round scores equal, "
          f"{summary['questions']} questions; {len(skipped)} games skipped (tiles outside the frame)")
    print(f"report: {args.out / 'report.json'}")
    return 0 if ok == len(reports) else 1
