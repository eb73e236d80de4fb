"""``domino-hub doctor``: a plain verdict per check, skips said with their reason, non-zero on a failure."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory

from hub.commands.doctor import (
    check_camera,
    check_disk,
    check_models,
    check_pins,
    check_web_port,
    pi_model,
)
from hub.config import loads_config

ROOT = Path(__file__).resolve().parents[1]


def test_a_pi_is_told_by_its_device_tree_model(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    assert pi_model(model) == "Raspberry Pi 5 Model B Rev 1.0"
    model.write_bytes(b"Pine64 RockPro64\0")
    assert pi_model(model) is None
    assert pi_model(tmp_path / "missing") is None


def test_on_a_pc_the_doctor_says_what_it_skipped_and_why(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"""
[camera]
source = "picamera2"
[pins]
leds = [17, 27]
[web]
host = "127.0.0.1"
port = 0
[storage]
database = "{tmp_path}/game.db"
""")
    (tmp_path / "models").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "hub.cli", "doctor", "--config", str(config), "--models", str(tmp_path / "models")],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
    )
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line and not line.startswith(" ")}
    assert "a PC (not a Raspberry Pi" in done.stdout.splitlines()[0]
    assert "PASS" in lines["config"]
    assert "SKIP" in lines["camera"] and "needs a Raspberry Pi" in lines["camera"]
    assert "SKIP" in lines["pins"] and "not a Raspberry Pi" in lines["pins"]
    assert "FAIL" in lines["models"] and "no ONNX models" in lines["models"]
    assert "PASS" in lines["disk"]
    assert lines["verdict:"].startswith("verdict: 1 failed: models; skipped here: camera (")
    assert done.returncode == 1


def test_a_bad_config_is_the_first_verdict(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[pins]\nbutton = 99\n")
    done = subprocess.run(
        [sys.executable, "-m", "hub.cli", "doctor", "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1
    assert "config    FAIL  pins.button: must be a BCM GPIO number" in done.stdout
    assert "Traceback" not in done.stderr


def test_on_a_pi_each_led_blinks_in_turn_while_it_is_named(factory: MockFactory) -> None:
    config = loads_config("""
[game]
players = ["Ana", "Ben"]
[calibration.trains]
1 = "Ana"
2 = "Ben"
8 = "mexican"
[pins]
leds = [17, 27, 22, 5, 6, 13, 19, 26]
buzzer = 18
button = 23
""")
    pins = [factory.pin(n) for n in (17, 27, 22, 5, 6, 13, 19, 26)]
    said: list[str] = []
    blinked_while_named: list[int] = []

    def say(line: str) -> None:
        said.append(line)
        blinked_while_named.append(sum(len(p.states) > 1 for p in pins))

    verdict = check_pins(config, True, say, blink_seconds=0.06)
    assert verdict.outcome == "PASS" and "8 LEDs blinked" in verdict.detail
    assert said[0] == "  LED slot 1 (Ana) on GPIO17: blinking now, look for it"
    assert said[7] == "  LED slot 8 (mexican) on GPIO26: blinking now, look for it"
    assert blinked_while_named[:8] == list(range(8))  # each LED is named just before it blinks
    for p in pins:
        assert [s.state for s in p.states] == [False, True, False, True, False, True, False]  # three blinks
        assert p.state is False
    assert [s.state for s in factory.pin(18).states] == [False, True, False]
    assert said[-1] == "  button on GPIO23: reads released"


def test_models_empty_broken_and_working(tmp_path: Path) -> None:
    empty = check_models(tmp_path)
    assert empty.outcome == "FAIL" and "no ONNX models" in empty.detail
    (tmp_path / "broken.onnx").write_bytes(b"not a model")
    broken = check_models(tmp_path)
    assert broken.outcome == "FAIL" and "broken.onnx" in broken.detail


def test_a_working_model_is_loaded_and_run_once(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["image"], ["out"])], "tiny",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, "h", "w"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 3, "h", "w"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "tiny.onnx"))
    verdict = check_models(tmp_path)
    assert verdict.outcome == "PASS" and verdict.detail.startswith("one inference each: tiny.onnx ")


def test_the_web_port_free_ours_or_taken(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = loads_config(f"[web]\nhost = '127.0.0.1'\nport = {port}")
    assert check_web_port(config).outcome == "PASS"

    with socket.socket() as other:
        other.bind(("127.0.0.1", port))
        other.listen()
        taken = check_web_port(config)
    assert taken.outcome == "FAIL" and "another program" in taken.detail

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"players": []}).encode()
            self.send_response(200 if self.path == "/api/state" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ours = check_web_port(config)
    finally:
        server.shutdown()
        server.server_close()
    assert ours.outcome == "PASS" and "running domino-hub" in ours.detail


def write_video(path: Path, level: int, size: tuple[int, int] = (64, 48)) -> None:
    import cv2

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, size)
    assert writer.isOpened()
    for _ in range(3):
        writer.write(np.full((size[1], size[0], 3), level, np.uint8))
    writer.release()


def test_the_camera_check_reads_one_frame_its_size_and_exposure(tmp_path: Path) -> None:
    good, dark = tmp_path / "good.avi", tmp_path / "dark.avi"
    write_video(good, 128)
    write_video(dark, 10)

    def camera(path: Path, size: str) -> str:
        return f"[camera]\nsource = 'opencv'\nurl = '{path}'\nresolution = {size}"

    ok = check_camera(loads_config(camera(good, "[64, 48]")), on_pi=False)
    assert ok.outcome == "PASS" and "one frame 64x48, mean brightness 12" in ok.detail
    wrong_size = check_camera(loads_config(camera(good, "[2028, 1520]")), on_pi=False)
    assert wrong_size.outcome == "FAIL" and "the config asks for 2028x1520" in wrong_size.detail
    too_dark = check_camera(loads_config(camera(dark, "[64, 48]")), on_pi=False)
    assert too_dark.outcome == "WARN" and "badly exposed" in too_dark.detail
    missing = check_camera(loads_config(camera(tmp_path / "none.avi", "[64, 48]")), on_pi=False)
    assert missing.outcome == "FAIL" and "cannot open" in missing.detail
    replay = check_camera(loads_config(f"[camera]\nsource = 'replay'\npath = '{tmp_path}'"), on_pi=False)
    assert replay.outcome == "SKIP" and "no camera to check" in replay.detail


def test_disk_space_is_measured_where_the_game_is_kept(tmp_path: Path) -> None:
    verdict = check_disk(loads_config(f"[storage]\ndatabase = '{tmp_path}/not/yet/game.db'"))
    assert verdict.detail.endswith(f" GB free for {tmp_path}")  # the nearest folder that exists
