"""Tiles: the one value every other part of the game is built from."""

from __future__ import annotations

from dataclasses import dataclass

SUPPORTED_SETS = (6, 9, 12, 15, 18)


@dataclass(frozen=True, order=True, slots=True)
class Tile:
    """A domino a|b, normalised so that ``low <= high`` (a tile may be turned)."""

    low: int
    high: int

    @staticmethod
    def of(a: int, b: int) -> Tile:
        return Tile(a, b) if a <= b else Tile(b, a)

    @property
    def is_double(self) -> bool:
        return self.low == self.high

    @property
    def pips(self) -> int:
        return self.low + self.high

    def carries(self, value: int) -> bool:
        return self.low == value or self.high == value

    def other(self, value: int) -> int:
        """The value left open when this tile is laid against ``value``."""
        return self.high if self.low == value else self.low

    def __str__(self) -> str:
        return f"{self.low}|{self.high}"


def full_set(n: int) -> list[Tile]:
    """Every tile of a double-``n`` set, each exactly once."""
    return [Tile(a, b) for a in range(n + 1) for b in range(a, n + 1)]


def set_size(n: int) -> int:
    return (n + 1) * (n + 2) // 2
