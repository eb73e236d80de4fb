"""Pip-reader training batches: context patches re-rectified through jittered corners, then re-lit.

The jitter plays an imperfect detector and an oblique camera (each corner moves on its own, so
the rectified tile is also sheared and keystoned); mirroring is free because every standard pip
layout reads the same in a mirror.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.geometry import HALF_PATCH
from vision.pips import _DST, half_features
from vision.train.augment import IN_FOCUS, SMEAR, Defocus, Smear, camera_looks
from vision.train.cache import CONTEXT_QUAD

GROUP = 8  # patches that share one photometric draw (one "camera look"), for speed


BAD_OUTLINE = 0.35  # share of patches read through a badly drawn outline (an oblique camera's boxes)


def jitter_quad(rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """CONTEXT_QUAD moved, turned, scaled and its corners nudged independently.

    Some draws are much wider along the tile: on oblique views the detector's boxes come out 15% too
    short or too long a third of the time (rendered validation scenes, seeds 730000 on).
    """
    q = CONTEXT_QUAD.astype(np.float64)
    c = q.mean(axis=0)
    # spreads of the turn (degrees), and of the scale and shift along the tile (shares of it, of a half)
    turn, scale_along, shift_along = (6.0, 0.14, 0.14) if rng.random() < BAD_OUTLINE else (3.0, 0.05, 0.07)
    ang = np.radians(rng.normal(0, turn * strength))
    rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    s = np.exp(rng.normal(0, [0.05 * strength, scale_along * strength]))
    q = (q - c) * s @ rot.T + c
    q += rng.normal(0, [0.05 * HALF_PATCH, shift_along * HALF_PATCH], 2) * strength  # whole-tile shift
    q += rng.normal(0, 0.05 * HALF_PATCH * strength, (4, 2))  # each corner on its own
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
        quad = jitter_quad(rng, strength)
        if rng.random() < 0.5:  # the tile turned end for end: halves swap
            quad = np.roll(quad, 2, axis=0)
            labels[j] = labels[j][::-1]
        m = cv2.getPerspectiveTransform(quad, _DST)
        patches[j] = cv2.warpPerspective(context[i], m, (HALF_PATCH, 2 * HALF_PATCH), flags=cv2.INTER_LINEAR,
                                         borderMode=cv2.BORDER_REPLICATE)
        if rng.random() < 0.5:
            patches[j] = patches[j][:, ::-1]
    camera_looks(patches, rng, GROUP, strength, smear, defocus)
    return half_features(patches), labels.reshape(-1)
