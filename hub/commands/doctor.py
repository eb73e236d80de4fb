"""``domino-hub doctor [--config FILE]``: check the device part by part and say plainly what is wrong.

Each check prints one verdict: PASS, WARN, FAIL or SKIP (with the reason it could not
run here, e.g. on a PC there is no camera ribbon and no GPIO header). The exit status
is 1 when any check fails, so a script or an install guide can rely on it.
"""

from __future__ import annotations

import argparse
import errno
import json
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hub.config import DEFAULT_PATH

if TYPE_CHECKING:
    from hub.config import Config
    from vision.frames import Frame, FrameSource

PI_MODEL_FILE = Path("/proc/device-tree/model")
MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
FRAME_TIMEOUT = 10.0  # seconds to wait for the camera's first frame


@dataclass(frozen=True)
class Verdict:
    check: str
    outcome: str  # "PASS", "WARN", "FAIL" or "SKIP"
    detail: str


Say = Callable[[str], None]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check the camera, pins, models, web port and disk, and say what is wrong")
    p.add_argument("--config", type=Path, help=f"the device's config (default {DEFAULT_PATH} when it exists)")
    p.add_argument("--models", type=Path, default=MODELS_DIR, help="folder of ONNX models (default: models/)")
    p.set_defaults(func=run)


def pi_model(model_file: Path = PI_MODEL_FILE) -> str | None:
    """The Raspberry Pi's model name, or None on anything else."""
    try:
        model = model_file.read_bytes().rstrip(b"\0").decode("ascii", "replace").strip()
    except OSError:
        return None
    return model if model.startswith("Raspberry Pi") else None


# ------------------------------------------------------------------- checks
def check_camera(config: Config, on_pi: bool) -> Verdict:
    """One frame from the configured camera: its size against the config, and its exposure.

    Exposure is judged from the frame itself (mean brightness and clipped pixels), which
    is what the tile reader sees, whatever the camera's own settings say.
    """
    from hub.sources import OpenCVSource, PiCameraSource

    camera = config.camera
    if camera.source in ("replay", "synthetic"):
        return Verdict("camera", "SKIP", f"camera.source is {camera.source!r}: there is no camera to check")
    if camera.source == "picamera2" and not on_pi:
        return Verdict("camera", "SKIP", "the picamera2 source needs a Raspberry Pi, and this is not one")
    if camera.source == "picamera2":
        source: Callable[[], FrameSource] = lambda: PiCameraSource(camera.resolution)
    else:
        uri = camera.url if camera.url is not None else camera.device
        assert uri is not None  # the config gives OpenCV device 0 when neither is set
        source = lambda: OpenCVSource(uri, camera.resolution)
    frame, error = _first_frame(source, FRAME_TIMEOUT)
    if frame is None:
        return Verdict("camera", "FAIL", f"{camera.source}: {error}")
    height, width = frame.image.shape[:2]
    grey = frame.image.mean(axis=2)
    mean = float(grey.mean())
    clipped = float(((grey >= 250) | (grey <= 5)).mean())
    detail = f"{camera.source}: one frame {width}x{height}, mean brightness {mean:.0f}/255, {clipped:.1%} clipped"
    if (width, height) != camera.resolution:
        return Verdict("camera", "FAIL", f"{detail}; the config asks for {camera.resolution[0]}x{camera.resolution[1]}")
    if mean < 40 or mean > 215 or clipped > 0.05:
        return Verdict("camera", "WARN", f"{detail}; badly exposed: check the lighting and the lens")
    return Verdict("camera", "PASS", detail)


def _first_frame(make_source: Callable[[], FrameSource], timeout: float) -> tuple[Frame | None, str]:
    """Open a source and read one frame, giving up after ``timeout`` (a stalled camera never answers)."""
    frames: list[Frame | None] = []
    errors: list[str] = []

    def read() -> None:
        try:
            with make_source() as source:
                frames.append(source.read())
        except Exception as e:
            errors.append(f"{type(e).__name__}: {e}")

    thread = threading.Thread(target=read, name="doctor-camera", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return None, f"no frame within {timeout:g} s"
    if frames and frames[0] is not None:
        return frames[0], ""
    return None, errors[0] if errors else "the source gave no frame"


def check_pins(config: Config, on_pi: bool, say: Say, blink_seconds: float = 1.5) -> Verdict:
    """Blink each LED in turn while naming it, beep the buzzer once and read the button."""
    pins = config.pins
    if not (pins.leds or pins.buzzer is not None or pins.button is not None):
        return Verdict("pins", "SKIP", "no pins in the config's [pins]")
    if not on_pi:
        return Verdict("pins", "SKIP", "not a Raspberry Pi: there are no GPIO pins to drive")
    from gpiozero import LED, Button, Buzzer

    warnings: list[str] = []
    try:
        for key, pin in pins.leds.items():
            say(f"  LED {_led_name(config, key)} on {_pin_name(pin)}: blinking now, look for it")
            with LED(pin, active_high=pins.active_high) as led:
                led.blink(blink_seconds / 6, blink_seconds / 6, n=3, background=False)
        if pins.buzzer is not None:
            say(f"  buzzer on {_pin_name(pins.buzzer)}: one beep now, listen for it")
            with Buzzer(pins.buzzer, active_high=pins.active_high) as buzzer:
                buzzer.beep(blink_seconds / 4, 0, n=1, background=False)
        if pins.button is not None:
            with Button(pins.button, pull_up=True) as button:
                if button.is_pressed:
                    warnings.append(f"the button on {_pin_name(pins.button)} reads pressed: stuck, or wired wrong")
                else:
                    say(f"  button on {_pin_name(pins.button)}: reads released")
    except Exception as e:  # gpiozero: pin busy, no permission, no pin driver
        hint = " (is the service running? stop it first: sudo systemctl stop domino-hub)" if "busy" in str(e) else ""
        return Verdict("pins", "FAIL", f"{type(e).__name__}: {e}{hint}")
    if warnings:
        return Verdict("pins", "WARN", "; ".join(warnings))
    return Verdict("pins", "PASS", f"{len(pins.leds)} LEDs blinked in turn; did each one light?")


def _led_name(config: Config, key: int | str) -> str:
    if isinstance(key, str):
        return f"for {key}'s train" if key != "mexican" else "for the Mexican train"
    train = config.calibration.trains.get(key)
    return f"slot {key}" + (f" ({train})" if train else "")


def _pin_name(pin: int | str) -> str:
    return f"GPIO{pin}" if isinstance(pin, int) else pin


def check_models(models_dir: Path) -> Verdict:
    """Load every ONNX model and run it once on a blank input."""
    found = sorted(models_dir.glob("*.onnx")) if models_dir.is_dir() else []
    if not found:
        return Verdict("models", "FAIL", f"no ONNX models in {models_dir}: the camera cannot read tiles without them")
    import numpy as np
    import onnxruntime as ort

    timings = []
    for path in found:
        try:
            session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            feed = {
                i.name: np.zeros([d if isinstance(d, int) and d > 0 else 1 if n == 0 else 640
                                  for n, d in enumerate(i.shape)], dtype=_numpy_type(i.type))
                for i in session.get_inputs()
            }
            start = time.perf_counter()
            session.run(None, feed)
            timings.append(f"{path.name} {1000 * (time.perf_counter() - start):.0f} ms")
        except Exception as e:
            return Verdict("models", "FAIL", f"{path.name}: {type(e).__name__}: {e}")
    return Verdict("models", "PASS", "one inference each: " + ", ".join(timings))


def _numpy_type(onnx_type: str) -> str:
    kinds = {"tensor(float)": "float32", "tensor(float16)": "float16", "tensor(uint8)": "uint8",
             "tensor(int64)": "int64", "tensor(int32)": "int32", "tensor(double)": "float64"}
    if onnx_type not in kinds:
        raise ValueError(f"an input of type {onnx_type} cannot be filled in")
    return kinds[onnx_type]


def check_web_port(config: Config) -> Verdict:
    """The web port must be free, or held by a running domino-hub (which answers /api/state)."""
    host, port = config.web.host, config.web.port
    if port == 0:
        return Verdict("web port", "PASS", "port 0: the system picks a free port at start")
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            return Verdict("web port", "PASS", f"{host}:{port} is free")
        except OSError as e:
            if e.errno != errno.EADDRINUSE:
                return Verdict("web port", "FAIL", f"{host}:{port} cannot be used: {e.strerror}")
    probe = "127.0.0.1" if host in ("0.0.0.0", "") else "[::1]" if host == "::" else host
    try:
        with urllib.request.urlopen(f"http://{probe}:{port}/api/state", timeout=2) as reply:
            json.load(reply)
        return Verdict("web port", "PASS", f"{host}:{port} is in use by a running domino-hub")
    except (OSError, ValueError, urllib.error.URLError):
        return Verdict("web port", "FAIL", f"{host}:{port} is in use by another program")


def check_disk(config: Config) -> Verdict:
    folder = config.storage.state_dir or Path.cwd()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    detail = f"{free / 1e9:.1f} GB free for {folder}"
    if free < 200e6:
        return Verdict("disk", "FAIL", f"{detail}: the game store needs room to write")
    if free < 1e9:
        return Verdict("disk", "WARN", f"{detail}: running low")
    return Verdict("disk", "PASS", detail)


# ---------------------------------------------------------------------- run
def run_checks(config: Config, models_dir: Path, model: str | None, say: Say) -> list[Verdict]:
    on_pi = model is not None
    return [
        check_camera(config, on_pi),
        check_pins(config, on_pi, say),
        check_models(models_dir),
        check_web_port(config),
        check_disk(config),
    ]


def run(args: argparse.Namespace) -> int:
    from hub.config import ConfigError, demo_config, load_config

    def say(line: str) -> None:
        print(line, flush=True)

    model = pi_model()
    say(f"domino-hub doctor on {model or f'a PC (not a Raspberry Pi: no Pi model in {PI_MODEL_FILE})'}")
    path = args.config or (DEFAULT_PATH if DEFAULT_PATH.exists() else None)
    try:
        config = load_config(path) if path is not None else demo_config()
    except ConfigError as e:
        say(_line(Verdict("config", "FAIL", str(e))))
        say("verdict: the config must be fixed before anything else can be checked")
        return 1
    say(_line(Verdict("config", "PASS", str(path) if path else f"no {DEFAULT_PATH}: checking the demo's config")))
    verdicts = []
    for verdict in run_checks(config, args.models, model, say):
        say(_line(verdict))
        verdicts.append(verdict)
    failed = [v.check for v in verdicts if v.outcome == "FAIL"]
    skipped = [f"{v.check} ({v.detail})" for v in verdicts if v.outcome == "SKIP"]
    summary = f"{len(failed)} failed" + (f": {', '.join(failed)}" if failed else "")
    if skipped:
        summary += f"; skipped here: {'; '.join(skipped)}"
    say(f"verdict: {summary}")
    return 1 if failed else 0


def _line(v: Verdict) -> str:
    return f"{v.check:9s} {v.outcome:4s}  {v.detail}"
