"""The hub's speed: frames per second through the real models on 2028x1520 frames, peak memory with 30 phones.

A stretch from the middle of a filmed synthetic game (a full table: trains, hands laid
face down, a boneyard) is rendered first, in a separate process, as JPEG files; the
renderer is no part of the hub. This process then holds only what a Pi holds: the store,
the table, the ONNX models, the camera pipeline and the web page with ``--phones``
Server-Sent-Events streams open, and replays the frames as fast as it can. Reported:
frames per second (the whole loop from a decoded frame to the verdicts; target >= 5),
the share of it in the models, the process's peak memory (target < 500 MB), and the wall
delay from the frame on which a tile settles to its verdict on the bus, or to the question asked
instead when the reading is unsure (target < 1 s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

RENDER = """
import json, math, sys
from pathlib import Path
import cv2
from vision.synth.game import SyntheticGame
seed, width, height, count = (int(v) for v in sys.argv[1:5])
out = Path(sys.argv[5])
game = SyntheticGame(seed, width=width, height=height)
start = game.frame_count // 2
(out / "frames").mkdir(parents=True)
cv2.imwrite(str(out / "calibration.jpg"), game.render(0)[0], [cv2.IMWRITE_JPEG_QUALITY, 95])
steps = None
for i in range(start, min(game.frame_count, start + count)):
    image, truth = game.render(i)
    if steps is None:
        steps, hub = truth.steps, truth.hub
    cv2.imwrite(str(out / "frames" / f"{i:06d}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
log = game.table_log()
state = {"rules": log["rules"], "players": log["players"], "start": start,
         "before": [s for s in log["steps"][:steps] if "expect" not in s],
         "trains": {str(math.degrees(math.atan2(s.outward[1] - s.point[1], s.outward[0] - s.point[0]))): s.train
                    for s in hub.slots if s.train is not None}}
(out / "state.json").write_text(json.dumps(state))
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--frames", type=int, default=120, help="frames replayed (from the middle of the game)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--width", type=int, default=2028)
    p.add_argument("--height", type=int, default=1520)
    p.add_argument("--phones", type=int, default=30, help="Server-Sent-Events streams kept open meanwhile")
    p.add_argument("--threads", type=int, default=2, help="onnxruntime threads")
    p.add_argument("--models", type=Path, default=None, help="folder holding the ONNX models")
    p.add_argument("--json", action="store_true")


def _phones(url: str, count: int, stop: threading.Event) -> list[threading.Event]:
    """``count`` phones, each holding the page's event stream open and reading it; each one's event is set
    once its stream has delivered something (so it really is connected)."""
    import urllib.request

    def phone(connected: threading.Event) -> None:
        try:
            with urllib.request.urlopen(url + "events", timeout=60) as stream:
                while not stop.is_set() and stream.readline():
                    connected.set()
        except OSError:
            pass

    flags = [threading.Event() for _ in range(count)]
    for flag in flags:
        threading.Thread(target=phone, args=(flag,), daemon=True).start()
    return flags


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as tmp:
        folder = Path(tmp)
        print(f"rendering {args.frames} {args.width}x{args.height} frames of game {args.seed} "
              "(in another process; not timed)...", file=sys.stderr)
        subprocess.run([sys.executable, "-c", RENDER, str(args.seed), str(args.width), str(args.height),
                        str(args.frames), str(folder)], check=True)
        report = _bench(args, folder)
    if report is None:
        return 2
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"hub on {report['machine']}, {report['frame']} frames, ONNX models, "
          f"{report['threads']} onnxruntime threads, {report['phones']} phones connected")
    print(f"  {report['frames_per_s']:.2f} frames/s through the whole loop (target >= 5); "
          f"{report['models_share'] * 100:.0f}% of it in the models")
    print(f"  peak memory {report['peak_mb']:.0f} MB (target < 500 MB)")
    delays = report["settle_to_verdict_ms"]
    judged = (f"{len(delays)} verdicts or questions, slowest {max(delays):.0f} ms" if delays
              else "no verdict or question in this stretch")
    print(f"  settle to verdict (or to the question asked instead) on the bus (target < 1000 ms): {judged}; "
          f"the slowest frame took {report['slowest_frame_ms']:.0f} ms")
    return 0


def _bench(args: argparse.Namespace, folder: Path) -> dict[str, Any] | None:
    import platform
    import resource

    from hub.bus import EventBus
    from hub.calibration import find_hub, match_slots
    from hub.pipeline import Pipeline, hub_reader
    from hub.sources import ReplaySource
    from hub.table import Table
    from scorekeeper import rules_from_spec
    from scorekeeper.store import Store
    from scorekeeper.tablelog import parse_action

    state = json.loads((folder / "state.json").read_text())
    top = rules_from_spec(state["rules"]).set
    from vision.onnx_session import ModelMissingError

    try:
        read = hub_reader(top, args.models, args.threads)
    except ModelMissingError as e:
        print(f"domino-hub bench hub: {e}", file=sys.stderr)
        return None
    bus = EventBus()
    table = Table(Store(":memory:"), bus)
    table.new_game(state["rules"], state["players"])
    for i, raw in enumerate(state["before"]):
        table.submit(parse_action(raw, f"step {i}"), "bench")
    import cv2

    # calibrated once at set-up, on the empty table, as the hub does (mid-game the hub may be under a hand)
    calibration = match_slots(find_hub(cv2.imread(str(folder / "calibration.jpg"))),
                              {float(k): v for k, v in state["trains"].items()})
    server, stop = None, threading.Event()
    phones: list[threading.Event] = []
    try:
        from web.app import create_app
        from web.server import start_server

        server = start_server(create_app(table, bus, pin="0000"), "127.0.0.1", 0)
        phones = _phones(server.url, args.phones, stop)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(p.is_set() for p in phones):
            time.sleep(0.05)
    except ImportError:
        print("no web page in this build: phones not connected", file=sys.stderr)
    source = ReplaySource(folder / "frames", fps=4.0)
    pipeline = Pipeline(source, read, table, calibration)
    source.open()
    try:
        while pipeline.step() is not None:
            pass
    finally:
        stop.set()
        if server is not None:
            server.stop()
    stats = pipeline.stats
    return {
        "machine": platform.machine(),
        "frame": f"{args.width}x{args.height}",
        "threads": args.threads,
        "phones": sum(p.is_set() for p in phones),
        "frames": stats.frames,
        "frames_per_s": stats.frames / max(stats.total_s, 1e-9),
        "models_share": stats.read_s / max(stats.total_s, 1e-9),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "settle_to_verdict_ms": [round(d * 1000, 1) for d in stats.settle_to_verdict_s],
        "slowest_frame_ms": round(stats.slowest_s * 1000, 1),
    }

