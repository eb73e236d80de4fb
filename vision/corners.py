"""Stage 1b: move the detector's corners onto each tile's own edges (ONNX), before its pips are read.

The detector draws each tile as a rotated rectangle, on a frame shrunk to 640 px. Seen from the side, as the real
photos are, half its boxes come out a tenth or more too short or too long (rendered validation scenes, 2026-12-05),
and a box that cuts off a pip column turns a 12 into a 9. The refiner looks at each box again in the full-resolution
frame, with a margin round it, and moves each of its four corners on its own, so a keystoned tile gets a keystoned
quad. Its input is the reader's own colour-blind measure (``vision.pips.face_relative``).

The moved quad serves the reading only: a tile keeps the detector's corners as its outline. On the real photos'
thick, close tiles a moved quad sometimes slid along onto one half (2026-12-05), and the hub's tracker measures
trains from the detector's boxes.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.geometry import HALF_PATCH
from vision.onnx_session import MODELS_DIR, open_session
from vision.pips import TILE_BOX, face_relative, rectify

REFINER_FILE = "corner_refiner.onnx"
_HP = HALF_PATCH
# the box lands in the patch with this margin round it (across, along; patch pixels, the tile's 2:1): room to see a
# tile end that a box drawn a third short has cut off
MARGIN_X, MARGIN_Y = 12, 24
PATCH_W, PATCH_H = _HP + 2 * MARGIN_X, 2 * _HP + 2 * MARGIN_Y
BOX = np.float32([[MARGIN_X, MARGIN_Y], [MARGIN_X + _HP, MARGIN_Y], [MARGIN_X + _HP, MARGIN_Y + 2 * _HP],
                  [MARGIN_X, MARGIN_Y + 2 * _HP]]) - 0.5
MOVE_SCALE = 8.0  # the network's outputs are corner moves in patch pixels divided by this
PASSES = 2  # a second look from the moved corners sets a box a third short nearly right (validation, 2026-12-05)


def refiner_input(patches: np.ndarray) -> np.ndarray:
    """Patches (N, PATCH_H, PATCH_W, 3) uint8, the box at ``BOX`` -> network input (N, 2, PATCH_H, PATCH_W)."""
    box = (slice(MARGIN_Y, MARGIN_Y + 2 * _HP), slice(MARGIN_X, MARGIN_X + _HP))
    return np.ascontiguousarray(face_relative(patches, box))


def moved_corners(quads: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """Quads (N,4,2) and the network's moves (N,8) in the patches rectified through them -> the moved quads, in the
    quads' own pixels."""
    return carried(quads, BOX[None] + moves.reshape(-1, 4, 2) * MOVE_SCALE)


def carried(quads: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points (N,4,2) in the patches rectified through ``quads`` (each quad at ``BOX``) -> in the quads' own pixels."""
    out = np.empty(points.shape, np.float32)
    for i, (quad, p) in enumerate(zip(quads.astype(np.float32), points.astype(np.float32), strict=True)):
        out[i] = cv2.perspectiveTransform(p[None], cv2.getPerspectiveTransform(BOX, quad))[0]
    return out


def warped(patches: np.ndarray, quads: np.ndarray, dst: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Each patch (N, H, W, 3) looked at again through its quad (N,4,2), which lands on ``dst`` of a ``size`` (w, h)
    patch."""
    out = np.empty((len(patches), size[1], size[0], 3), np.uint8)
    for i, (patch, quad) in enumerate(zip(patches, quads.astype(np.float32), strict=True)):
        m = cv2.getPerspectiveTransform(quad, dst.astype(np.float32))
        out[i] = cv2.warpPerspective(patch, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out


class OnnxCornerRefiner:
    """Tile quads (N,4,2) in, the same tiles' quads set on their edges out, corner for corner, or the reader's
    patches at them."""

    def __init__(self, models_dir: Path = MODELS_DIR, threads: int = 2, passes: int = PASSES) -> None:
        self.session = open_session(Path(models_dir) / REFINER_FILE, threads)
        self.passes = passes

    def refine(self, image: np.ndarray, quads: np.ndarray) -> np.ndarray:
        """-> the moved quads (N,4,2), in frame pixels."""
        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        return carried(quads, self._looked(image, quads)[1])

    def tile_patches(self, image: np.ndarray, quads: np.ndarray) -> np.ndarray:
        """-> the reader's tile patches (N, 2*HP, HP, 3) at the moved quads, as ``vision.pips.rectify`` lays them."""
        first, seen = self._looked(image, np.asarray(quads, np.float32).reshape(-1, 4, 2))
        return warped(first, seen, TILE_BOX, (_HP, 2 * _HP))

    def _looked(self, image: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first look's patches, and the moved quads in their pixels.

        Only the first look is rectified from the frame; each later look, and the reader's patch, is taken from that
        first patch, as training takes them from its context patches: one resampling from the frame instead of three
        (an area-averaged shrink for each big tile, which cost the bench frame about 10 ms)."""
        first = rectify(image, quads, BOX, (PATCH_W, PATCH_H))
        seen = np.repeat(BOX[None], len(quads), axis=0)
        for k in range(self.passes if len(quads) else 0):
            look = first if k == 0 else warped(first, seen, BOX, (PATCH_W, PATCH_H))
            (moves,) = self.session.run(None, {"patches": refiner_input(look)})
            seen = moved_corners(seen, moves)
        return first, seen
