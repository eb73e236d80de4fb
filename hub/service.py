"""The hub as a long-running service: what ``domino-hub run`` starts and systemd watches.

Start-up order matters: the LEDs run their chase before the game is reopened, so the
first state they show is the resumed one; systemd hears READY=1 only once the table,
the LEDs, the button and the web page are all up. After that the main loop sends a
WATCHDOG=1 ping at half of systemd's watchdog interval, but only while every worker
is alive: a hung or dead part stops the pings, and systemd restarts the service.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scorekeeper import Action, Score, Start
from scorekeeper.store import Store

from .bus import EventBus
from .config import Config, table_pin
from .table import Table, Verdict

if TYPE_CHECKING:  # gpiozero is imported only when pins are configured; OpenCV only with a camera
    from .button import TableButton
    from .lights import Lights
    from .pipeline import Input, Pipeline

log = logging.getLogger(__name__)


class StartError(RuntimeError):
    """The service cannot start; the message says what to fix."""


class Notifier:
    """systemd's notify protocol, spoken directly: one datagram to ``$NOTIFY_SOCKET`` per message.

    Outside systemd (no ``NOTIFY_SOCKET``) every message is quietly dropped.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        self.address = "\0" + address[1:] if address.startswith("@") else address  # '@': abstract namespace
        self.watchdog_seconds: float | None = None
        usec, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            self.watchdog_seconds = int(usec) / 1e6
        self._socket: socket.socket | None = None
        if self.address:
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @property
    def ping_interval(self) -> float | None:
        """How often to ping: half the watchdog interval, as systemd advises."""
        return None if self.watchdog_seconds is None else self.watchdog_seconds / 2

    def send(self, *fields: str) -> bool:
        """Send ``KEY=value`` fields in one message; False when there is nobody to tell or it failed."""
        if self._socket is None:
            return False
        try:
            self._socket.sendto("\n".join(fields).encode(), self.address)
        except OSError as e:
            log.warning("cannot notify systemd at %s: %s", self.address, e)
            return False
        return True

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class Worker(Protocol):
    """A long-running part of the service (the camera pipeline is one), watched by the health check."""

    name: str

    def start(self) -> None: ...

    def is_alive(self) -> bool: ...

    def stop(self) -> None: ...


@runtime_checkable
class Camera(Worker, Protocol):
    """A worker that watches the table (``hub.pipeline.PipelineHandle``, the demo's synthetic evening).

    ``submit`` queues an input for the camera thread, which applies it between two frames;
    ``pipeline`` is the loop watching now (None while there is none).
    """

    @property
    def pipeline(self) -> Pipeline | None: ...

    def submit(self, action: Input, source: str) -> Future: ...


WorkerFactory = Callable[[Config, Table, EventBus], list[Worker]]

INPUT_TIMEOUT_S = 10.0  # the longest a phone waits for the camera loop to take its action


def pipeline_workers(config: Config, table: Table, bus: EventBus) -> list[Worker]:
    """THE CAMERA HOOK: the workers that turn frames into table actions.

    They are started after the table and the web page are up and before READY=1, watched
    by the health check, and stopped first at shutdown. Without the vision models there
    are none: the page shows the camera as lost and why, and the table follows the button
    and the phones.
    """
    from .pipeline import camera_workers  # OpenCV and onnxruntime load only when a camera is wanted

    return list(camera_workers(config, table, bus))


@dataclass(frozen=True)
class CameraInputs:
    """The page's actions that must pass through the camera loop, so that its reconciler and tracker
    stay in step with the table (web/app.py ``create_app`` says which and why).

    ``camera`` is looked up per request: the workers start after the page. With no camera, or one
    whose loop has stopped, the actions go straight to the Table, as nothing else is watching.
    """

    table: Table
    camera: Callable[[], Camera | None]

    def _watching(self) -> Camera | None:
        camera = self.camera()
        return camera if camera is not None and camera.is_alive() else None

    def undo(self, source: str) -> Action | None:
        camera = self._watching()
        if camera is None:
            return self.table.undo(source)
        from .pipeline import Undo

        verdict = _taken(camera.submit(Undo(), source), "undo")
        return None if verdict is None else verdict.action

    def start_round(self, start: Start, source: str) -> Verdict:
        camera = self._watching()
        pipeline = None if camera is None else camera.pipeline
        if camera is None or pipeline is None or pipeline.reconciler is None:
            return self.table.submit(start, source, alert=False)
        from .pipeline import StartRound

        return _verdict(camera.submit(StartRound(start.first, start.hands, start.engine), source), "start")

    def confirm_score(self, score: Score, source: str) -> Verdict:
        """``score`` holds the pips the camera counted; the round is scored with the tiles it read."""
        camera = self._watching()
        if camera is None:
            return self.table.submit(score, source, alert=False)
        from .pipeline import ConfirmScore

        return _verdict(camera.submit(ConfirmScore(), source), "score")

    def answer_question(self, question_id: int, answer: str) -> Verdict | None:
        camera = self._watching()
        if camera is None:
            raise KeyError(f"question {question_id} is not open: the camera is not watching")
        from .pipeline import Answer

        return _taken(camera.submit(Answer(question_id, answer), "web"), "answer")


def _taken(future: Future, what: str) -> Verdict | None:
    """The camera thread's verdict on an input; TimeoutError (the page says busy) when it has not taken it."""
    try:
        return future.result(INPUT_TIMEOUT_S)
    except TimeoutError:
        if not future.cancel():  # the camera thread took it just now: it finishes in a moment
            return future.result()
        raise TimeoutError(f"the camera has not taken the {what} within {INPUT_TIMEOUT_S:g} s (is it reconnecting?); "
                           "nothing was done: try again once it is back") from None


def _verdict(future: Future, what: str) -> Verdict:
    verdict = _taken(future, what)
    assert verdict is not None  # a start or a score always comes back judged
    return verdict


class Service:
    """Everything ``domino-hub run`` holds: store, table, bus, LEDs, button, web page and workers."""

    def __init__(self, config: Config, notifier: Notifier, workers: WorkerFactory = pipeline_workers) -> None:
        self.config = config
        self.notifier = notifier
        self._make_workers = workers
        self.bus = EventBus()
        self.store: Store | None = None
        self.table: Table | None = None
        self.lights: Lights | None = None
        self.button: TableButton | None = None
        self.web: Any = None  # web.server's handle: it has .stop()
        self.workers: list[Worker] = []
        self.unhealthy: str | None = None

    # -------------------------------------------------------------- start-up
    def start(self) -> None:
        """Bring every part up; StartError says what stopped it (anything started is closed again)."""
        try:
            self._start()
        except BaseException:
            self.shutdown()
            raise

    def _start(self) -> None:
        config = self.config
        log.info("config from %s", config.source)
        try:
            self.store = Store(config.storage.database)
        except (OSError, sqlite3.Error) as e:
            raise StartError(f"cannot open the game store {config.storage.database}: {e}") from None
        self.table = table = Table(self.store, self.bus)
        self._start_lights()
        if table.resume():
            log.info("resumed game %s", table.game_id)
        elif config.game.players:
            table.new_game(config.game.rules_spec, config.game.players)
            log.info("started a new game for %s (from the config's [game])", ", ".join(config.game.players))
        else:
            log.info("no game yet: waiting for set-up on the web page")
        self._start_button()
        try:
            pin = table_pin(config)
        except OSError as e:
            raise StartError(f"cannot keep the table PIN in {config.storage.state_dir}: {e}") from None
        self._start_web(pin)
        self.workers = self._make_workers(config, table, self.bus)
        for worker in self.workers:
            worker.start()

    def _start_lights(self) -> None:
        pins = self.config.pins
        if not pins.leds and pins.buzzer is None:
            log.info("no LEDs or buzzer in the config's [pins]")
            return
        from .lights import Lights

        try:
            self.lights = Lights(self.bus, pins, self.config.calibration)
        except Exception as e:  # gpiozero raises many kinds: no pin driver, pin busy, no permission
            log.error("LEDs and buzzer disabled: %s: %s (run 'domino-hub doctor')", type(e).__name__, e)
            return
        self.lights.start()

    def _start_button(self) -> None:
        pin = self.config.pins.button
        if pin is None:
            log.info("no button in the config's [pins]")
            return
        from .button import TableButton, make_button

        assert self.table is not None
        try:
            button = make_button(pin)
        except Exception as e:
            log.error("button disabled: %s: %s (run 'domino-hub doctor')", type(e).__name__, e)
            return
        lights = self.lights
        self.button = TableButton(
            self.table, button, on_refused=None if lights is None else lambda _reason: lights.beep_refused()
        )

    def _start_web(self, pin: str) -> None:
        try:
            from web.app import create_app
            from web.server import start_server
        except ModuleNotFoundError as e:
            if e.name not in ("web", "web.app", "web.server"):
                raise
            log.warning("no web page in this build (%s is missing): phones cannot connect", e.name)
            return
        web = self.config.web
        assert self.table is not None
        inputs = CameraInputs(self.table, self.camera)
        # bound to one address, the QR code shows that one; on all addresses, the page finds the LAN's
        join = None if web.host in ("0.0.0.0", "", "::") or web.port == 0 else f"http://{web.host}:{web.port}/"
        app = create_app(self.table, self.bus, pin=pin, join_url=join, answer_question=inputs.answer_question,
                         undo=inputs.undo, start_round=inputs.start_round, confirm_score=inputs.confirm_score)
        try:
            self.web = start_server(app, web.host, web.port)
        except OSError as e:
            raise StartError(f"cannot serve the web page on {web.host}:{web.port}: {e}") from None
        log.info("web page on http://%s:%s/ (table PIN %s)", web.host, web.port, pin)

    def camera(self) -> Camera | None:
        """The worker watching the table, if one is."""
        return next((w for w in self.workers if isinstance(w, Camera)), None)

    # ------------------------------------------------------------- main loop
    def health(self) -> str | None:
        """What is wrong, or None when every part is alive."""
        for worker in self.workers:
            if not worker.is_alive():
                return f"worker {worker.name} has stopped"
        return None

    def run(self, stop: threading.Event) -> None:
        """Tell systemd we are ready, then ping its watchdog until ``stop`` is set."""
        game_id = None if self.table is None else self.table.game_id
        status = "waiting for set-up" if game_id is None else f"game {game_id} open"
        self.notifier.send("READY=1", f"STATUS={status}")
        log.info("ready: %s", status)
        interval = self.notifier.ping_interval or 1.0
        while not stop.wait(interval):
            problem = self.health()
            if problem is None:
                self.notifier.send("WATCHDOG=1")
                if self.unhealthy is not None:
                    log.info("healthy again")
                    self.notifier.send(f"STATUS={status}")
                self.unhealthy = None
            elif problem != self.unhealthy:
                self.unhealthy = problem
                log.error("unhealthy, no watchdog pings until it recovers: %s", problem)
                self.notifier.send(f"STATUS=unhealthy: {problem}")
        self.notifier.send("STOPPING=1")
        log.info("stopping")

    # -------------------------------------------------------------- shutdown
    def shutdown(self) -> None:
        """Stop every part that started, newest first; safe to call more than once."""
        for worker in reversed(self.workers):
            _quietly(worker.stop, f"worker {worker.name}")
        self.workers = []
        if self.web is not None:
            _quietly(self.web.stop, "web page")
            self.web = None
        if self.button is not None:
            _quietly(self.button.close, "button")
            self.button = None
        if self.lights is not None:
            _quietly(self.lights.close, "LEDs")
            self.lights = None
        if self.store is not None:
            _quietly(self.store.close, "store")
            self.store = None


def _quietly(stop: Callable[[], object], what: str) -> None:
    """Shut one part down; a failure is logged so that the others still get closed."""
    try:
        stop()
    except Exception:
        log.exception("closing the %s failed", what)


def serve(config: Config, stop: threading.Event, notifier: Notifier | None = None) -> int:
    """Run the service until ``stop`` is set. Exit status: 0 after a clean stop, 1 when it cannot start."""
    notifier = notifier or Notifier()
    service = Service(config, notifier)
    try:
        service.start()
    except StartError as e:
        log.error("cannot start: %s", e)
        notifier.send(f"STATUS=cannot start: {e}")
        notifier.close()
        return 1
    try:
        service.run(stop)
    finally:
        service.shutdown()
        notifier.close()
    log.info("stopped cleanly")
    return 0
