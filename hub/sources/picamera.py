"""The Raspberry Pi camera through picamera2, imported only here and only when opened.

picamera2 exists only on a Pi (installed with apt, not pip), so nothing else in the
project imports it and importing this module costs nothing elsewhere.
"""

from __future__ import annotations

import time
from typing import Any

from vision.frames import Frame, FrameSource, SourceError

DEFAULT_SIZE = (2028, 1520)  # the HQ camera's full field of view, 2x2 binned


class PiCameraSource(FrameSource):
    """Stills from the camera's ``RGB888`` main stream, which is BGR in memory (OpenCV's order).

    ``size`` is the still resolution; the camera keeps running between captures so
    each frame costs only the capture, not a mode switch.
    """

    def __init__(self, size: tuple[int, int] = DEFAULT_SIZE, camera_num: int = 0, name: str = "picamera2") -> None:
        self.size = size
        self.camera_num = camera_num
        self.name = name
        self._cam: Any = None
        self._index = 0

    def open(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError as e:
            raise SourceError(
                f"{self.name}: picamera2 is not installed (on a Pi: sudo apt install python3-picamera2): {e}"
            ) from e
        self.close()
        try:
            cam = Picamera2(self.camera_num)
            config = cam.create_still_configuration(main={"size": tuple(self.size), "format": "RGB888"}, buffer_count=2)
            cam.configure(config)
            cam.start()
        except Exception as e:  # libcamera reports everything as RuntimeError or worse
            raise SourceError(f"{self.name}: cannot start camera {self.camera_num}: {e}") from e
        self._cam = cam

    def read(self) -> Frame | None:
        if self._cam is None:
            raise SourceError(f"{self.name}: not open")
        try:
            image = self._cam.capture_array("main")
        except Exception as e:
            raise SourceError(f"{self.name}: capture failed: {e}") from e
        frame = Frame(image[:, :, :3], time.time(), self.name, self._index)
        self._index += 1
        return frame

    def close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            try:
                cam.stop()
            finally:
                cam.close()
