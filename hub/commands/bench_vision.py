"""Milliseconds to find and read 40 tiles in a 2028x1520 frame (onnxruntime, median of runs).

The reader is the hub's: a still camera, so the detector keeps the input size it chose on the
first frame (``sticky``); that first frame's extra look is reported on its own.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

FRAME = (2028, 1520)
TILES = 40


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--models", type=Path, default=None, help="folder holding the ONNX models")
    p.add_argument("--json", action="store_true")


def bench_frame() -> tuple:
    """A rendered 2028x1520 table in play holding exactly TILES tiles, ~100 px long (the Pi camera's view).

    The first seed from 72 up whose scene holds TILES tiles (72 itself with today's renderer).
    """
    from vision.synth import render_scene

    for seed in range(72, 1072):
        scene = render_scene(seed, width=FRAME[0], height=FRAME[1], kind="table", tile_px=(90.0, 130.0))
        if len(scene.tiles) == TILES:
            return scene.image, len(scene.tiles)
    raise RuntimeError(f"no scene with {TILES} tiles among 1000 seeds")


def measure(reader, image, runs: int) -> tuple[dict[str, float], int]:
    """Median ms per stage over ``runs`` reads (after 3 warm-up reads), and the tiles found."""
    for _ in range(3):  # warm-up; the first read also settles a sticky detector's input size
        reader.read(image)
    det, read, total, found = [], [], [], 0
    for _ in range(runs):
        found = len(reader.read(image))
        det.append(reader.times.detect)
        read.append(reader.times.read)
        total.append(reader.times.total)
    ms = {k: round(statistics.median(v), 2) for k, v in (("detect", det), ("read", read), ("total", total))}
    return ms, found


def run(args: argparse.Namespace) -> int:
    from vision.onnx_session import MODELS_DIR, ModelMissingError
    from vision.reader import OnnxTileReader

    try:
        reader = OnnxTileReader(models_dir=args.models or MODELS_DIR, threads=args.threads, sticky=True)
    except ModelMissingError as e:
        print(f"domino-hub bench vision: {e}", file=sys.stderr)
        return 2
    image, true_tiles = bench_frame()
    reader.read(image)
    first = reader.times.detect  # the first look at 640 px and, for small tiles, a second larger one
    ms, found = measure(reader, image, args.runs)
    if args.json:
        print(json.dumps({"frame": f"{FRAME[0]}x{FRAME[1]}", "tiles": true_tiles, "threads": args.threads, "ms": ms}))
    else:
        print(f"{FRAME[0]}x{FRAME[1]} frame, {true_tiles} tiles ({found} found), onnxruntime on {args.threads} threads,"
              f" median of {args.runs} runs")
        for k, v in ms.items():
            print(f"  {k:7s} {v:7.2f} ms")
        print(f"  (detector input {reader.detector.side} px wide, kept from frame to frame as on the hub;"
              f" the first frame's detection, which chose it, took {first:.1f} ms)")
    return 0
