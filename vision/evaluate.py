"""Scoring a TileReader against truth: held-out synthetic scenes and the labelled real photos.

Matching rules, the same for every model:
- synthetic: a detection and a true tile match when each one's centre lies in the middle of the
  other (within 30% of its length along it and 30% of its width across), so a box straddling two
  touching tiles matches neither; greedy by confidence, each detection taking the nearest such
  tile (in a pile of face-down tiles a detection can lie in the middles of two overlapping tiles).
  True tiles that are occluded, cut by the frame edge or held in a hand are "ignored": finding
  them is not required, and a detection on one is not a false alarm.
- halves: a matched tile's two halves pair with the true halves by position (the nearer way).
- real photos: a labelled half box is found by the detected half whose centre lies inside it
  (nearest to the box centre, each detected half used once); a labelled tile is found when both
  its halves are found by the two halves of one detection. Photos hold unlabelled tiles, so
  precision is not measured there.
- hand total: per frame, the pips of all required face-up tiles summed, against what was read.
- recall by size: required tiles grouped by their length as a share of the frame's longest side
  (SIZE_EDGES), because the detector's misses gather at the small end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.geometry import NUM_VALUES, half_centers, points_in_quads, quad_core, quad_params
from vision.realdev import LabelledPhoto
from vision.types import DetectedTile

MISSED = NUM_VALUES  # confusion-matrix column for a half that was not read at all


@dataclass(frozen=True)
class TruthTile:
    corners: np.ndarray  # (4,2)
    values: tuple[int, int]
    face: str
    ignore: bool


SIZE_EDGES = (0.05, 0.1, 0.2)  # tile length / frame's longest side: the recall-by-size groups' limits


def size_group(share: float) -> int:
    """The recall-by-size group (0 = smallest) of a tile ``share`` of the frame's longest side long."""
    return int(np.searchsorted(SIZE_EDGES, share, side="right"))


def size_group_name(k: int) -> str:
    """Group ``k`` as a range of shares, e.g. "5%-10%" (the report's row names)."""
    edges = (0.0, *SIZE_EDGES)
    return f"{edges[k]:.0%}-{SIZE_EDGES[k]:.0%}" if k < len(SIZE_EDGES) else f"{SIZE_EDGES[-1]:.0%} and more"


@dataclass
class Tally:
    """Counts over many frames; ``metrics`` turns them into the reported rates."""

    truth_tiles: int = 0
    found: int = 0
    detections: int = 0
    true_detections: int = 0
    face_right: int = 0
    halves: int = 0
    halves_found: int = 0
    halves_correct: int = 0
    tiles_up: int = 0
    tiles_exact: int = 0
    frames: int = 0
    hands_correct: int = 0
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((NUM_VALUES, NUM_VALUES + 1), np.int64))
    by_size: dict[int, list[int]] = field(default_factory=dict)  # size group -> [required tiles, found]

    def metrics(self) -> dict[str, float | int | None]:
        def rate(a: int, b: int) -> float | None:
            return round(a / b, 4) if b else None

        return {
            "tiles": self.truth_tiles,
            "tile_recall": rate(self.found, self.truth_tiles),
            "tile_precision": rate(self.true_detections, self.detections),
            "face_accuracy": rate(self.face_right, self.found),
            "halves": self.halves,
            "half_accuracy": rate(self.halves_correct, self.halves),
            "half_accuracy_of_found": rate(self.halves_correct, self.halves_found),
            "exact_tile_accuracy": rate(self.tiles_exact, self.tiles_up),
            "frames": self.frames,
            "hand_total_accuracy": rate(self.hands_correct, self.frames),
        }


def _pair_halves(truth_corners: np.ndarray, det: DetectedTile) -> tuple[int, int]:
    """Which detected half sits on true half 0 and 1 (the nearer of the two ways)."""
    t = half_centers(truth_corners[None])[0]
    d = np.array([h.center for h in det.halves])
    straight = np.linalg.norm(t - d, axis=1).sum()
    swapped = np.linalg.norm(t - d[::-1], axis=1).sum()
    return (0, 1) if straight <= swapped else (1, 0)


def score_synthetic(truth: list[TruthTile], dets: list[DetectedTile], tally: Tally,
                    frame_side: float | None = None) -> list[str]:
    """Add one frame to ``tally``; returns what went wrong in it, one line per fault. With the frame's
    longest side, the required tiles are also counted by size (``Tally.by_size``)."""
    faults: list[str] = []
    tally.frames += 1
    order = sorted(range(len(dets)), key=lambda i: -dets[i].confidence)
    t_corners = np.array([t.corners for t in truth], np.float32).reshape(-1, 4, 2)
    d_corners = np.array([d.corners for d in dets], np.float32).reshape(-1, 4, 2)
    both = bool(len(dets) and len(truth))
    t_centres, d_centres = t_corners.mean(axis=1), d_corners.mean(axis=1)
    t_in_d = points_in_quads(t_centres, quad_core(d_corners)) if both else None
    d_in_t = points_in_quads(d_centres, quad_core(t_corners)) if both else None
    d_on_t = points_in_quads(d_centres, t_corners) if both else None
    gaps = np.linalg.norm(t_centres[:, None] - d_centres[None], axis=2)  # (truth, det) centre distances
    match: dict[int, int] = {}  # det -> truth
    taken: set[int] = set()
    for i in order:
        fits = [j for j in range(len(truth)) if j not in taken and t_in_d[j, i] and d_in_t[i, j]] if both else []
        if fits:
            j = min(fits, key=lambda j: gaps[j, i])
            match[i] = j
            taken.add(j)
    lengths = quad_params(t_corners)[2] if frame_side else None
    true_total = read_total = 0
    for i, det in enumerate(dets):
        j = match.get(i)
        if j is None:
            ignored = d_on_t is not None and any(d_on_t[i, k] and truth[k].ignore for k in range(len(truth)))
            if not ignored:
                tally.detections += 1
                faults.append(f"false tile at ({det.center[0]:.0f},{det.center[1]:.0f})")
                read_total += sum(det.values or (0, 0))
            continue
        if truth[j].ignore:
            continue
        tally.detections += 1
        tally.true_detections += 1
        read_total += sum(det.values or (0, 0)) if det.face == "up" else 0
    for j, t in enumerate(truth):
        if t.ignore:
            continue
        tally.truth_tiles += 1
        up = t.face == "up"
        if up:
            tally.tiles_up += 1
            tally.halves += 2
            true_total += sum(t.values)
        i = next((i for i, k in match.items() if k == j), None)
        if lengths is not None:
            group = tally.by_size.setdefault(size_group(lengths[j] / frame_side), [0, 0])
            group[0] += 1
            group[1] += i is not None
        if i is None:
            faults.append(f"missed {t.values} ({t.face}) at {np.round(t.corners.mean(axis=0)).tolist()}")
            if up:
                for v in t.values:
                    tally.confusion[v, MISSED] += 1
            continue
        det = dets[i]
        tally.found += 1
        tally.face_right += det.face == t.face
        if not up:
            continue
        if det.face != "up":
            faults.append(f"face-up {t.values} called face-down")
            for v in t.values:
                tally.confusion[v, MISSED] += 1
            continue
        order_h = _pair_halves(t.corners, det)
        got = tuple(det.halves[k].value for k in order_h)
        tally.halves_found += 2
        for v, g in zip(t.values, got, strict=True):
            tally.confusion[v, g] += 1
            tally.halves_correct += v == g
        if got == tuple(t.values):
            tally.tiles_exact += 1
        else:
            faults.append(f"read {t.values} as {got}")
    if true_total == read_total:
        tally.hands_correct += 1
    else:
        faults.append(f"hand total {read_total}, truly {true_total}")
    return faults


def score_photo(photo: LabelledPhoto, dets: list[DetectedTile], tally: Tally) -> list[str]:
    """Add one labelled photo to ``tally`` (no precision: the photos hold unlabelled tiles)."""
    faults: list[str] = []
    tally.frames += 1
    found_halves = [(i, k, np.array(d.halves[k].center), d.halves[k].value) for i, d in enumerate(dets)
                    if d.face == "up" for k in range(2)]
    cand = []
    for h, lab in enumerate(photo.halves):
        x0, y0, x1, y1 = lab.box
        for f, (_, _, c, _) in enumerate(found_halves):
            if x0 <= c[0] <= x1 and y0 <= c[1] <= y1:
                cand.append((float(np.hypot(c[0] - lab.center[0], c[1] - lab.center[1])), h, f))
    assigned: dict[int, int] = {}  # labelled half -> found half
    used: set[int] = set()
    for _, h, f in sorted(cand):
        if h not in assigned and f not in used:
            assigned[h] = f
            used.add(f)
    read_total = 0
    for h, lab in enumerate(photo.halves):
        tally.halves += 1
        f = assigned.get(h)
        if f is None:
            tally.confusion[lab.value, MISSED] += 1
            faults.append(f"missed half {lab.value} at {np.round(lab.center).tolist()}")
            continue
        value = found_halves[f][3]
        tally.halves_found += 1
        tally.confusion[lab.value, value] += 1
        tally.halves_correct += value == lab.value
        read_total += value
        if value != lab.value:
            faults.append(f"read half {lab.value} as {value} at {np.round(lab.center).tolist()}")
    for a, b in photo.tiles:
        tally.truth_tiles += 1
        tally.tiles_up += 1
        fa, fb = assigned.get(a), assigned.get(b)
        if fa is None or fb is None or found_halves[fa][0] != found_halves[fb][0]:
            faults.append(f"tile {photo.halves[a].value}|{photo.halves[b].value} not found as one tile")
            continue
        tally.found += 1
        tally.face_right += 1
        if found_halves[fa][3] == photo.halves[a].value and found_halves[fb][3] == photo.halves[b].value:
            tally.tiles_exact += 1
    true_total = sum(h.value for h in photo.halves)
    tally.hands_correct += read_total == true_total
    return faults
