"""Weak detections that continue a train.

Tiles in a train lie end to end, so a tile the detector scores just under its bar is far likelier real when
it lies exactly where the train's next tile would: its axis along its neighbour's, the same size, its end on
the neighbour's end. A camera shake along a train smears the joints between its tiles, and the detector then
scores the tiles in the middle of the run low while it still finds the ones at the ends surely; taken from those
ends, tile by tile, the run comes back. A weak peak with no such neighbour stays dropped.

Chosen on rendered validation scenes (seeds 700000-700119 and 720000-720059 of the held-out kind, 730000-730029 seen
from the side; never the evaluation seeds or the real photos), read as ``eval vision`` reads: 9 more of their 5,143
tiles found for 1 more false tile. Looser rules found a few more and more false ones: any tile kept starting a run,
13 more for 4 false; ends 30% of a tile apart, or sizes 25% apart, more false tiles and no more found.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from vision.geometry import axis_turn, quad_ends, quad_params

if TYPE_CHECKING:
    from vision.detector import Candidate

TURN = math.radians(20)  # how far a linked tile's axis may turn from its neighbour's (boxes on smeared tiles turn)
SIZE = 0.15  # how much its length and width may differ from its neighbour's, as a share
REACH = 0.2  # how far its end may lie from its neighbour's end, as a share of the neighbour's length


def links(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(A, B) booleans: does quad ``a[i]`` lie end to end with quad ``b[j]`` as two tiles of one train do
    (quads (A, 4, 2) and (B, 4, 2))."""
    _, ang_a, len_a, wid_a = quad_params(a)
    _, ang_b, len_b, wid_b = quad_params(b)
    turn = axis_turn(ang_a[:, None], ang_b[None])
    same_size = ((np.abs(len_a[:, None] / len_b[None] - 1) <= SIZE)
                 & (np.abs(wid_a[:, None] / wid_b[None] - 1) <= SIZE))
    ends_a, ends_b = np.stack(quad_ends(a), axis=1), np.stack(quad_ends(b), axis=1)  # (A, 2, 2), (B, 2, 2)
    gaps = np.linalg.norm(ends_a[:, None, :, None] - ends_b[None, :, None, :], axis=-1).reshape(len(a), len(b), 4)
    # the nearest ends touch, and the far ends lie apart by the two tiles' length (not overlapping)
    nearest = gaps.argmin(axis=-1)
    far = np.take_along_axis(gaps, (3 - nearest)[..., None], axis=-1)[..., 0]  # end 1-k of a against end 1-m of b
    reach = REACH * len_b[None]
    touch = np.take_along_axis(gaps, nearest[..., None], axis=-1)[..., 0] <= reach
    return (turn <= TURN) & same_size & touch & (np.abs(far - (len_a[:, None] + len_b[None])) <= reach)


def linked(a: np.ndarray, b: np.ndarray) -> bool:
    """Do the quads ``a`` and ``b`` (4, 2) lie end to end as two tiles of one train do."""
    return bool(links(a[None], b[None])[0, 0])


def with_train_links(candidates: Sequence[Candidate], bar: float, sure: float) -> list[Candidate]:
    """The candidates scoring at least ``bar``, then, surest first, each weaker face-up one that lies end to end
    with a face-up tile scored at least ``sure`` or with one taken so (a run is taken tile by tile from its ends).

    Only sure tiles start a run: a doubtful one is as likely a vein in a stone table, and a run grown from it would
    add false tiles one after another. The candidates are assumed already rid of duplicates
    (``vision.detector.decode``)."""
    taken = [c for c in candidates if c.score >= bar]
    roots = [c for c in taken if c.face == "up" and c.score >= sure]
    weak = sorted((c for c in candidates if c.score < bar and c.face == "up"), key=lambda c: -c.score)
    if not weak or not roots:
        return taken
    # every pair measured once: weak ones against each other (a run grows) and against the sure ones
    near = links(np.stack([c.corners for c in weak]), np.stack([c.corners for c in weak + roots]))
    is_root = np.arange(len(weak) + len(roots)) >= len(weak)
    left = list(range(len(weak)))
    while True:
        k = next((k for k in left if near[k, is_root].any()), None)
        if k is None:
            return taken
        taken.append(weak[k])
        left.remove(k)
        is_root[k] = True
