"""Faults during a game: a camera that raises, goes black, stalls or sends a broken frame; the
process killed mid-game and started again; a bad config. None of them may lose game data."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hub.bus import EventBus
from hub.events import CameraStatus
from hub.sources import CorruptFrame, SupervisedSource
from hub.sources.synthetic import SyntheticSource
from hub.watching import LiveRecording, truth_reader, watch
from scorekeeper.actions import action_to_json
from scorekeeper.store import Store
from vision.frames import Frame, FrameSource, SourceError

HUB = [sys.executable, "-m", "hub.cli"]


class FaultyCamera(FrameSource):
    """A synthetic table filmed by a camera with faults at given frames; reopening carries on (a live camera)."""

    def __init__(self, inner: SyntheticSource, faults: dict[int, str], stall_s: float) -> None:
        self.inner, self.faults, self.stall_s = inner, dict(faults), stall_s
        self.name = "faulty"
        self.opened = 0

    def open(self) -> None:
        self.opened += 1
        self.inner.open()

    def read(self) -> Frame | None:
        frame = self.inner.read()
        if frame is None:
            return None
        fault = self.faults.pop(frame.index, None)
        if fault == "raise":
            raise SourceError("USB camera unplugged")
        if fault == "stall":
            time.sleep(self.stall_s)
        if fault == "black":
            return Frame(np.zeros_like(frame.image), frame.timestamp, frame.source, frame.index)
        if fault == "small":
            return Frame(frame.image[::2, ::2].copy(), frame.timestamp, frame.source, frame.index)
        if fault == "undecodable":
            raise CorruptFrame(f"frame {frame.index} cannot be decoded")
        return frame

    def close(self) -> None:
        pass


@pytest.mark.slow
def test_camera_faults_mid_game_lose_no_game_data() -> None:
    inner = SyntheticSource(seed=0, width=640, height=480)
    recording = LiveRecording(inner)
    # still stretches of the game (nothing being laid), as a real fault may hit any time
    faults = {140: "raise", 260: "stall", 330: "small", 331: "undecodable"}
    faults.update({i: "black" for i in range(400, 412)})
    camera = FaultyCamera(inner, faults, stall_s=0.6)
    bus = EventBus()
    statuses: list[CameraStatus] = []
    sub = bus.subscribe(lambda env: statuses.append(env.event), "test")
    supervised = SupervisedSource(lambda: camera, bus, stall_s=0.3, backoff_s=0.01, black_reopen_s=60, lossless=True)
    report, _ = watch(recording, truth_reader(recording, 12), source=supervised, stop_after=560)
    sub.drain()
    assert report.equal, report.first_mismatch  # every play and press up to then, as it happened
    assert report.false_alerts == 0 and report.illegal_flagged == report.illegal_true >= 1
    assert not report.input_errors
    kinds = [s.status for s in statuses]
    assert "reconnecting" in kinds and kinds[-1] == "ok"
    assert any("USB camera unplugged" in s.detail for s in statuses)
    assert any("no frame for 0.3 s" in s.detail for s in statuses)
    assert any(s.status == "lost" and "black" in s.detail for s in statuses)
    assert supervised.dropped >= 2 + 12 and camera.opened >= 3


def _write_game(folder: Path, frames: int) -> None:
    subprocess.run(HUB + ["synth", "game", "--seed", "0", "--out", str(folder), "--width", "640", "--height", "480",
                          "--limit", str(frames)], check=True, capture_output=True, timeout=120)


def _watch(folder: Path, store: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(HUB + ["watch", str(folder), "--table-log", str(log), "--reader", "truth",
                                   "--store", str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _stored(store: Path) -> list[dict]:
    s = Store(store)
    try:
        return [action_to_json(a) for a in s.load(s.game_ids()[-1]).actions]
    finally:
        s.close()


@pytest.mark.slow
def test_a_watch_killed_mid_game_resumes_the_same_game_with_nothing_lost(tmp_path: Path) -> None:
    folder = tmp_path / "game"
    _write_game(folder, 330)
    whole = _watch(folder, tmp_path / "whole.db", tmp_path / "whole.json")
    assert whole.wait(timeout=120) == 0, whole.stderr.read().decode()  # type: ignore[union-attr]

    journal = tmp_path / "killed.db.watch"
    run = _watch(folder, tmp_path / "killed.db", tmp_path / "killed.json")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # kill it once it is well into the game, mid-frame
        if journal.exists() and journal.read_text().count('"kind": "frame"') >= 200:
            break
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=10)
    assert run.returncode == -signal.SIGKILL
    before = _stored(tmp_path / "killed.db")
    assert before, "the game had begun before the kill"
    again = _watch(folder, tmp_path / "killed.db", tmp_path / "killed.json")
    assert again.wait(timeout=120) == 0, again.stderr.read().decode()  # type: ignore[union-attr]
    after = _stored(tmp_path / "killed.db")
    assert after[: len(before)] == before  # nothing confirmed before the kill was lost
    assert after == _stored(tmp_path / "whole.db")  # and the game went on exactly as without it
    assert json.loads((tmp_path / "killed.json").read_text()) == json.loads((tmp_path / "whole.json").read_text())


@pytest.mark.parametrize(
    ("section", "key"),
    [("[tracker]\nstable_seconds = -1\n", "tracker.stable_seconds"),
     ("[calibration]\nslot_angles = [1, 2, 3]\n", "calibration.slot_angles"),
     ("[camera]\nsource = \"webcam\"\n", "camera.source")],
)
def test_a_bad_camera_or_tracker_config_is_a_clear_error_and_a_non_zero_exit(
    tmp_path: Path, section: str, key: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[game]\nplayers = ["Ana", "Ben"]\n\n' + section)
    out = subprocess.run(HUB + ["run", "--config", str(config)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert key in out.stderr


def test_the_service_hook_runs_the_camera_and_stops(tmp_path: Path) -> None:
    from hub.config import loads_config
    from hub.pipeline import camera_workers
    from hub.table import Table

    config = loads_config(
        '[game]\nplayers = ["Ana", "Ben", "Cy", "Dee"]\n\n[camera]\nsource = "synthetic"\nresolution = [640, 480]\n\n'
        '[storage]\ndatabase = ":memory:"\n'
    )
    bus = EventBus()
    seen: list[CameraStatus] = []
    sub = bus.subscribe(lambda env: seen.append(env.event) if isinstance(env.event, CameraStatus) else None, "t")
    table = Table(Store(":memory:"), bus)
    table.new_game(config.game.rules_spec, config.game.players)
    (worker,) = camera_workers(config, table, bus)
    worker.start()
    found = threading.Event()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not found.is_set():
        sub.drain()
        if any(s.detail == "hub found" for s in seen):
            found.set()
        time.sleep(0.05)
    assert worker.is_alive()
    worker.stop()
    assert not worker.is_alive()
    assert found.is_set(), [s for s in seen]
    assert worker.pipeline.calibration is not None and worker.pipeline.stats.frames >= 1
