"""``domino-hub demo`` (the hub on a synthetic table) and ``domino-hub bench web`` (phones under load)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from argparse import Namespace
from collections.abc import Iterator
from pathlib import Path

import pytest

PIN = "1234"


class Demo:
    """``domino-hub demo`` in a child process, its output collected line by line."""

    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hub.cli", "demo", "--port", "0", "--host", "127.0.0.1", "--pin", PIN,
             "--size", "1280x960", "--db", str(tmp_path / "demo.sqlite"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.url = self.wait_for_line(r"domino-hub demo: the page is at (http://\S+)", 60).group(1)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for_line(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            finished = self.proc.poll() is not None and not self._reader.is_alive()
            for line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return m
            if finished:
                break
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r} within {timeout} s:\n" + "\n".join(self.lines))

    def call(self, path: str, body: dict | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.url + path.lstrip("/"), data=None if body is None else json.dumps(body).encode(),
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json", "X-Table-Pin": PIN})
        try:
            with urllib.request.urlopen(request, timeout=20) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def stop(self, sig: int) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=20)
        self._reader.join(5)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(5)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    running = Demo(tmp_path, "--speed", "2", "--seed", "4")
    yield running
    running.close()


def laid(model: dict) -> int:
    game = model["game"]
    return 0 if game is None else sum(len(t["tiles"]) for t in game["trains"])


@pytest.mark.slow
def test_the_demo_films_plays_takes_a_phones_answer_and_stops_on_sigterm(demo: Demo) -> None:
    demo.wait_for_line(r"new game \(seed 4\): classic, ", 30)
    # the page asks (who goes first, or which tile that was): a phone answers before the host does
    deadline = time.monotonic() + 60
    answered = None
    while answered is None and time.monotonic() < deadline:
        for question in demo.call("api/state")[1]["questions"]:
            status, reply = demo.call(f"api/questions/{question['id']}/answer", {"answer": question["choices"][0]})
            if status == 200:
                assert question["id"] not in [q["id"] for q in reply["model"]["questions"]]
                answered = question
                break
            assert status == 404, reply  # closed a moment ago (answered by the host): take the next one
        time.sleep(0.1)
    assert answered is not None, "\n".join(demo.lines)
    if answered["text"].endswith("Who goes first?"):
        demo.wait_for_line(r"a phone started the round", 10)  # the host saw it done, and did not start it again
    else:
        assert not [line for line in demo.lines if answered["text"] in line]  # the host did not answer it
    # the camera records plays: nobody else lays a tile in this test
    deadline = time.monotonic() + 90
    while laid(demo.call("api/state")[1]) < 2 and time.monotonic() < deadline:
        time.sleep(0.25)
    model = demo.call("api/state")[1]
    assert laid(model) >= 2 and model["camera"]["status"] == "ok", "\n".join(demo.lines)
    assert demo.stop(signal.SIGTERM) == 0
    assert demo.lines[-1] == "domino-hub demo: stopped"
    assert not [line for line in demo.lines if "Traceback" in line], "\n".join(demo.lines)


@pytest.mark.slow
def test_ctrl_c_stops_the_demo_cleanly(tmp_path: Path) -> None:
    running = Demo(tmp_path, "--speed", "4")
    try:
        running.wait_for_line(r"new game \(seed \d+\)", 30)
        assert running.stop(signal.SIGINT) == 0
        assert running.lines[-1] == "domino-hub demo: stopped"
        assert not [line for line in running.lines if "Traceback" in line], "\n".join(running.lines)
    finally:
        running.close()


def test_bad_demo_options_are_refused_clearly(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "hub.cli", "demo", "--size", "12by9"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "'12by9': give WIDTHxHEIGHT" in done.stderr


def test_bench_web_holds_every_phone_and_reports_percentiles(capsys):
    from hub.commands.bench_web import run

    run(Namespace(clients=3, seconds=1.5, rate=8.0, seed=1, json=True))
    report = json.loads(capsys.readouterr().out)
    assert report["reports"] == 3 and report["dropped"] == [] and report["dropped_server_side"] == 0
    assert report["actions"] > 3 and report["deliveries"] == report["expected_deliveries"]
    assert 0 < report["p50_ms"] <= report["p95_ms"] <= report["p99_ms"] <= report["max_ms"]
