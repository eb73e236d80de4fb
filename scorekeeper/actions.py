"""Table-log actions as typed values: what a camera, a button or a phone reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Union

MEXICAN = "mexican"

HandReport = Union[int, tuple[tuple[int, int], ...]]
"""A player's hand at scoring: a pip total, or the tiles left (as raw pairs)."""


@dataclass(frozen=True, slots=True)
class Start:
    engine: int
    first: str
    hands: Mapping[str, int] | None = None
    act: str = "start"


@dataclass(frozen=True, slots=True)
class Play:
    player: str
    tile: tuple[int, int]
    train: str
    act: str = "play"


@dataclass(frozen=True, slots=True)
class Draw:
    player: str
    act: str = "draw"


@dataclass(frozen=True, slots=True)
class Pass:
    player: str
    act: str = "pass"


@dataclass(frozen=True, slots=True)
class Out:
    player: str
    act: str = "out"


@dataclass(frozen=True, slots=True)
class Blocked:
    act: str = "blocked"


@dataclass(frozen=True, slots=True)
class Score:
    hands: Mapping[str, HandReport]
    act: str = "score"


Action = Union[Start, Play, Draw, Pass, Out, Blocked, Score]


def action_to_json(action: Action) -> dict:
    """The table-log form of an action."""
    if isinstance(action, Start):
        out: dict = {"act": "start", "engine": action.engine, "first": action.first}
        if action.hands is not None:
            out["hands"] = dict(action.hands)
        return out
    if isinstance(action, Play):
        return {"act": "play", "player": action.player, "tile": list(action.tile), "train": action.train}
    if isinstance(action, (Draw, Pass, Out)):
        return {"act": action.act, "player": action.player}
    if isinstance(action, Blocked):
        return {"act": "blocked"}
    hands = {p: (h if isinstance(h, int) else [list(t) for t in h]) for p, h in action.hands.items()}
    return {"act": "score", "hands": hands}
