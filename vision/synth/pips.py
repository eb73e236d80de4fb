"""Where the pips of each value sit on a half, as real sets print them.

Coordinates are (along, across) in [-1, 1] on the square half: ``along`` runs along the
tile's long axis (+1 towards the tile's end), ``across`` along its short axis. 0-9 use a
3x3 grid, 10-12 three lines of four along the tile, 13-15 three lines of five and 16-18
three lines of six (double-15 and double-18 sets).

Sets differ in where a 10 puts the two pips of its middle line. Most double-12 sets print a ring,
the middle line's two ends (``TEN_RING``), which looks like a stretched 8; some put them on its
two inner places (``TEN_INNER``). A reader that learnt only one of them reads the other as an 8
or a 6.
"""

from __future__ import annotations

from functools import cache

import numpy as np

MAX_VALUE = 18

TEN_RING, TEN_INNER = "ring", "inner"
TEN_LAYOUTS = (TEN_RING, TEN_INNER)

_G3 = (-1.0, 0.0, 1.0)
_G4 = (-1.0, -1 / 3, 1 / 3, 1.0)


def _grid(along: tuple[float, ...], across: tuple[float, ...]) -> list[tuple[float, float]]:
    return [(a, c) for a in along for c in across]


def _line(n: int) -> tuple[float, ...]:
    return tuple(np.linspace(-1.0, 1.0, n)) if n > 1 else (0.0,)


def _layout(value: int, ten: str) -> list[tuple[float, float]]:
    if value == 0:
        return []
    if value == 1:
        return [(0.0, 0.0)]
    if value <= 9:
        corners_diag = [(-1.0, -1.0), (1.0, 1.0)]
        other_diag = [(-1.0, 1.0), (1.0, -1.0)]
        sides_across = [(0.0, -1.0), (0.0, 1.0)]  # middle of the two long-side rows
        mids_along = [(-1.0, 0.0), (1.0, 0.0)]
        centre = [(0.0, 0.0)]
        table = {
            2: corners_diag,
            3: corners_diag + centre,
            4: corners_diag + other_diag,
            5: corners_diag + other_diag + centre,
            6: corners_diag + other_diag + sides_across,
            7: corners_diag + other_diag + sides_across + centre,
            8: corners_diag + other_diag + sides_across + mids_along,
            9: _grid(_G3, _G3),
        }
        return table[value]
    # three lines along the tile; the middle line holds what the outer two leave over
    per_line = 4 if value <= 12 else 5 if value <= 15 else 6
    outer = _line(per_line)
    middle_n = value - 2 * per_line
    middle: tuple[float, ...]
    if middle_n == per_line:
        middle = outer
    elif middle_n == per_line - 2 and per_line == 4:  # 10
        middle = (-1 / 3, 1 / 3) if ten == TEN_INNER else (-1.0, 1.0)
    else:
        middle = _line(middle_n)
    return [(a, -1.0) for a in outer] + [(a, 0.0) for a in middle] + [(a, 1.0) for a in outer]


@cache
def layout(value: int, ten: str) -> np.ndarray:
    """Pip centres of ``value`` as an (n, 2) float32 array of (along, across) in [-1, 1]; ``ten`` is one of
    TEN_LAYOUTS, the set's way of printing a 10."""
    if not 0 <= value <= MAX_VALUE:
        raise ValueError(f"no pip layout for {value}: values run 0..{MAX_VALUE}")
    if ten not in TEN_LAYOUTS:
        raise ValueError(f"a 10 is printed as one of {', '.join(TEN_LAYOUTS)}, not {ten!r}")
    pts = np.asarray(_layout(value, ten), np.float32).reshape(-1, 2)
    assert len(pts) == value
    pts.setflags(write=False)
    return pts


def pip_radius(value: int) -> float:
    """Pip radius as a fraction of the half's side: denser layouts use smaller pips."""
    if value <= 9:
        return 0.09
    if value <= 12:
        return 0.07
    if value <= 15:
        return 0.054
    return 0.045


def grid_extent(value: int) -> tuple[float, float]:
    """Half-extent (along, across) of the pip grid as a fraction of the half's side."""
    if value <= 9:
        return 0.29, 0.29
    if value <= 12:
        return 0.33, 0.29
    if value <= 15:
        return 0.36, 0.30
    return 0.37, 0.31


def grid_shift(value: int) -> float:
    """How far the pip grid sits from the half's centre toward the tile's end (fraction of the
    half's side): crowded halves keep their pips clear of the divider and its spinner pin."""
    return 0.012 if value <= 9 else 0.028
