"""A USB webcam, a video file or a network stream, through OpenCV's ``VideoCapture``."""

from __future__ import annotations

import time
from pathlib import Path

from vision.frames import Frame, FrameSource, SourceError


class OpenCVSource(FrameSource):
    """Frames from ``cv2.VideoCapture``: a device number (``0``), a file path or a stream URL.

    A live device or stream that stops delivering raises :class:`SourceError`, so the
    supervisor reopens it; a file simply ends. Timestamps are the wall clock for live
    input and the file's own position for files, so a file's game time does not depend
    on how fast it is read.
    """

    def __init__(self, uri: int | str, size: tuple[int, int] | None = None, name: str | None = None) -> None:
        self.uri = uri
        self.size = size
        self.name = name or f"opencv:{uri}"
        self.is_file = isinstance(uri, str) and Path(uri).is_file()
        self._cap = None
        self._index = 0

    def open(self) -> None:
        import cv2

        self.close()
        cap = cv2.VideoCapture(self.uri)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.name}: cannot open {self.uri!r}")
        if self.size is not None and not self.is_file:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        self._cap = cap

    def read(self) -> Frame | None:
        import cv2

        if self._cap is None:
            raise SourceError(f"{self.name}: not open")
        ok, image = self._cap.read()
        if not ok or image is None:
            if self.is_file:
                return None
            raise SourceError(f"{self.name}: no frame from {self.uri!r}")
        if self.is_file:
            stamp = self._cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
        else:
            stamp = time.time()
        frame = Frame(image, stamp, self.name, self._index)
        self._index += 1
        return frame

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None
