"""Draw what the reader saw over a frame: quads, the halves' values, face-down tiles in grey."""

from __future__ import annotations

import cv2
import numpy as np

from vision.types import DetectedTile

UP, DOWN, FIRST = (40, 200, 40), (160, 160, 160), (0, 0, 255)


def draw_tiles(image: np.ndarray, tiles: list[DetectedTile]) -> np.ndarray:
    """A copy of ``image`` with every tile outlined; a red dot marks corners[0] (halves[0]'s end)."""
    out = image.copy()
    size = max(image.shape[:2])
    thick = max(1, round(size / 800))
    font = size / 1500
    for t in tiles:
        quad = np.array(t.corners, np.float32)
        colour = UP if t.face == "up" else DOWN
        cv2.polylines(out, [np.round(quad).astype(np.int32)], True, colour, thick, cv2.LINE_AA)
        cv2.circle(out, tuple(int(v) for v in np.round(quad[0])), 2 * thick, FIRST, -1, cv2.LINE_AA)
        for half in t.halves:
            label = "?" if half.value is None else str(half.value)
            (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font, thick)
            org = (int(half.center[0] - tw / 2), int(half.center[1] + th / 2))
            cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, font, (0, 0, 0), thick + 2, cv2.LINE_AA)
            cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, font, (255, 255, 255), thick, cv2.LINE_AA)
    return out
