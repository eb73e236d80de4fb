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
        tiles = list(self.truth_for(frame))
        if not tiles:
            return []
        c = np.stack([np.asarray(t.corners, np.float64).reshape(4, 2) for t in tiles])  # (N, 4, 2)
        end0, end1 = (c[:, 0] + c[:, 1]) / 2, (c[:, 2] + c[:, 3]) / 2
        mid0, mid1 = (c[:, 0] + c[:, 3]) / 2, (c[:, 1] + c[:, 2]) / 2  # the divider's ends
        inside = np.stack([_share_inside(np.stack([c[:, 0], c[:, 1], mid1, mid0], 1), w, h),
                           _share_inside(np.stack([mid0, mid1, c[:, 2], c[:, 3]], 1), w, h)], 1)  # (N, 2)
        out = []
        for k, t in enumerate(tiles):
            # how much of what lies in the frame shows (the rest is under a hand, a cup, a tile)
            shows = t.visible / max(1e-6, float(inside[k].mean()))
            if shows < self.min_visible or inside[k].max() < self.min_in_frame:
                continue
            centres = ((3 * end0[k] + end1[k]) / 4, (3 * end1[k] + end0[k]) / 4)
            halves = tuple(
                HalfReading(
                    (float(centre[0]), float(centre[1])),
                    () if t.face != "up" else self._probs(value if share >= self.min_in_frame else None),
                )
                for centre, value, share in zip(centres, t.values, inside[k], strict=True)
            )
            corners = tuple((float(x), float(y)) for x, y in c[k])
            out.append(DetectedTile(corners, halves, 0.95, t.face))  # type: ignore[arg-type]
        return out


def _share_inside(quads: np.ndarray, w: int, h: int) -> np.ndarray:
    """For each (convex) quad (N, 4, 2): the share of it inside a w x h frame, by sampling it."""
    a, b, c, d = (quads[:, None, k] for k in range(4))
    u, v = _GRID[None, :, :1], _GRID[None, :, 1:]
    p = (1 - u) * (1 - v) * a + u * (1 - v) * b + u * v * c + (1 - u) * v * d  # (N, samples, 2)
    ok = (p[..., 0] >= -0.5) & (p[..., 0] <= w - 0.5) & (p[..., 1] >= -0.5) & (p[..., 1] <= h - 0.5)
    return ok.mean(axis=1)
