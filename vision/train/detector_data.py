"""Detector training batches: random zoom, rotation, mirror and crop of cached frames, and targets."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.detector import MEAN, STD
from vision.geometry import DET_MAX_SIDE, DET_STRIDE, quad_grid, quad_params
from vision.train.augment import photometric
from vision.train.cache import FRAME_SIDE, SceneSample

ZOOM = (0.75, 1.35)  # scale relative to the run-time detector input (log-uniform); the renderer varies tile size
PAD_VALUE = 128  # grey, which the network input normalisation maps to ~0 like the padding at run time


@dataclass(frozen=True)
class TrainFrame:
    """A cached scene's frame, decoded once for the whole training run, with its tiles."""

    image: np.ndarray  # BGR uint8, longest side FRAME_SIDE
    corners: np.ndarray  # (T,4,2) float32 in the frame's pixels
    face_down: np.ndarray  # (T,) bool
    ignore: np.ndarray  # (T,) bool


def decode_frames(samples: list[SceneSample]) -> list[TrainFrame]:
    """Decode every cached JPEG up front: decoding per crop cost a fifth of making a batch.

    2,000 frames take about 2.7 GB, which the batch-making process shares with this one.
    """
    return [TrainFrame(cv2.imdecode(np.frombuffer(s.jpeg, np.uint8), cv2.IMREAD_COLOR), s.corners, s.face_down,
                       s.ignore) for s in samples]


def _visible_fraction(corners: np.ndarray, size: int) -> np.ndarray:
    """Fraction of each quad (T,4,2) that lies inside the square crop, from a 5x3 grid of points."""
    pts = quad_grid(corners, np.linspace(0.1, 0.9, 5), np.linspace(0.17, 0.83, 3))
    inside = (pts >= 0).all(-1) & (pts < size).all(-1)
    return inside.reshape(len(corners), -1).mean(axis=1)


def make_targets(corners: np.ndarray, face_down: np.ndarray, ignore: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Quads in crop pixels -> heat (2,G,G), reg (6,G,G), reg weight (G,G), loss mask (G,G)."""
    g = size // DET_STRIDE
    heat = np.zeros((2, g, g), np.float32)
    reg = np.zeros((6, g, g), np.float32)
    regw = np.zeros((g, g), np.float32)
    mask = np.ones((g, g), np.float32)
    if len(corners) == 0:
        return heat, reg, regw, mask
    center, angle, length, width = quad_params(corners)
    vis = _visible_fraction(corners, size)
    gy, gx = np.mgrid[0:g, 0:g].astype(np.float32) * DET_STRIDE
    for k in range(len(corners)):
        if vis[k] < 0.2:
            continue
        cx, cy = center[k]
        L, W = max(length[k], 4.0), max(width[k], 2.0)
        if size < L:  # bigger than the crop: nothing useful to learn from it here
            continue
        ca, sa = np.cos(angle[k]), np.sin(angle[k])
        dx, dy = gx - cx, gy - cy
        along = dx * ca + dy * sa
        across = -dx * sa + dy * ca
        sa_, sc_ = max(L / 8, 1.5), max(W / 8, 1.2)
        gauss = np.exp(-(along**2 / (2 * sa_**2) + across**2 / (2 * sc_**2)))
        inside_cell = (0 <= cx < size) and (0 <= cy < size)
        if ignore[k] or vis[k] < 0.7 or not inside_cell:
            mask[gauss > 0.05] = 0.0
            continue
        ix, iy = int(round(cx / DET_STRIDE)), int(round(cy / DET_STRIDE))
        ix, iy = min(max(ix, 0), g - 1), min(max(iy, 0), g - 1)
        gauss[iy, ix] = 1.0
        ch = 1 if face_down[k] else 0
        np.maximum(heat[ch], gauss, out=heat[ch])
        sel = (gauss >= 0.5) & (gauss > regw)
        reg[0][sel] = cx / DET_STRIDE - gx[sel] / DET_STRIDE
        reg[1][sel] = cy / DET_STRIDE - gy[sel] / DET_STRIDE
        reg[2][sel] = np.cos(2 * angle[k])
        reg[3][sel] = np.sin(2 * angle[k])
        reg[4][sel] = np.log(L)
        reg[5][sel] = np.log(W)
        regw[sel] = gauss[sel]
    return heat, reg, regw, mask


def detector_batch(frames: list[TrainFrame], rng: np.random.Generator, n: int, size: int) -> tuple[np.ndarray, ...]:
    """n random crops (n,3,size,size) float32 and their stacked targets."""
    xs, heats, regs, regws, masks = [], [], [], [], []
    for _ in range(n):
        frame = frames[int(rng.integers(len(frames)))]
        img = frame.image
        corners = frame.corners.copy()
        zoom = float(np.exp(rng.uniform(np.log(ZOOM[0]), np.log(ZOOM[1]))))
        scale = DET_MAX_SIDE / FRAME_SIDE * zoom
        if scale < 0.8:  # shrink with area averaging first, like the run-time resize
            h, w = img.shape[:2]
            img = cv2.resize(img, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
            corners = (corners + 0.5) * scale - 0.5
            scale = 1.0
        h, w = img.shape[:2]
        theta = rng.uniform(0, 2 * np.pi)
        if len(corners) and rng.random() < 0.8:
            anchor = corners[int(rng.integers(len(corners)))].mean(axis=0) * scale + rng.normal(0, size / 4, 2)
        else:
            anchor = np.array([rng.uniform(0, w), rng.uniform(0, h)]) * scale
        rot = cv2.getRotationMatrix2D((0.0, 0.0), float(np.degrees(theta)), scale)
        if rng.random() < 0.5:
            rot[0] *= -1
        m = rot.copy()
        m[:, 2] = np.array([size / 2, size / 2]) - rot[:, :2] @ (anchor / scale)
        crop = cv2.warpAffine(img, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                              borderValue=(PAD_VALUE, PAD_VALUE, PAD_VALUE))
        crop = photometric(crop, rng)
        pts = corners.reshape(-1, 2) @ m[:, :2].T + m[:, 2]
        heat, reg, regw, mask = make_targets(pts.reshape(-1, 4, 2), frame.face_down, frame.ignore, size)
        xs.append((crop.transpose(2, 0, 1).astype(np.float32) / 255.0 - MEAN) / STD)
        heats.append(heat)
        regs.append(reg)
        regws.append(regw)
        masks.append(mask)
    return tuple(np.stack(a) for a in (xs, heats, regs, regws, masks))
