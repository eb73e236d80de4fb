"""The TileReader the hub uses: detector, corner refiner, then pip reader, then typed DetectedTiles (less the
false doubles over a joint that the readings show, ``vision.ghosts``, and the boxes of another size than the tiles
round them, ``vision.sizes``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.corners import OnnxCornerRefiner
from vision.detector import SURE, Candidate, OnnxTileDetector
from vision.geometry import NUM_VALUES, half_centers
from vision.ghosts import without_joint_ghosts
from vision.onnx_session import MODELS_DIR
from vision.pips import OnnxPipReader
from vision.sizes import without_odd_sized
from vision.types import DetectedTile, HalfReading, Point
from vision.view import SEARCHED_VIEWS, STRAIGHT, View, ViewEvidence, choose_view, to_frame, with_tiles_seen_elsewhere


@dataclass
class StageTimes:
    """Milliseconds spent in each stage by the last ``read`` call (for bench and detect). Reading a tile takes
    setting its corners on its edges first (``vision.corners``), and ``read`` counts both."""

    detect: float = 0.0
    read: float = 0.0

    @property
    def total(self) -> float:
        return self.detect + self.read


@dataclass
class OnnxTileReader:
    """Image (BGR uint8) in, ``DetectedTile``s out, with onnxruntime on ``threads`` threads.

    ``max_value`` is the set's highest pip value (12 for double-12): the per-half probabilities
    cover 0..max_value and are renormalised over that range. ``sticky``: the frames come from one
    camera that keeps still, so the detector's input size found for one frame is kept for the next.
    ``view_search``: each frame is a photo from an unknown angle, so the detector looks at it in each of
    ``SEARCHED_VIEWS`` and the best view's tiles are kept (``view`` then names it; see vision/view.py), with
    the tiles that only other views found surely.
    Without it the frame is looked at as it is, once, as the hub's camera above the table needs.
    ``mirrored``: the detector also looks at each view mirrored, for twice its time (see vision/detector.py).
    ``threshold``: the detector's bar; None keeps its own for the way it looks.
    """

    models_dir: Path = MODELS_DIR
    threads: int = 2
    max_value: int = 12
    threshold: float | None = None
    sticky: bool = False
    view_search: bool = False
    mirrored: bool = False
    times: StageTimes = field(default_factory=StageTimes)
    view: View = STRAIGHT

    def __post_init__(self) -> None:
        if not 0 < self.max_value < NUM_VALUES:
            raise ValueError(f"max_value must be 1..{NUM_VALUES - 1}, got {self.max_value}")
        self.detector = OnnxTileDetector(self.models_dir, self.threads, self.threshold, self.sticky, self.mirrored)
        self.corners = OnnxCornerRefiner(self.models_dir, self.threads)
        self.pips = OnnxPipReader(self.models_dir, self.threads)

    def read(self, image: np.ndarray, backs_at: Sequence[Point] = (), within: float = 0.0) -> list[DetectedTile]:
        """``backs_at``: points where the caller knows a tile lies face up (a train's next tile). Face-down tiles
        centred within ``within`` px of one are read too (the detector takes a tile with few pips, such as 0|1,
        for a back now and then), and so are weaker face-up ones (``OnnxTileDetector.detect``'s ``ends``)."""
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"expected a BGR uint8 image (H, W, 3), got {image.dtype} {image.shape}")
        points = np.asarray(backs_at, np.float64).reshape(-1, 2)
        self.times = StageTimes()
        if not self.view_search:
            self.view = STRAIGHT
            return self._checked(self._read_in(image, STRAIGHT, points, within)[0])
        tried = {v: self._read_in(image, v, points, within) for v in SEARCHED_VIEWS}
        self.view = choose_view([(v, evidence) for v, (_, evidence) in tried.items()])
        others = [t for v, (tiles, _) in tried.items() if v != self.view for t in tiles]
        return self._checked(with_tiles_seen_elsewhere(tried[self.view][0], others))

    def _checked(self, tiles: list[DetectedTile]) -> list[DetectedTile]:
        """``tiles`` less the doubles read over a joint (``vision.ghosts``) and the boxes of another size than the
        sure tiles round them (``vision.sizes``), their time counted as reading's."""
        t0 = time.perf_counter()
        kept = without_odd_sized(without_joint_ghosts(tiles))
        self.times.read += (time.perf_counter() - t0) * 1000
        return kept

    def _read_in(self, image: np.ndarray, view: View, points: np.ndarray,
                 within: float) -> tuple[list[DetectedTile], ViewEvidence]:
        """The tiles found in one view of ``image``, and how surely; adds the stages' time to ``times``."""
        t0 = time.perf_counter()
        found = self._found_in(image, view, points, within)
        t1 = time.perf_counter()

        def near(c: Candidate) -> bool:
            gaps = np.linalg.norm(points - c.corners.mean(axis=0), axis=1)
            return bool(len(gaps)) and float(gaps.min()) <= within

        to_read = [c for c in found if c.face == "up" or near(c)]
        boxes = np.array([c.corners for c in to_read], np.float32).reshape(-1, 4, 2)
        probs = self._in_set(self.pips.read_patches(self.corners.tile_patches(image, boxes)))
        # How surely the view's own boxes read says how well the detector saw in it (``choose_view``); the refined
        # corners read surely in nearly every view, so their certainty would no longer tell the views apart.
        boxed = self._in_set(self.pips.read(image, boxes)) if self.view_search else probs
        t2 = time.perf_counter()
        self.times = StageTimes(detect=self.times.detect + (t1 - t0) * 1000, read=self.times.read + (t2 - t1) * 1000)
        read_probs = dict(zip((id(c) for c in to_read), probs, strict=True))
        # tiles a train's links took back (under the detector's bar) do not judge the view: the links follow the
        # view's own boxes, and in a view that drew them askew they add tiles read unsurely
        up = [p.max(axis=-1) for c, p in zip(to_read, boxed, strict=True)
              if c.face == "up" and c.score >= self.detector.threshold]
        evidence = ViewEvidence(sure_tiles=sum(c.score >= SURE for c in found),
                                read_certainty=float(np.mean(up)) if up else 0.0)
        return [self._tile(c, read_probs.get(id(c))) for c in found], evidence

    def _in_set(self, probs: np.ndarray) -> np.ndarray:
        """Per-half probabilities over 0..NUM_VALUES-1 -> over 0..max_value, renormalised."""
        probs = probs[:, :, : self.max_value + 1]
        return probs / np.maximum(probs.sum(axis=-1, keepdims=True), 1e-12)

    def _found_in(self, image: np.ndarray, view: View, points: np.ndarray, within: float) -> list[Candidate]:
        """The detector's tiles in ``view`` of ``image``, in the frame's pixels (parallelograms once stretched);
        ``points`` and ``within`` as ``read``'s, looked at as the frame is (the hub's camera)."""
        if view.straight:
            return self.detector.detect(image, points, within)
        stretched, affine = view.warp(image)
        found = self.detector.detect(stretched)
        if not found:
            return []
        corners = to_frame(np.stack([c.corners for c in found]), affine)  # one inverse for all of them
        return [Candidate(q, c.score, c.face) for q, c in zip(corners, found, strict=True)]

    @staticmethod
    def _tile(c: Candidate, probs: np.ndarray | None) -> DetectedTile:
        centers = half_centers(c.corners[None])[0]
        halves = tuple(
            HalfReading(
                center=(float(centers[k, 0]), float(centers[k, 1])),
                probs=() if probs is None else tuple(float(p) for p in probs[k]),
            )
            for k in range(2)
        )
        corners = tuple((float(x), float(y)) for x, y in c.corners)
        return DetectedTile(corners=corners, halves=halves, confidence=c.score, face=c.face)  # type: ignore[arg-type]
