"""``domino-hub detect IMAGE...``: find and read every tile in photos, as a table or JSON."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vision.view import View


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("detect", help="find and read the tiles in images")
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="one JSON object per image, one per line")
    p.add_argument("--set", type=int, default=12, metavar="N", help="highest pip value of the set (default 12)")
    p.add_argument("--draw", type=Path, metavar="OUT.png",
                   help="draw what was seen; with several images, OUT-<n>.png for the n-th")
    p.add_argument("--models", type=Path, default=None, help="folder holding the ONNX models")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--straight", action="store_true",
                   help="look at each photo only as it is, as the hub's camera above the table does, "
                        "instead of also from the angles it may have been taken at, and mirrored")
    p.set_defaults(func=run)


def tile_json(tile) -> dict:
    def pt(p: tuple[float, float]) -> list[float]:
        return [round(p[0], 1), round(p[1], 1)]

    return {
        "corners": [pt(c) for c in tile.corners],
        "center": pt(tile.center),
        "values": list(tile.values) if tile.values else None,
        "halves": [
            {"center": pt(h.center), "value": h.value, "probs": [round(p, 4) for p in h.probs]} for h in tile.halves
        ],
        "confidence": round(tile.confidence, 4),
        "face": tile.face,
    }


def _view_words(view: View) -> str:
    """The readable table's words for the view a photo was read in."""
    if view.straight:
        return "seen as it is"
    return f"seen stretched {view.stretch:g}x at {math.degrees(view.angle):.0f} degrees (taken from the side)"


def _draw_path(base: Path, index: int, count: int) -> Path:
    return base if count == 1 else base.with_name(f"{base.stem}-{index + 1}{base.suffix or '.png'}")


def run(args: argparse.Namespace) -> int:
    import cv2

    from vision.draw import draw_tiles
    from vision.onnx_session import MODELS_DIR, ModelMissingError
    from vision.reader import OnnxTileReader

    if not 1 <= args.set <= 18:
        print(f"domino-hub detect: --set must be 1..18, got {args.set}", file=sys.stderr)
        return 2
    try:
        reader = OnnxTileReader(models_dir=args.models or MODELS_DIR, threads=args.threads, max_value=args.set,
                                view_search=not args.straight, mirrored=not args.straight)
    except ModelMissingError as e:
        print(f"domino-hub detect: {e}", file=sys.stderr)
        return 2
    failed = 0
    for n, path in enumerate(args.images):
        image = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
        if image is None:
            why = ("no such file" if not path.exists() else "not a file" if not path.is_file()
                   else "not a readable image")
            print(f"domino-hub detect: {path}: {why}", file=sys.stderr)
            failed += 1
            continue
        tiles = reader.read(image)
        ms = reader.times.total
        h, w = image.shape[:2]
        if args.json:
            print(json.dumps({"image": str(path), "width": w, "height": h, "ms": round(ms, 1),
                              "tiles": [tile_json(t) for t in tiles]}), flush=True)
        else:
            up = sum(t.face == "up" for t in tiles)
            print(f"{path}  {w}x{h}  {len(tiles)} tiles ({up} face up)  {ms:.0f} ms  {_view_words(reader.view)}")
            print(f"  {'#':>3}  {'values':>7}  {'face':4}  {'conf':>5}  {'centre':>13}  {'half probs':>10}")
            for i, t in enumerate(sorted(tiles, key=lambda t: (t.center[1], t.center[0]))):
                vals = f"{t.values[0]}|{t.values[1]}" if t.values else "-"
                sure = " ".join(f"{max(h.probs):.2f}" for h in t.halves) if t.face == "up" else ""
                print(f"  {i + 1:3d}  {vals:>7}  {t.face:4}  {t.confidence:5.2f}  "
                      f"({t.center[0]:5.0f},{t.center[1]:5.0f})  {sure:>10}")
        if args.draw:
            out = _draw_path(args.draw, n, len(args.images))
            if not cv2.imwrite(str(out), draw_tiles(image, tiles)):
                print(f"domino-hub detect: cannot write {out}", file=sys.stderr)
                failed += 1
    return 1 if failed else 0
