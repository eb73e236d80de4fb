"""``domino-hub demo``: a simulated evening on the real web page, until the camera pipeline lands.

Random players (``scorekeeper.simulate``) play through a real :class:`hub.table.Table`, at a
human pace, round after round and game after game; now and then one lays a tile where it may
not go, which alerts every phone until it is taken back. At the end of each round the
"camera" publishes each seat's pips for the host to confirm. Everything a phone sees comes the
way it will at a real table: judged by the Table, stored, published on the bus.

Someone may use the page while the demo runs. A game set up from the page is adopted and
played on; an undo, a play or a score made from the page leaves that game to the page, and the
demo waits until it is ended or replaced.
"""

from __future__ import annotations

import argparse
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hub.events import HandCounts
from hub.table import Table
from scorekeeper import PRESETS, Score, rules_from_spec
from scorekeeper.simulate import SimStep, Simulator, random_players

if TYPE_CHECKING:
    from hub.bus import EventBus
    from hub.lights import Lights

# seconds each kind of moment stays on the phones at --speed 1
PACE = {
    "start": 3.0, "play": 2.0, "draw": 1.2, "pass": 1.5, "out": 2.0, "blocked": 2.0, "score": 4.0,
    "illegal": 3.0, "count": 5.0, "game": 8.0,
}
TABLES = (("classic", 4), ("dominos-cc", 3), ("cardinal", 5), ("classic", 6))
POLL_S = 0.25


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="serve the web page for a simulated table (no camera needed)")
    p.add_argument("--port", type=int, default=8000, help="port for the page (default 8000)")
    p.add_argument("--host", default="0.0.0.0",
                   help="address to listen on (default 0.0.0.0, so phones on the network can join)")
    p.add_argument("--speed", type=float, default=1.0, help="pace: 2 plays twice as fast, 0.5 half as fast")
    p.add_argument("--seed", type=int, default=None, help="seed for the simulated players (default: random)")
    p.add_argument("--pin", default=None, help="the table PIN (default: four random digits, printed)")
    p.add_argument("--db", default=None, help="SQLite file to keep the games in (default: a temporary folder)")
    p.set_defaults(func=run)


@dataclass
class DemoDriver:
    """Plays simulated games through ``table``; ``wait(seconds)`` returns True when it is time to stop."""

    table: Table
    rng: random.Random
    wait: Callable[[float], bool]
    speed: float = 1.0
    illegal_rate: float = 0.05
    log: Callable[[str], None] = print
    _game_id: int | None = field(default=None, init=False)

    def run(self, games: int | None = None) -> int:
        """Play until stopped (or ``games`` games); returns the number of games played to the end."""
        finished = 0
        while games is None or finished < games:
            sim = self._adopt() or self._new_game()
            if sim is None:
                return finished
            outcome = self._play(sim)
            if outcome == "stopped":
                return finished
            if outcome == "over":
                finished += 1
                self._summary(sim)
                if self._pause("game"):
                    return finished
                if self.table.game_id == self._game_id:
                    self.table.end_game()
            elif self._wait_for_page():
                return finished
        return finished

    # ----------------------------------------------------------- games
    def _new_game(self) -> Simulator | None:
        preset_name, n = self.rng.choice(TABLES)
        players = random_players(n)
        self.table.new_game(preset_name, players)
        self._game_id = self.table.game_id
        self.log(f"new game: {preset_name}, {', '.join(players)}")
        return Simulator(PRESETS[preset_name], players, self.rng, self.illegal_rate)

    def _adopt(self) -> Simulator | None:
        """A game set up from the page and not yet played: the demo plays it."""
        game = self.table.game
        if game is None or game.history or self.table.game_id == self._game_id:
            return None
        self._game_id = self.table.game_id
        self.log(f"playing the game set up from the page: {', '.join(game.players)}")
        return Simulator(rules_from_spec(self.table.rules_spec), game.players, self.rng, self.illegal_rate)

    def _play(self, sim: Simulator) -> str:
        """"over", "stopped", or "page" when someone changed the game from the page."""
        while not sim.game.game_over:
            for step in sim.round_steps():
                outcome = self._step(sim, step)
                if outcome != "ok":
                    return outcome
        return "over"

    def _in_step(self, sim: Simulator, behind: int) -> bool:
        """Whether the table holds exactly the simulated game, less its newest ``behind`` actions."""
        game = self.table.game
        return (
            self.table.game_id == self._game_id
            and game is not None
            and len(game.history) == len(sim.game.history) - behind
        )

    def _step(self, sim: Simulator, step: SimStep) -> str:
        if step.illegal is not None:
            if not self._in_step(sim, 0):
                return "page"
            verdict = self.table.submit(step.action, source="camera")
            if verdict.alert is not None:
                self.log(f"  illegal: {verdict.alert.text}")
                stopped = self._pause("illegal")
                self.table.clear_alert(verdict.alert.id, "taken-back")
                if stopped:
                    return "stopped"
            return "ok"
        if isinstance(step.action, Score):
            return self._score(sim, step.action)
        if not self._in_step(sim, 1):
            return "page"
        verdict = self.table.submit(step.action, source="camera")
        if not verdict.ok:
            return "page"
        return "stopped" if self._pause(step.action.act) else "ok"

    def _score(self, sim: Simulator, score: Score) -> str:
        """The camera counts each seat's pips; the host has a moment to confirm them from the page."""
        if self._in_step(sim, 1):
            went_out = sim.game.went_out
            counts = {p: 0 if p == went_out else sim.game.hand_pips(score.hands[p]) for p in sim.game.players}
            self.table.bus.publish(HandCounts(counts))
            if self._pause("count"):
                return "stopped"
            if self._in_step(sim, 1):
                self.table.submit(Score(counts), source="camera")
        state = self.table.state()
        if not (self._in_step(sim, 0) and state is not None and state.phase == "idle"):
            return "page"
        # the table's scores count: the host may have confirmed them from the page, with corrections
        sim.game = self.table.store.load(self.table.game_id).replay()  # type: ignore[arg-type]
        last = sim.game.rounds[-1]
        self.log(f"  round {last.engine}|{last.engine}: " + ", ".join(f"{p} {s}" for p, s in last.scores.items()))
        return "stopped" if self._pause("score") else "ok"

    def _summary(self, sim: Simulator) -> None:
        totals = sim.game.totals()
        self.log("game over: " + ", ".join(f"{p} {totals[p]}" for p in sim.game.players)
                 + f"; winner: {', '.join(sim.game.leaders())}")

    # ----------------------------------------------------------- pacing
    def _pause(self, moment: str) -> bool:
        return self.wait(PACE[moment] / self.speed)

    def _wait_for_page(self) -> bool:
        """Someone took the game over from the page: wait until it is ended or replaced."""
        self.log("the page changed the game: the demo waits until that game is ended or a new one is set up")
        taken = self.table.game_id
        while self.table.game_id == taken and self.table.game is not None:
            if self.wait(POLL_S):
                return True
        return False


def run(args: argparse.Namespace) -> int:
    import os
    import secrets
    import signal
    import sys
    import tempfile
    from pathlib import Path

    if args.speed <= 0:
        print("domino-hub demo: --speed must be more than 0", file=sys.stderr)
        return 2
    os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")  # never drive real pins from a demo

    from hub.bus import EventBus
    from scorekeeper.store import Store
    from web.app import create_app
    from web.qr import lan_address
    from web.server import start_server

    tmp = None
    if args.db:
        db = Path(args.db)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="domino-hub-demo-")
        db = Path(tmp.name) / "demo.sqlite"
    seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
    pin = args.pin or f"{secrets.randbelow(10_000):04d}"
    store = Store(db)
    bus = EventBus()
    table = Table(store, bus)
    table.resume()
    # bound to one address, the QR code shows that one; on all addresses, the page finds the LAN's
    join = None if args.host in ("0.0.0.0", "") or args.port == 0 else f"http://{args.host}:{args.port}/"
    app = create_app(table, bus, pin=pin, join_url=join)
    try:
        handle = start_server(app, args.host, args.port)
    except OSError as e:
        print(f"domino-hub demo: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        store.close()
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    lan = lan_address() if args.host in ("0.0.0.0", "") else None
    print(f"domino-hub demo: the page is at {handle.url}", flush=True)
    if lan:
        print(f"  phones on this network: http://{lan}:{handle.port}/", flush=True)
    print(f"  table PIN: {pin}   seed: {seed}   speed: {args.speed}   games kept in {db}", flush=True)
    lights = _mock_lights(bus)
    print("  Ctrl-C stops it.", flush=True)
    driver = DemoDriver(table, random.Random(seed), wait=stop.wait, speed=args.speed,
                        log=lambda line: print(line, flush=True))
    try:
        driver.run()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        handle.stop()
        if lights is not None:
            lights.close()
        store.close()
        if tmp is not None:
            tmp.cleanup()
    return 0


def _mock_lights(bus: EventBus) -> Lights | None:
    """The hub's LEDs and buzzer on gpiozero's mock pins, following the bus as on a real hub."""
    from hub.config import demo_config
    from hub.lights import Lights

    config = demo_config()
    try:
        lights = Lights(bus, config.pins, config.calibration)
        lights.start()
    except Exception as e:  # gpiozero raises many kinds; the page works without LEDs
        print(f"  LEDs: not driven ({type(e).__name__}: {e})", flush=True)
        return None
    print(f"  LEDs: mock pins {', '.join(str(p) for p in config.pins.leds.values())}", flush=True)
    return lights
