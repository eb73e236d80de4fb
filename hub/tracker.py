"""From tiles detected frame by frame to the board as it really lies: settled tiles, in their trains.

A detection is only a hint. A tile *settles* once it has been seen in the same place for
``stable_s`` seconds (most frames of that span; a hand may hide it now and then), so a
hand over the table, a shadow, or a tile on its way down never counts. A settled tile that
is nudged straight stays the same tile. A settled tile that is not seen for ``gone_s``
has been taken away. Settled tiles are placed in trains by following each chain out
from its hub slot, end to end, so a bend in a long train does not lose it. A tile the game
has recorded (claimed) is followed where it lay when recorded: the detector's box for it may
later slip onto its neighbour, but the tile itself does not move. A tile the detector mostly
takes for a back (it does so now and then with few pips, such as 0|1) can still continue a
train right after its recorded end, where a tile is laid face up; it never counts as a laid-out
hand or starts the round.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from vision.types import DetectedTile

from .calibration import Calibration
from .geometry import Quad, angle_gap

FACE_FRAMES = 8  # a tile lies face down when it was seen so in most of its last this many frames


def lies_face_down(up_share: float) -> bool:
    """Seen face down in most of its last frames (``up_share``: the share seen face up)."""
    return up_share < 0.5


@dataclass(frozen=True)
class TrackerSettings:
    stable_s: float = 0.5  # seen in one place this long before a tile counts
    gone_s: float = 0.6  # unseen this long and a settled tile has been taken away
    gone_claimed_s: float = 300.0  # the same for a tile the game holds: trains stay put all round, under
    # hands, markers and cups, so a recorded tile is only forgotten when the next round starts
    min_confidence: float = 0.3  # weaker detections are ignored (the reader keeps its own threshold too), but:
    end_confidence: float = 0.15  # where a train's next tile would lie (``open_ends``, not counting), outside the
    # hub's rim, the reader's own bar there (``vision.detector.END_BAR``): at 0.3 a 1|1 laid crosswise on gingham,
    # scored 0.17-0.30, was never taken (eval-hub seed 7033 at 2028x1520: 26 false alerts). Inside the rim an empty
    # slot, a tile-sized hollow, scores up to 0.25 (seed 7037 on stripes); beside the hands laid out to be counted
    # the cloth between them did (seed 7033's count). And only a box the size of a whole tile: a short one scored
    # 0.21-0.24 alongside Cy's first tile, settled in his train, and the game went astray (gate seed 5019)
    sure_confidence: float = 0.35  # the detector's own bar (``vision.detector.THRESHOLD``). Under it a detection
    # comes only where a train's next tile would lie (``open_ends``; a blank double there scores under the bar for
    # good, eval-hub seed 6015): a tile seen only so settles after ``part_s``, its first look at the bar starts its
    # reading and clock again, and a weak look at a tile once seen at the bar is ignored
    seen_share: float = 0.6  # of the frames while settling, at least this share must show the tile
    still_px: float = 0.2  # in tile widths: moving more restarts the settling clock
    still_deg: float = 10.0
    match_px: float = 0.7  # in tile widths: a detection this close to a tile is that tile
    push_px: float = 1.2  # in tile lengths: a settled tile nudged this far (same reading) is still that tile
    link_px: float = 0.45  # in tile widths: the gap allowed between neighbours in a train
    even_cost: float = 0.25  # a new tile continuing two trains' ends within this much of each other by shape
    # (where the ends meet) may have been laid on either: the reconciler weighs both alike
    shadow_share: float = 0.3  # a new tile lying this much on tiles the game holds is a second look at them
    # (a detector may see a phantom tile across two touching halves, or a held tile twice), never a play
    whole_share: float = 0.8  # a box shorter than this share of the settled tiles' is a tile seen in part (a
    # hand still over it), one longer than their length over it is no one tile (a hand, a phantom on the cloth):
    part_s: float = 2.0  # either settles only after this long, if it stays so
    clearer: float = 0.2  # while a tile settles, a look this much clearer than every earlier one (``clarity``)
    # restarts its reading there: the hand that laid it has come off it. The looks under that hand read it as
    # other tiles, and averaged in they left the reading unsure (eval-hub seeds 5011 and 5014 at 2028x1520: 13 of
    # their 17 questions; the hand leaves half a second after the tile is let go, as the tile settles)
    dismissed_share: float = 0.5  # a back lying this much where the table said a back was no tile is that back


@dataclass(frozen=True)
class SeenTile:
    """A settled tile. ``inner``/``outer`` are the pip probabilities of the half nearer/farther from the hub
    along its train (for a loose tile: its two halves in the detector's order)."""

    id: int  # the same physical tile keeps its id for as long as it is seen
    corners: tuple[tuple[float, float], ...]
    inner: tuple[float, ...]
    outer: tuple[float, ...]
    settled_at: float  # game time at which it had been still long enough
    up_share: float = 1.0  # of its last frames, the share in which the detector saw it face up
    up_since: float = 0.0  # game time since when it has lain face up (a hand laid out turns over at the end)
    sure: bool = True  # seen at least once at the detector's own bar; False: only by weak looks at a train's end

    @property
    def face_down(self) -> bool:
        """The detector mostly took it for a back: its reading is a guess (see the module's doc)."""
        return lies_face_down(self.up_share)

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
    # new tiles -> every train whose recorded end they could continue, by shape alone
    alternatives: Mapping[int, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    # new tiles that continue two trains' recorded ends about equally well by shape: only the rules or
    # the players can tell which train they were laid on
    even: frozenset[int] = frozenset()
    # face down, settled, in no train: the boneyard, hands, and now and then a face-up tile with few pips
    # that the detector takes for a back (with no reading unless the reader was told to read backs there)
    backs: tuple[SeenTile, ...] = ()

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


@dataclass(frozen=True)
class _Layout:
    """Where the settled tiles lie, by track id: kept from frame to frame until a tile comes, goes or moves."""

    engine: int | None
    trains: Mapping[str, tuple[tuple[int, bool], ...]]  # train -> (track id, inner half first) from the hub out
    loose: tuple[int, ...]
    alternatives: Mapping[int, tuple[str, ...]]
    even: frozenset[int]
    backs: tuple[int, ...]


def covered_share(quad: Quad, others: Sequence[Quad]) -> float:
    """How much of a tile's face lies on any of ``others`` (0..1, sampled on a grid over the face)."""
    if not others:
        return 0.0
    u, v = np.meshgrid(np.linspace(-0.4, 0.4, 5) * quad.length, np.linspace(-0.3, 0.3, 3) * quad.width)
    points = quad.centre + u.reshape(-1, 1) * quad.axis + v.reshape(-1, 1) * quad.across
    on = np.zeros(len(points), bool)
    for other in others:
        rel = points - other.centre
        on |= ((np.abs(rel @ other.axis) <= other.length / 2) & (np.abs(rel @ other.across) <= other.width / 2))
    return float(on.mean())


def moved_from(quad: Quad, centre: np.ndarray, angle: float, still_px: float, still_deg: float) -> bool:
    """Whether a look lies away from a place: over ``still_px`` tile widths off it, or turned over ``still_deg``."""
    return bool(np.linalg.norm(quad.centre - centre) > still_px * quad.width) or \
        math.degrees(angle_gap(quad.angle, angle)) > still_deg


def clarity(det: DetectedTile) -> float:
    """How clearly a look shows a face-up tile: the detector's score times how surely each half reads."""
    return det.confidence * float(np.prod([max(h.probs) for h in det.halves]))


class _Track:
    """One physical tile followed across frames (mutable, private to the tracker)."""

    def __init__(self, tid: int, det: DetectedTile, quad: Quad, t: float, frame: int, sure: bool) -> None:
        self.id = tid
        self.sure = sure  # seen at least once at the detector's own bar
        self.quad = quad
        self.ref = quad.half_centres()  # half order is fixed by where halves[0] was first seen
        self.anchor = (quad.centre, quad.angle, t, frame)
        self.left: tuple[np.ndarray, float, float, int, int] | None = None  # the place it last moved from, when
        # its settling began there, and the looks it had there (``back_in_place``)
        self.sums = np.zeros((2, 0))
        self._last = np.zeros((2, 0))
        self.samples = 0
        self.clearest = 0.0  # the clearest of the looks its reading holds (``clarity``)
        self._last_look = 0.0
        self.seen = 0  # frames showing it since the anchor
        self.last_seen = t
        self.settled_at: float | None = None
        self.missing = False
        # how it lay in the last frames it was seen (True: face up): a tile turns over where it lies when
        # the hands are laid out, and a tile taken from a face-down row is laid face up
        self.faces: deque[bool] = deque(maxlen=FACE_FRAMES)
        self.up_since: float | None = None  # when it last turned face up (None while it lies face down)
        self.held: tuple[int, int] | None = None  # the values the game recorded it as (low, high)
        self.observe(det, quad, t, frame)

    def observe(self, det: DetectedTile, quad: Quad, t: float, frame: int, clearer: float = math.inf) -> None:
        """One more look at it; while it settles, one ``clearer`` than every look its reading holds replaces them."""
        self.quad = quad
        self.last_seen = t
        self.missing = False
        self.seen += 1
        self.faces.append(det.face == "up")
        if self.face_down:
            self.up_since = None
        elif self.up_since is None:
            self.up_since = t
        probs = [np.asarray(h.probs, np.float64) for h in det.halves]
        centres = np.array([h.center for h in det.halves], np.float64)
        if np.linalg.norm(centres[0] - self.ref[1]) < np.linalg.norm(centres[0] - self.ref[0]):
            probs.reverse()
            centres = centres[::-1]
        self.ref = centres
        if not all(len(p) for p in probs):
            return
        self._last = np.stack(probs)
        self._last_look = clarity(det)
        if self.sums.shape != self._last.shape or (self.settled_at is None
                                                   and self._last_look >= self.clearest + clearer):
            self.read_from_last()
            return
        self.sums += self._last
        self.samples += 1
        self.clearest = max(self.clearest, self._last_look)

    def read_from_last(self) -> None:
        """Its reading starts again from the last look alone."""
        self.sums = self._last.copy()
        self.samples = 1
        self.clearest = self._last_look

    def restart(self, t: float, frame: int) -> None:
        """The tile moved: its settling starts again from this frame, and so does its reading while it
        has not settled (a tile carried in reads poorly). A settled tile nudged keeps its values: one
        frame's box round it and a hand bringing the next tile must not read it as that tile."""
        centre, angle, since, since_frame = self.anchor
        self.left = (centre, angle, since, since_frame, self.seen - 1)
        self.anchor = (self.quad.centre, self.quad.angle, t, frame)
        self.seen = 1
        if self.settled_at is None:
            if self.samples:
                self.read_from_last()
            else:
                self.sums = self.sums[:, :0]

    def back_in_place(self, quad: Quad, still_px: float, still_deg: float) -> bool:
        """Whether a look that moved it lies where it last moved from: the box round a still tile flicking
        between two fits a quarter of its width apart, in runs of a frame or two (a 6|8 in Ben's slot, eval-hub
        seed 7037 at 2028x1520: measured from either, each look at the other moved it, and it never settled).
        If so it has lain still since it came to the first of the two, and the looks at both count."""
        if self.left is None:
            return False
        centre, angle, since, since_frame, seen = self.left
        if moved_from(quad, centre, angle, still_px, still_deg):
            return False
        here, here_angle, _, _ = self.anchor
        self.anchor = (centre, angle, since, since_frame)
        self.left = (here, here_angle, since, since_frame, 0)
        self.seen += seen
        return True

    @property
    def probs(self) -> np.ndarray:
        return self.sums / max(self.samples, 1)

    @property
    def up_share(self) -> float:
        return sum(self.faces) / max(len(self.faces), 1)

    @property
    def face_down(self) -> bool:
        return lies_face_down(self.up_share)

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
        # tile id -> the train the game has it in (set by the reconciler), in the order the game took them
        self.claims: dict[int, str] = {}
        self._pinned: dict[int, Quad] = {}  # claimed tile id -> where it lay when the game took it
        self._dismissed: list[Quad] = []  # where the table said a back seen is no train's tile (``dismiss``)
        self._dirty = True  # the board must be built again (a claim or the calibration changed)
        self.alternatives: dict[int, tuple[str, ...]] = {}
        self.even: frozenset[int] = frozenset()
        self._layout = _Layout(None, MappingProxyType({}), (), MappingProxyType({}), frozenset(), ())

    def reset(self) -> None:
        """Forget every tile (after the camera or the hub moved, the old positions mean nothing)."""
        self._tracks.clear()
        self.claims.clear()
        self._pinned.clear()
        self._dismissed.clear()
        self._dirty = True

    def in_place(self, least: int = 4) -> bool:
        """Whether most settled tiles were seen where they lie on the last frame (so the camera has not moved)."""
        settled = [tr for tr in self._tracks.values() if tr.settled_at is not None]
        return len(settled) >= least and sum(not tr.missing for tr in settled) >= 0.5 * len(settled)

    def claim(self, tile_id: int, train: str, values: tuple[int, int] | None = None) -> None:
        """The game holds this tile in ``train`` (as ``values``): no other train's chain may run through it."""
        self.claims[tile_id] = train
        track = self._tracks.get(tile_id)
        if track is not None:
            self._pinned[tile_id] = track.quad
            track.held = None if values is None else (min(values), max(values))
        self._dirty = True

    def dismiss(self, tile_id: int) -> None:
        """The table said a back lying past a train's recorded end was no tile laid there: a back seen in
        that place again is left out of the trains (seed 6007: a stretch of a striped cloth by Cy's end,
        read as a back, was asked about each time its track restarted, and the second time, with Ana's
        tile just laid beside it, the table's answer named hers and the game took the stripe for it)."""
        track = self._tracks.get(tile_id)
        if track is not None and track.face_down and tile_id not in self.claims:
            self._dismissed.append(track.quad)
            self._dirty = True

    def _dismissed_back(self, track: _Track) -> bool:
        return (track.face_down and track.id not in self.claims
                and covered_share(track.quad, self._dismissed) >= self.settings.dismissed_share)

    def release_claims(self) -> None:
        """A new round: the last round's tiles are being gathered up and hold no train any more."""
        self.claims.clear()
        self._pinned.clear()
        self._dismissed.clear()
        for track in self._tracks.values():
            track.held = None
        self._dirty = True

    def update(self, detections: Sequence[DetectedTile], t: float) -> list[BoardChange]:
        s = self.settings
        self._frame += 1
        frame = self._frame
        # face-down tiles count only where their reader read them too (``hub.pipeline.HubReader``)
        ends, within = self.open_ends()
        dets = [d for d in detections if self._strong_enough(d, ends, within) and (d.face == "up" or d.values)]
        quads = [Quad.of(d.corners) for d in dets]
        matched = self._associate(dets, quads, t)
        # a weak look at a tile once seen surely is no look at it: it neither keeps it nor moves it (eval-hub
        # seed 6018: weak looks at a phantom by Dee's slot kept it there past its time, and the table's answer
        # about Dee's tile, laid beside it, took it for that tile, 16 px off where the train's next tile joins)
        weak = {i for i, det in enumerate(dets) if det.confidence < s.sure_confidence}
        ignored = {i for i, track in matched.items() if i in weak and track.sure}
        matched = {i: track for i, track in matched.items() if i not in ignored}
        changes: list[BoardChange] = []
        for i, (det, quad) in enumerate(zip(dets, quads, strict=True)):
            if i in ignored:
                continue
            track = matched.get(i)
            sure = i not in weak
            if track is None:
                track = _Track(next(self._ids), det, quad, t, frame, sure)
                self._tracks[track.id] = track
                continue
            was_down = track.face_down
            track.observe(det, quad, t, frame, s.clearer)
            self._dirty |= track.settled_at is not None and track.face_down != was_down  # turned over
            centre, angle, _, _ = track.anchor
            moved = moved_from(quad, centre, angle, s.still_px, s.still_deg)
            # first seen surely: the weak looks came while a hand may still have covered it, so it is read
            # and timed from here, as it would have been had the weak ones never come
            first_sure = sure and not track.sure and track.settled_at is None
            track.sure |= sure
            if moved and not first_sure and track.back_in_place(quad, s.still_px, s.still_deg):
                self._dirty |= track.settled_at is not None
            elif first_sure or moved:
                track.restart(t, frame)
                self._dirty |= track.settled_at is not None
        seen = {id(tr) for tr in matched.values()}
        for track in list(self._tracks.values()):
            if id(track) not in seen:
                track.missing = True
                gone_after = s.gone_claimed_s if track.id in self.claims else s.gone_s
                if t - track.last_seen >= gone_after:
                    del self._tracks[track.id]
                    self.claims.pop(track.id, None)
                    self._pinned.pop(track.id, None)
                    if track.settled_at is not None:
                        changes.append(BoardChange("gone", self._seen(track, None), t))
                continue
            if track.settled_at is None and self._is_settled(track, t, frame):
                if self._duplicate(track):
                    del self._tracks[track.id]
                    continue
                track.settled_at = t
                changes.append(BoardChange("settled", self._seen(track, None), t))
        unsettled = sum(1 for tr in self._tracks.values() if tr.settled_at is None and not tr.missing)
        if changes or self._dirty:  # trains are followed again only when a settled tile came, went or moved
            self._layout = self._lay_out()
            self._dirty = False
        self.board = self._build_board(t, unsettled)
        return changes

    def open_ends(self, counting: bool = False) -> tuple[list[tuple[float, float]], float]:
        """Where each train's next tile would lie, and how far from there a tile may be: beside the last
        tile the game holds in it, or at the mouth of its slot. A tile found there lies face up.
        ``counting``: the round is over and the hands lie face up, so beside each loose tile as well (the
        detector takes a tile with few pips in a laid-out hand for a back now and then)."""
        cal = self.calibration
        lengths = [self._placed(tr).length for tr in self._tracks.values()]
        length = float(np.median(lengths)) if lengths else cal.radius
        points: list[tuple[float, float]] = []
        for slot, train in cal.trains.items():
            held = [t for t in self.board.trains.get(train, ()) if self.claims.get(t.id) == train]
            if held:
                points.append(held[-1].centre)  # the board's tiles lie where the game took them
            else:
                mouth = np.asarray(cal.centre, np.float64) + cal.direction(slot) * cal.radius
                points.append((float(mouth[0]), float(mouth[1])))
        if counting:
            points += [t.centre for t in self.board.loose]
        return points, 1.6 * length

    def _strong_enough(self, det: DetectedTile, ends: Sequence[tuple[float, float]], within: float) -> bool:
        """Whether a detection is scored high enough to be a tile where it lies (``min_confidence``,
        ``end_confidence``)."""
        s, cal = self.settings, self.calibration
        if det.confidence >= s.min_confidence:
            return True
        return (det.confidence >= s.end_confidence and math.dist(det.center, cal.centre) > cal.radius
                and any(math.dist(det.center, end) <= within for end in ends)
                and self._whole(Quad.of(det.corners).length))

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
                if tracks[j].settled_at is not None and self._other_tile(dets[i], tracks[j]):
                    continue  # a different tile laid on or over this one: it is seen as a tile of its own
                out[i] = tracks[j]
                used.add(j)
        return out

    @staticmethod
    def _same_reading(det: DetectedTile, track: _Track) -> bool:
        values = det.values
        return values is not None and tuple(sorted(values)) == (track.held or track.reading())

    @staticmethod
    def _other_tile(det: DetectedTile, track: _Track) -> bool:
        """Whether the detection clearly reads as another tile than the settled one (a noisy reading
        of the same tile still leaves the settled values a fair chance). A recorded tile is also the
        tile the game took it for: its own reading can drift (dev seed 140: Ana's 12|11 by the engine
        came to read as 12|12, and a clear 12|11 there was taken for another tile)."""
        p0, p1 = (np.asarray(h.probs, np.float64) for h in det.halves)
        if not len(p0) or not len(p1):
            return False
        known = [v for v in (track.reading(), track.held) if v is not None]
        best = float(p0.max() * p1.max())
        for a, b in known:
            if max(a, b) >= len(p0) or p0[a] * p1[b] + p0[b] * p1[a] >= 0.01 * best:
                return False
        return bool(known)

    def _duplicate(self, track: _Track) -> bool:
        """A second detection of a tile already settled (a detector may find one tile twice, offset)."""
        reading = track.reading()
        for other in self._tracks.values():
            if other is track or other.settled_at is None:
                continue
            near = np.linalg.norm(other.quad.centre - track.quad.centre) < 0.5 * other.quad.length
            if near and other.reading() == reading:
                return True
        return False

    def _is_settled(self, track: _Track, t: float, frame: int) -> bool:
        _, _, since, since_frame = track.anchor
        if t - since < self.settings.stable_s or track.missing:
            return False
        if t - since < self.settings.part_s and not (track.sure and self._whole(track.quad.length)):
            return False
        frames = frame - since_frame + 1
        return track.samples > 0 and track.seen >= self.settings.seen_share * frames

    def _whole(self, length: float) -> bool:
        """Whether the box is the size of one whole tile, as the tiles lying settled are. Dev seed 147: a
        tile still under the hand that laid it settled as a box two thirds its size, the train's next tile
        was too far from that box to join it, and the train was lost. Dev seed 139: a faint box a third
        larger than a tile, on the striped cloth by a train's end, settled with the tile laid there and
        was taken for it. The measure is the tiles the game holds, laid flat round the hub: the hands stand on
        edge at the table's sides, where the detector may box their tops shorter as blank tiles (dev seed 130:
        three of those held the first play, a tile of the usual size, 1.5 s as too long)."""
        lengths = [tr.quad.length for tr in self._tracks.values() if tr.id in self.claims]
        if len(lengths) < 3:
            return True
        share = self.settings.whole_share
        typical = float(np.median(lengths))
        return bool(share * typical <= length <= typical / share)

    # ------------------------------------------------------------ the board
    def _seen(self, track: _Track, inner_first: bool | None) -> SeenTile:
        probs = track.probs
        a, b = (tuple(float(x) for x in probs[k]) for k in range(2)) if track.samples else ((), ())
        if inner_first is False:
            a, b = b, a
        corners = tuple((float(x), float(y)) for x, y in self._placed(track).corners)
        return SeenTile(track.id, corners, a, b, track.settled_at if track.settled_at is not None else 0.0,
                        track.up_share, track.last_seen if track.up_since is None else track.up_since, track.sure)

    def _lay_out(self) -> _Layout:
        """Where every settled tile lies: the engine, each train's chain, the loose ones (by track id)."""
        self._rehome_claims()
        settled = [tr for tr in self._tracks.values() if tr.settled_at is not None]
        cal = self.calibration
        centre = np.asarray(cal.centre, np.float64)
        engine: _Track | None = None
        best = cal.radius * 0.6
        for tr in settled:
            d = float(np.linalg.norm(tr.quad.centre - centre))
            if d < best and not tr.face_down:
                engine, best = tr, d
        held = [self._placed(tr) for tr in settled if tr.id in self.claims and not tr.missing]
        free = [tr for tr in settled if tr is not engine and not self._dismissed_back(tr)
                and (tr.id in self.claims or covered_share(tr.quad, held) < self.settings.shadow_share)]
        chains = self._chains(free)
        in_chain = {k for chain in chains.values() for k, _ in chain}
        trains = {train: tuple((free[k].id, inner_first) for k, inner_first in chains.get(train, ()))
                  for _, train in sorted(cal.trains.items())}
        loose = tuple(tr.id for k, tr in enumerate(free) if k not in in_chain and not tr.face_down)
        backs = tuple(tr.id for k, tr in enumerate(free) if k not in in_chain and tr.face_down)
        return _Layout(None if engine is None else engine.id, trains, loose, MappingProxyType(self.alternatives),
                       self.even, backs)

    def _placed(self, track: _Track) -> Quad:
        """Where a tile lies when following the trains: a recorded tile where it lay when the game took it
        (a detector box that slips onto the tile laid next must not move it there), any other where seen."""
        return self._pinned.get(track.id, track.quad)

    def _rehome_claims(self) -> None:
        """A recorded tile unseen where its track last was, with a new settled tile lying there: the track
        lost it (a hand passing over took the track along) and the new one is that tile, found again."""
        settled = [tr for tr in self._tracks.values() if tr.settled_at is not None]
        for lost in [tr for tr in settled if tr.missing and tr.id in self.claims]:
            for tr in settled:
                if tr.missing or tr.id in self.claims:
                    continue
                if covered_share(self._placed(lost), [tr.quad]) >= self.settings.shadow_share:
                    self.claims = {tr.id if k == lost.id else k: v for k, v in self.claims.items()}  # same place
                    self._pinned[tr.id] = self._pinned.pop(lost.id, lost.quad)  # the tile never moved
                    tr.held = lost.held
                    del self._tracks[lost.id]
                    break

    def _build_board(self, t: float, unsettled: int) -> Board:
        """The board with each tile's reading as it stands now (readings firm up while a tile lies still)."""
        layout, tracks = self._layout, self._tracks
        trains = {train: tuple(self._seen(tracks[tid], first) for tid, first in chain if tid in tracks)
                  for train, chain in layout.trains.items()}
        loose = tuple(self._seen(tracks[tid], None) for tid in layout.loose if tid in tracks)
        backs = tuple(self._seen(tracks[tid], None) for tid in layout.backs if tid in tracks)
        held = tracks.get(layout.engine) if layout.engine is not None else None
        engine = None if held is None else self._seen(held, None)
        return Board(t, engine, MappingProxyType(trains), loose, unsettled, layout.alternatives, layout.even, backs)

    def _chains(self, free: list[_Track]) -> dict[str, list[tuple[int, bool]]]:
        """Every train's chain out of its slot, as (index into ``free``, inner half first).

        A train's first tile lies along its slot; each next tile starts where the last one
        ends. All chains grow together, the best-fitting link anywhere first, so where two
        trains touch, a new tile goes to the train it continues best; and no chain runs
        through a tile the game already holds in another train.
        """
        cal = self.calibration
        self.alternatives, self.even = {}, frozenset()
        if not free:
            return {}
        quads = [self._placed(tr) for tr in free]
        centres = np.array([q.centre for q in quads])
        axes = np.array([q.axis for q in quads])
        lengths = np.array([q.length for q in quads])
        widths = np.array([q.width for q in quads])
        claimed = [self.claims.get(tr.id) for tr in free]
        rank = {tid: i for i, tid in enumerate(self.claims)}
        order = np.array([rank.get(tr.id, len(rank)) for tr in free], np.float64)
        down = np.array([tr.face_down for tr in free])
        taken = np.zeros(len(free), bool)
        hub = np.asarray(cal.centre, np.float64)
        chains: dict[str, list[tuple[int, bool]]] = {}
        ends: dict[str, tuple[Quad, int]] = {}  # train -> (last tile, the side the train came in by)
        recorded_ends: dict[str, tuple[Quad, int]] = {}  # the same for the last tile the game holds there

        def take(train: str, k: int, entry: np.ndarray) -> None:
            taken[k] = True
            quad = quads[k]
            into = int(np.argmin(np.linalg.norm(quad.sides() - entry, axis=1)))
            halves = free[k].ref  # in the order of its probabilities
            inner = quad.sides()[into]
            inner_first = bool(np.linalg.norm(halves[0] - inner) <= np.linalg.norm(halves[1] - inner))
            chains.setdefault(train, []).append((k, inner_first))
            ends[train] = (quad, into)
            if claimed[k] == train:
                recorded_ends[train] = (quad, into)

        in_slot: dict[str, np.ndarray] = {}  # train -> which tiles could be the first in its slot
        for slot, train in sorted(cal.trains.items()):
            ray = cal.direction(slot)
            rel = centres - hub
            along = rel @ ray
            across = np.abs(rel[:, 0] * ray[1] - rel[:, 1] * ray[0])
            turn = np.degrees(np.arccos(np.clip(np.abs(axes @ ray), 0.0, 1.0)))
            near_end = along - lengths / 2  # the first tile's inner end lies inside the hub, in its slot
            in_slot[train] = ((across < 0.6 * widths) & (turn < 30)
                              & (near_end > 0.25 * cal.radius) & (near_end < cal.radius))
            mine = np.array([c in (None, train) for c in claimed])
            fits = ~taken & mine & in_slot[train]
            if fits.any():
                take(train, int(np.argmin(np.where(fits, along, np.inf))), hub)
        self._askew_starts(free, claimed, taken, in_slot, set(ends), take)
        proposals: dict[str, tuple[float, int, int] | None] = {}
        dirty = set(ends)
        while True:
            for train in dirty:
                quad, into = ends[train]
                own = np.array([c == train for c in claimed])
                # the train's own recorded tiles first, the one the game took next before any other (a
                # train curling back beside itself touches its older tiles too); a new tile only where
                # none of them continues it
                found = None
                if (own & ~taken).any():
                    following = np.arange(len(free)) == np.argmin(np.where(own & ~taken, order, np.inf))
                    found = self._link(quad, into, centres, axes, lengths, widths, taken | ~following)
                if found is None:
                    found = self._link(quad, into, centres, axes, lengths, widths, taken | ~own)
                if found is None:
                    unclaimed = np.array([c is None for c in claimed])
                    if claimed[chains[train][-1][0]] != train:
                        unclaimed &= ~down  # a back only where a tile must lie face up: after the recorded end
                    found = self._link(quad, into, centres, axes, lengths, widths, taken | ~unclaimed)
                    found = None if found is None else (found[0] + 1.0, found[1], found[2])
                proposals[train] = found
            live = [(p[0], train, p[1], p[2]) for train, p in proposals.items() if p is not None]
            if not live:
                self._alternatives(free, claimed, in_slot, recorded_ends, centres, axes, lengths, widths)
                return chains
            _, train, k, side = min(live)
            quad, _ = ends[train]
            take(train, k, quad.sides()[side])
            dirty = {train} | {other for other, p in proposals.items() if p is not None and p[1] == k}

    def _askew_starts(self, free: list[_Track], claimed: list[str | None], taken: np.ndarray,
                      in_slot: dict[str, np.ndarray], started: set[str],
                      take: Callable[[str, int, np.ndarray], None]) -> None:
        """A tile laid askew in an empty train's slot starts that train rather than continuing a neighbour's.

        Its inner end lies in the slot's mouth, nearer the hub than a neighbour's second tile can
        start (that one starts beyond the neighbour's first tile, outside the hub), so the slot is
        where it was laid even when it lies turned too far for the strict test.
        """
        cal = self.calibration
        hub = np.asarray(cal.centre, np.float64)
        quads = [self._placed(tr) for tr in free]
        centres = np.array([q.centre for q in quads])
        axes = np.array([q.axis for q in quads])
        half = np.array([q.length / 2 for q in quads])[:, None]
        widths = np.array([q.width for q in quads])
        tips = np.stack([centres + axes * half, centres - axes * half], axis=1)  # (N, 2 ends, 2)
        nearer = np.argmin(np.linalg.norm(tips - hub, axis=2), axis=1)
        inner = tips[np.arange(len(free)), nearer] - hub
        found: list[tuple[float, str, int]] = []
        for slot, train in sorted(cal.trains.items()):
            ray = cal.direction(slot)
            along = inner @ ray
            across = np.abs(inner[:, 0] * ray[1] - inner[:, 1] * ray[0])
            turn = np.degrees(np.arccos(np.clip(np.abs(axes @ ray), 0.0, 1.0)))
            outward = (centres - hub) @ ray > along
            mine = np.array([c in (None, train) for c in claimed])
            askew = (mine & outward & (along > 0.2 * cal.radius) & (along < cal.radius)
                     & (across < 0.6 * widths) & (turn < 50))
            in_slot[train] = in_slot[train] | askew
            if train not in started:
                found += [(float(across[k] / widths[k] + turn[k] / 90), train, int(k)) for k in np.flatnonzero(askew)]
        for _, train, k in sorted(found):
            if train not in started and not taken[k]:
                take(train, k, hub)
                started.add(train)

    def _alternatives(self, free: list[_Track], claimed: list[str | None], in_slot: Mapping[str, np.ndarray],
                      recorded_ends: Mapping[str, tuple[Quad, int]], centres: np.ndarray, axes: np.ndarray,
                      lengths: np.ndarray, widths: np.ndarray) -> None:
        """Every train each new tile could continue, judged by shape alone, for the reconciler: where
        two trains' ends meet, the rules may tell which one a tile was laid on."""
        new = np.array([c is None for c in claimed])
        found: dict[int, list[str]] = {}
        fit_costs: dict[int, list[float]] = {}
        for _, train in sorted(self.calibration.trains.items()):
            costs = None
            if train in recorded_ends:
                quad, into = recorded_ends[train]
                costs, _ = self._link_costs(quad, into, centres, axes, lengths, widths, ~new)
                fits = np.isfinite(costs)
            else:
                fits = new & in_slot[train]
            for k in np.flatnonzero(fits):
                found.setdefault(free[k].id, []).append(train)
                if costs is not None:  # a slot's first tile has no end to fit: it is never weighed alike
                    fit_costs.setdefault(free[k].id, []).append(float(costs[k]))
        self.alternatives = {tid: tuple(trains) for tid, trains in found.items()}
        margin = self.settings.even_cost
        self.even = frozenset(tid for tid, c in fit_costs.items() if len(c) > 1 and sorted(c)[1] - min(c) < margin)

    def _link(self, quad: Quad, into: int, centres: np.ndarray, axes: np.ndarray, lengths: np.ndarray,
              widths: np.ndarray, taken: np.ndarray) -> tuple[float, int, int] | None:
        """The free tile that continues a train that came into ``quad`` by side ``into``, as
        (how badly it fits, its index, the side of ``quad`` it continues from)."""
        costs, sides = self._link_costs(quad, into, centres, axes, lengths, widths, taken)
        k = int(np.argmin(costs))
        return None if not np.isfinite(costs[k]) else (float(costs[k]), k, int(sides[k]))

    def _link_costs(self, quad: Quad, into: int, centres: np.ndarray, axes: np.ndarray, lengths: np.ndarray,
                    widths: np.ndarray, taken: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For every tile: how badly it would continue a train that came into ``quad`` by side ``into``
        (infinite: it cannot), and the side of ``quad`` it would continue from.

        Usually the train leaves by the opposite side; where it turns sharply round a double it
        may leave by another, which is allowed at a cost.
        """
        best = np.full(len(centres), np.inf)
        best_side = np.zeros(len(centres), int)
        for side in range(4):
            if side == into:
                continue
            cost = self._side_costs(quad, side, centres, axes, lengths, widths, taken)
            cost = cost + (0.0 if side == into ^ 1 else 0.5)
            better = cost < best
            best[better], best_side[better] = cost[better], side
        return best, best_side

    def _side_costs(self, quad: Quad, side: int, centres: np.ndarray, axes: np.ndarray, lengths: np.ndarray,
                    widths: np.ndarray, taken: np.ndarray) -> np.ndarray:
        """How badly each tile continues a train leaving ``quad`` by ``side`` (infinite: it does not). It
        must touch that side (where a train turns, the next tile pivots on a corner, so it may touch only
        there) and one of its sides must start close to the middle of it; the closer, the better."""
        s = self.settings
        p, q = quad.edge(side)
        mid = (p + q) / 2
        outward = mid - quad.centre
        outward /= np.linalg.norm(outward)
        across = np.stack([-axes[:, 1], axes[:, 0]], axis=1)
        half_l, half_w = lengths / 2, widths / 2
        corners = np.stack([centres + axes * half_l[:, None] + across * s_ * half_w[:, None]
                            for s_ in (1, -1)] + [centres - axes * half_l[:, None] + across * s_ * half_w[:, None]
                                                  for s_ in (-1, 1)], axis=1)  # (N, 4, 2)
        seg = q - p
        t = np.clip(((corners - p) @ seg) / float(seg @ seg), 0.0, 1.0)
        corner_gap = np.linalg.norm(corners - (p + t[..., None] * seg), axis=2).min(axis=1)
        end_gap = np.full(len(centres), np.inf)
        for point in (p, q, mid):
            local = point - centres
            a = np.abs(np.sum(local * axes, axis=1)) - half_l
            c = np.abs(np.sum(local * across, axis=1)) - half_w
            end_gap = np.minimum(end_gap, np.hypot(np.maximum(a, 0), np.maximum(c, 0)))
        touching = np.minimum(corner_gap, end_gap) < s.link_px * widths
        sides = np.stack([centres + axes * half_l[:, None], centres - axes * half_l[:, None],
                          centres + across * half_w[:, None], centres - across * half_w[:, None]], axis=1)
        start = np.linalg.norm(sides - mid, axis=2).min(axis=1)
        beyond = (centres - mid) @ outward > -widths  # a train turning back lies alongside its last tile
        ok = ~taken & touching & beyond & (start < 1.2 * widths)
        return np.where(ok, start / widths, np.inf)
