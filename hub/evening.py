"""The demo's table: the renderer's games, one after another, watched by the real camera pipeline.

Each game is a fresh synthetic table (a new seed: other tiles, surface, light and players),
filmed at real time x speed through the supervised camera, found by the same hub finder, read
by the same ONNX models and judged by the same tracker, reconciler and Table as a real table
(``hub.pipeline.Pipeline``). Nobody need be at a phone: what the page asks (a tile the camera
is unsure of, who goes first, the counted hands) waits a few seconds for a phone, then a
simulated host answers from the game's truth as a player at the table would (the answers of
``hub.watching``), and says so. The players' presses recorded with the game (draw, pass, out,
undo) are fed at their frames, as ``domino-hub watch`` feeds them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scorekeeper import Score, Start, rules_from_spec

from .bus import EventBus
from .pipeline import Answer, FrameReader, Input, Pipeline, Undo
from .reconciler import NONE_OF_THESE
from .sources import SupervisedSource
from .sources.synthetic import SyntheticSource
from .table import NoGame, Table, Verdict
from .tracker import TrackerSettings
from .watching import answer_from_truth, apply_input, asked_who_starts, host_calibration

if TYPE_CHECKING:
    from vision.synth.game import PlayerInput

log = logging.getLogger(__name__)

TABLES = (("classic", 4), ("dominos-cc", 3), ("cardinal", 5))  # (preset, players), game after game


@dataclass(frozen=True)
class EveningSettings:
    seed: int
    speed: float = 1.0  # frames come at real time x speed
    size: tuple[int, int] = (1280, 960)
    host_wait_s: float = 4.0  # how long (at speed 1) a phone has to answer before the simulated host does
    game_pause_s: float = 8.0  # the final table stays on the phones this long before the next game
    tables: tuple[tuple[str, int], ...] = TABLES


class SimulatedHost:
    """Answers for the table when no phone has, ``wait_s`` after the page asked, and feeds the presses."""

    def __init__(self, pipeline: Pipeline, source: SyntheticSource, wait_s: float, say: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.pipeline = pipeline
        self.source = source
        self.wait_s = wait_s
        self.say = say
        self.clock = clock
        self.fps = source.game.timing.fps
        self._fed = -1  # presses are fed up to this frame
        self._waiting: list[tuple[int, PlayerInput]] = []  # held back, in order
        self._deadline: dict[object, float] = {}  # question id or held press -> when the host acts
        self._drifted: dict[int, int] = {}  # tile -> the alert raised by the host's typed answer about it

    def after(self, frame_index: int, timestamp: float) -> None:
        """Act on the frame the pipeline just processed."""
        self._answer(frame_index)
        self._feed(frame_index, timestamp)

    def _due(self, key: object) -> bool:
        now = self.clock()
        return now >= self._deadline.setdefault(key, now + self.wait_s)

    def _answer(self, frame_index: int) -> None:
        rec = self.pipeline.reconciler
        board = None if rec is None else rec.board
        if board is not None:  # a typed answer's alert is tied to no tile: the host clears it once the tile goes
            lying = {t.id for t in board.loose} | {t.id for chain in board.trains.values() for t in chain}
            for tile_id in [t for t in self._drifted if t not in lying]:
                self.pipeline.table.clear_alert(self._drifted.pop(tile_id), "taken-back")
        pending = None if rec is None else rec.pending
        if pending is None or pending.kind == "start" or not self._due(pending.question.id):
            return
        tile_id = pending.tile_id if pending.kind == "tile" else None  # a typed answer's alert is about it
        drifted = None if tile_id is None else self._drifted.pop(tile_id, None)
        if drifted is not None:
            # the true tile was judged illegal here, yet the hub's game asks again: it has drifted from the
            # filmed one (a misread tile earlier), so the host passes over this tile and clears the alert
            self.pipeline.apply(Answer(pending.question.id, NONE_OF_THESE), "phone")
            self.pipeline.table.clear_alert(drifted, "dismissed")
            self.say(f"  host: {pending.question.text} -> {NONE_OF_THESE} (the hub's game has drifted from the table)")
            return
        answer = answer_from_truth(self.pipeline, self.source.truth(frame_index), self.source.table_log()["steps"])
        if answer is None:
            return
        try:
            verdict = self.pipeline.apply(Answer(pending.question.id, answer), "phone")
        except (KeyError, ValueError) as e:
            self.say(f"  host: could not answer {pending.question.text!r}: {e}")
            return
        outcome = ""
        if verdict is not None and not verdict.ok:
            outcome = f" (illegal: {verdict.error})"
            if verdict.alert is not None and answer not in pending.options and tile_id is not None:
                # a typed tile: its alert is the host's
                self._drifted[tile_id] = verdict.alert.id
        self.say(f"  host: {pending.question.text} -> {answer}{outcome} (no phone answered)")

    def _feed(self, frame_index: int, timestamp: float) -> None:
        due = [(at, inp) for at in range(self._fed + 1, frame_index + 1) for inp in self.source.inputs_at(at)]
        self._fed = frame_index
        pending, self._waiting = [*self._waiting, *due], []
        for at, inp in pending:
            if self._waiting or not self._ready(at, inp, timestamp):
                self._waiting.append((at, inp))  # presses after a held one wait their turn
                continue
            self._press(inp)

    def _ready(self, at: int, inp: PlayerInput, timestamp: float) -> bool:
        """Starting and scoring are the page's to do: the host does them only when no phone has."""
        act = inp.act
        phase = self._phase()
        if act == "start":
            if phase != "idle":
                return True  # done already: _press says so
            # the camera asks who goes first once it has seen the engine; the host waits for that too
            return self._due((at, act)) and (asked_who_starts(self.pipeline) or timestamp >= at / self.fps + 1.5)
        if act == "score":
            return phase != "ended" or self._due((at, act))
        return True

    def _phase(self) -> str | None:
        state = self.pipeline.table.state()
        return None if state is None else state.phase

    def _press(self, inp: PlayerInput) -> None:
        act = inp.act
        phase = self._phase()
        if act == "start" and phase != "idle":
            self.say("  a phone started the round" if phase == "playing" else f"  start skipped: hub's game {phase}")
            return
        if act == "score" and phase != "ended":
            # idle: scored from a phone; playing: the hub's game has drifted from the filmed one (a misread tile)
            self.say("  a phone confirmed the count" if phase == "idle" else f"  score skipped: hub's game {phase}")
            return
        rec = self.pipeline.reconciler
        engine_seen = rec is not None and rec.round.engine is not None
        try:
            verdict = apply_input(self.pipeline, inp)
        except (RuntimeError, ValueError, NoGame) as e:  # the hub's game has gone astray from the table's
            self.say(f"  {act} refused: {e}")
            return
        if verdict is not None and not verdict.ok:
            self.say(f"  {act} refused: {verdict.error}")
        elif verdict is not None and isinstance(verdict.action, Start):
            start = verdict.action
            e = start.engine
            how = "" if engine_seen else f"; the camera did not read the engine, the host says {e}|{e}"
            self.say(f"  host: {start.first} goes first (no phone answered{how})")
        elif verdict is not None and isinstance(verdict.action, Score) and self.pipeline.table.game is not None:
            game = self.pipeline.table.game
            pips = ", ".join(f"{p} {game.hand_pips(h)}" for p, h in verdict.action.hands.items())
            self.say(f"  host: confirmed the hands the camera counted: {pips} (no phone did)")


class SyntheticEvening:
    """A service worker (``hub.service.Camera``): synthetic table after synthetic table, on its own thread.

    Inputs from the page (``submit``) are applied on this thread between two frames, as the
    pipeline's own loop does, so they never race a play being judged.
    """

    name = "camera"

    def __init__(
        self,
        table: Table,
        bus: EventBus,
        reader: Callable[[SyntheticSource, int], FrameReader],
        settings: EveningSettings,
        tracker: TrackerSettings | None = None,
        say: Callable[[str], None] = print,
    ) -> None:
        self.table = table
        self.bus = bus
        self.reader = reader  # the tile reader for a table with tiles up to ``top``
        self.settings = settings
        self.tracker = tracker
        self.say = say
        self.pipeline: Pipeline | None = None
        self.error: BaseException | None = None
        self.tables = 0  # synthetic tables set up so far
        self._camera: SupervisedSource | None = None
        self._inputs: queue.Queue[tuple[Input, str, Future]] = queue.Queue()
        self._stop = threading.Event()
        self._not_adopted: int | None = None  # a page's game that could not be filmed
        self._thread = threading.Thread(target=self._run, name="synthetic-evening", daemon=True)

    # --------------------------------------------------------------- worker
    def start(self) -> None:
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        camera = self._camera
        if camera is not None:
            camera.close()  # a read waiting for a frame returns at once
        if self._thread.is_alive():
            self._thread.join(timeout)

    def submit(self, action: Input, source: str) -> Future:
        future: Future = Future()
        self._inputs.put((action, source, future))
        return future

    # ------------------------------------------------------------- the loop
    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._film(self.tables)
                self.tables += 1
        except BaseException as e:  # the service's health check and the demo see it
            self.error = e
            log.exception("the synthetic table stopped")
        finally:
            self._apply_queued(None, RuntimeError("the demo's camera has stopped"))

    def _film(self, n: int) -> None:
        """Set up table ``n``, then watch its game until it ends, the page replaces it, or the demo stops."""
        s = self.settings
        seed = s.seed + n
        adopt = self._adoptable()
        preset, count = s.tables[n % len(s.tables)]
        rules = self.table.rules_spec if adopt else preset
        players = list(self.table.game.players) if adopt and self.table.game is not None else count
        try:
            source = SyntheticSource(seed=seed, width=s.size[0], height=s.size[1], players=players, rules=rules,
                                     rounds=len(rules_from_spec(rules).engines), speed=s.speed)
            source.open()
            calibration = host_calibration(source.game.render(0)[1], len(source.game.players) + 1)
        except Exception as e:  # a game set up from the page may be one the renderer cannot draw
            if not (adopt or isinstance(e, ValueError)):
                raise
            if adopt:
                self._not_adopted = self.table.game_id
            self.say(f"table {seed}: cannot be filmed ({type(e).__name__}: {e}); setting up another")
            return
        game = source.game
        if adopt:
            self.say(f"filming the game set up from the page (seed {seed}): {', '.join(game.players)}")
        else:
            self.table.new_game(rules, list(game.players))
            self.say(f"new game (seed {seed}): {preset}, {', '.join(game.players)}")
        game_id = self.table.game_id
        camera = SupervisedSource(lambda: source, self.bus, lossless=True, name=source.name)
        pipeline = Pipeline(camera, self.reader(source, game.rules.set), self.table, calibration, self.tracker,
                            watch_hub=True)
        host = SimulatedHost(pipeline, source, s.host_wait_s / s.speed, self.say)
        self.pipeline, self._camera = pipeline, camera
        camera.open()
        try:
            while not self._stop.is_set():
                self._apply_queued(pipeline)
                frame = pipeline.step()
                if frame is None:
                    break
                if self.table.game_id != game_id:
                    self.say("the page set up another game: this table is cleared away")
                    return
                host.after(frame.index, frame.timestamp)
        finally:
            self.pipeline, self._camera = None, None
            camera.close()
            source.closed.wait(5)  # its reader thread has finished the frame it was drawing
        self._game_over()

    def _adoptable(self) -> bool:
        """A game set up from the page and not yet played: the next table is filmed for it."""
        game = self.table.game
        return game is not None and not game.history and self.table.game_id != self._not_adopted

    def _game_over(self) -> None:
        game = self.table.game
        if game is not None and game.game_over:
            totals = game.totals()
            self.say("game over: " + ", ".join(f"{p} {totals[p]}" for p in game.players)
                     + f"; winner: {', '.join(game.leaders())}")
        end = time.monotonic() + self.settings.game_pause_s / self.settings.speed
        while not self._stop.is_set() and time.monotonic() < end:
            self._apply_queued(None)
            self._stop.wait(0.1)

    # --------------------------------------------------------------- inputs
    def _apply_queued(self, pipeline: Pipeline | None, refuse: BaseException | None = None) -> None:
        while True:
            try:
                action, source, future = self._inputs.get_nowait()
            except queue.Empty:
                return
            try:
                if refuse is not None:
                    raise refuse
                future.set_result(pipeline.apply(action, source) if pipeline is not None
                                  else self._between_tables(action, source))
            except Exception as e:  # the caller hears why; the camera carries on
                future.set_exception(e)

    def _between_tables(self, action: Input, source: str) -> Verdict | None:
        """No camera is watching: an undo goes to the table; anything else needs the next table."""
        if isinstance(action, Undo):
            undone = self.table.undo(source)
            return None if undone is None else Verdict(undone, None)
        raise RuntimeError("the camera is setting up the next table: try again in a moment")
