"""The camera loop: source -> reader -> tracker -> reconciler -> Table, on a thread of its own.

Everything that changes the game from the camera happens on this one thread, in frame
order. Actions from people (the button, the phones) can go straight to the Table; those
that need the camera's view (confirming the counted hands, answering a question, saying
who starts, undo) go through :meth:`Pipeline.submit`, which runs them between two frames
so they never race a play that is being judged.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scorekeeper import Action
from vision.frames import Frame, FrameSource
from vision.types import DetectedTile

from .bus import Envelope
from .calibration import SLOTS, Calibration, CalibrationError, HubWatch, engine_hints, find_hub, holds_engine
from .events import CameraStatus
from .reconciler import Reconciler, ReconcilerSettings
from .table import Table, Verdict
from .tracker import Tracker, TrackerSettings

if TYPE_CHECKING:
    from vision.reader import OnnxTileReader

    from .bus import EventBus
    from .config import Config

log = logging.getLogger(__name__)

FrameReader = Callable[[Frame], Sequence[DetectedTile]]


# ------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class ConfirmScore:
    """The host confirmed the hands the camera counted: score the round with them."""

    act: str = "confirm-score"


@dataclass(frozen=True)
class Undo:
    act: str = "undo"


@dataclass(frozen=True)
class StartRound:
    """The table says who goes first; the engine is the one the camera saw (``engine`` only if it saw none)."""

    first: str
    hands: Mapping[str, int] | None = None
    engine: int | None = None
    act: str = "start-round"


@dataclass(frozen=True)
class Answer:
    question_id: int
    answer: str
    act: str = "answer"


Input = Action | ConfirmScore | Undo | Answer | StartRound


# ------------------------------------------------------------------ calibration
@dataclass
class AutoCalibration:
    """Finds the hub in the first frames when the config holds no calibration, and checks it on the engine.

    ``assign`` gives the found slots their trains (from the config's set-up, or the
    proposal); ``save`` keeps the result (in the config file). On a busy cloth a row of
    backs can look more like a slotted round than a pale hub does, and a hub found wrong
    records nothing all evening. The engine settles that: it is laid in the hub's centre
    before anyone plays. Until a double is seen in the found hub's centre, each double lying
    elsewhere is a hint, and a hub found round one replaces the first. Only a double of the
    round's engine number is a hint, when the game knows it (``engine``). A hand over the hub
    can fool one look, so a hub counts only when two looks in a row agree on it.
    """

    assign: Callable[[Calibration], Calibration]
    save: Callable[[Calibration], None] | None = None
    slots: int = SLOTS
    every_s: float = 1.0
    confirmed: bool = False  # a double (the engine) has been seen in the hub's centre
    _next: float = -math.inf
    _suspect: Calibration | None = None

    def __call__(self, frame: Frame, tiles: Sequence[DetectedTile], quiet: bool = False,
                 engine: int | None = None) -> Calibration | None:
        """The hub, once two looks agree on it; ``quiet``: no round is in play (see :func:`find_hub`)."""
        if frame.timestamp < self._next:
            return None
        self._next = frame.timestamp + self.every_s
        hints = engine_hints(tiles, engine)
        try:
            found = find_hub(frame.image, slots=self.slots, tiles=hints, quiet=quiet)
        except CalibrationError as e:
            log.info("no hub yet: %s", e)
            return None
        if not self._agreed(found, frame):
            return None
        self.confirmed = holds_engine(found, hints)
        return self._keep(found)

    def recheck(self, frame: Frame, tiles: Sequence[DetectedTile], current: Calibration,
                engine: int | None = None) -> Calibration | None:
        """A hub found round a double away from ``current`` (the calibration to use from now on), or None."""
        doubles = engine_hints(tiles, engine)
        if self.confirmed or not doubles or frame.timestamp < self._next:
            return None
        self._next = frame.timestamp + self.every_s
        if holds_engine(current, doubles):
            self.confirmed = True
            return None
        try:
            found = find_hub(frame.image, slots=self.slots, tiles=doubles)
        except CalibrationError:
            return None
        if not holds_engine(found, doubles) or math.dist(found.centre, current.centre) < 0.3 * current.radius:
            return None  # no double in its centre, or the same hub as before
        if not self._agreed(found, frame):
            return None
        log.warning("the engine lies at %s, not in the hub found first at %s: using the hub round it",
                    tuple(round(v) for v in found.centre), tuple(round(v) for v in current.centre))
        self.confirmed = True
        return self._keep(found)

    def _agreed(self, found: Calibration, frame: Frame) -> bool:
        """Whether the last look found the same hub; if not, look again at the next frame."""
        last, self._suspect = self._suspect, found
        if last is None or math.dist(last.centre, found.centre) > 0.25 * found.radius:
            self._next = frame.timestamp
            return False
        self._suspect = None
        return True

    def _keep(self, found: Calibration) -> Calibration:
        calibration = self.assign(found)
        if self.save is not None:
            try:
                self.save(calibration)
            except OSError as e:
                log.error("cannot store the calibration: %s", e)
        return calibration


# ------------------------------------------------------------------ the loop
@dataclass
class PipelineStats:
    frames: int = 0
    read_s: float = 0.0  # time spent in the reader (the models)
    total_s: float = 0.0  # time spent per frame, source to verdicts
    slowest_s: float = 0.0  # the slowest frame: an upper bound on any verdict's delay after its frame arrived
    # from the arrival of the frame on which a tile settled to its verdict, or to the question asked
    # instead (the camera's part of the delay; a question then waits for a person)
    settle_to_verdict_s: list[float] = field(default_factory=list)


class Pipeline:
    """One table's camera loop. ``step`` processes one frame; ``run`` loops until the end or ``stop``."""

    def __init__(
        self,
        source: FrameSource,
        read: FrameReader,
        table: Table,
        calibration: Calibration | AutoCalibration,
        tracker: TrackerSettings | None = None,
        reconciler: ReconcilerSettings | None = None,
        watch_hub: bool = False,
    ) -> None:
        self.source = source
        self.read = read
        self.table = table
        self.tracker_settings = tracker
        self.reconciler_settings = reconciler
        self.watch_hub = watch_hub
        self.auto: AutoCalibration | None = None
        self.tracker: Tracker | None = None
        self.reconciler: Reconciler | None = None
        self.hub_watch: HubWatch | None = None
        if isinstance(calibration, Calibration):
            self._calibrated(calibration)
        else:
            self.auto = calibration
        self.stats = PipelineStats()
        self._inputs: queue.Queue[tuple[Input, str, Future]] = queue.Queue()
        self._stop = threading.Event()
        self.last_frame: Frame | None = None
        self.last_verdicts: list[Verdict] = []  # what the camera recorded on the last frame
        self.knocks = 0  # times the hub was found moved

    def _calibrated(self, calibration: Calibration) -> None:
        self.tracker = Tracker(calibration, self.tracker_settings)
        self.reconciler = Reconciler(self.table, calibration, self.reconciler_settings, tracker=self.tracker)
        if self.watch_hub:
            self.hub_watch = HubWatch(calibration)

    @property
    def calibration(self) -> Calibration | None:
        return None if self.tracker is None else self.tracker.calibration

    # ---------------------------------------------------------------- inputs
    def submit(self, action: Input, source: str) -> Future:
        """Queue an input for the camera thread; the future gets its Verdict (or None)."""
        future: Future = Future()
        self._inputs.put((action, source, future))
        return future

    def apply(self, action: Input, source: str) -> Verdict | None:
        """Apply an input now (on the camera thread, or where no thread runs the pipeline)."""
        rec = self.reconciler
        if isinstance(action, (ConfirmScore, Answer, StartRound)) and rec is None:
            raise RuntimeError("the camera has not found the hub yet")
        if isinstance(action, ConfirmScore):
            assert rec is not None
            return rec.confirm_score(source)
        if isinstance(action, Answer):
            assert rec is not None
            return rec.answer(action.question_id, action.answer, source)
        if isinstance(action, StartRound):
            assert rec is not None
            return rec.start_round(action.first, source, action.hands, action.engine)
        if isinstance(action, Undo):
            waiting = len(self.table.waiting_presses())
            undone = self.table.undo(source)
            if rec is not None and len(self.table.waiting_presses()) == waiting:  # a stored action went
                rec.after_undo()
            return None if undone is None else Verdict(undone, None)
        return self.table.submit(action, source)

    def _apply_queued(self) -> None:
        while True:
            try:
                action, source, future = self._inputs.get_nowait()
            except queue.Empty:
                return
            if not future.set_running_or_notify_cancel():
                continue  # whoever sent it gave up waiting and was told nothing was done
            try:
                future.set_result(self.apply(action, source))
            except Exception as e:  # the caller hears why; the camera loop carries on
                future.set_exception(e)

    # ---------------------------------------------------------------- frames
    def step(self) -> Frame | None:
        """Read and act on one frame; None at the end of the source."""
        self._apply_queued()
        frame = self.source.read()
        if frame is None:
            return None
        arrived = time.perf_counter()
        self.last_frame = frame
        self.last_verdicts = []
        state = self.table.state()  # once a frame: it tells the reader where trains end, the hub finder the engine
        t0 = time.perf_counter()
        if isinstance(self.read, HubReader) and self.tracker is not None:
            self.read.ends, self.read.within = self.tracker.open_ends(state is not None and state.phase == "ended")
        detections = self.read(frame)
        t1 = time.perf_counter()
        self.stats.frames += 1
        self.stats.read_s += t1 - t0
        engine = None if state is None else state.round
        if self.tracker is None:
            assert self.auto is not None
            found = self.auto(frame, detections, quiet=state is None or state.phase == "idle", engine=engine)
            if found is None:
                return frame
            self._calibrated(found)
            self.table.bus.publish(CameraStatus("ok", "hub found"))
        assert self.tracker is not None and self.reconciler is not None
        if self.auto is not None and not self.tracker.claims:  # the camera has recorded no tile on this hub yet
            better = self.auto.recheck(frame, detections, self.tracker.calibration, engine)
            if better is not None:
                self._recalibrated(better, CameraStatus("ok", "hub found again round the engine"))
        if self.hub_watch is not None:
            moved = self.hub_watch.check(frame, detections, in_place=self.tracker.in_place())
            if moved is not None:
                self.knocks += 1
                moved_status = CameraStatus("knocked", "the camera or the hub moved: the hub was found again")
                self._recalibrated(moved, moved_status)
        changes = self.tracker.update(detections, frame.timestamp)
        asked_before = self.reconciler.pending
        self.last_verdicts = self.reconciler.update(self.tracker.board, changes)
        done = time.perf_counter()
        asked = self.reconciler.pending is not None and self.reconciler.pending is not asked_before
        if self.last_verdicts or asked:
            self.stats.settle_to_verdict_s.append(done - arrived)
        self.last_verdicts += self.reconciler.take_released()  # presses that waited for a question: no settling
        self.stats.total_s += done - arrived
        self.stats.slowest_s = max(self.stats.slowest_s, done - arrived)
        return frame

    def _recalibrated(self, calibration: Calibration, status: CameraStatus) -> None:
        """The hub is elsewhere: forget where tiles were, and find them again where they are now."""
        assert self.tracker is not None and self.reconciler is not None
        self.tracker.calibration = calibration
        self.tracker.reset()
        self.reconciler.calibration = calibration
        if self.hub_watch is not None:
            self.hub_watch.calibration = calibration
        self.table.bus.publish(status)

    def run(self) -> None:
        watching = self.table.bus.subscribe(self._on_camera_status, "camera-presses", maxsize=64)
        try:
            while not self._stop.is_set():
                if self.step() is None:
                    break
            self._apply_queued()
        finally:
            watching.close()

    def _on_camera_status(self, envelope: Envelope) -> None:
        """A press out of turn by the hub's count waits for the camera to catch up. A lost camera will
        not, and its loop is stuck reconnecting, so what waits is judged now, as with a stopped camera;
        presses wait again once the camera is back and the hub has been found."""
        event = envelope.event
        if isinstance(event, CameraStatus) and event.status == "lost":
            self.table.hold_presses(False)
        elif (isinstance(event, CameraStatus) and event.status == "ok" and self.reconciler is not None
              and not self._stop.is_set()):  # a stopped camera's last news holds nothing any more
            self.table.hold_presses(True)

    def stop(self) -> None:
        self._stop.set()
        self.source.close()
        self.table.hold_presses(False)  # no answer comes from a stopped camera: what waited is judged now


class PipelineHandle:
    """A pipeline on its own thread: what the run service and the demo hold (a service Worker)."""

    name = "camera"

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="camera-pipeline", daemon=True)

    def _run(self) -> None:
        try:
            with self.pipeline.source:
                self.pipeline.run()
        except BaseException as e:  # a bug must not pass silently: the service's health check sees it
            self.error = e
            log.exception("the camera pipeline stopped")

    def start(self) -> None:
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def submit(self, action: Input, source: str) -> Future:
        return self.pipeline.submit(action, source)

    def stop(self, timeout: float = 5.0) -> None:
        self.pipeline.stop()
        if self._thread.is_alive():
            self._thread.join(timeout)


def start_pipeline(
    source: FrameSource,
    read: FrameReader,
    table: Table,
    calibration: Calibration | AutoCalibration,
    tracker: TrackerSettings | None = None,
    reconciler: ReconcilerSettings | None = None,
    watch_hub: bool = True,
) -> PipelineHandle:
    """Start the camera loop on its own thread; ``.stop()`` ends it."""
    handle = PipelineHandle(Pipeline(source, read, table, calibration, tracker, reconciler, watch_hub))
    handle.start()
    return handle


# ------------------------------------------------------------------ the service's hook
def camera_workers(config: Config, table: Table, bus: EventBus) -> list[PipelineHandle]:
    """THE CAMERA HOOK for ``hub.service``: the camera pipeline the config describes, started.

    The camera is supervised (reopened with back-off, its state on the bus). Without the
    ONNX models there is no pipeline (the table follows the button and the phones), except
    for the synthetic camera, which then reads its own truth (a test double) so the demo
    runs on a fresh clone.
    """
    from scorekeeper import rules_from_spec

    from .calibration import assign_trains, from_config, match_slots, save_calibration
    from .sources import SupervisedSource

    camera = config.camera
    top = rules_from_spec(config.game.rules_spec).set
    factory, truth = _source_factory(config)
    source = SupervisedSource(factory, bus, lossless=camera.source in ("replay", "synthetic"),
                              name=camera.source)
    try:
        read = camera_reader(top)
    except FileNotFoundError as e:
        if truth is None:
            log.error("no camera pipeline: %s", e)
            bus.publish(CameraStatus("lost", f"the vision models are missing: {e}"))
            return []
        log.warning("demo: the synthetic table's truth stands in for the vision models (%s)", e)
        from .truth_reader import TruthReader

        read = TruthReader(truth.tiles_for, top=top)
    calibration: Calibration | AutoCalibration
    stored = from_config(config.calibration)
    if stored is not None:
        calibration = stored
    else:
        players = config.game.players or (table.game.players if table.game is not None else ())
        trains = dict(config.calibration.trains) or assign_trains(players)

        def assign(found: Calibration) -> Calibration:
            if truth is not None:  # the simulated host confirms the simulated table's slots
                first = truth.game.render(0)[1]
                assert first.hub is not None
                return match_slots(found, {
                    math.degrees(math.atan2(s.outward[1] - s.point[1], s.outward[0] - s.point[0])): s.train
                    for s in first.hub.slots if s.train is not None
                })
            return found.with_trains(trains)

        path = Path(config.source)
        calibration = AutoCalibration(assign, (lambda c: save_calibration(path, c)) if path.is_file() else None)
    tracker = TrackerSettings(stable_s=config.tracker.stable_seconds)
    pipeline = Pipeline(source, read, table, calibration, tracker, watch_hub=True)
    return [PipelineHandle(pipeline)]


def _source_factory(config: Config) -> tuple[Callable[[], FrameSource], object | None]:
    """How to (re)open the configured camera, and the synthetic table when that is the camera."""
    from .sources import OpenCVSource, PiCameraSource, ReplaySource

    camera = config.camera
    if camera.source == "picamera2":
        return (lambda: PiCameraSource(size=camera.resolution)), None
    if camera.source == "opencv":
        uri: int | str = camera.device if camera.device is not None else (camera.url or 0)
        return (lambda: OpenCVSource(uri, size=camera.resolution)), None
    if camera.source == "replay":
        assert camera.path is not None
        return (lambda: ReplaySource(camera.path, fps=camera.fps, speed=1.0)), None  # type: ignore[arg-type]
    from .sources.synthetic import SyntheticSource

    synthetic = SyntheticSource(players=list(config.game.players) or 4, rules=config.game.rules_spec,
                                width=camera.resolution[0], height=camera.resolution[1], speed=1.0)
    return (lambda: synthetic), synthetic


def camera_reader(top: int) -> FrameReader:
    """The committed ONNX models as the hub's still camera uses them (FileNotFoundError when missing)."""
    from vision.onnx_session import ModelMissingError

    try:
        return hub_reader(top)
    except ModelMissingError as e:
        raise FileNotFoundError(str(e)) from None


def hub_reader(top: int, models: Path | None = None, threads: int = 2) -> HubReader:
    """The ONNX models as the hub uses them (vision.onnx_session.ModelMissingError when missing): the still
    camera keeps the detector's input size (``sticky``)."""
    from vision.onnx_session import MODELS_DIR
    from vision.reader import OnnxTileReader

    return HubReader(OnnxTileReader(models_dir=models or MODELS_DIR, threads=threads, max_value=top, sticky=True))


class HubReader:
    """The pipeline's reader, told each frame where the trains' next tiles would lie (``Tracker.open_ends``).

    A tile lies face up there, whatever the detector says (it takes a tile with few pips, such as 0|1,
    for a back now and then), so a face-down tile found there is read too; backs elsewhere (the boneyard,
    the hands) are not, which keeps their cost and their guessed readings out of the loop. While the
    hands are counted, backs beside the laid-out tiles are read too.
    """

    def __init__(self, reader: OnnxTileReader) -> None:
        self.reader = reader
        self.ends: Sequence[tuple[float, float]] = ()
        self.within = 0.0

    def __call__(self, frame: Frame) -> list[DetectedTile]:
        return self.reader.read(frame.image, self.ends, self.within)
