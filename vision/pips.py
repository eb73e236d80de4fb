"""Stage 2: read the pips of each tile (ONNX), with its pre- and post-processing.

Each tile is rectified from the full-resolution frame into a canonical upright patch (halves[0]
on top), split into two square halves, the lower one turned 180 degrees so that the divider is
always at the bottom edge, and all halves of all tiles go through the network as one batch. The
patch shows a margin of the frame round the detector's box: on an oblique view the box is often
drawn short, and a pip column it cuts off would turn a 12 into a 9.

The input is two colour-blind channels measured against the tile's own face colour: relative
darkness, and colour distance. A pale yellow pip on ivory barely differs in brightness but does
in colour; a navy pip differs in both. Neither channel says *which* colour a pip is, so the
class signal is the pip pattern, never its colour.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.geometry import HALF_PATCH, NUM_VALUES
from vision.onnx_session import MODELS_DIR, open_session

READER_FILE = "pip_reader.onnx"
_HP = HALF_PATCH
# the box lands inside the patch with this margin round it (across, along; patch pixels, the tile's 2:1)
MARGIN_X, MARGIN_Y = 3, 6
FACE_PERCENTILE = 70  # a tile's face colour: this percentile of its pixels, per channel (pips cover less than half)
# where the tile's box lands in the reader's patch
TILE_BOX = np.float32([[MARGIN_X, MARGIN_Y], [_HP - MARGIN_X, MARGIN_Y], [_HP - MARGIN_X, 2 * _HP - MARGIN_Y],
                       [MARGIN_X, 2 * _HP - MARGIN_Y]]) - 0.5


def rectify(
    image: np.ndarray, corners: np.ndarray, dst: np.ndarray = TILE_BOX, size: tuple[int, int] = (_HP, 2 * _HP)
) -> np.ndarray:
    """Quads (N,4,2) in frame pixels -> upright tile patches (N, 2*HP, HP, 3) uint8.

    ``dst`` and ``size`` (w, h) place the quad elsewhere in a larger canvas (training keeps a
    margin around each tile). A big tile is first shrunk with area averaging, so that the warp
    never skips over pips.
    """
    out = np.empty((len(corners), size[1], size[0], 3), np.uint8)
    h, w = image.shape[:2]
    dst = dst.astype(np.float32)
    for i, quad in enumerate(corners.astype(np.float32)):
        src = quad
        img = image
        side = max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2]))
        shrink = side / (2 * _HP * 1.5)
        if shrink > 1.0:
            seen = _seen_by(quad, dst, size)
            x0, y0 = np.floor(np.clip(seen.min(axis=0) - 2, 0, [w - 1, h - 1])).astype(int)
            x1, y1 = np.ceil(np.clip(seen.max(axis=0) + 3, 1, [w, h])).astype(int)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                crop = image[y0:y1, x0:x1]
                sw, sh = max(1, round((x1 - x0) / shrink)), max(1, round((y1 - y0) / shrink))
                img = cv2.resize(crop, (sw, sh), interpolation=cv2.INTER_AREA)
                fx, fy = sw / (x1 - x0), sh / (y1 - y0)
                src = (quad - [x0, y0] + 0.5) * [fx, fy] - 0.5
        m = cv2.getPerspectiveTransform(src.astype(np.float32), dst)
        out[i] = cv2.warpPerspective(img, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out


def _seen_by(quad: np.ndarray, dst: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The frame points (4, 2) that land on the patch's corners: the crop a big tile is shrunk from
    must hold the margin round the quad too, or the margin shows the crop's edge smeared outwards."""
    w, h = size
    canvas = np.float32([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]])
    return cv2.perspectiveTransform(canvas[None], cv2.getPerspectiveTransform(dst, quad))[0]


def half_features(patches: np.ndarray) -> np.ndarray:
    """Tile patches (N, 2*HP, HP, 3) uint8 -> reader input (2N, 2, HP, HP) float32, halves[0] first."""
    n = len(patches)
    x = face_relative(patches, (slice(MARGIN_Y, 2 * _HP - MARGIN_Y), slice(MARGIN_X, _HP - MARGIN_X)))
    top = x[:, :, :_HP]
    bottom = x[:, :, _HP:, :][:, :, ::-1, ::-1]
    return np.ascontiguousarray(np.stack([top, bottom], axis=1).reshape(2 * n, 2, _HP, _HP))


def face_relative(patches: np.ndarray, box: tuple[slice, slice]) -> np.ndarray:
    """Patches (N, H, W, 3) uint8 -> (N, 2, H, W) float32: darkness relative to each tile's face colour, and colour
    distance from it, both divided by the face's brightness; the face colour is taken over ``box`` (rows, columns).

    The face colour is a high percentile per channel, since pips cover less than half a face. It is taken, as
    ``np.percentile`` would, from the two order statistics about it (a partition, not a sort), and the sums over the
    three channels are spelt out: numpy's reductions over a last axis of three cost more than the arithmetic itself.
    """
    n = len(patches)
    face = _face_colour(patches[:, box[0], box[1]].reshape(n, -1, 3))  # (N,3)
    face_lum = np.maximum(face.mean(axis=1), 16.0)[:, None, None]
    f = patches.astype(np.float32)
    b, g, r = f[..., 0], f[..., 1], f[..., 2]
    lum = (b + g + r) / 3
    db, dg, dr = b - face[:, None, None, 0], g - face[:, None, None, 1], r - face[:, None, None, 2]
    dark = (face_lum - lum) / face_lum
    colour = np.sqrt(db * db + dg * dg + dr * dr) / face_lum
    return np.stack([np.clip(dark, -1, 1.5) * 2, np.clip(colour, 0, 1.5) * 2], axis=1)


def _face_colour(inner: np.ndarray) -> np.ndarray:
    """The FACE_PERCENTILE of each tile's pixels (N, M, 3) uint8 per channel, float32 (N, 3), with numpy's
    linear interpolation between the two order statistics about it."""
    at = FACE_PERCENTILE / 100 * (inner.shape[1] - 1)
    lo = int(np.floor(at))
    hi = min(lo + 1, inner.shape[1] - 1)
    part = np.partition(inner, [lo, hi], axis=1)
    a, b = part[:, lo].astype(np.float32), part[:, hi].astype(np.float32)
    return a + (b - a) * np.float32(at - lo)


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class OnnxPipReader:
    """Tile quads in, per-half probabilities over 0..NUM_VALUES-1 out (N, 2, NUM_VALUES)."""

    def __init__(self, models_dir: Path = MODELS_DIR, threads: int = 2) -> None:
        self.session = open_session(Path(models_dir) / READER_FILE, threads)

    def read(self, image: np.ndarray, corners: np.ndarray) -> np.ndarray:
        return self.read_patches(rectify(image, corners))

    def read_patches(self, patches: np.ndarray) -> np.ndarray:
        """Tile patches (N, 2*HP, HP, 3) uint8, as ``rectify`` makes them -> (N, 2, NUM_VALUES)."""
        if len(patches) == 0:
            return np.zeros((0, 2, NUM_VALUES), np.float32)
        (logits,) = self.session.run(None, {"halves": half_features(patches)})
        return softmax(logits).reshape(len(patches), 2, NUM_VALUES)
