"""Keep a camera going for a whole evening: reopen it with back-off when it fails, stalls or
goes black, skip frames that cannot be used, and tell the web page what is happening.

The camera loop only ever sees good frames (or the end of a recording). A failing camera
never raises into it, so the game, the store and the bus carry on untouched while the
camera is away; the tracker simply sees no change until frames come back.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable

import numpy as np

from vision.frames import Frame, FrameSource

from ..bus import EventBus
from ..events import CameraStatus
from .replay import CorruptFrame

log = logging.getLogger(__name__)

_FRAME, _ERROR, _CORRUPT, _WAKE = "frame", "error", "corrupt", "wake"


class _Pump:
    """Reads one opened source on its own thread, so a read that hangs can be abandoned."""

    def __init__(self, source: FrameSource, lossless: bool) -> None:
        self.source = source
        self.lossless = lossless
        self.queue: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=2)
        self.abandoned = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"camera-{source.name}", daemon=True)
        self.thread.start()

    def _put(self, item: tuple[str, object]) -> None:
        while not self.abandoned.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                return
            except queue.Full:
                if not self.lossless:  # a live camera: the newest frame is the one that matters
                    with contextlib.suppress(queue.Empty):
                        self.queue.get_nowait()

    def _run(self) -> None:
        while not self.abandoned.is_set():
            try:
                frame = self.source.read()
            except CorruptFrame as e:
                self._put((_CORRUPT, e))
                continue
            except Exception as e:  # any failure of any camera library is a reason to reopen
                self._put((_ERROR, e))
                return
            self._put((_FRAME, frame))
            if frame is None:
                return

    def abandon(self, wait_s: float = 0.0) -> None:
        """Stop using the source; close it off the camera loop, since a hung camera may hang ``close`` too.

        ``wait_s``: how long to wait for that (when the camera closes for good, a read still running
        in a camera library at process exit can abort the whole process).
        """
        self.abandoned.set()
        with contextlib.suppress(queue.Full):  # a read waiting on this queue looks again at once, not after stall_s
            self.queue.put_nowait((_WAKE, None))

        def close() -> None:
            self.thread.join(timeout=5)
            try:
                self.source.close()
            except Exception:
                log.exception("closing %s failed", self.source.name)

        closer = threading.Thread(target=close, name=f"close-{self.source.name}", daemon=True)
        closer.start()
        closer.join(wait_s)


def frame_problem(frame: Frame, size: tuple[int, int] | None) -> str | None:
    """Why a frame cannot be used (None when it can): the tracker must never see a broken image."""
    image = frame.image
    if not isinstance(image, np.ndarray):
        return f"frame {frame.index} holds no image"
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3 or 0 in image.shape:
        return f"frame {frame.index} is not a BGR image (shape {image.shape}, {image.dtype})"
    if size is not None and image.shape[:2] != size:
        return f"frame {frame.index} is {image.shape[1]}x{image.shape[0]}, not {size[1]}x{size[0]}"
    return None


def is_black(image: np.ndarray, level: float) -> bool:
    """A covered lens or a dead sensor: dark everywhere (sampled, so a 3 MP frame costs nothing)."""
    sample = image[::16, ::16]
    return float(sample.mean()) < level and float(sample.std()) < level


class SupervisedSource(FrameSource):
    """Wraps a source made by ``factory`` and reopens it on failure with exponential back-off.

    - An exception from the camera, or no frame for ``stall_s`` seconds: reopen.
    - Black frames: dropped; if the camera stays black for ``black_reopen_s``, reopen.
    - Undecodable or malformed frames: dropped and counted.
    - A recording that ends: ``read`` returns None. A source with ``seek`` (a replay)
      carries on after the last frame it delivered, so a reopen neither repeats nor skips.

    ``lossless`` keeps every frame (replays); otherwise only the newest is kept (live cameras).
    """

    def __init__(
        self,
        factory: Callable[[], FrameSource],
        bus: EventBus | None = None,
        *,
        stall_s: float = 5.0,
        backoff_s: float = 0.5,
        backoff_max_s: float = 10.0,
        lost_after: int = 5,
        black_level: float = 12.0,
        black_reopen_s: float = 10.0,
        lossless: bool = False,
        name: str = "camera",
    ) -> None:
        self.factory = factory
        self.bus = bus
        self.stall_s = stall_s
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.lost_after = lost_after
        self.black_level = black_level
        self.black_reopen_s = black_reopen_s
        self.lossless = lossless
        self.close_wait_s = 3.0  # a closing camera's last read is waited for this long (a hung one is left)
        self.name = name
        self.status = "starting"
        self.detail = ""
        self.reopens = 0
        self.dropped = 0  # corrupt, malformed or black frames never handed on
        self._stop = threading.Event()
        self._pump: _Pump | None = None
        self._failures = 0
        self._last_index: int | None = None
        self._size: tuple[int, int] | None = None
        self._black_since: float | None = None

    # ------------------------------------------------------------ lifecycle
    def open(self) -> None:
        self._stop.clear()
        self._set_status("starting")

    def close(self) -> None:
        self._stop.set()
        if self._pump is not None:
            self._pump.abandon(wait_s=self.close_wait_s)
            self._pump = None

    def _set_status(self, status: str, detail: str = "") -> None:
        if (status, detail) == (self.status, self.detail) and status != "starting":
            return
        self.status, self.detail = status, detail
        if status in ("ok", "starting"):
            log.info("camera %s%s", status, f": {detail}" if detail else "")
        else:
            log.warning("camera %s: %s", status, detail)
        if self.bus is not None:
            self.bus.publish(CameraStatus(status, detail))

    # -------------------------------------------------------------- reading
    def _connect(self) -> bool:
        """Open a fresh source, waiting longer after each failure; False once closed."""
        while not self._stop.is_set():
            if self._failures:
                delay = min(self.backoff_max_s, self.backoff_s * 2 ** (self._failures - 1))
                if self._stop.wait(delay):
                    return False
            source: FrameSource | None = None
            try:
                source = self.factory()
                source.open()
                seek = getattr(source, "seek", None)
                if seek is not None and self._last_index is not None:
                    seek(self._last_index + 1)
            except Exception as e:
                if source is not None:
                    try:
                        source.close()
                    except Exception:
                        log.exception("closing a camera that failed to open")
                self._failures += 1
                status = "lost" if self._failures >= self.lost_after else "reconnecting"
                self._set_status(status, f"cannot open the camera (attempt {self._failures}): {e}")
                continue
            self._pump = _Pump(source, self.lossless)
            self._size = None
            self._black_since = None
            return True
        return False

    def _fail(self, reason: str) -> None:
        if self._pump is not None:
            self._pump.abandon()
            self._pump = None
        self._failures += 1
        self.reopens += 1
        self._set_status("lost" if self._failures >= self.lost_after else "reconnecting", reason)

    def read(self) -> Frame | None:
        """The next good frame; None at the end of a recording or once closed. Never raises for camera faults."""
        while not self._stop.is_set():
            if self._pump is None and not self._connect():
                return None
            assert self._pump is not None
            try:
                kind, item = self._pump.queue.get(timeout=self.stall_s)
            except queue.Empty:
                self._fail(f"no frame for {self.stall_s:g} s")
                continue
            if kind == _WAKE:
                continue
            if kind == _ERROR:
                self._fail(f"the camera failed: {item}")
                continue
            if kind == _CORRUPT:
                self._drop(str(item))
                continue
            frame = item
            if frame is None:
                return None
            assert isinstance(frame, Frame)
            problem = frame_problem(frame, self._size)
            if problem is not None:
                self._drop(problem)
                continue
            self._size = frame.image.shape[:2]
            self._last_index = frame.index
            if is_black(frame.image, self.black_level):
                self._on_black()
                continue
            self._black_since = None
            self._failures = 0
            self._set_status("ok")
            return frame
        return None

    def _drop(self, why: str) -> None:
        self.dropped += 1
        log.warning("dropped a frame: %s", why)

    def _on_black(self) -> None:
        self.dropped += 1
        now = time.monotonic()
        if self._black_since is None:
            self._black_since = now
            self._set_status("lost", "the camera sees only black: is the lens covered?")
        elif now - self._black_since >= self.black_reopen_s:
            self._fail(f"only black frames for {self.black_reopen_s:g} s")
