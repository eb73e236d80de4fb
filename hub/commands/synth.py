"""``domino-hub synth game|scenes|sheet``: the synthetic table, written to disk.

``game`` plays rounds through the rules engine and films them from a fixed camera; ``scenes``
writes independent training scenes; ``sheet`` draws the contact sheet in docs/images.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    synth = sub.add_parser("synth", help="render synthetic tables: games, training scenes, a contact sheet")
    ssub = synth.add_subparsers(dest="synth_command", required=True, metavar="ACTION")

    game = ssub.add_parser("game", help="play and film whole rounds: frames, table log, inputs, per-frame truth")
    game.add_argument("--seed", type=int, default=1)
    game.add_argument("--out", type=Path, required=True)
    game.add_argument("--players", default="4", help="a count (2-10) or comma-separated names in seating order")
    game.add_argument("--rules", default="classic", help="a preset name (classic, dominos-cc, cardinal)")
    game.add_argument("--rounds", type=int, default=1)
    game.add_argument("--width", type=int, default=1280)
    game.add_argument("--height", type=int, default=960)
    game.add_argument("--fps", type=float, default=4.0, help="frames per second of game time")
    game.add_argument("--illegal-rate", type=float, default=0.06, help="chance of an illegal attempt before a turn")
    game.add_argument("--format", choices=("jpg", "png"), default="jpg")
    game.add_argument("--limit", type=int, default=None, help="write only the first N frames (the logs stay whole)")
    game.set_defaults(func=run_game)

    scenes = ssub.add_parser("scenes", help="independent random scenes (image + truth JSON) for training")
    scenes.add_argument("--n", type=int, required=True)
    scenes.add_argument("--seed", type=int, default=0, help="first seed; scene i uses seed + i")
    scenes.add_argument("--out", type=Path, required=True)
    scenes.add_argument("--width", type=int, default=1280)
    scenes.add_argument("--height", type=int, default=960)
    scenes.add_argument("--clean", action="store_true", help="no occluders, glare, blur, noise or JPEG")
    scenes.add_argument("--kind", choices=("table", "hands", "loose"), default=None)
    scenes.add_argument("--set", type=int, choices=(6, 9, 12, 15, 18), default=None)
    scenes.add_argument("--format", choices=("jpg", "png"), default="jpg")
    scenes.set_defaults(func=run_scenes)

    sheet = ssub.add_parser("sheet", help="the contact sheet: 24 scenes and 8 frames of one game")
    sheet.add_argument("--out", type=Path, default=Path("docs/images/synth-samples.png"))
    sheet.add_argument("--seed", type=int, default=0)
    sheet.set_defaults(func=run_sheet)


def _players(text: str) -> list[str] | int:
    if text.isdigit():
        return int(text)
    return [p.strip() for p in text.split(",") if p.strip()]


def run_game(args: argparse.Namespace) -> int:
    from scorekeeper import RulesError
    from vision.synth.game import GameTiming, SyntheticGame
    from vision.synth.writer import write_game

    try:
        game = SyntheticGame(args.seed, players=_players(args.players), rules=args.rules, rounds=args.rounds,
                             width=args.width, height=args.height, timing=GameTiming(fps=args.fps),
                             illegal_rate=args.illegal_rate)
    except (RulesError, ValueError) as e:
        print(f"synth game: {e}", file=sys.stderr)
        return 2
    total = game.frame_count if args.limit is None else min(args.limit, game.frame_count)
    print(f"{len(game.log_steps)} table-log steps, {len(game.inputs)} inputs, {game.frame_count} frames "
          f"({game.frame_count / game.timing.fps:.0f} s of game time at {game.timing.fps:g} fps); writing {total}")

    def progress(n: int) -> None:
        if n % 100 == 0 or n == total:
            print(f"  {n}/{total} frames", flush=True)

    write_game(args.out, game, args.format, limit=args.limit, progress=progress)
    print(f"wrote {args.out}/frames, truth.jsonl, table-log.json, inputs.json, game.json")
    return 0


def run_scenes(args: argparse.Namespace) -> int:
    from vision.synth.writer import write_scenes

    if args.n < 1:
        print("synth scenes: --n must be at least 1", file=sys.stderr)
        return 2
    options: dict[str, object] = {"clean": args.clean}
    if args.kind:
        options["kind"] = args.kind
    if args.set:
        options["set"] = args.set

    def progress(n: int) -> None:
        if n % 100 == 0 or n == args.n:
            print(f"  {n}/{args.n} scenes", flush=True)

    try:
        write_scenes(args.out, range(args.seed, args.seed + args.n), args.width, args.height, args.format,
                     progress=progress, **options)
    except ValueError as e:
        print(f"synth scenes: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.n} scenes to {args.out}")
    return 0


def run_sheet(args: argparse.Namespace) -> int:
    from vision.synth.sheet import contact_sheet

    args.out.parent.mkdir(parents=True, exist_ok=True)
    size = contact_sheet(args.out, seed=args.seed)
    print(f"wrote {args.out} ({size / 1e6:.2f} MB)")
    return 0
