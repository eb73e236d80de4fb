"""Milliseconds to find and read 40 tiles in a 2028x1520 frame (onnxruntime, median of runs).

The reader is the hub's: a still camera, so the detector keeps the input size it chose on the
first frame (``sticky``); that first frame's extra look is reported on its own.

``--against MODEL.onnx`` times another model (a peer's detector) on the same threads, one run after
each of our reads, and reports our total as a ratio of it. This machine's speed changes from day to
day by a factor of two; a ratio measured run by run, interleaved, does not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

FRAME = (2028, 1520)
TILES = 40


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--models", type=Path, default=None, help="folder holding the ONNX models")
    p.add_argument("--json", action="store_true")
    p.add_argument("--against", type=Path, default=None, metavar="MODEL.onnx",
                   help="also time this ONNX model (inputs filled at their declared shapes); report our ratio to it")


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


def model_feed(session) -> dict:
    """Inputs for any float ONNX model: its declared shape, a dimension left open set to 1."""
    import numpy as np

    feed = {}
    for i in session.get_inputs():
        if i.type != "tensor(float)":
            raise ValueError(f"input {i.name!r} is {i.type}; only float inputs can be filled")
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        feed[i.name] = np.random.default_rng(0).random(shape, dtype=np.float32)
    return feed


def measure(reader, image, runs: int, other=None, feed=None) -> tuple[dict[str, float], int, float | None]:
    """Median ms per stage over ``runs`` reads (after 3 warm-up reads), the tiles found, and the median
    ms of ``other`` (an ONNX session, given ``feed``) run once after each read, or None."""
    for _ in range(3):  # warm-up; the first read also settles a sticky detector's input size
        reader.read(image)
        if other is not None:
            other.run(None, feed)
    det, read, total, theirs, found = [], [], [], [], 0
    for _ in range(runs):
        found = len(reader.read(image))
        det.append(reader.times.detect)
        read.append(reader.times.read)
        total.append(reader.times.total)
        if other is not None:
            t0 = time.perf_counter()
            other.run(None, feed)
            theirs.append((time.perf_counter() - t0) * 1000)
    ms = {k: round(statistics.median(v), 2) for k, v in (("detect", det), ("read", read), ("total", total))}
    return ms, found, (round(statistics.median(theirs), 2) if theirs else None)


def run(args: argparse.Namespace) -> int:
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidGraph, InvalidProtobuf

    from vision.onnx_session import MODELS_DIR, ModelMissingError, open_session
    from vision.reader import OnnxTileReader

    try:
        reader = OnnxTileReader(models_dir=args.models or MODELS_DIR, threads=args.threads, sticky=True)
        other = open_session(args.against, args.threads) if args.against else None
        feed = model_feed(other) if other is not None else None
    except (ModelMissingError, ValueError) as e:
        print(f"domino-hub bench vision: {e}", file=sys.stderr)
        return 2
    except (InvalidProtobuf, InvalidGraph, Fail) as e:  # a file that is not a model onnxruntime can run
        print(f"domino-hub bench vision: cannot open {args.against}: {e}", file=sys.stderr)
        return 2
    image, true_tiles = bench_frame()
    reader.read(image)
    first = reader.times.detect  # the first look at 640 px and, for small tiles, a second larger one
    ms, found, theirs = measure(reader, image, args.runs, other, feed)
    against = None if theirs is None else {"model": args.against.name, "ms": theirs,
                                           "ratio": round(ms["total"] / theirs, 3)}
    if args.json:
        report = {"frame": f"{FRAME[0]}x{FRAME[1]}", "tiles": true_tiles, "threads": args.threads, "ms": ms}
        if against:
            report["against"] = against
        print(json.dumps(report))
    else:
        print(f"{FRAME[0]}x{FRAME[1]} frame, {true_tiles} tiles ({found} found), onnxruntime on {args.threads} threads,"
              f" median of {args.runs} runs")
        for k, v in ms.items():
            print(f"  {k:7s} {v:7.2f} ms")
        print(f"  (detector input {reader.detector.side} px wide, kept from frame to frame as on the hub;"
              f" the first frame's detection, which chose it, took {first:.1f} ms)")
        if against:
            print(f"  {against['model']}: {theirs:.2f} ms a run, interleaved with ours;"
                  f" our total is {against['ratio']:.3f} of it")
    return 0
