"""``domino-hub run``: start-up, systemd's notify protocol and watchdog, resume, and a clean stop.

The test owns a unix datagram socket and hands it to the service as ``NOTIFY_SOCKET``,
exactly as systemd does, so what it reads there is what systemd would hear.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from hub.config import loads_config
from hub.service import Notifier, Service, serve
from scorekeeper import MEXICAN, Draw, Pass, Play, Start
from scorekeeper.store import Store

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config_text(tmp_path: Path, port: int, extra: str = "") -> str:
    return f"""
[game]
players = ["Ana", "Ben", "Cy"]
[camera]
source = "synthetic"
resolution = [1280, 960]
[pins]
leds = [17, 27, 22]
buzzer = 18
button = 23
[web]
host = "127.0.0.1"
port = {port}
[storage]
database = "{tmp_path}/state/game.db"
{extra}"""


class Listener:
    """The systemd side of the notify protocol: a bound datagram socket collecting messages."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))

    def next(self, timeout: float) -> tuple[float, dict[str, str]]:
        self.sock.settimeout(timeout)
        data = self.sock.recv(4096).decode()
        return time.monotonic(), dict(line.split("=", 1) for line in data.splitlines())

    def until(self, key: str, timeout: float) -> list[tuple[float, dict[str, str]]]:
        """Every message up to and including the first that carries ``key``."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            seen.append(self.next(max(0.01, deadline - time.monotonic())))
            if key in seen[-1][1]:
                return seen

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[Listener]:
    ear = Listener(tmp_path / "notify.sock")
    yield ear
    ear.close()


# -------------------------------------------------------------- notifier
def test_the_notifier_reads_systemds_environment() -> None:
    n = Notifier({"NOTIFY_SOCKET": "@hub", "WATCHDOG_USEC": "30000000"})
    assert n.address == "\0hub"  # '@' is the abstract namespace
    assert n.watchdog_seconds == 30 and n.ping_interval == 15
    n.close()
    other = Notifier({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)})
    assert other.watchdog_seconds is None  # the watchdog is meant for another process
    other.close()


def test_outside_systemd_messages_are_dropped_quietly() -> None:
    n = Notifier({})
    assert n.send("READY=1") is False and n.ping_interval is None


def test_messages_arrive_as_single_datagrams(listener: Listener) -> None:
    n = Notifier({"NOTIFY_SOCKET": str(listener.path)})
    assert n.send("READY=1", "STATUS=game 1 open")
    assert listener.next(1)[1] == {"READY": "1", "STATUS": "game 1 open"}
    n.close()


# ------------------------------------------------------ the real process
def test_the_service_process_says_ready_pings_the_watchdog_and_stops_cleanly(
    tmp_path: Path, listener: Listener
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(config_text(tmp_path, free_port()))
    env = {**os.environ, "NOTIFY_SOCKET": str(listener.path), "WATCHDOG_USEC": "300000",
           "GPIOZERO_PIN_FACTORY": "mock", "PYTHONPATH": str(ROOT)}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub.cli", "run", "--config", str(config)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        ready = listener.until("READY", timeout=30)
        assert ready[-1][1]["READY"] == "1" and ready[-1][1]["STATUS"] == "game 1 open"
        assert not [m for _, m in ready[:-1] if "WATCHDOG" in m]  # no ping before READY
        pings = [listener.next(2) for _ in range(4)]
        assert all(m == {"WATCHDOG": "1"} for _, m in pings)
        gaps = [b[0] - a[0] for a, b in zip(pings, pings[1:], strict=False)]
        assert all(0.08 <= g <= 0.6 for g in gaps), gaps  # half of the 0.3 s watchdog interval
        proc.send_signal(signal.SIGTERM)
        assert "STOPPING" in listener.until("STOPPING", timeout=10)[-1][1]
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "stopped cleanly" in err
    assert (tmp_path / "state" / "game.db").exists()
    assert (tmp_path / "state" / "table-pin").read_text().strip().isdigit()


def test_a_bad_config_names_the_key_and_exits_2_without_a_traceback(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(config_text(tmp_path, 8000, "[tracker]\nstable_seconds = 'soon'\n"))
    done = subprocess.run(
        [sys.executable, "-m", "hub.cli", "run", "--config", str(config)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "tracker.stable_seconds: must be a number from 0 to 10" in done.stderr
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------ in-process
class FlakyWorker:
    """A worker whose liveness the test sets, standing in for the camera pipeline."""

    name = "camera"

    def __init__(self) -> None:
        self.alive = True
        self.started = self.stopped = False

    def start(self) -> None:
        self.started = True

    def is_alive(self) -> bool:
        return self.alive

    def stop(self) -> None:
        self.stopped = True


def test_a_dead_worker_stops_the_watchdog_pings_until_it_recovers(
    tmp_path: Path, listener: Listener, factory: MockFactory
) -> None:
    worker = FlakyWorker()
    config = loads_config(config_text(tmp_path, 0).replace("[web]", "[web]\npin = '1234'"))
    notifier = Notifier({"NOTIFY_SOCKET": str(listener.path), "WATCHDOG_USEC": "100000"})
    service = Service(config, notifier, workers=lambda c, t, b: [worker])
    service.start()
    assert worker.started
    stop = threading.Event()
    runner = threading.Thread(target=service.run, args=(stop,))
    runner.start()
    try:
        listener.until("READY", timeout=5)
        assert listener.next(1)[1] == {"WATCHDOG": "1"}
        worker.alive = False
        status = listener.until("STATUS", timeout=2)[-1][1]
        assert status["STATUS"] == "unhealthy: worker camera has stopped"
        with pytest.raises(TimeoutError):
            listener.next(0.4)  # silence: systemd will restart a service that stays like this
        worker.alive = True
        assert listener.next(1)[1] == {"WATCHDOG": "1"}
    finally:
        stop.set()
        runner.join(5)
        service.shutdown()
    assert "STOPPING" in listener.until("STOPPING", timeout=2)[-1][1]
    assert worker.stopped


def test_a_restart_resumes_the_game_and_the_leds_show_it(tmp_path: Path, factory: MockFactory) -> None:
    config = loads_config(config_text(tmp_path, 0).replace("[web]", "[web]\npin = '1234'"))
    store = Store(config.storage.database)
    game = store.new_game("classic", ["Ana", "Ben", "Cy"])
    for action in (Start(12, "Ana"), Play("Ana", (12, 5), MEXICAN), Draw("Ben"), Pass("Ben")):
        store.append(game, action)
    store.close()
    service = Service(config, Notifier({}), workers=lambda c, t, b: [])
    service.start()
    try:
        assert service.table is not None and service.table.game_id == game
        assert service.lights is not None and service.lights.subscription is not None
        assert service.lights.subscription.drain()
        assert factory.pin(27).state is True  # slot 2: Ben's marker, as before the power cut
        assert factory.pin(17).state is False and factory.pin(22).state is False
    finally:
        service.shutdown()


def test_a_store_that_cannot_be_opened_is_a_clear_start_failure(
    tmp_path: Path, factory: MockFactory, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    config = loads_config(f"[storage]\ndatabase = '{blocker}/game.db'\n[web]\npin = '1234'")
    assert serve(config, threading.Event(), Notifier({})) == 1
    assert f"cannot start: cannot open the game store {blocker}/game.db" in caplog.text
