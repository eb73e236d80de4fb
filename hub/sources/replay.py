"""Replay recorded frames, from a folder of images or a video file, in real time or flat out.

Game time comes from the recording (a timestamp per frame, or the frame rate), never
from how fast the frames are read, so a replay judges plays exactly as the live table did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from vision.frames import Frame, FrameSource, SourceError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


class CorruptFrame(SourceError):
    """One frame could not be decoded. The source has moved past it; the next read carries on."""


class ReplaySource(FrameSource):
    """Frames from ``path``: a folder of images (in name order) or a video file.

    ``speed`` None replays as fast as the reader takes them; 1.0 keeps the recording's
    pace, 2.0 twice as fast. ``timestamps`` gives each frame's game time (seconds); without
    it frame ``i`` is at ``i / fps``.
    """

    def __init__(
        self,
        path: str | Path,
        fps: float = 10.0,
        speed: float | None = None,
        timestamps: Sequence[float] | None = None,
        name: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if fps <= 0:
            raise ValueError(f"fps must be positive, not {fps}")
        if speed is not None and speed <= 0:
            raise ValueError(f"speed must be positive, not {speed}")
        self.path = Path(path)
        self.fps = fps
        self.speed = speed
        self.timestamps = None if timestamps is None else list(timestamps)
        self.name = name or f"replay:{self.path.name}"
        self._sleep, self._clock = sleep, clock
        self._files: list[Path] | None = None
        self._cap = None
        self._next = 0
        self._pace: tuple[float, float] | None = None  # (wall clock, game time) of the first frame read

    # ------------------------------------------------------------ lifecycle
    def open(self) -> None:
        self.close()
        if self.path.is_dir():
            files = sorted(p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if not files:
                raise SourceError(f"{self.name}: no images ({', '.join(IMAGE_SUFFIXES)}) in {self.path}")
            self._files = files
        elif self.path.is_file():
            import cv2

            cap = cv2.VideoCapture(str(self.path))
            if not cap.isOpened():
                cap.release()
                raise SourceError(f"{self.name}: cannot open the video {self.path}")
            if self._next:
                cap.set(cv2.CAP_PROP_POS_FRAMES, self._next)
            self._cap = cap
        else:
            raise SourceError(f"{self.name}: {self.path} does not exist")
        self._pace = None

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None
        self._files = None

    def seek(self, index: int) -> None:
        """Carry on from frame ``index`` (after a reopen, so no frame is read twice)."""
        self._next = max(0, index)
        if self._cap is not None:
            import cv2

            self._cap.set(cv2.CAP_PROP_POS_FRAMES, self._next)

    # -------------------------------------------------------------- reading
    def stamp(self, index: int) -> float:
        if self.timestamps is not None:
            if index >= len(self.timestamps):
                raise SourceError(f"{self.name}: no timestamp for frame {index}")
            return float(self.timestamps[index])
        return index / self.fps

    def read(self) -> Frame | None:
        import cv2

        index = self._next
        if self._files is not None:
            if index >= len(self._files):
                return None
            self._next += 1
            self._wait_for(index)
            image = cv2.imread(str(self._files[index]), cv2.IMREAD_COLOR)
            if image is None:
                raise CorruptFrame(f"{self.name}: frame {index} ({self._files[index].name}) cannot be decoded")
        elif self._cap is not None:
            ok, image = self._cap.read()
            if not ok or image is None:
                return None
            self._next += 1
            self._wait_for(index)
        else:
            raise SourceError(f"{self.name}: not open")
        return Frame(image, self.stamp(index), self.name, index)

    def _wait_for(self, index: int) -> None:
        if self.speed is None:
            return
        game = self.stamp(index)
        now = self._clock()
        if self._pace is None:
            self._pace = (now, game)
            return
        due = self._pace[0] + (game - self._pace[1]) / self.speed
        if due > now:
            self._sleep(due - now)
