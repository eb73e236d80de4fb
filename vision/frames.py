"""Frames and the one interface every camera source implements (Frigate-style).

Images are BGR ``uint8`` arrays of shape (H, W, 3), the order OpenCV and picamera2's
``RGB888`` stream both deliver, so no source converts colours.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Frame:
    image: np.ndarray  # BGR uint8, (H, W, 3)
    timestamp: float  # seconds; game time for replayed and synthetic sources
    source: str
    index: int


class SourceError(RuntimeError):
    """The camera failed, vanished or stalled; the hub reopens it with back-off."""


class FrameSource(ABC):
    """A camera, a file, a replay or a synthetic table. ``read`` returns None at the end."""

    name: str = "source"

    @abstractmethod
    def open(self) -> None: ...

    @abstractmethod
    def read(self) -> Frame | None:
        """The next frame; raises SourceError when the source fails."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> FrameSource:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        while (frame := self.read()) is not None:
            yield frame
