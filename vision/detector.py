"""Stage 1: find tiles on a downscaled frame (ONNX), with its pre- and post-processing.

The network is CenterNet-like: a heatmap of tile centres (one channel for face-up, one for
face-down) plus, at each centre, the tile's axis, length and width. Decoding keeps local maxima
and then drops any peak whose centre lies well inside a stronger tile, so tiles that touch end to
end in a train stay separate while a tile never comes out twice.

The network was trained on tiles 16-160 px long at its 640-px input. Tiles much smaller than
that (a whole table seen from high above) are found and outlined badly, so when the tiles found
are small the frame is looked at again, larger, until they are about ``SCALE_TARGET`` px long
(both limits chosen on rendered validation scenes, seeds 700000 on, never the evaluation seeds).
A camera that does not move keeps the size it needed (``sticky``), so a video pays for the
second look only when the scene's scale changes. That larger look takes the frame's own size divided by a
whole number when one lies near the size wanted (``whole_fraction``): the resize then averages whole blocks
of pixels, twenty times faster than a resize by a fraction (the Pi camera's 2028x1520 frame is looked at
1014x760 rather than 1152x864; tiles then come out about 56 px long instead of 64: on validation scenes of that
kind as many tiles found and halves read, for 0.24% of precision). Tiles already short at the size wanted are
not made shorter so. Only a still camera's looks are moved so (``sticky``, the hub's video, where the time
counts); a photo looked at once keeps the size wanted, as real photos read worse halved (real-dev recall
0.853 -> 0.765 through the view search).

A still photo can afford a second opinion: ``mirrored`` also looks at the frame mirrored left to right
and averages the two maps. Chance peaks rarely come up in both looks, so a lower bar finds more tiles
with fewer false ones, for twice the detector's time, which the hub's live frames cannot spare. Those two looks
also take back weaker peaks that continue a train of tiles found (``with_train_links``): a shaken camera smears the
joints along a train, and the detector then scores the middle of a run low.

The hub's camera is looked at once, but the hub knows where each train's next tile would lie: there a face-up
peak counts from ``END_BAR`` (``at_ends``). A blank double, its face much like a back, scores under the bar there
(eval-hub seed 6015), and so does a double laid crosswise on gingham (0.17-0.30, eval-hub seed 7033 at
2028x1520); the hub's tracker lets such a weak tile settle only slowly (``hub/tracker.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.geometry import DET_MAX_SIDE, DET_MULTIPLE, DET_STRIDE, points_in_quads, quad_core, quad_grid, rect_corners
from vision.onnx_session import MODELS_DIR, open_session
from vision.trains import with_train_links

DETECTOR_FILE = "tile_detector.onnx"
MEAN, STD = 0.5, 0.25  # input pixel normalisation, shared with training
SCALE_LOW = 48.0  # median tile length (input px) under which the frame is looked at larger
SCALE_TARGET = 64.0  # the median tile length that larger look aims for
MAX_SIDE_LIMIT = 1152  # never larger than this (time grows with the square)
SNAP = 0.15  # a larger look may move this far (as a share) to a whole fraction of the frame's size
# A still camera keeps its larger look while its tiles stay within this share under SCALE_LOW: the snapped look is
# chosen from lengths measured at the first look, and measured again there they come out a pixel or two shorter,
# which flipped the bench's frame from 1014 to 1152 px (10 ms a frame) for a detector drawing boxes 1% shorter.
STILL_MARGIN = 0.1
THRESHOLD = 0.35  # a peak scoring above this is a tile
MIRRORED_THRESHOLD = 0.30  # the same for the average of a look and its mirror image (chosen on validation seeds)
SURE = 0.5  # only confident detections measure the tiles' size
END_BAR = 0.15  # a weaker face-up peak is a tile where the caller knows a train's next tile would lie (``ends``)
LINK_BAR = 0.2  # with a still photo's two looks, a weaker peak is a tile when it continues a train (vision/trains.py)
COVERED = 0.7  # a detection lying this much on stronger ones is dropped: real tiles never lie on each other


@dataclass(frozen=True)
class Candidate:
    """A detected tile before reading: quad in frame pixels, detector score, face."""

    corners: np.ndarray  # float32 (4,2), DetectedTile winding
    score: float
    face: str


# pixel value -> network input, as ``(v * (1 / 255) - MEAN) / STD`` in float32: one table look-up per pixel
# and channel writes the planar input directly, where the arithmetic on the frame took three times as long
_TO_INPUT = (np.arange(256, dtype=np.float32) * np.float32(1 / 255.0) - np.float32(MEAN)) / np.float32(STD)


def detector_input(image: np.ndarray, max_side: int = DET_MAX_SIDE) -> tuple[np.ndarray, float, int]:
    """BGR frame -> (1,3,H,W) float32 network input padded to DET_MULTIPLE, the scale applied, and how many of
    its columns hold the frame (the rest is padding)."""
    h, w = image.shape[:2]
    scale = max_side / max(h, w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    small = cv2.resize(image, (nw, nh), interpolation=interp)
    ph, pw = -(-nh // DET_MULTIPLE) * DET_MULTIPLE, -(-nw // DET_MULTIPLE) * DET_MULTIPLE
    x = np.zeros((1, 3, ph, pw), np.float32)
    for c, plane in enumerate(cv2.split(small)):
        x[0, c, :nh, :nw] = cv2.LUT(plane, _TO_INPUT)
    return x, scale, nw


def mirror_axis(width: int) -> int:
    """The column ``a`` about which ``mirror_input`` turns an input holding ``width`` columns of frame: column c
    goes to a - c. A multiple of DET_STRIDE, so output cells land on output cells, and at most width - 1, so the
    mirror image fits in the same input; the last (at most 3) columns of frame are left out of it."""
    return (width - 1) // DET_STRIDE * DET_STRIDE


def mirror_input(x: np.ndarray, axis: int) -> np.ndarray:
    """The network input ``x`` (1,3,H,W) mirrored left to right about column ``axis`` (see mirror_axis)."""
    mirrored = np.zeros_like(x)
    mirrored[..., : axis + 1] = x[..., axis::-1]
    return mirrored


def average_with_mirrored(out: np.ndarray, out_mirrored: np.ndarray, axis: int) -> np.ndarray:
    """The maps (8,h,w) of a look and of its mirror image (``mirror_input``), averaged cell by cell.

    Mirrored, a tile's offset across the cell and its axis's sin 2a change sign; the other channels do not.
    Cells right of ``axis`` have no mirrored twin and keep the first look's values.
    """
    cells = axis // DET_STRIDE + 1
    back = out_mirrored[:, :, cells - 1 :: -1].copy()
    back[2] *= -1
    back[5] *= -1
    averaged = out.copy()
    averaged[:, :, :cells] = 0.5 * (out[:, :, :cells] + back)
    return averaged


def decode(out: np.ndarray, scale: float, threshold: float, max_tiles: int = 300,
           near: tuple[np.ndarray, float, float] | None = None) -> list[Candidate]:
    """Raw output (8,h,w) -> candidates in frame pixels (see TileDetector in vision/train/nets.py).

    ``near`` (ends (N, 2), within, bar): peaks under ``bar`` are decoded only around ``ends`` (``at_ends``).
    At END_BAR a frame holds several times the peaks it holds at the bar, and the pairwise test for duplicates
    below grows with their square: it cost the hub a fifth of its frame rate (stop 60). A peak is dropped only
    by one lying on it, so the weak ones are kept out to ``within`` plus twice their own length: those that
    could drop one near an end, and those that could drop them.
    """
    heat = 1.0 / (1.0 + np.exp(-out[:2]))
    best = heat.max(axis=0)
    peaks = (best >= cv2.dilate(best, np.ones((3, 3), np.uint8))) & (best > threshold)
    ys, xs = np.nonzero(peaks)
    center = (np.stack([xs + out[2, ys, xs], ys + out[3, ys, xs]], axis=1) * DET_STRIDE + 0.5) / scale - 0.5
    length = np.exp(np.clip(out[6, ys, xs], -2.0, 8.0)) / scale
    if near is not None:
        ends, within, bar = near
        gaps = np.linalg.norm(center[:, None, :] - ends[None], axis=2).min(axis=1, initial=np.inf)
        keep = (best[ys, xs] >= bar) | (gaps <= within + 2 * length)
        ys, xs, center, length = ys[keep], xs[keep], center[keep], length[keep]
    if len(ys) == 0:
        return []
    score = best[ys, xs]
    order = np.argsort(-score)[:max_tiles]
    ys, xs, score, center, length = ys[order], xs[order], score[order], center[order], length[order]
    face_down = heat[1, ys, xs] > heat[0, ys, xs]
    angle = 0.5 * np.arctan2(out[5, ys, xs], out[4, ys, xs])
    width = np.exp(np.clip(out[7, ys, xs], -2.0, 8.0)) / scale
    corners = rect_corners(center, angle, length, width)
    # drop peaks whose centre sits in the middle of a stronger tile (duplicates), never neighbours
    # (both tests for every pair at once: one call per candidate cost more than the network's head)
    n = len(score)
    inside = points_in_quads(corners.mean(axis=1), quad_core(corners))  # (P, N): centre p inside core n
    inner = _inner_points(corners)
    on = points_in_quads(inner.reshape(-1, 2), corners).reshape(n, inner.shape[1], n)  # inner point of p on n
    kept = np.zeros(n, bool)
    for i in range(n):
        if inside[i, kept].any():
            continue
        if kept.any() and on[i][:, kept].any(axis=1).mean() >= COVERED:
            continue  # a ghost over the joint of two stronger tiles, which reads as a false double
        kept[i] = True
    keep = np.flatnonzero(kept)
    return [Candidate(corners[i], float(score[i]), "down" if face_down[i] else "up") for i in keep]


def at_ends(found: list[Candidate], bar: float, ends: np.ndarray, within: float) -> list[Candidate]:
    """``found`` (decoded under ``bar``) less the peaks under it, but for face-up ones centred within ``within``
    px of one of ``ends``. Decoding lower only adds peaks: a weaker one never removes a stronger."""
    def near(c: Candidate) -> bool:
        return bool(len(ends)) and float(np.linalg.norm(ends - c.corners.mean(axis=0), axis=1).min()) <= within

    return [c for c in found if c.score >= bar or (c.face == "up" and near(c))]


def _inner_points(corners: np.ndarray) -> np.ndarray:
    """(N, 15, 2): a 5x3 grid over the inner part of each quad (N, 4, 2), clear of its edges."""
    return quad_grid(corners, np.linspace(0.1, 0.9, 5), np.array([0.25, 0.5, 0.75])).reshape(len(corners), -1, 2)


class OnnxTileDetector:
    """Frame in, tile quads out; ``sticky`` keeps the input size found for the last frame, ``mirrored`` also looks
    at the frame mirrored (see the module's notes). ``threshold`` defaults to the bar for the way it looks."""

    def __init__(self, models_dir: Path = MODELS_DIR, threads: int = 2, threshold: float | None = None,
                 sticky: bool = False, mirrored: bool = False) -> None:
        self.session = open_session(Path(models_dir) / DETECTOR_FILE, threads)
        self.link_bar = LINK_BAR if mirrored else None
        self.threshold = threshold if threshold is not None else MIRRORED_THRESHOLD if mirrored else THRESHOLD
        self.sticky = sticky
        self.mirrored = mirrored
        self.side = DET_MAX_SIDE  # the input size used for the last frame

    def detect(self, image: np.ndarray, ends: np.ndarray | None = None, within: float = 0.0) -> list[Candidate]:
        """``ends`` (N, 2): where the caller knows a train's next tile would lie; a face-up peak centred within
        ``within`` px of one is a tile from END_BAR on (a blank double, looking much like a back, scores under the
        bar at a train's end: eval-hub seed 6015)."""
        side = self.side if self.sticky else DET_MAX_SIDE
        found, scale = self._run(image, side, ends, within)
        better = side_for(found, scale, side, image.shape[:2] if self.sticky else None)
        if better != side:
            found, scale = self._run(image, better, ends, within)
        self.side = better
        return found

    def _run(self, image: np.ndarray, side: int, ends: np.ndarray | None = None,
             within: float = 0.0) -> tuple[list[Candidate], float]:
        x, scale, width = detector_input(image, side)
        out = self._maps(x)
        if self.mirrored:
            axis = mirror_axis(width)
            out = average_with_mirrored(out, self._maps(mirror_input(x, axis)), axis)
        if self.link_bar is not None and self.link_bar < self.threshold:
            return with_train_links(decode(out, scale, self.link_bar), self.threshold, SURE), scale
        if ends is None or not len(ends) or self.threshold <= END_BAR:
            return decode(out, scale, self.threshold), scale
        found = decode(out, scale, END_BAR, near=(ends, within, self.threshold))
        return at_ends(found, self.threshold, ends, within), scale

    def _maps(self, x: np.ndarray) -> np.ndarray:
        (out,) = self.session.run(None, {"image": x})
        return out[0]


def side_for(found: list[Candidate], scale: float, side: int, frame: tuple[int, int] | None = None) -> int:
    """The input size at which the tiles found at ``side`` would be about SCALE_TARGET px long.

    Never under DET_MAX_SIDE (large tiles are read well there) nor over MAX_SIDE_LIMIT; ``side``
    itself while the tiles are in range, so that a steady camera keeps one size. Given the ``frame``'s
    (height, width), a whole fraction of it near that size is taken instead (``whole_fraction``) while the
    tiles stay at least SCALE_LOW px long there, and kept while they measure at least STILL_MARGIN under it.
    """
    sure = [c.corners for c in found if c.score >= SURE]
    if len(sure) < 3:
        return side
    q = np.stack(sure)
    length = float(np.median(np.maximum(np.linalg.norm(q[:, 0] - q[:, 3], axis=1),
                                        np.linalg.norm(q[:, 1] - q[:, 2], axis=1)))) * scale
    low = SCALE_LOW * (1 - STILL_MARGIN) if frame is not None and side > DET_MAX_SIDE else SCALE_LOW
    if low <= length <= SCALE_TARGET * 2 or (length > SCALE_TARGET * 2 and side == DET_MAX_SIDE):
        return side
    wanted = side * SCALE_TARGET / max(length, 1.0)
    chosen = int(np.clip(round(wanted / DET_MULTIPLE) * DET_MULTIPLE, DET_MAX_SIDE, MAX_SIDE_LIMIT))
    if frame is None:
        return chosen
    snapped = whole_fraction(chosen, *frame)
    return snapped if length * snapped / side >= SCALE_LOW else chosen


def whole_fraction(side: int, height: int, width: int) -> int:
    """``side``, or the frame's longest side divided by a whole number k when that lies within SNAP of it, both
    of the frame's sides divide by k, and it stays a larger look (over DET_MAX_SIDE, at most MAX_SIDE_LIMIT).

    Area averaging by a whole factor sums fixed blocks of pixels; by a fraction it weighs each pixel apart, which
    took 9-12 ms for a 2028x1520 frame here against 0.4 ms for the same frame halved.
    """
    longest = max(height, width)
    if side <= DET_MAX_SIDE or side >= longest:
        return side
    k = round(longest / side)
    snapped = longest // k
    if (height % k or width % k or not DET_MAX_SIDE < snapped <= MAX_SIDE_LIMIT
            or abs(snapped - side) > SNAP * side):
        return side
    return snapped
