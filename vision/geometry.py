"""Constants and quad geometry shared by both stages and by training (numpy + OpenCV only)."""

from __future__ import annotations

import numpy as np

DET_STRIDE = 4  # one detector output cell, in detector-input pixels
DET_MAX_SIDE = 640  # the detector sees the frame with its longest side scaled to this
DET_MULTIPLE = 32  # detector input sides are padded to a multiple of this (the encoder's depth)
HALF_PATCH = 32  # each half is rectified to HALF_PATCH x HALF_PATCH pixels
READER_CHANNELS = 2  # relative darkness, colour distance from the tile's own face colour
NUM_VALUES = 19  # pip values 0..18 (double-18 sets)


def rect_corners(center: np.ndarray, angle: np.ndarray, length: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Rotated rectangles (N,) -> corners (N,4,2) in the DetectedTile winding.

    corners[0]->corners[1] is the short edge at the +axis end, and the four wind clockwise on
    screen (y down), i.e. with a positive shoelace sum in image coordinates.
    """
    u = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    n = np.stack([-np.sin(angle), np.cos(angle)], axis=-1)
    a = u * (length[:, None] / 2)
    b = n * (width[:, None] / 2)
    c = center
    return np.stack([c + a - b, c + a + b, c - a + b, c - a - b], axis=1).astype(np.float32)


def quad_ends(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corners (N,4,2) -> the middles (N,2) of the short edge corners[0..1] and of corners[2..3]: the tile's ends."""
    return (corners[:, 0] + corners[:, 1]) / 2, (corners[:, 2] + corners[:, 3]) / 2


def quad_params(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Corners (N,4,2) -> centre (N,2), axis angle (N,) pointing to corners[0..1]'s end, length, width."""
    end0, end1 = quad_ends(corners)
    side_a = (corners[:, 1] + corners[:, 2]) / 2
    side_b = (corners[:, 3] + corners[:, 0]) / 2
    center = corners.mean(axis=1)
    axis = end0 - end1
    angle = np.arctan2(axis[:, 1], axis[:, 0])
    length = np.linalg.norm(axis, axis=1)
    width = np.linalg.norm(side_a - side_b, axis=1)
    return center, angle, length, width


def axis_turn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smaller angle (radians, 0..pi/2) between tile axes at angles ``a`` and ``b``, elementwise (broadcast):
    a tile's axis has no direction, so a tile turned end for end has not turned."""
    return np.abs((np.asarray(a, np.float64) - b + np.pi / 2) % np.pi - np.pi / 2)


def half_centers(corners: np.ndarray) -> np.ndarray:
    """Corners (N,4,2) -> the two half centres (N,2,2), halves[0] first (bilinear, so exact for any quad)."""
    end0, end1 = quad_ends(corners)
    mid = (end0 + end1) / 2
    return np.stack([(end0 + mid) / 2, (end1 + mid) / 2], axis=1)


def shoelace(corners: np.ndarray) -> np.ndarray:
    """Twice the signed area of each quad (N,4,2); positive means clockwise on screen."""
    x, y = corners[..., 0], corners[..., 1]
    return np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1)


def quad_grid(corners: np.ndarray, along: np.ndarray, across: np.ndarray) -> np.ndarray:
    """(N, len(along), len(across), 2): points over each quad (N, 4, 2) at fractions ``along`` its long
    edge (corners[0]->corners[3]) and ``across`` it (corners[0]->corners[1])."""
    a, b, c, d = (corners[:, k][:, None, None, :] for k in range(4))
    u, v = np.asarray(along)[None, :, None, None], np.asarray(across)[None, None, :, None]
    top = a + (d - a) * u
    bottom = b + (c - b) * u
    return top + (bottom - top) * v


def quad_core(corners: np.ndarray, share: float = 0.6) -> np.ndarray:
    """The middle ``share`` of each quad (N,4,2), shrunk about its centre: a point there is on that tile and
    not on a neighbour touching it."""
    c = corners.mean(axis=1, keepdims=True)
    return c + (corners - c) * share


def points_in_quads(points: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Boolean (P, N): is point p inside convex quad n (either winding)."""
    p = points[:, None, None, :]  # P,1,1,2
    a = corners[None]  # 1,N,4,2
    b = np.roll(corners, -1, axis=1)[None]
    cross = (b[..., 0] - a[..., 0]) * (p[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (p[..., 0] - a[..., 0])
    return np.all(cross >= 0, axis=-1) | np.all(cross <= 0, axis=-1)
