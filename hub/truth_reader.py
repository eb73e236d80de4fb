"""TEST DOUBLE for the vision stage: "reads" tiles from the renderer's ground truth, not from pixels.

It lets the hub's tracker, reconciler and end-to-end checks run before the ONNX models
exist, and isolates hub bugs from vision errors. It is never used at a real table: the
real reader is ``vision.reader.OnnxTileReader``. It sees roughly what a good detector
would: tiles mostly hidden by a hand, or mostly out of the frame, are not found; face-down
tiles carry no pip probabilities; the probabilities are sharp but not certain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from vision.frames import Frame
from vision.synth.truth import TileTruth
from vision.types import DetectedTile, HalfReading

TruthFor = Callable[[Frame], Sequence[TileTruth]]


class TruthReader:
    """A FrameReader (``Frame -> [DetectedTile]``) built from per-frame truth."""

    def __init__(self, truth_for: TruthFor, top: int = 12, sharpness: float = 0.98, min_visible: float = 0.7) -> None:
        self.truth_for = truth_for
        self.top = top
        self.sharpness = sharpness
        self.min_visible = min_visible

    def _probs(self, value: int) -> tuple[float, ...]:
        p = np.full(self.top + 1, (1.0 - self.sharpness) / self.top)
        p[value] = self.sharpness
        return tuple(float(x) for x in p)

    def __call__(self, frame: Frame) -> list[DetectedTile]:
        out = []
        for t in self.truth_for(frame):
            if t.visible < self.min_visible:
                continue
            corners = np.asarray(t.corners, np.float64).reshape(4, 2)
            centres = ((corners[0] + corners[1]) * 3 + (corners[2] + corners[3])) / 8, \
                ((corners[2] + corners[3]) * 3 + (corners[0] + corners[1])) / 8
            halves = tuple(
                HalfReading((float(c[0]), float(c[1])), self._probs(v) if t.face == "up" else ())
                for c, v in zip(centres, t.values, strict=True)
            )
            out.append(DetectedTile(
                tuple((float(x), float(y)) for x, y in corners),  # type: ignore[arg-type]
                halves,  # type: ignore[arg-type]
                0.95,
                t.face,
            ))
        return out
