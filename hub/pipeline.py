"""The camera loop: source -> reader -> tracker -> reconciler -> Table, on a thread of its own.

Everything that changes the game from the camera happens on this one thread, in frame
order. Actions from people (the button, the phones) can go straight to the Table; those
that need the camera's view (confirming the counted hands, answering a question, undo)
go through :meth:`Pipeline.submit`, which runs them between two frames so they never
race a play that is being judged.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from scorekeeper import Action
from vision.frames import Frame, FrameSource
from vision.types import DetectedTile, TileReader

from .calibration import Calibration, HubWatch
from .events import CameraStatus
from .reconciler import Reconciler, ReconcilerSettings
from .table import Table, Verdict
from .tracker import Tracker, TrackerSettings

log = logging.getLogger(__name__)

FrameReader = Callable[[Frame], Sequence[DetectedTile]]


def image_reader(reader: TileReader) -> FrameReader:
    """A vision TileReader as a pipeline stage."""
    return lambda frame: reader.read(frame.image)


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


@dataclass
class PipelineStats:
    frames: int = 0
    read_s: float = 0.0  # time spent in the reader (the models)
    total_s: float = 0.0  # time spent per frame, source to verdicts
    settle_to_verdict_s: list[float] = field(default_factory=list)  # wall time from the settling frame's arrival


class Pipeline:
    """One table's camera loop. ``step`` processes one frame; ``run`` loops until the end or ``stop``."""

    def __init__(
        self,
        source: FrameSource,
        read: FrameReader,
        table: Table,
        calibration: Calibration,
        tracker: TrackerSettings | None = None,
        reconciler: ReconcilerSettings | None = None,
        hub_watch: HubWatch | None = None,
    ) -> None:
        self.source = source
        self.read = read
        self.table = table
        self.tracker = Tracker(calibration, tracker)
        self.reconciler = Reconciler(table, calibration, reconciler, tracker=self.tracker)
        self.hub_watch = hub_watch
        self.stats = PipelineStats()
        self._inputs: queue.Queue[tuple[Input, str, Future]] = queue.Queue()
        self._stop = threading.Event()
        self.last_frame: Frame | None = None
        self.last_verdicts: list[Verdict] = []  # what the camera recorded on the last frame

    @property
    def calibration(self) -> Calibration:
        return self.tracker.calibration

    # ---------------------------------------------------------------- inputs
    def submit(self, action: Input, source: str) -> Future:
        """Queue an input for the camera thread; the future gets its Verdict (or None)."""
        future: Future = Future()
        self._inputs.put((action, source, future))
        return future

    def apply(self, action: Input, source: str) -> Verdict | None:
        """Apply an input now (call on the camera thread, or when no thread runs the pipeline)."""
        rec = self.reconciler
        if isinstance(action, ConfirmScore):
            return rec.confirm_score(source)
        if isinstance(action, Answer):
            return rec.answer(action.question_id, action.answer, source)
        if isinstance(action, StartRound):
            return rec.start_round(action.first, source, action.hands, action.engine)
        if isinstance(action, Undo):
            undone = self.table.undo(source)
            rec.after_undo()
            return None if undone is None else Verdict(undone, None)
        return self.table.submit(action, source)

    def _apply_queued(self) -> None:
        while True:
            try:
                action, source, future = self._inputs.get_nowait()
            except queue.Empty:
                return
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
        t0 = time.perf_counter()
        detections = self.read(frame)
        t1 = time.perf_counter()
        if self.hub_watch is not None:
            moved = self.hub_watch.check(frame, detections)
            if moved is not None:
                self._recalibrated(moved)
        changes = self.tracker.update(detections, frame.timestamp)
        verdicts = self.reconciler.update(self.tracker.board, changes)
        self.last_verdicts = verdicts
        done = time.perf_counter()
        if verdicts:
            self.stats.settle_to_verdict_s.append(done - arrived)
        self.stats.frames += 1
        self.stats.read_s += t1 - t0
        self.stats.total_s += done - arrived
        return frame

    def _recalibrated(self, calibration: Calibration) -> None:
        """The camera or the hub moved: forget where tiles were, and find them again where they are now."""
        self.tracker.calibration = calibration
        self.tracker.reset()
        self.reconciler.calibration = calibration
        self.table.bus.publish(CameraStatus("knocked", "the camera or the hub moved: finding the hub again"))

    def run(self) -> None:
        while not self._stop.is_set():
            if self.step() is None:
                break
        self._apply_queued()

    def stop(self) -> None:
        self._stop.set()
        self.source.close()


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
    calibration: Calibration,
    tracker: TrackerSettings | None = None,
    reconciler: ReconcilerSettings | None = None,
    hub_watch: HubWatch | None = None,
) -> PipelineHandle:
    """Start the camera loop on its own thread; ``.stop()`` ends it."""
    handle = PipelineHandle(Pipeline(source, read, table, calibration, tracker, reconciler, hub_watch))
    handle.start()
    return handle
