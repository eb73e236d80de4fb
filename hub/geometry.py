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

    def exit_point(self, entry: np.ndarray) -> np.ndarray:
        """Where a train leaves this tile when it came in at ``entry``: straight through the centre.

        For a tile laid end to end that is the middle of the far short edge; for a double laid
        crosswise it is the middle of the far long edge.
        """
        d = self.centre - entry
        n = float(np.hypot(*d))
        d = self.axis if n == 0 else d / n
        across = np.array([-self.axis[1], self.axis[0]])
        da, dc = abs(float(d @ self.axis)), abs(float(d @ across))
        t = min(self.length / 2 / da if da > 1e-9 else math.inf, self.width / 2 / dc if dc > 1e-9 else math.inf)
        return self.centre + d * t

    def distance_to(self, point: np.ndarray) -> float:
        """Distance from ``point`` to the face (0 inside)."""
        local = point - self.centre
        across = np.array([-self.axis[1], self.axis[0]])
        a = abs(float(local @ self.axis)) - self.length / 2
        c = abs(float(local @ across)) - self.width / 2
        return float(np.hypot(max(a, 0.0), max(c, 0.0)))


def angle_gap(a: float, b: float) -> float:
    """The smaller angle between two tile axes (each folded to [0, pi))."""
    d = abs(a - b) % math.pi
    return min(d, math.pi - d)
