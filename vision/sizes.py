"""Boxes far larger or smaller than the sure tiles round them, which are no tiles.

A table holds one set of dominoes, so every tile in a frame has the same face, and the camera's perspective changes
their size only slowly across the frame. The detector now and then boxes something else as a tile: a band of a
striped cloth, a hand or a large object as a face-down tile, a few pips as a small face-up one. Such a box is seldom
the size of the tiles round it. This rule drops a tile whose size is more than ``SCALE`` times, or less than
1/``SCALE`` of, the median size of the ``NEIGHBOURS`` nearest sure tiles (scored at least ``MEASURE``), when at
least ``LEAST`` sure tiles are there to measure it by. A tile's size is the square root of its box's length
times its width: a camera that sees the table from the side shortens a tile lying along its view and not one lying
across it, but it shrinks both their areas alike.

Chosen on rendered validation scenes (seeds 700000-700199, 710000-710149 and, seen from the side, 730000-730059;
never the evaluation seeds or the real photos), read as ``eval vision`` reads, after the doubles over a joint
(``vision.ghosts``) were dropped: of their 9,863 tiles none was lost, and 44 of their 305 false tiles were dropped.
With the detector's own ``SURE`` (0.5) as the bar for measuring, 29 were, and a real photo looked at once as it is
lost its one tile found among a crowd of small false boxes scored 0.5-0.6 (real-dev pooled, the hub's look: 14 of 174
tiles found lost; none at 0.6); at 0.7 two real tiles seen from the side were lost. Five neighbours instead of eight
lost one real tile; bounds of 1.8 instead of 2 lost 5, 2.2 dropped 10 fewer false tiles; the length alone as the size
lost real tiles lying along a camera's view, and the median of every sure tile in the frame instead of the nearest
lost 10, most of them seen from the side.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.geometry import quad_params
from vision.types import DetectedTile

MEASURE = 0.6  # a tile scored at least this is sure enough to measure the others by
NEIGHBOURS = 8  # the sure tiles nearest a tile that measure it
LEAST = 3  # with fewer sure tiles than this round it, a tile is not measured
SCALE = 2.0  # how many times larger (or smaller) than its neighbours' median a tile may be


def odd_sized(tiles: Sequence[DetectedTile]) -> set[int]:
    """Indices of the tiles in ``tiles`` whose size does not fit the sure tiles nearest them."""
    if len(tiles) <= LEAST:
        return set()
    centers, _, length, width = quad_params(np.array([t.corners for t in tiles], np.float32))
    size = np.sqrt(length * width)
    sure = np.array([t.confidence >= MEASURE for t in tiles])
    gaps = np.linalg.norm(centers[:, None] - centers[None], axis=2)
    gaps[:, ~sure] = np.inf
    np.fill_diagonal(gaps, np.inf)
    near = np.argsort(gaps, axis=1, kind="stable")[:, :NEIGHBOURS]  # each tile's nearest sure tiles, nearest first
    counted = np.isfinite(np.take_along_axis(gaps, near, axis=1))
    measured = counted.sum(axis=1) >= LEAST
    if not measured.any():
        return set()
    median = np.nanmedian(np.where(counted, size[near], np.nan)[measured], axis=1)
    ratio = size[measured] / median
    return {int(i) for i in np.flatnonzero(measured)[(ratio < 1 / SCALE) | (ratio > SCALE)]}


def without_odd_sized(tiles: Sequence[DetectedTile]) -> list[DetectedTile]:
    """``tiles`` less those whose size does not fit the sure tiles round them (see the module's notes)."""
    odd = odd_sized(tiles)
    return [t for i, t in enumerate(tiles) if i not in odd]
