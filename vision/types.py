"""What the vision stage hands to the hub: typed detections, never dicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

Point = tuple[float, float]


@dataclass(frozen=True)
class HalfReading:
    """One half of a tile: where it is and how likely each pip value is (index = value)."""

    center: Point
    probs: tuple[float, ...]  # empty for a face-down tile (unless its reader was asked to read those too)

    @property
    def value(self) -> int | None:
        return int(np.argmax(self.probs)) if self.probs else None


@dataclass(frozen=True)
class DetectedTile:
    """A tile found in a frame, in the frame's own pixel coordinates.

    ``corners`` wind clockwise in image coordinates: corners[0]->corners[1] is the short
    edge at the end of ``halves[0]``, corners[2]->corners[3] the short edge at ``halves[1]``.
    """

    corners: tuple[Point, Point, Point, Point]
    halves: tuple[HalfReading, HalfReading]
    confidence: float
    face: str  # "up" or "down"

    @property
    def values(self) -> tuple[int, int] | None:
        a, b = self.halves[0].value, self.halves[1].value
        return None if a is None or b is None else (a, b)

    @property
    def center(self) -> Point:
        xs, ys = zip(*self.corners, strict=True)
        return (sum(xs) / 4.0, sum(ys) / 4.0)


class TileReader(Protocol):
    """Image in (BGR uint8), typed tiles out."""

    def read(self, image: np.ndarray) -> list[DetectedTile]: ...
