"""Plane geometry of tiles as the camera sees them: axes, ends, and where a train leads next.

Kept apart from the tracker so the calibration, the tracker and the tests share one
definition of a tile's shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Point = tuple[float, float]


@dataclass(frozen=True)
class Quad:
    """A tile's top face: centre, unit axis (towards ``halves[0]``'s end), length and width in pixels."""

    corners: np.ndarray  # (4, 2) float, DetectedTile winding
    centre: np.ndarray  # (2,)
    axis: np.ndarray  # (2,) unit, from the halves[1] end towards the halves[0] end
    length: float
    width: float

    @staticmethod
    def of(corners: object) -> Quad:
        c = np.asarray(corners, np.float64).reshape(4, 2)
        end0 = (c[0] + c[1]) / 2
        end1 = (c[2] + c[3]) / 2
        axis = end0 - end1
        length = float(np.hypot(*axis))
        width = float(np.hypot(*((c[1] + c[2]) / 2 - (c[3] + c[0]) / 2)))
        unit = axis / length if length > 0 else np.array([1.0, 0.0])
        return Quad(c, c.mean(axis=0), unit, length, width)

    @property
    def angle(self) -> float:
        """The axis direction in radians, folded to [0, pi): a tile looks the same turned round."""
        return math.atan2(self.axis[1], self.axis[0]) % math.pi

    def half_centres(self) -> np.ndarray:
        """(2, 2): the centre of halves[0], then of halves[1]."""
        q = self.length / 4
        return np.stack([self.centre + self.axis * q, self.centre - self.axis * q])

    @property
    def across(self) -> np.ndarray:
        return np.array([-self.axis[1], self.axis[0]])

    def sides(self) -> np.ndarray:
        """(4, 2): the middles of the two ends (halves[0]'s, halves[1]'s), then of the two long sides."""
        a, c = self.axis * self.length / 2, self.across * self.width / 2
        return np.stack([self.centre + a, self.centre - a, self.centre + c, self.centre - c])

    def edge(self, side: int) -> tuple[np.ndarray, np.ndarray]:
        """The two corners of a side (numbered as in :meth:`sides`)."""
        mid = self.sides()[side]
        half = self.across * self.width / 2 if side < 2 else self.axis * self.length / 2
        return mid - half, mid + half


def angle_gap(a: float, b: float) -> float:
    """The smaller angle between two tile axes (each folded to [0, pi))."""
    d = abs(a - b) % math.pi
    return min(d, math.pi - d)
