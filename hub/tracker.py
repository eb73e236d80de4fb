"""From tiles detected frame by frame to the board as it really lies: settled tiles, in their trains.

A detection is only a hint. A tile *settles* once it has been seen in the same place for
``stable_s`` seconds (most frames of that span; a hand may hide it now and then), so a
hand over the table, a shadow, or a tile on its way down never counts. A settled tile that
is nudged straight stays the same tile. A settled tile that is not seen for ``gone_s``
has been taken away. Settled tiles are placed in trains by following each chain out
from its hub slot, end to end, so a bend in a long train does not lose it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from vision.types import DetectedTile

from .calibration import Calibration
from .geometry import Quad, angle_gap


@dataclass(frozen=True)
class TrackerSettings:
    stable_s: float = 0.5  # seen in one place this long before a tile counts
    gone_s: float = 0.6  # unseen this long and a settled tile has been taken away
    min_confidence: float = 0.5  # weaker detections are ignored
    seen_share: float = 0.6  # of the frames while settling, at least this share must show the tile
    still_px: float = 0.2  # in tile widths: moving more restarts the settling clock
    still_deg: float = 10.0
    match_px: float = 0.7  # in tile widths: a detection this close to a tile is that tile
    push_px: float = 1.2  # in tile lengths: a settled tile nudged this far (same reading) is still that tile
    link_px: float = 0.45  # in tile widths: the gap allowed between neighbours in a train


@dataclass(frozen=True)
class SeenTile:
    """A settled tile. ``inner``/``outer`` are the pip probabilities of the half nearer/farther from the hub
    along its train (for a loose tile: its two halves in the detector's order)."""

    id: int  # the same physical tile keeps its id for as long as it is seen
    corners: tuple[tuple[float, float], ...]
    inner: tuple[float, ...]
    outer: tuple[float, ...]
    settled_at: float  # game time at which it had been still long enough

    @property
    def centre(self) -> tuple[float, float]:
        xs, ys = zip(*self.corners, strict=True)
        return (sum(xs) / 4, sum(ys) / 4)

    @property
    def reading(self) -> tuple[int, int]:
        """The most likely values, inner then outer (not yet checked against the rules)."""
        return (int(np.argmax(self.inner)), int(np.argmax(self.outer)))


@dataclass(frozen=True)
class Board:
    """The table at one moment, settled tiles only."""

    time: float
    engine: SeenTile | None  # the tile in the hub's centre
    trains: Mapping[str, tuple[SeenTile, ...]]  # each train from its slot outwards, up to the first gap
    loose: tuple[SeenTile, ...]  # face up, settled, in no train (laid-out hands, a tile set aside)
    unsettled: int  # detections not (yet) settled: a hand, a tile being laid

    def find(self, tile_id: int) -> tuple[str | None, int | None]:
        """Where a tile lies: (train, index), ("engine", 0), (None, None) when loose or absent."""
        if self.engine is not None and self.engine.id == tile_id:
            return ("engine", 0)
        for train, tiles in self.trains.items():
            for i, t in enumerate(tiles):
                if t.id == tile_id:
                    return (train, i)
        return (None, None)


@dataclass(frozen=True)
class BoardChange:
    """A tile that settled or was taken away, at game time ``time``."""

    kind: str  # "settled" | "gone"
    tile: SeenTile
    time: float


class _Track:
    """One physical tile followed across frames (mutable, private to the tracker)."""

    def __init__(self, tid: int, det: DetectedTile, quad: Quad, t: float, frame: int) -> None:
        self.id = tid
        self.quad = quad
        self.ref = quad.half_centres()  # half order is fixed by where halves[0] was first seen
        self.anchor = (quad.centre, quad.angle, t, frame)
        self.sums = np.zeros((2, 0))
        self._last = np.zeros((2, 0))
        self.samples = 0
        self.seen = 0  # frames showing it since the anchor
        self.last_seen = t
        self.settled_at: float | None = None
        self.missing = False
        self.observe(det, quad, t, frame)

    def observe(self, det: DetectedTile, quad: Quad, t: float, frame: int) -> None:
        self.quad = quad
        self.last_seen = t
        self.missing = False
        self.seen += 1
        probs = [np.asarray(h.probs, np.float64) for h in det.halves]
        centres = np.array([h.center for h in det.halves], np.float64)
        if np.linalg.norm(centres[0] - self.ref[1]) < np.linalg.norm(centres[0] - self.ref[0]):
            probs.reverse()
            centres = centres[::-1]
        self.ref = centres
        if not all(len(p) for p in probs):
            return
        if self.sums.shape[1] != len(probs[0]):
            self.sums = np.zeros((2, len(probs[0])))
            self.samples = 0
        self._last = np.stack(probs)
        self.sums += self._last
        self.samples += 1

    def restart(self, t: float, frame: int) -> None:
        """The tile moved: its settling and its reading start again from this frame."""
        self.anchor = (self.quad.centre, self.quad.angle, t, frame)
        self.seen = 1
        self.sums = self.sums[:, :0] if not self.samples else self._last.copy()
        self.samples = 1 if self._last.size else 0

    @property
    def probs(self) -> np.ndarray:
        return self.sums / max(self.samples, 1)

    def reading(self) -> tuple[int, int] | None:
        if not self.samples:
            return None
        a, b = np.argmax(self.probs, axis=1)
        return (int(min(a, b)), int(max(a, b)))


class Tracker:
    """Feed it each frame's detections; it returns what settled or went, and keeps the board."""

    def __init__(self, calibration: Calibration, settings: TrackerSettings | None = None) -> None:
        self.calibration = calibration
        self.settings = settings or TrackerSettings()
        self._tracks: dict[int, _Track] = {}
        self._ids = itertools.count(1)
        self._frame = 0
        self.board = Board(0.0, None, MappingProxyType({}), (), 0)

    def reset(self) -> None:
        """Forget every tile (after the camera or the hub moved, the old positions mean nothing)."""
        self._tracks.clear()

    def update(self, detections: Sequence[DetectedTile], t: float) -> list[BoardChange]:
        s = self.settings
        self._frame += 1
        frame = self._frame
        dets = [d for d in detections if d.face == "up" and d.confidence >= s.min_confidence]
        quads = [Quad.of(d.corners) for d in dets]
        matched = self._associate(dets, quads, t)
        changes: list[BoardChange] = []
        for i, (det, quad) in enumerate(zip(dets, quads, strict=True)):
            track = matched.get(i)
            if track is None:
                track = _Track(next(self._ids), det, quad, t, frame)
                self._tracks[track.id] = track
                continue
            track.observe(det, quad, t, frame)
            centre, angle, _, _ = track.anchor
            moved = np.linalg.norm(quad.centre - centre) > s.still_px * quad.width
            if moved or math.degrees(angle_gap(quad.angle, angle)) > s.still_deg:
                track.restart(t, frame)
        seen = {id(tr) for tr in matched.values()}
        for track in list(self._tracks.values()):
            if id(track) not in seen:
                track.missing = True
                if t - track.last_seen >= s.gone_s:
                    del self._tracks[track.id]
                    if track.settled_at is not None:
                        changes.append(BoardChange("gone", self._seen(track, None), t))
                continue
            if track.settled_at is None and self._is_settled(track, t, frame):
                track.settled_at = t
                changes.append(BoardChange("settled", self._seen(track, None), t))
        self.board = self._build_board(t)
        return changes

    # ------------------------------------------------------------ association
    def _associate(self, dets: list[DetectedTile], quads: list[Quad], t: float) -> dict[int, _Track]:
        """Each detection to at most one track: nearest first, then settled tiles nudged a little further."""
        s = self.settings
        tracks = list(self._tracks.values())
        if not tracks or not dets:
            return {}
        centres = np.array([q.centre for q in quads])
        tcentres = np.array([tr.quad.centre for tr in tracks])
        dist = np.linalg.norm(centres[:, None, :] - tcentres[None, :, :], axis=2)
        near = s.match_px * np.array([tr.quad.width for tr in tracks])
        push = s.push_px * np.array([tr.quad.length if tr.settled_at is not None else 0.0 for tr in tracks])
        out: dict[int, _Track] = {}
        used: set[int] = set()
        for limit in (near, push):
            rows, cols = np.nonzero(dist <= limit[None, :])
            for k in np.argsort(dist[rows, cols], kind="stable"):
                i, j = int(rows[k]), int(cols[k])
                if i in out or j in used:
                    continue
                if limit is push and dist[i, j] > near[j] and not self._same_reading(dets[i], tracks[j]):
                    continue
                out[i] = tracks[j]
                used.add(j)
        return out

    @staticmethod
    def _same_reading(det: DetectedTile, track: _Track) -> bool:
        values = det.values
        return values is not None and tuple(sorted(values)) == track.reading()

    def _is_settled(self, track: _Track, t: float, frame: int) -> bool:
        _, _, since, since_frame = track.anchor
        if t - since < self.settings.stable_s or track.missing:
            return False
        frames = frame - since_frame + 1
        return track.samples > 0 and track.seen >= self.settings.seen_share * frames

    # ------------------------------------------------------------ the board
    def _seen(self, track: _Track, inner_first: bool | None) -> SeenTile:
        probs = track.probs
        a, b = (tuple(float(x) for x in probs[k]) for k in range(2)) if track.samples else ((), ())
        if inner_first is False:
            a, b = b, a
        corners = tuple((float(x), float(y)) for x, y in track.quad.corners)
        return SeenTile(track.id, corners, a, b, track.settled_at if track.settled_at is not None else 0.0)

    def _build_board(self, t: float) -> Board:
        settled = [tr for tr in self._tracks.values() if tr.settled_at is not None]
        unsettled = sum(1 for tr in self._tracks.values() if tr.settled_at is None and not tr.missing)
        cal = self.calibration
        centre = np.asarray(cal.centre, np.float64)
        engine: _Track | None = None
        best = cal.radius * 0.6
        for tr in settled:
            d = float(np.linalg.norm(tr.quad.centre - centre))
            if d < best:
                engine, best = tr, d
        free = {tr.id: tr for tr in settled if tr is not engine}
        trains: dict[str, tuple[SeenTile, ...]] = {}
        for slot, train in sorted(cal.trains.items()):
            trains[train] = tuple(self._follow(slot, free))
        loose = tuple(self._seen(tr, None) for tr in free.values())
        seen_engine = None if engine is None else self._seen(engine, None)
        return Board(t, seen_engine, MappingProxyType(trains), loose, unsettled)

    def _follow(self, slot: int, free: dict[int, _Track]) -> list[SeenTile]:
        """The chain of tiles out of ``slot``: the first tile lies along the slot, each next one starts
        where the last one ends. Tiles taken into the chain are removed from ``free``."""
        cal, s = self.calibration, self.settings
        if not free:
            return []
        ids = list(free)
        quads = [free[i].quad for i in ids]
        centres = np.array([q.centre for q in quads])
        axes = np.array([q.axis for q in quads])
        lengths = np.array([q.length for q in quads])
        widths = np.array([q.width for q in quads])
        taken = np.zeros(len(ids), bool)
        centre = np.asarray(cal.centre, np.float64)
        ray = cal.direction(slot)
        rel = centres - centre
        along = rel @ ray
        across = np.abs(rel[:, 0] * ray[1] - rel[:, 1] * ray[0])
        turn = np.degrees(np.arccos(np.clip(np.abs(axes @ ray), 0.0, 1.0)))
        fits = (along > 0) & (across < 0.6 * widths) & (along - lengths / 2 < cal.radius + 0.5 * widths) & (turn < 30)
        chain: list[SeenTile] = []
        if not fits.any():
            return chain
        k = int(np.argmin(np.where(fits, along, np.inf)))
        entry = centre
        while True:
            taken[k] = True
            track = free.pop(ids[k])
            halves = track.ref  # in the order of its probabilities
            inner_first = np.linalg.norm(halves[0] - entry) <= np.linalg.norm(halves[1] - entry)
            chain.append(self._seen(track, bool(inner_first)))
            exit_point = track.quad.exit_point(entry)
            direction = exit_point - track.quad.centre
            # distance from the exit point to every free tile's face, in each tile's own frame
            local = exit_point - centres
            a = np.abs(np.sum(local * axes, axis=1)) - lengths / 2
            c = np.abs(local[:, 0] * -axes[:, 1] + local[:, 1] * axes[:, 0]) - widths / 2
            gap = np.hypot(np.maximum(a, 0), np.maximum(c, 0))
            ahead = (centres - exit_point) @ direction > 0
            ok = ~taken & ahead & (gap < s.link_px * widths)
            if not ok.any():
                return chain
            k = int(np.argmin(np.where(ok, gap, np.inf)))
            entry = exit_point
