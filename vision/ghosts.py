"""Boxes over the joint of two tiles laid end to end, which read as doubles.

Tiles in a train match where they meet: a 3|8 laid against an 8|5 shows 8 beside 8 at the joint. A box the
detector draws over that joint, half on each tile, reads as the double 8|8, a tile that is not there. The
detector drops such a box when stronger tiles cover most of it (``vision.detector.decode``); this rule uses the
reading as well, after the pip reader: a double is a ghost when each of its halves lies on a half of another
tile that reads the same value, or when one half does and that tile is at least as sure and lies along it (the
other tile at the joint unseen: cut by the frame's edge, or scored under the bar). A real double laid in a train
touches its neighbours' halves but does not lie on them.

Chosen on rendered validation scenes (seeds 700000-700199, 710000-710149 and, seen from the side, 730000-730059;
never the evaluation seeds or the real photos), read as ``eval vision`` reads: of their 9,863 tiles, 3 real doubles
lost, and 64 of their 369 false tiles dropped. Both halves alone: 37 false tiles dropped and no real one; one half
alone, with no more asked of the tile under it: 77 false and 11 real. The hub's single look on 700000-700199,
710000-710149 and 740000-740149: 62 of 310 false tiles dropped, 2 real doubles lost.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.geometry import axis_turn, points_in_quads, quad_params
from vision.trains import TURN
from vision.types import DetectedTile, HalfReading


def joint_ghosts(tiles: Sequence[DetectedTile]) -> set[int]:
    """Indices of the face-up tiles in ``tiles`` that read as doubles over the joint of two others."""
    up = [i for i, t in enumerate(tiles) if t.face == "up" and t.values is not None]
    if len(up) < 2:
        return set()
    quads = np.array([tiles[i].corners for i in up], np.float32)
    angles = quad_params(quads)[1]
    ghosts = set()
    for k, i in enumerate(up):
        tile = tiles[i]
        value = tile.halves[0].value
        if value != tile.halves[1].value:
            continue
        centers = np.array([h.center for h in tile.halves], np.float32)
        inside = points_in_quads(centers, quads)  # (2 halves, tiles)
        inside[:, k] = False
        under = [[m for m in np.flatnonzero(inside[h]) if _half_at(tiles[up[m]], centers[h]).value == value]
                 for h in range(2)]
        both = any(a != b for a in under[0] for b in under[1])
        turn = axis_turn(angles, angles[k])
        along = any(tiles[up[m]].confidence >= tile.confidence and turn[m] <= TURN for m in under[0] + under[1])
        if both or along:
            ghosts.add(i)
    return ghosts


def without_joint_ghosts(tiles: Sequence[DetectedTile]) -> list[DetectedTile]:
    """``tiles`` less the doubles that are boxes over a joint (see the module's notes)."""
    ghosts = joint_ghosts(tiles)
    return [t for i, t in enumerate(tiles) if i not in ghosts]


def _half_at(tile: DetectedTile, point: np.ndarray) -> HalfReading:
    """The half of ``tile`` whose centre is nearer ``point``."""
    gaps = [float(np.hypot(h.center[0] - point[0], h.center[1] - point[1])) for h in tile.halves]
    return tile.halves[int(np.argmin(gaps))]
