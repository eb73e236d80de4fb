"""The renderer's simulated game as the hub's camera, with each frame's truth kept beside it.

The hub sees only the frames. The truth (every tile, the players' button presses, the
true table log) is kept for the test double of the vision stage, for ``domino-hub watch``
and for the end-to-end checks, which compare what the hub saw with what happened.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from vision.frames import Frame, FrameSource
from vision.synth.game import FrameTruth, GameTiming, PlayerInput, SyntheticGame
from vision.synth.source import SyntheticGameSource
from vision.synth.truth import TileTruth


class SyntheticSource(FrameSource):
    """A SyntheticGameSource whose per-frame truth can be looked up by frame (a recent window of it).

    The supervisor reads a few frames ahead of the camera loop, so "the truth of the last
    frame read" is not enough: truth is kept per frame index for the last ``keep`` frames.
    """

    def __init__(
        self,
        seed: int = 1,
        width: int = 1280,
        height: int = 960,
        players: Sequence[str] | int = 4,
        rules: str | Mapping[str, Any] = "classic",
        rounds: int = 1,
        timing: GameTiming | None = None,
        illegal_rate: float = 0.06,
        speed: float | None = None,
        keep: int = 64,
    ) -> None:
        self.inner = SyntheticGameSource(
            seed=seed, width=width, height=height, players=players, rules=rules, rounds=rounds, timing=timing,
            illegal_rate=illegal_rate, speed=speed,
        )
        self.name = self.inner.name
        self.keep = keep
        self._truth: OrderedDict[int, FrameTruth] = OrderedDict()
        self.closed = threading.Event()  # set once closed: a supervisor closes it off its own thread

    def open(self) -> None:
        """Plays the game through on the first open; a reopen (after a fault) carries on where it was,
        as a live camera would."""
        self.closed.clear()
        if self.inner.game is None:
            self.inner.open()

    def read(self) -> Frame | None:
        frame = self.inner.read()
        if frame is not None and self.inner.truth is not None:
            self._truth[frame.index] = self.inner.truth
            while len(self._truth) > self.keep:
                self._truth.popitem(last=False)
        return frame

    def close(self) -> None:
        self.inner.close()
        self.closed.set()

    @property
    def game(self) -> SyntheticGame:
        if self.inner.game is None:
            raise RuntimeError("open the source first")
        return self.inner.game

    def truth(self, index: int) -> FrameTruth:
        try:
            return self._truth[index]
        except KeyError:
            raise KeyError(f"no truth kept for frame {index} (only the last {self.keep} frames read)") from None

    def tiles_for(self, frame: Frame) -> tuple[TileTruth, ...]:
        """The true tiles of a frame read from this source (what the truth-based reader 'sees')."""
        return self.truth(frame.index).tiles

    def inputs_at(self, index: int) -> tuple[PlayerInput, ...]:
        return self.inner.inputs_at(index)

    def table_log(self) -> dict[str, Any]:
        return self.inner.table_log()
