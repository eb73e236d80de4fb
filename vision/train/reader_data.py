"""Pip-reader training batches: context patches re-rectified through jittered corners, then re-lit.

The jitter plays an imperfect detector and an oblique camera (each corner moves on its own, so
the rectified tile is also sheared and keystoned); mirroring is free because every standard pip
layout reads the same in a mirror.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import HALF_PATCH
from vision.pips import TILE_BOX, half_features
from vision.train.augment import IN_FOCUS, SMEAR, Defocus, Smear, camera_looks
from vision.train.cache import CONTEXT_QUAD

GROUP = 8  # patches that share one photometric draw (one "camera look"), for speed


BAD_OUTLINE = 0.35  # share of patches read through a badly drawn outline (an oblique camera's boxes)


@dataclass(frozen=True)
class BoxErrors:
    """How far a drawn box strays from the tile (standard deviations). ``good`` and ``bad``: the turn (degrees), and
    the log-scale and shift along the tile (a share of it, of a half); ``bad`` is drawn ``bad_share`` of the time.
    Across the tile: the log-scale, the shift and each corner's own nudge (shares of a half). The limits cut the
    log-scale and the shift (patch pixels)."""

    bad_share: float
    good: tuple[float, float, float]
    bad: tuple[float, float, float]
    scale_across: float
    shift_across: float
    corner: float
    scale_limit: float = np.inf
    shift_limit: float = np.inf


# Some draws are much wider along the tile: on oblique views the detector's boxes come out 15% too short or too long
# a third of the time (rendered validation scenes, seeds 730000 on).
READER_BOXES = BoxErrors(BAD_OUTLINE, (3.0, 0.05, 0.07), (6.0, 0.14, 0.14), 0.05, 0.05, 0.05)


def drawn_box(rng: np.random.Generator, quad: np.ndarray, errors: BoxErrors, strength: float = 1.0) -> np.ndarray:
    """``quad`` (the tile's true outline) moved, turned, scaled and its corners nudged independently."""
    q = quad.astype(np.float64)
    c = q.mean(axis=0)
    turn, scale_along, shift_along = errors.bad if rng.random() < errors.bad_share else errors.good
    ang = np.radians(rng.normal(0, turn * strength))
    rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    s = np.exp(np.clip(rng.normal(0, [errors.scale_across * strength, scale_along * strength]),
                       -errors.scale_limit, errors.scale_limit))
    q = (q - c) * s @ rot.T + c
    shift = rng.normal(0, [errors.shift_across * HALF_PATCH, shift_along * HALF_PATCH], 2) * strength
    q += np.clip(shift, -errors.shift_limit, errors.shift_limit)  # the whole tile
    q += rng.normal(0, errors.corner * HALF_PATCH * strength, (4, 2))  # each corner on its own
    return q.astype(np.float32)


def reader_batch(
    context: np.ndarray, values: np.ndarray, rng: np.random.Generator, n: int, strength: float = 1.0,
    smear: Smear = SMEAR,
    defocus: Defocus = IN_FOCUS,
) -> tuple[np.ndarray, np.ndarray]:
    """n tiles -> halves (2n,2,HP,HP) float32 and their values (2n,) int64."""
    idx = rng.integers(len(context), size=n)
    patches = np.empty((n, 2 * HALF_PATCH, HALF_PATCH, 3), np.uint8)
    labels = values[idx].copy()
    for j, i in enumerate(idx):
        quad = drawn_box(rng, CONTEXT_QUAD, READER_BOXES, strength)
        if rng.random() < 0.5:  # the tile turned end for end: halves swap
            quad = np.roll(quad, 2, axis=0)
            labels[j] = labels[j][::-1]
        m = cv2.getPerspectiveTransform(quad, TILE_BOX)
        patches[j] = cv2.warpPerspective(context[i], m, (HALF_PATCH, 2 * HALF_PATCH), flags=cv2.INTER_LINEAR,
                                         borderMode=cv2.BORDER_REPLICATE)
        if rng.random() < 0.5:
            patches[j] = patches[j][:, ::-1]
    camera_looks(patches, rng, GROUP, strength, smear, defocus)
    return half_features(patches), labels.reshape(-1)
