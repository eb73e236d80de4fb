"""``domino-hub demo``: the hub service on a synthetic table, with mock pins and the web page.

It is ``domino-hub run`` (``hub.service.Service``: store, table, bus, LEDs, button, page)
with the camera replaced by the renderer's games, one after another (``hub.evening``):
synthetic frames -> the committed ONNX models -> tracker -> reconciler -> Table -> bus ->
page and LEDs. When the page asks something and no phone answers within a few seconds, a
simulated host answers from the game's truth, and the demo prints that it did.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from hub.bus import EventBus
    from hub.config import Config
    from hub.pipeline import FrameReader
    from hub.service import Worker
    from hub.sources.synthetic import SyntheticSource
    from hub.table import Table


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the hub on a synthetic table: camera, models, LEDs (mock) and the page")
    p.add_argument("--port", type=int, default=8000, help="port for the page (default 8000)")
    p.add_argument("--host", default="0.0.0.0",
                   help="address to listen on (default 0.0.0.0, so phones on the network can join)")
    p.add_argument("--speed", type=float, default=1.0, help="frames come at real time x speed (default 1.0)")
    p.add_argument("--seed", type=int, default=None, help="seed of the first synthetic table (default: random)")
    p.add_argument("--size", type=_size, default=(1280, 960), metavar="WxH",
                   help="camera frame size (default 1280x960)")
    p.add_argument("--pin", default=None, help="the table PIN (default: four random digits, printed)")
    p.add_argument("--db", default=None, help="SQLite file to keep the games in (default: a temporary folder)")
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text.strip())
    if m is None or not (320 <= int(m[1]) <= 4056 and 240 <= int(m[2]) <= 3040):
        raise argparse.ArgumentTypeError(f"{text!r}: give WIDTHxHEIGHT, from 320x240 to 4056x3040")
    return int(m[1]), int(m[2])


def run(args: argparse.Namespace) -> int:
    import logging
    import os
    import secrets
    import signal
    import sys
    import tempfile
    import threading
    from pathlib import Path

    if args.speed <= 0:
        print("domino-hub demo: --speed must be more than 0", file=sys.stderr)
        return 2
    if args.pin is not None and not re.fullmatch(r"\d{4}", args.pin):
        print("domino-hub demo: --pin must be four digits", file=sys.stderr)
        return 2
    os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")  # never drive real pins from a demo
    logging.basicConfig(level=logging.WARNING, format="  %(levelname)s %(name)s: %(message)s", stream=sys.stdout)

    from hub.evening import EveningSettings, SyntheticEvening
    from hub.service import Notifier, Service, StartError
    from hub.tracker import TrackerSettings
    from web.qr import lan_address

    def say(line: str) -> None:
        print(line, flush=True)

    tmp = None
    if args.db:
        db = Path(args.db)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="domino-hub-demo-")
        db = Path(tmp.name) / "demo.sqlite"
    seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
    pin = args.pin or f"{secrets.randbelow(10_000):04d}"
    config = _config(args, db, pin)
    settings = EveningSettings(seed=seed, speed=args.speed, size=args.size)
    evenings: list[SyntheticEvening] = []

    def camera(config: Config, table: Table, bus: EventBus) -> list[Worker]:
        evening = SyntheticEvening(table, bus, _reader(say), settings,
                                   TrackerSettings(stable_s=config.tracker.stable_seconds), say)
        evenings.append(evening)
        return [evening]

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    service = Service(config, Notifier({}), workers=camera)
    try:
        service.start()
    except StartError as e:
        print(f"domino-hub demo: {e}", file=sys.stderr)
        if tmp is not None:
            tmp.cleanup()
        return 2
    status = 0
    try:
        web = service.web
        if web is not None:
            say(f"domino-hub demo: the page is at {web.url}")
            lan = lan_address() if args.host in ("0.0.0.0", "") else None
            if lan:
                say(f"  phones on this network: http://{lan}:{web.port}/")
        say(f"  table PIN: {pin}   seed: {seed}   speed: {args.speed}   frames {args.size[0]}x{args.size[1]}   "
            f"games kept in {db}")
        leds = config.pins.leds
        say(f"  LEDs: {'mock pins ' + ', '.join(str(p) for p in leds.values()) if service.lights else 'not driven'}")
        say("  Ctrl-C stops it.")
        while not stop.wait(0.5):
            if not all(e.is_alive() for e in evenings):
                error = next((e.error for e in evenings if e.error is not None), None)
                print(f"domino-hub demo: the camera stopped: {error!r}", file=sys.stderr)
                status = 1
                break
    finally:
        service.shutdown()
        if tmp is not None:
            tmp.cleanup()
    say("domino-hub demo: stopped")
    return status


def _config(args: argparse.Namespace, db: Path, pin: str) -> Config:
    """The embedded demo config with this run's page, store and camera size; no players (each table brings its
    own) and no slot map (the LEDs follow seating order)."""
    from dataclasses import replace

    from hub.config import CalibrationConfig, GameConfig, demo_config

    config = demo_config()
    return replace(
        config,
        game=GameConfig(),
        camera=replace(config.camera, resolution=args.size),
        calibration=CalibrationConfig(),
        web=replace(config.web, host=args.host, port=args.port, pin=pin),
        storage=replace(config.storage, database=db),
    )


def _reader(say: Callable[[str], None]) -> Callable[[SyntheticSource, int], FrameReader]:
    """The service's own ONNX reader, one per set size; without the models, the table's truth stands in."""
    readers: dict[int, FrameReader] = {}

    def reader(source: SyntheticSource, top: int) -> FrameReader:
        from hub.pipeline import camera_reader
        from hub.truth_reader import TruthReader

        if top not in readers:
            try:
                readers[top] = camera_reader(top)
            except FileNotFoundError as e:
                say(f"  the vision models are missing ({e}): the synthetic table's truth stands in for them")
                return TruthReader(source.tiles_for, top=top)
        return readers[top]

    return reader
