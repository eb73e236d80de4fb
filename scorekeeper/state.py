"""Read-only snapshots of a game: what the web page, the LEDs and the tests look at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .tiles import Tile


@dataclass(frozen=True, slots=True)
class OpenDouble:
    train: str
    value: int


@dataclass(frozen=True, slots=True)
class PlacedTile:
    """A tile as it lies in a train: ``inner`` touches the tile before it, ``outer`` is open."""

    inner: int
    outer: int

    @property
    def tile(self) -> Tile:
        return Tile.of(self.inner, self.outer)


@dataclass(frozen=True, slots=True)
class RoundResult:
    engine: int
    scores: Mapping[str, int]
    went_out: str | None


@dataclass(frozen=True, slots=True)
class LastPlay:
    player: str
    train: str
    tile: Tile


@dataclass(frozen=True)
class GameState:
    """Everything about a game at one moment, as plain typed values (what ``/api/state`` serialises)."""

    players: tuple[str, ...]
    preset: str
    set: int
    phase: str  # "idle" (between rounds), "playing" or "ended" (round over, not yet scored)
    round: int | None  # engine of the current or next round; None once the game is over
    engine: int | None
    turn: str | None
    trains: Mapping[str, tuple[PlacedTile, ...]]
    ends: Mapping[str, int]
    markers: frozenset[str]
    open_doubles: tuple[OpenDouble, ...]
    owes_follow_up: bool
    hand_counts: Mapping[str, int] | None
    last_play: LastPlay | None
    rounds: tuple[RoundResult, ...]
    scores: Mapping[str, int]
    leaders: tuple[str, ...]
    game_over: bool
    went_out: str | None
