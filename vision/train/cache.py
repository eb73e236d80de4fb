"""Render training scenes once and keep what each stage needs, in a git-ignored cache.

Per scene: the frame shrunk to ``FRAME_SIDE`` (JPEG) with every tile's quad, face and an ignore
flag (mostly hidden or cut off, or held in a hand), and, per readable tile, a "context" patch rectified
from the full-resolution frame with a margin around the tile, so that training can jitter the
corners the way an imperfect detector would and still rectify from real pixels; and a "wide" one with a
margin twice as big, for the corner refiner, whose patches reach further round a box drawn badly.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import cv2
import numpy as np

from vision.geometry import HALF_PATCH
from vision.pips import rectify
from vision.synthetic_sets import VISIBLE_REQUIRED, training_scene_options

FRAME_SIDE = 768  # cached frames' longest side: a little room to zoom in past the detector's 640
CACHE_VERSION = 7  # 6: most sets print a 10 as a ring (vision.synth.pips); 7: the wide patches
# context canvas: the tile fills [MX, MX+HP] x [MY, MY+2HP] of a CW x CH patch
MX, MY = 12, 16
CW, CH = HALF_PATCH + 2 * MX, 2 * HALF_PATCH + 2 * MY
CONTEXT_QUAD = np.float32(
    [[MX, MY], [MX + HALF_PATCH, MY], [MX + HALF_PATCH, MY + 2 * HALF_PATCH], [MX, MY + 2 * HALF_PATCH]]
) - 0.5
# the corner refiner's wide canvas: the tile fills [WX, WX+HP] x [WY, WY+2HP] of a WW x WH patch
WX, WY = 24, 32
WW, WH = HALF_PATCH + 2 * WX, 2 * HALF_PATCH + 2 * WY
WIDE_QUAD = CONTEXT_QUAD + np.float32([WX - MX, WY - MY])


@dataclass
class SceneSample:
    jpeg: bytes  # frame, longest side FRAME_SIDE
    corners: np.ndarray  # (T,4,2) float32 in the cached frame's pixels
    face_down: np.ndarray  # (T,) bool
    ignore: np.ndarray  # (T,) bool: held in a hand or under 60% visible: neither required nor penalised
    context: np.ndarray  # (R, CH, CW, 3) uint8: readable tiles, rectified with a margin
    values: np.ndarray  # (R, 2) int64: (top half, bottom half) of each context patch
    wide: np.ndarray  # (R, WH, WW, 3) uint8: the same tiles with a wider margin


def render_sample(seed: int) -> SceneSample:
    from vision.synth import render_scene

    scene = render_scene(seed, **training_scene_options(seed))
    img = scene.image
    h, w = img.shape[:2]
    scale = FRAME_SIDE / max(h, w)
    small = cv2.resize(img, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 93])
    assert ok
    tiles = scene.tiles
    corners = np.array([t.corners for t in tiles], np.float32).reshape(-1, 4, 2)
    face_down = np.array([t.face == "down" for t in tiles], bool)
    visible = np.array([t.visible for t in tiles], np.float32)
    ignore = np.array([t.held for t in tiles], bool) | (visible < 0.6)
    readable = ~face_down & ~ignore & (visible >= VISIBLE_REQUIRED)
    context = rectify(img, corners[readable], CONTEXT_QUAD, (CW, CH))
    wide = rectify(img, corners[readable], WIDE_QUAD, (WW, WH))
    values = np.array([t.values for t, r in zip(tiles, readable, strict=True) if r], np.int64).reshape(-1, 2)
    return SceneSample(buf.tobytes(), (corners + 0.5) * scale - 0.5, face_down, ignore, context, values, wide)


def load_or_render(cache_dir: Path, seeds: Iterable[int], workers: int = 2, log=print) -> list[SceneSample]:
    """Scenes for ``seeds``, rendered in ``workers`` processes the first time and cached per chunk."""
    seeds = list(seeds)
    cache_dir.mkdir(parents=True, exist_ok=True)
    out: list[SceneSample] = []
    chunk = 200
    for start in range(0, len(seeds), chunk):
        part = seeds[start : start + chunk]
        path = cache_dir / f"scenes-v{CACHE_VERSION}-{part[0]}-{part[-1]}-{len(part)}.pkl"
        if path.exists():
            with path.open("rb") as f:
                out.extend(pickle.load(f))
            continue
        if workers > 1:
            import vision.synth  # noqa: F401  (loaded once here; the forked workers share it)

            with get_context("fork").Pool(workers) as pool:
                samples = pool.map(render_sample, part, chunksize=4)
        else:
            samples = [render_sample(s) for s in part]
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as f:
            pickle.dump(samples, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.rename(path)
        out.extend(samples)
        log(f"  rendered scenes {part[0]}..{part[-1]} ({len(out)}/{len(seeds)})")
    return out
