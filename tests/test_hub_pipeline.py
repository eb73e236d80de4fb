"""The camera loop on its own thread: inputs from phones run between frames; it stops when asked."""

from __future__ import annotations

import threading
import time

import pytest

from hub.bus import EventBus
from hub.calibration import Calibration, assign_trains
from hub.events import CameraStatus, Question
from hub.pipeline import Answer, StartRound, start_pipeline
from hub.sources.synthetic import SyntheticSource
from hub.table import Table
from hub.watching import LiveRecording, calibrate, truth_reader
from scorekeeper import Code, Draw, Start
from scorekeeper.store import Store
from vision.frames import Frame, FrameSource


def test_the_threaded_pipeline_asks_who_starts_takes_the_answer_and_stops() -> None:
    source = SyntheticSource(seed=0, width=640, height=480, speed=4.0)
    recording = LiveRecording(source)
    image, first = recording.first_frame()
    bus = EventBus()
    questions: list[Question] = []
    sub = bus.subscribe(lambda env: questions.append(env.event) if isinstance(env.event, Question) else None, "t")
    table = Table(Store(":memory:"), bus)
    table.new_game(recording.rules_spec, list(recording.players))
    handle = start_pipeline(source, truth_reader(recording, 12), table, calibrate(image, first, 5))
    try:
        deadline = time.monotonic() + 30
        while not questions and time.monotonic() < deadline:
            sub.drain()
            time.sleep(0.02)
        (question,) = questions
        assert question.text == "The engine is 12|12. Who goes first?"
        start = next(i for i in recording.game_inputs() if i.act == "start").action
        assert isinstance(start, Start)
        verdict = handle.submit(StartRound(start.first, start.hands), "phone").result(timeout=5)
        assert verdict is not None and verdict.ok
        assert table.state().phase == "playing" and table.state().engine == 12  # type: ignore[union-attr]
        with pytest.raises(KeyError):
            handle.submit(Answer(question.id, start.first), "phone").result(timeout=5)  # answered already: closed
        assert handle.is_alive()
    finally:
        handle.stop()
    assert not handle.is_alive() and handle.error is None


class SilentCamera(FrameSource):
    """A camera that sends nothing until told to stop: the loop waits in ``read`` as while reconnecting."""

    name = "silent"

    def __init__(self) -> None:
        self.closed = threading.Event()
        self.reading = threading.Event()

    def open(self) -> None:
        pass

    def read(self) -> Frame | None:
        self.reading.set()
        self.closed.wait(10)
        return None

    def close(self) -> None:
        self.closed.set()


def test_a_press_waiting_for_the_camera_is_judged_once_the_camera_is_lost_and_waits_again_once_it_is_back() -> None:
    """Cy's draw is out of turn by the hub's count, so it waits for the camera to catch up. A lost
    camera cannot, and its loop is stuck reconnecting: the draw is judged then, not left hanging."""
    bus = EventBus()
    table = Table(Store(":memory:"), bus)
    table.new_game("dominos-cc", ["Ana", "Ben", "Cy"])
    assert table.submit(Start(12, "Ana", {"Ana": 15, "Ben": 15, "Cy": 15}), "web").ok
    camera = SilentCamera()
    calibration = Calibration((500.0, 500.0), 70.0, tuple(-90.0 + 45.0 * k for k in range(8)),
                              assign_trains(["Ana", "Ben", "Cy"]))
    handle = start_pipeline(camera, sees_nothing, table, calibration)
    assert camera.reading.wait(10)  # the loop runs, and listens to the camera's state
    try:
        assert table.submit(Draw("Cy"), "web", alert=False).waiting
        bus.publish(CameraStatus("reconnecting", "no frame for 5 s"))  # a short gap: it still waits
        bus.publish(CameraStatus("lost", "cannot open the camera (attempt 5)"))
        deadline = time.monotonic() + 5
        while table.waiting_presses() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert table.waiting_presses() == ()
        refused = table.submit(Draw("Ben"), "web", alert=False)  # judged at once while the camera is away
        assert not refused.waiting and refused.error is not None and refused.error.code is Code.NOT_YOUR_TURN
        bus.publish(CameraStatus("ok"))
        deadline = time.monotonic() + 5
        while not (waits := table.submit(Draw("Cy"), "web", alert=False)).waiting and time.monotonic() < deadline:
            time.sleep(0.01)
        assert waits.waiting
    finally:
        handle.stop()
    assert not handle.is_alive() and handle.error is None


def sees_nothing(frame: Frame) -> list:
    return []
