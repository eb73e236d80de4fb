"""The camera loop on its own thread: inputs from phones run between frames; it stops when asked."""

from __future__ import annotations

import math
import threading
import time

import pytest

from hub.bus import EventBus
from hub.calibration import Calibration, assign_trains
from hub.events import CameraStatus, Question
from hub.pipeline import Answer, StartRound, start_pipeline
from hub.sources.synthetic import SyntheticSource
from hub.table import Table
from hub.watching import LiveRecording, host_calibration, truth_reader
from scorekeeper import Code, Draw, Start
from scorekeeper.store import Store
from vision.frames import Frame, FrameSource


def test_the_threaded_pipeline_asks_who_starts_takes_the_answer_and_stops() -> None:
    source = SyntheticSource(seed=0, width=640, height=480, speed=4.0)
    recording = LiveRecording(source)
    bus = EventBus()
    questions: list[Question] = []
    sub = bus.subscribe(lambda env: questions.append(env.event) if isinstance(env.event, Question) else None, "t")
    table = Table(Store(":memory:"), bus)
    table.new_game(recording.rules_spec, list(recording.players))
    handle = start_pipeline(source, truth_reader(recording, 12), table, host_calibration(recording.first_truth(), 5))
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


def test_a_hub_found_wrong_on_a_busy_cloth_is_found_again_round_the_engine_before_anyone_plays() -> None:
    """Seed 74's gingham cloth: in the first frame a row of backs looks more like a slotted hub than the pale hub
    does. Once the engine lies still in the true hub, the hub is found there, and the engine is asked about."""
    from hub.pipeline import Pipeline

    recording = LiveRecording(SyntheticSource(seed=74))
    first = recording.first_truth()
    assert first.hub is not None
    table = Table(Store(":memory:"), EventBus())
    table.new_game(recording.rules_spec, list(recording.players))
    pipeline = Pipeline(recording.frames(), truth_reader(recording, 12), table,
                        host_calibration(first, len(recording.players) + 1), watch_hub=True)
    found_first = None
    while (pipeline.reconciler is None or pipeline.reconciler.pending is None) and pipeline.stats.frames < 80:
        pipeline.step()
        found_first = found_first or pipeline.calibration
    assert found_first is not None and math.dist(found_first.centre, first.hub.center) > 2 * first.hub.radius
    assert pipeline.calibration is not None
    assert math.dist(pipeline.calibration.centre, first.hub.center) < 0.1 * first.hub.radius
    assert pipeline.reconciler is not None and pipeline.reconciler.pending is not None
    assert pipeline.reconciler.pending.question.text == "The engine is 12|12. Who goes first?"
    assert pipeline.knocks == 0  # not a knocked camera


class StillTable(FrameSource):
    """The same picture every quarter second: a table nobody touches yet."""

    name = "still"

    def __init__(self, image: object, count: int) -> None:
        self.image, self.count, self.sent = image, count, 0

    def open(self) -> None:
        pass

    def read(self) -> Frame | None:
        if self.sent == self.count:
            return None
        self.sent += 1
        return Frame(self.image, 0.25 * (self.sent - 1), "still", self.sent - 1)  # type: ignore[arg-type]

    def close(self) -> None:
        pass


@pytest.mark.parametrize("in_round", [False, True])
def test_an_empty_hub_on_a_checked_cloth_is_found_before_any_round_despite_unsure_face_up_reads(in_round: bool) -> None:
    """Fresh eval-hub seed 7011: a pale hub on gingham was found only once the engine lay in it, so the host had
    to type the engine. Before any round the cloth's quiet rounds are looked at too, and the detector's unsure
    face-up reads of backs at set-up (scores 0.35-0.63) must not stop that. During a round they are not looked
    at: laid out face up at the count, hands look slotted among them."""
    import numpy as np

    from hub.pipeline import Pipeline
    from vision.synth.game import SyntheticGame
    from vision.types import DetectedTile, HalfReading

    game = SyntheticGame(7011)
    image, truth = game.render(0)
    assert truth.hub is not None
    corners = np.array([[100.0, 880.0], [100.0, 840.0], [180.0, 840.0], [180.0, 880.0]])
    blank = tuple([0.97] + [0.03 / 12] * 12)
    back_read_up = DetectedTile(corners, (HalfReading((120.0, 860.0), blank), HalfReading((160.0, 860.0), blank)),
                                0.55, "up")
    table = Table(Store(":memory:"), EventBus())
    table.new_game("classic", ["Ana", "Ben", "Cy", "Dee"])
    if in_round:
        assert table.submit(Start(12, "Ana", {p: 15 for p in ("Ana", "Ben", "Cy", "Dee")}), "web").ok
    pipeline = Pipeline(StillTable(image, 2), lambda frame: [back_read_up], table,
                        host_calibration(truth, 5), watch_hub=True)
    for _ in range(2):  # two looks that agree
        pipeline.step()
    if in_round:
        assert pipeline.calibration is None
    else:
        assert pipeline.calibration is not None
        assert math.dist(pipeline.calibration.centre, truth.hub.center) < 0.06 * truth.hub.radius


def test_backs_read_face_up_as_blank_doubles_do_not_draw_the_hub_away_from_where_it_was_found() -> None:
    """Fresh eval-hub seed 7020, through the models: at the deal the detector reads backs of the hands face up
    as 0|0 (scores 0.38-0.62), and a hub found round a row of them replaced the true one, found a second earlier.
    A back has no pips: only a double of the round's engine number (12|12 here) is taken for the engine."""
    from hub.pipeline import Pipeline
    from hub.watching import model_reader

    recording = LiveRecording(SyntheticSource(seed=7020, width=2028, height=1520))
    first = recording.first_truth()
    assert first.hub is not None
    table = Table(Store(":memory:"), EventBus())
    table.new_game(recording.rules_spec, list(recording.players))
    pipeline = Pipeline(recording.frames(), model_reader(None, 2, 12), table,
                        host_calibration(first, len(recording.players) + 1), watch_hub=True)
    seen = []
    while pipeline.stats.frames < 12:  # three seconds
        pipeline.step()
        seen.append(pipeline.calibration)
    assert seen[-1] is not None
    assert all(math.dist(c.centre, first.hub.center) < 0.06 * first.hub.radius for c in seen if c is not None)
