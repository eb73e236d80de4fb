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

from vision.geometry import quad_params

if TYPE_CHECKING:
    from vision.detector import Candidate

TURN = math.radians(20)  # how far a linked tile's axis may turn from its neighbour's (boxes on smeared tiles turn)
SIZE = 0.15  # how much its length and width may differ from its neighbour's, as a share
REACH = 0.2  # how far its end may lie from its neighbour's end, as a share of the neighbour's length


def _ends(corners: np.ndarray) -> np.ndarray:
    """(N, 2, 2): the middle of each quad's two short edges."""
    return np.stack([(corners[:, 0] + corners[:, 1]) / 2, (corners[:, 2] + corners[:, 3]) / 2], axis=1)


def linked(a: np.ndarray, b: np.ndarray) -> bool:
    """Do the quads ``a`` and ``b`` (4, 2) lie end to end as two tiles of one train do."""
    (_, ang_a, len_a, wid_a), (_, ang_b, len_b, wid_b) = (quad_params(q[None]) for q in (a, b))
    turn = abs((float(ang_a[0] - ang_b[0]) + math.pi / 2) % math.pi - math.pi / 2)
    if turn > TURN:
        return False
    if abs(len_a[0] / len_b[0] - 1) > SIZE or abs(wid_a[0] / wid_b[0] - 1) > SIZE:
        return False
    ends_a, ends_b = _ends(a[None])[0], _ends(b[None])[0]
    gaps = np.linalg.norm(ends_a[:, None] - ends_b[None], axis=2)
    # the nearest ends touch, and the far ends lie apart by the two tiles' length (not overlapping)
    k, m = np.unravel_index(int(np.argmin(gaps)), gaps.shape)
    far = float(np.linalg.norm(ends_a[1 - k] - ends_b[1 - m]))
    return gaps[k, m] <= REACH * len_b[0] and abs(far - (len_a[0] + len_b[0])) <= REACH * len_b[0]


def with_train_links(candidates: Sequence[Candidate], bar: float, sure: float) -> list[Candidate]:
    """The candidates scoring at least ``bar``, then, surest first, each weaker face-up one that lies end to end
    with a face-up tile scored at least ``sure`` or with one taken so (a run is taken tile by tile from its ends).

    Only sure tiles start a run: a doubtful one is as likely a vein in a stone table, and a run grown from it would
    add false tiles one after another. The candidates are assumed already rid of duplicates
    (``vision.detector.decode``)."""
    taken = [c for c in candidates if c.score >= bar]
    roots = [c for c in taken if c.face == "up" and c.score >= sure]
    weak = sorted((c for c in candidates if c.score < bar and c.face == "up"), key=lambda c: -c.score)
    while True:
        k = next((k for k, c in enumerate(weak) if any(linked(c.corners, t.corners) for t in roots)), None)
        if k is None:
            return taken
        taken.append(weak[k])
        roots.append(weak.pop(k))
