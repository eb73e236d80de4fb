"""TEST DOUBLE for the vision stage: "reads" tiles from the renderer's ground truth, not from pixels.

It lets the hub's tracker, reconciler and end-to-end checks run before the ONNX models
exist, and separates hub bugs from vision errors. It is never used at a real table: the
real reader is ``vision.reader.OnnxTileReader``. It sees roughly what a good detector
would: a tile mostly hidden (by a hand, a cup) is not found; a tile partly out of the
frame is found, but a half that is mostly outside cannot be read (its probabilities are
flat); face-down tiles carry no pip probabilities; readable halves are sharp, not certain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from vision.frames import Frame
from vision.synth.truth import TileTruth
from vision.types import DetectedTile, HalfReading

TruthFor = Callable[[Frame], Sequence[TileTruth]]

_GRID = np.stack(np.meshgrid(np.linspace(0.1, 0.9, 5), np.linspace(0.1, 0.9, 5)), -1).reshape(-1, 2)


class TruthReader:
    """A FrameReader (``Frame -> [DetectedTile]``) built from per-frame truth."""

    def __init__(self, truth_for: TruthFor, top: int = 12, sharpness: float = 0.98, min_visible: float = 0.7,
                 min_in_frame: float = 0.45) -> None:
        self.truth_for = truth_for
        self.top = top
        self.sharpness = sharpness
        self.min_visible = min_visible
        self.min_in_frame = min_in_frame

    def _probs(self, value: int | None) -> tuple[float, ...]:
        if value is None:
            return tuple([1.0 / (self.top + 1)] * (self.top + 1))
        p = np.full(self.top + 1, (1.0 - self.sharpness) / self.top)
        p[value] = self.sharpness
        return tuple(float(x) for x in p)

    def __call__(self, frame: Frame) -> list[DetectedTile]:
        h, w = frame.image.shape[:2]
        out = []
        for t in self.truth_for(frame):
            c = np.asarray(t.corners, np.float64).reshape(4, 2)
            end0, end1 = (c[0] + c[1]) / 2, (c[2] + c[3]) / 2
            mid0, mid1 = (c[0] + c[3]) / 2, (c[1] + c[2]) / 2  # the divider's ends
            halves_quads = (np.stack([c[0], c[1], mid1, mid0]), np.stack([mid0, mid1, c[2], c[3]]))
            inside = [_share_inside(q, w, h) for q in halves_quads]
            hidden_by_things = t.visible / max(1e-6, float(np.mean(inside)))  # how much of what is in frame shows
            if hidden_by_things < self.min_visible or max(inside) < self.min_in_frame:
                continue
            centres = ((3 * end0 + end1) / 4, (3 * end1 + end0) / 4)
            halves = tuple(
                HalfReading(
                    (float(centre[0]), float(centre[1])),
                    () if t.face != "up" else self._probs(value if share >= self.min_in_frame else None),
                )
                for centre, value, share in zip(centres, t.values, inside, strict=True)
            )
            out.append(DetectedTile(
                tuple((float(x), float(y)) for x, y in c),  # type: ignore[arg-type]
                halves,  # type: ignore[arg-type]
                0.95,
                t.face,
            ))
        return out


def _share_inside(quad: np.ndarray, w: int, h: int) -> float:
    """The share of a (convex) quad that lies inside a w x h frame, by sampling it."""
    a, b, c, d = quad
    u, v = _GRID[:, :1], _GRID[:, 1:]
    points = (1 - u) * (1 - v) * a + u * (1 - v) * b + u * v * c + (1 - u) * v * d
    ok = (points[:, 0] >= -0.5) & (points[:, 0] <= w - 0.5) & (points[:, 1] >= -0.5) & (points[:, 1] <= h - 0.5)
    return float(ok.mean())
