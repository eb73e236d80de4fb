"""Frame sources: replay, OpenCV, picamera2 (lazily imported) and the supervising wrapper."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import cv2
import numpy as np
import pytest

from hub.bus import EventBus
from hub.events import CameraStatus
from hub.sources import CorruptFrame, OpenCVSource, PiCameraSource, ReplaySource, SupervisedSource
from vision.frames import Frame, FrameSource, SourceError


def picture(i: int, size: tuple[int, int] = (48, 64)) -> np.ndarray:
    """A frame that says which one it is: a bright square whose position encodes ``i``."""
    image = np.full((*size, 3), 90, np.uint8)
    image[4:12, 4 + 4 * (i % 10):12 + 4 * (i % 10)] = 250
    image[20:24, :] = 30 * (i // 10)
    return image


def write_folder(path: Path, n: int) -> Path:
    path.mkdir()
    for i in range(n):
        cv2.imwrite(str(path / f"frame_{i:05d}.png"), picture(i))
    return path


# ------------------------------------------------------------------ replay
def test_replay_folder_gives_every_frame_in_order_with_game_time(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "f", 5)
    with ReplaySource(folder, fps=4.0) as src:
        frames = list(src)
    assert [f.index for f in frames] == [0, 1, 2, 3, 4]
    assert [f.timestamp for f in frames] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert all(np.array_equal(f.image, picture(f.index)) for f in frames)


def test_replay_uses_recorded_timestamps(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "f", 3)
    with ReplaySource(folder, timestamps=[10.0, 10.2, 11.0]) as src:
        assert [f.timestamp for f in src] == [10.0, 10.2, 11.0]


def test_replay_in_real_time_keeps_the_recording_pace(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "f", 4)
    now = [100.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(round(s, 6))
        now[0] += s

    with ReplaySource(folder, fps=2.0, speed=2.0, sleep=sleep, clock=lambda: now[0]) as src:
        list(src)
    assert slept == [0.25, 0.25, 0.25]  # half a second of game time per frame, played twice as fast


def test_replay_skips_a_corrupt_frame_and_carries_on(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "f", 3)
    (folder / "frame_00001.png").write_bytes(b"\x89PNG not really")
    with ReplaySource(folder) as src:
        assert src.read().index == 0
        with pytest.raises(CorruptFrame, match="frame 1"):
            src.read()
        assert src.read().index == 2
        assert src.read() is None


def test_replay_of_a_missing_or_empty_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        ReplaySource(tmp_path / "nope").open()
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="no images"):
        ReplaySource(tmp_path / "empty").open()


def write_video(path: Path, n: int) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (64, 48))
    assert writer.isOpened()
    for i in range(n):
        writer.write(picture(i))
    writer.release()
    return path


def test_replay_and_opencv_read_a_video_file(tmp_path: Path) -> None:
    video = write_video(tmp_path / "game.avi", 6)
    with ReplaySource(video, fps=5.0) as src:
        frames = list(src)
    assert [f.timestamp for f in frames] == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    with OpenCVSource(str(video)) as cam:
        frames = list(cam)
    assert len(frames) == 6 and frames[0].image.shape == (48, 64, 3)
    assert frames[-1].timestamp == pytest.approx(1.0)


def test_opencv_source_that_cannot_open_says_so() -> None:
    with pytest.raises(SourceError, match="cannot open"):
        OpenCVSource("/dev/no-such-camera-here").open()


# ---------------------------------------------------------------- picamera2
def test_importing_sources_does_not_import_picamera2() -> None:
    code = "import hub.sources, hub.sources.picamera, sys; print('picamera2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_picamera_without_picamera2_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(SourceError, match="picamera2 is not installed"):
        PiCameraSource().open()


class RecordingPicamera2:
    """Stands in for ``picamera2.Picamera2`` on a machine with no camera; records how it is driven."""

    instances: list[RecordingPicamera2] = []
    fail_after: int | None = None

    def __init__(self, num: int = 0) -> None:
        self.num, self.config, self.started, self.closed, self.captures = num, None, False, False, 0
        RecordingPicamera2.instances.append(self)

    def create_still_configuration(self, main: dict, buffer_count: int) -> dict:
        return {"main": main, "buffer_count": buffer_count}

    def configure(self, config: dict) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    def capture_array(self, name: str) -> np.ndarray:
        self.captures += 1
        if self.fail_after is not None and self.captures > self.fail_after:
            raise RuntimeError("Camera frontend has timed out!")
        w, h = self.config["main"]["size"]
        return np.full((h, w, 3), 128, np.uint8)

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        self.closed = True


def test_picamera_uses_the_rgb888_main_stream_at_the_configured_size(monkeypatch: pytest.MonkeyPatch) -> None:
    RecordingPicamera2.instances = []
    RecordingPicamera2.fail_after = 2
    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=RecordingPicamera2))
    src = PiCameraSource(size=(640, 480))
    src.open()
    cam = RecordingPicamera2.instances[0]
    assert cam.config["main"] == {"size": (640, 480), "format": "RGB888"} and cam.started
    frames = [src.read(), src.read()]
    assert [f.index for f in frames] == [0, 1] and frames[0].image.shape == (480, 640, 3)
    with pytest.raises(SourceError, match="capture failed"):
        src.read()
    src.close()
    assert cam.closed and not cam.started


# --------------------------------------------------------------- supervisor
class ScriptedCamera(FrameSource):
    """A camera whose behaviour is a script shared by every reopened instance: frames, faults, hangs."""

    def __init__(self, script: list[str], opened: list[int], release: threading.Event) -> None:
        self.script, self.opened, self.release = script, opened, release
        self.name = "scripted"

    def open(self) -> None:
        if self.script and self.script[0] == "refuse":
            self.script.pop(0)
            raise SourceError("no camera on the bus")
        self.opened.append(1)

    def read(self) -> Frame | None:
        if not self.script:
            return None
        step = self.script.pop(0)
        kind, _, arg = step.partition(":")
        i = int(arg) if arg else 0
        if kind == "raise":
            raise SourceError("USB device disconnected")
        if kind == "hang":
            self.release.wait(10)
            return None
        if kind == "black":
            return Frame(np.zeros((48, 64, 3), np.uint8), float(i), self.name, i)
        if kind == "bad":
            return Frame(np.zeros((48, 64), np.float32), float(i), self.name, i)
        if kind == "small":
            return Frame(picture(i, (24, 32)), float(i), self.name, i)
        return Frame(picture(i), float(i), self.name, i)

    def close(self) -> None:
        pass


def supervised(
    script: list[str], **kw: object
) -> tuple[SupervisedSource, list[CameraStatus], list[int], threading.Event]:
    bus = EventBus()
    statuses: list[CameraStatus] = []
    sub = bus.subscribe(lambda env: statuses.append(env.event), "test")
    opened: list[int] = []
    release = threading.Event()
    options = {"stall_s": 0.3, "backoff_s": 0.01, "backoff_max_s": 0.05, "lossless": True, **kw}
    src = SupervisedSource(lambda: ScriptedCamera(script, opened, release), bus, **options)  # type: ignore[arg-type]
    src.drain = sub.drain  # type: ignore[attr-defined]
    return src, statuses, opened, release


def read_all(src: SupervisedSource) -> list[int]:
    with src:
        out = [f.index for f in src]
    src.drain()  # type: ignore[attr-defined]
    return out


def test_a_camera_that_raises_is_reopened_and_nothing_is_lost() -> None:
    src, statuses, opened, _ = supervised(["frame:0", "frame:1", "raise", "frame:2", "frame:3"])
    assert read_all(src) == [0, 1, 2, 3]
    assert len(opened) == 2 and src.reopens == 1
    kinds = [s.status for s in statuses]
    assert kinds == ["starting", "ok", "reconnecting", "ok"]
    assert "USB device disconnected" in statuses[2].detail


def test_a_camera_that_will_not_open_backs_off_then_reports_lost() -> None:
    src, statuses, opened, _ = supervised(["refuse"] * 3 + ["frame:0"], lost_after=3)
    assert read_all(src) == [0]
    kinds = [s.status for s in statuses]
    assert kinds == ["starting", "reconnecting", "reconnecting", "lost", "ok"]
    assert "attempt 3" in statuses[3].detail


def test_a_stalled_camera_is_abandoned_and_reopened() -> None:
    src, statuses, opened, release = supervised(["frame:0", "hang", "frame:1"])
    try:
        assert read_all(src) == [0, 1]
    finally:
        release.set()
    assert len(opened) == 2
    assert any(s.status == "reconnecting" and "no frame for 0.3 s" in s.detail for s in statuses)


def test_closing_wakes_a_read_that_waits_on_a_silent_camera() -> None:
    """Stopping the hub must not wait out the stall timeout (the service's stop joins for 5 s)."""
    src, _, _, release = supervised(["frame:0", "hang"], stall_s=60)
    try:
        src.open()
        first = src.read()
        assert first is not None and first.index == 0
        threading.Timer(0.2, src.close).start()
        started = time.monotonic()
        assert src.read() is None
        assert time.monotonic() - started < 30  # woken by close, long before the 60 s stall
    finally:
        release.set()


def test_black_frames_are_withheld_and_reported() -> None:
    src, statuses, opened, _ = supervised(["frame:0", "black:1", "black:2", "frame:3"])
    assert read_all(src) == [0, 3]
    assert [s.status for s in statuses] == ["starting", "ok", "lost", "ok"]
    assert "black" in statuses[2].detail and src.dropped == 2 and len(opened) == 1


def test_a_camera_black_for_too_long_is_reopened() -> None:
    script = ["frame:0", "black:1", "black:2"] + [f"frame:{i}" for i in range(3, 10)]
    src, statuses, opened, _ = supervised(script, black_reopen_s=0.0)
    got = read_all(src)
    assert got[0] == 0 and got[-1] == 9  # a live camera may lose the frames in flight, never the game
    assert len(opened) == 2 and any("only black frames" in s.detail for s in statuses)


def test_malformed_and_corrupt_frames_are_dropped_without_reopening(tmp_path: Path) -> None:
    src, statuses, opened, _ = supervised(["frame:0", "bad:1", "small:2", "frame:3"])
    assert read_all(src) == [0, 3]
    assert src.dropped == 2 and len(opened) == 1 and src.reopens == 0

    folder = write_folder(tmp_path / "f", 4)
    (folder / "frame_00002.png").write_bytes(b"garbage")
    replay = SupervisedSource(lambda: ReplaySource(folder), lossless=True)
    assert read_all_plain(replay) == [0, 1, 3]
    assert replay.dropped == 1 and replay.reopens == 0


def read_all_plain(src: SupervisedSource) -> list[int]:
    with src:
        return [f.index for f in src]


class FlakyReplay(ReplaySource):
    """A replay whose disk goes away once, after frame 2 has been read."""

    failed = False

    def read(self) -> Frame | None:
        if self._next == 3 and not FlakyReplay.failed:
            FlakyReplay.failed = True
            raise SourceError("I/O error")
        return super().read()


def test_a_reopened_replay_carries_on_where_it_stopped(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "f", 6)
    FlakyReplay.failed = False
    src = SupervisedSource(lambda: FlakyReplay(folder), lossless=True, backoff_s=0.01)
    assert read_all_plain(src) == [0, 1, 2, 3, 4, 5]
    assert src.reopens == 1
