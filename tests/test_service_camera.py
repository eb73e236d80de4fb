"""``domino-hub run`` with a camera: the pipeline really watches, and the page's answers and undo reach it.

The synthetic camera (the renderer's game, read by the committed ONNX models) stands in for
the Pi camera; everything else is the service as systemd runs it.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from hub.bus import Envelope
from hub.config import loads_config
from hub.events import ActionApplied, ActionUndone, Question
from hub.service import Notifier, Service
from scorekeeper import Play, Start


def config_for(tmp_path: Path, camera: str) -> str:
    return f"""
[game]
players = ["Ana", "Ben", "Cy"]
[camera]
{camera}
[pins]
leds = [17, 27, 22]
[web]
host = "127.0.0.1"
port = 0
pin = "1234"
[storage]
database = "{tmp_path}/state/game.db"
"""


def call(url: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST", headers={
        "Content-Type": "application/json", "X-Table-Pin": "1234", "Origin": url.split("/api")[0]})
    try:
        with urllib.request.urlopen(request, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Events:
    """Every event the service publishes, as a test reads them."""

    def __init__(self, service: Service) -> None:
        self.seen: list[object] = []
        self._lock = threading.Lock()
        service.bus.subscribe(self._take, "test", maxsize=100_000)

    def _take(self, env: Envelope) -> None:
        with self._lock:
            self.seen.append(env.event)

    def wait_for(self, match: Callable[[object], bool], timeout: float, after: int = 0) -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                found = [e for e in self.seen[after:] if match(e)]
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"nothing matching within {timeout} s; seen: {self.seen[-10:]}")


def test_the_service_watches_the_camera_and_the_pages_answers_and_undo_go_through_it(
    tmp_path: Path, factory: MockFactory
) -> None:
    config = loads_config(config_for(tmp_path, 'source = "synthetic"\nresolution = [1280, 960]'))
    service = Service(config, Notifier({}))
    events = Events(service)
    service.start()
    try:
        (camera,) = service.workers
        assert camera.is_alive() and service.camera() is camera
        api = service.web.url + "api"
        # the camera finds the hub, reads the engine and asks; a phone answers
        ask = events.wait_for(lambda e: isinstance(e, Question) and "Who goes first" in e.text, 60)
        assert isinstance(ask, Question)
        filmed = camera.pipeline.source.factory()  # the synthetic table the camera films: who really goes first
        first_player = next(s["first"] for s in filmed.table_log()["steps"] if s["act"] == "start")
        status, reply = call(f"{api}/questions/{ask.id}/answer", {"answer": first_player})
        assert status == 200, reply
        start = events.wait_for(lambda e: isinstance(e, ActionApplied) and isinstance(e.action, Start), 5)
        assert isinstance(start, ActionApplied) and start.source == "web" and start.action.first == first_player
        # the camera sees the first tile laid (or asks which it was: a phone answers that too)
        def a_play(e: object) -> bool:
            return (isinstance(e, ActionApplied) and isinstance(e.action, Play)) or (
                isinstance(e, Question) and e.text.startswith("Was that"))

        first = events.wait_for(a_play, 60)
        if isinstance(first, Question):
            status, reply = call(f"{api}/questions/{first.id}/answer", {"answer": first.choices[0]})
            assert status == 200, reply
            first = events.wait_for(lambda e: isinstance(e, ActionApplied) and isinstance(e.action, Play), 5)
        assert isinstance(first, ActionApplied) and first.source in ("camera", "web")
        laid = sum(len(t["tiles"]) for t in call(f"{api}/state")[1]["game"]["trains"])
        assert laid >= 1
        # an undo from the page goes through the camera loop: the tile still lies there, and is not recorded again
        mark = len(events.seen)
        reconciler = camera.pipeline.reconciler
        ignored = set(reconciler.round.ignored)
        status, reply = call(f"{api}/undo", {})
        assert status == 200 and reply["undone"]["act"] == "play", reply
        assert isinstance(events.wait_for(lambda e: isinstance(e, ActionUndone), 5, after=mark), ActionUndone)
        assert reconciler.round.ignored > ignored  # the reconciler heard: that tile counts again only once re-laid
        frames = camera.pipeline.stats.frames
        deadline = time.monotonic() + 30
        while camera.pipeline.stats.frames < frames + 8 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert camera.pipeline.stats.frames >= frames + 8  # two seconds of game watched since the undo
        replayed = [e for e in events.seen[mark:] if isinstance(e, ActionApplied) and e.action == first.action]
        assert not replayed
        assert service.health() is None
    finally:
        service.shutdown()
    assert not camera.is_alive()


def test_without_the_models_the_service_runs_and_the_page_says_why(
    tmp_path: Path, factory: MockFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("vision.detector.DETECTOR_FILE", "no-such-detector.onnx")
    frames = tmp_path / "frames"
    frames.mkdir()
    config = loads_config(config_for(tmp_path, f'source = "replay"\npath = "{frames}"'))
    service = Service(config, Notifier({}))
    service.start()
    try:
        assert service.workers == [] and service.health() is None
        deadline = time.monotonic() + 5
        status, model = call(service.web.url + "api/state")
        while model["camera"]["status"] == "unknown" and time.monotonic() < deadline:  # the bus is asynchronous
            time.sleep(0.05)
            status, model = call(service.web.url + "api/state")
        assert status == 200 and model["game"]["players"] == ["Ana", "Ben", "Cy"]
        assert model["camera"]["status"] == "lost"
        assert "the vision models are missing" in model["camera"]["detail"]
        assert "no-such-detector.onnx" in model["camera"]["detail"]
        # with no camera watching, the page's undo goes straight to the table
        status, reply = call(service.web.url + "api/actions", {"act": "start", "engine": 12, "first": "Ana"})
        assert status == 200, reply
        status, reply = call(service.web.url + "api/undo", {})
        assert status == 200 and reply["undone"]["act"] == "start"
    finally:
        service.shutdown()



def test_an_input_the_camera_did_not_take_in_time_is_called_off_not_done_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A phone told "the camera is busy" must not see its undo happen a minute later, when it may
    already have pressed it again."""
    import hub.service
    from hub.bus import EventBus
    from hub.calibration import Calibration, assign_trains
    from hub.pipeline import Pipeline, PipelineHandle
    from hub.service import CameraInputs
    from hub.table import Table
    from scorekeeper.store import Store
    from vision.frames import Frame, FrameSource

    class Reconnecting(FrameSource):
        """A camera stuck reconnecting until ``back`` is set; then the recording ends."""

        name = "reconnecting"

        def __init__(self) -> None:
            self.back = threading.Event()
            self.reading = threading.Event()

        def open(self) -> None: ...

        def read(self) -> Frame | None:
            self.reading.set()
            self.back.wait(30)
            return None

        def close(self) -> None:
            self.back.set()

    players = ["Ana", "Ben", "Cy"]
    table = Table(Store(tmp_path / "g.db"), EventBus())
    table.new_game("classic", players)
    table.submit(Start(12, "Ana", {"Ana": 15, "Ben": 15, "Cy": 15}), "test")
    table.submit(Play("Ana", (12, 5), "Ana"), "test")
    camera = Reconnecting()
    calibration = Calibration((500.0, 500.0), 70.0, tuple(-90.0 + 45.0 * k for k in range(8)), assign_trains(players))
    handle = PipelineHandle(Pipeline(camera, lambda frame: [], table, calibration))
    handle.start()
    assert camera.reading.wait(10)  # the loop waits on the camera: nothing queued now is taken before it is back
    monkeypatch.setattr(hub.service, "INPUT_TIMEOUT_S", 0.2)
    inputs = CameraInputs(table, lambda: handle)
    with pytest.raises(TimeoutError, match="nothing was done"):
        inputs.undo("web")
    camera.back.set()  # the camera returns; the loop takes what is queued, then ends with the recording
    handle.stop()
    assert not handle.is_alive()
    assert table.game is not None and len(table.game.trains["Ana"]) == 1  # the play stands: no late undo
