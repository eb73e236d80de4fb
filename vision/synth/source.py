"""The synthetic game as a camera: a ``FrameSource`` that the hub (and the demo) can watch.

Frames carry game time (frame index / fps). ``speed`` paces them against the wall clock
(1.0 = real time) or, left as None, hands them out as fast as they are read. The truth and
the players' inputs for each frame are there for whoever drives the hub in a test or demo.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vision.frames import Frame, FrameSource

from .game import FrameTruth, GameTiming, PlayerInput, SyntheticGame


class SyntheticGameSource(FrameSource):
    def __init__(
        self,
        seed: int = 1,
        width: int = 1280,
        height: int = 960,
        players: Sequence[str] | int = 4,
        rules: str | Mapping[str, Any] = "classic",
        rounds: int = 1,
        timing: GameTiming | None = None,
        slots: Mapping[int, str] | None = None,
        illegal_rate: float = 0.06,
        speed: float | None = None,
        name: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed is not None and speed <= 0:
            raise ValueError(f"speed must be positive, not {speed}")
        self._args = dict(seed=seed, players=players, rules=rules, rounds=rounds, width=width, height=height,
                          timing=timing, illegal_rate=illegal_rate, slots=slots)
        self.speed = speed
        self.name = name or f"synthetic:{seed}"
        self._sleep, self._clock = sleep, clock
        self.game: SyntheticGame | None = None
        self._next = 0
        self._last_truth: FrameTruth | None = None
        self._pace: float | None = None  # wall clock at game time 0

    def open(self) -> None:
        """Plays the game through (fast: no pixels yet); frames are drawn as they are read."""
        if self.game is None:
            self.game = SyntheticGame(**self._args)  # type: ignore[arg-type]
        self._next = 0
        self._pace = None

    def read(self) -> Frame | None:
        game = self._need()
        if self._next >= game.frame_count:
            return None
        i = self._next
        t = game.time_of(i)
        if self.speed is not None:
            now = self._clock()
            if self._pace is None:
                self._pace = now - t / self.speed
            wait = self._pace + t / self.speed - now
            if wait > 0:
                self._sleep(wait)
        image, truth = game.render(i)
        self._last_truth = truth
        self._next += 1
        return Frame(image, t, self.name, i)

    def close(self) -> None:
        self._pace = None

    # ------------------------------------------------------------- truth
    def _need(self) -> SyntheticGame:
        if self.game is None:
            raise RuntimeError("open the source first")
        return self.game

    @property
    def truth(self) -> FrameTruth | None:
        """The truth of the frame last read."""
        return self._last_truth

    @property
    def inputs(self) -> tuple[PlayerInput, ...]:
        return tuple(self._need().inputs)

    def inputs_at(self, index: int) -> tuple[PlayerInput, ...]:
        return self._need().inputs_at(index)

    def table_log(self) -> dict[str, Any]:
        return self._need().table_log()
