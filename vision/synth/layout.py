"""Where things lie on the table, in millimetres: the hub, the trains, loose tiles and props.

Trains grow out of the hub's slots with their tiles touching end to end. Each new tile keeps
the heading when it can and otherwise turns (pivoting on the inside corner, so the tiles still
touch) away from other tiles, the hub, the table's edge and the seats' counting zones, looking
a few tiles ahead and preferring the widest open stretch of table, so a train does not run into a
dead end. A train boxed in anyway doubles back along itself or crosses a counting zone; it never
leaves the table and never lies on a player's own tiles. Doubles may lie across the train.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np


def rects(centers: np.ndarray, angles: np.ndarray, length: float, width: float) -> np.ndarray:
    """:func:`rect` for K rectangles at once: (K, 4, 2)."""
    a = np.stack([np.cos(angles), np.sin(angles)], -1) * (length / 2)
    n = np.stack([-np.sin(angles), np.cos(angles)], -1) * (width / 2)
    return np.stack([centers - a + n, centers - a - n, centers + a - n, centers + a + n], axis=1)


def rect(center: np.ndarray, angle: float, length: float, width: float) -> np.ndarray:
    """Corners (4, 2) of a rectangle in TileTruth winding: corners[0..1] at the end opposite ``angle``."""
    a = np.array([math.cos(angle), math.sin(angle)]) * (length / 2)
    n = np.array([-math.sin(angle), math.cos(angle)]) * (width / 2)
    c = np.asarray(center, np.float64)
    return np.stack([c - a + n, c - a - n, c + a - n, c + a + n])


@dataclass(eq=False)
class Piece:
    """A tile: ``angle`` points from the half holding values[0] to the half holding values[1]."""

    values: tuple[int, int]
    center: np.ndarray
    angle: float
    face: str = "up"
    z: float = 0.0  # height of its underside above the table (a held tile)
    train: str | None = None
    position: int | None = None
    owner: str | None = None
    held: bool = False
    tint: float = 1.0  # per-tile brightness jitter

    def footprint(self, dims: TileDims) -> np.ndarray:
        return rect(self.center, self.angle, dims.length, dims.width)


@dataclass(eq=False)
class Prop:
    """A non-tile object. ``size`` is (length, width) in mm; ``height`` its top above the table."""

    kind: str  # "coin" | "train-token" | "cup" | "phone" | "hand"
    center: np.ndarray
    angle: float
    size: tuple[float, float]
    height: float
    colour: tuple[int, int, int]
    train: str | None = None
    z: float = 0.0  # underside height (a hand hovering)
    reach_from: np.ndarray | None = None  # hands: where the arm comes from (table mm, off the table)
    accent: tuple[int, int, int] = (0, 0, 0)  # sleeve, liquid, screen...
    motion: tuple[float, float] = (0.0, 0.0)  # mm moved during the exposure (motion blur)
    grip: float = 1.0  # hands: 1 fingers stretched, less when curled round a tile
    sleeve: bool = True  # hands: a sleeve (``accent``) covers the far part of the arm
    mirror: bool = False  # hands: a left hand (thumb on the other side)


@dataclass(frozen=True)
class TileDims:
    length: float
    width: float
    thickness: float


@dataclass
class Hub:
    center: np.ndarray
    radius: float
    slot_angles: tuple[float, ...]  # slot k+1 points at slot_angles[k] (clockwise on screen)
    slot_inner: float  # radius where a slot's tile starts
    colour: tuple[int, int, int]
    trains: dict[int, str] = field(default_factory=dict)  # slot number -> train name
    height: float = 6.0

    def slot_start(self, number: int) -> tuple[np.ndarray, float]:
        a = self.slot_angles[number - 1]
        d = np.array([math.cos(a), math.sin(a)])
        return self.center + d * self.slot_inner, a


@dataclass
class Table:
    """The table top: an axis-aligned rectangle; outside it lies the floor."""

    x0: float
    y0: float
    x1: float
    y1: float
    seats: dict[str, tuple[np.ndarray, float]] = field(default_factory=dict)  # player -> (edge point, inward angle)

    def inside_many(self, pts: np.ndarray, margin: float) -> np.ndarray:
        """(K, M, 2) point sets -> (K,) whether each lies wholly ``margin`` mm inside the table."""
        x, y = pts[..., 0], pts[..., 1]
        ok = (x >= self.x0 + margin) & (x <= self.x1 - margin) & (y >= self.y0 + margin) & (y <= self.y1 - margin)
        return ok.all(axis=-1)

    @property
    def center(self) -> np.ndarray:
        return np.array([(self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2])


@dataclass
class Layout:
    table: Table
    dims: TileDims
    hub: Hub | None = None
    pieces: list[Piece] = field(default_factory=list)
    props: list[Prop] = field(default_factory=list)


class Occupancy:
    """A coarse raster of what lies where, to keep new tiles off old ones."""

    CELL = 2.5  # mm

    def __init__(self, table: Table, margin: float = 200.0) -> None:
        self.x0, self.y0 = table.x0 - margin, table.y0 - margin
        w = int((table.x1 - table.x0 + 2 * margin) / self.CELL) + 1
        h = int((table.y1 - table.y0 + 2 * margin) / self.CELL) + 1
        self.grid = np.zeros((h, w), np.int32)

    def _cells(self, pts: np.ndarray) -> np.ndarray:
        return np.stack([(pts[:, 0] - self.x0) / self.CELL, (pts[:, 1] - self.y0) / self.CELL], 1)

    def mark(self, corners: np.ndarray, ident: int, grow: float = 1.0) -> None:
        c = corners.mean(axis=0)
        grown = c + (corners - c) * (1 + grow / max(np.linalg.norm(corners - c, axis=1).min(), 1e-6))
        cv2.fillConvexPoly(self.grid, np.round(self._cells(grown) * 16).astype(np.int32), ident, cv2.LINE_8, 4)

    def mark_disc(self, center: np.ndarray, radius: float, ident: int) -> None:
        c = self._cells(center[None])[0]
        cv2.circle(self.grid, (int(c[0] * 16), int(c[1] * 16)), int(radius / self.CELL * 16), ident, -1, cv2.LINE_8, 4)

    def hits_many(
        self, centers: np.ndarray, angles: np.ndarray, length: float, width: float, ignore: int = 0,
        ignore_from: int | None = None, soft: int | None = None,
    ) -> np.ndarray:
        """How many sample points of each of K rectangles fall off the grid or on something other
        than ``ignore``: (K,) counts. Ids >= ``ignore_from`` and the id ``soft`` (a reserved zone)
        do not count either."""
        u = np.stack([np.cos(angles), np.sin(angles)], -1)[:, None, None, :]
        n = np.stack([-np.sin(angles), np.cos(angles)], -1)[:, None, None, :]
        s_along = (np.linspace(-0.5, 0.5, max(3, int(length / 6))) * (length - 2.5))[None, :, None, None]
        s_across = (np.linspace(-0.5, 0.5, max(2, int(width / 6))) * (width - 2.5))[None, None, :, None]
        pts = centers[:, None, None, :] + s_along * u + s_across * n  # K, A, C, 2
        cx = np.floor((pts[..., 0] - self.x0) / self.CELL).astype(np.intp)
        cy = np.floor((pts[..., 1] - self.y0) / self.CELL).astype(np.intp)
        h, w = self.grid.shape
        inside = (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
        vals = self.grid[np.clip(cy, 0, h - 1), np.clip(cx, 0, w - 1)]
        hit = (vals != 0) & (vals != ignore)
        if ignore_from is not None:
            hit &= vals < ignore_from
        if soft is not None:
            hit &= vals != soft
        return (~inside | hit).reshape(len(centers), -1).sum(axis=1)


HUB_ID = -1
ZONE_ID = -2  # seats' counting zones and the boneyard: trains keep out
BONE_ID = -3  # the boneyard's tiles, inside its zone: even a boxed-in train keeps off them
ROW_ID = -4  # ids ROW_ID, ROW_ID - 1, ...: the places of each seat's own tiles; nothing else may lie there


def row_id(seat: int) -> int:
    """The occupancy id of seat ``seat``'s tile places (a hard keep-out for trains)."""
    return ROW_ID - seat


@dataclass(frozen=True)
class _Room:
    """Open table round a train's end, on a coarse raster: the area (mm^2) of the open stretch each
    cell belongs to, and each cell's distance (mm) to the nearest thing or the table's edge."""

    origin: np.ndarray  # table mm of the raster's corner
    cell: float
    area: np.ndarray
    clear: np.ndarray

    def _cells(self, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h, w = self.area.shape
        ix = np.clip(np.floor((pts[:, 0] - self.origin[0]) / self.cell).astype(np.intp), 0, w - 1)
        iy = np.clip(np.floor((pts[:, 1] - self.origin[1]) / self.cell).astype(np.intp), 0, h - 1)
        return iy, ix

    def area_at(self, pts: np.ndarray) -> np.ndarray:
        return self.area[self._cells(pts)]

    def clear_at(self, pts: np.ndarray) -> np.ndarray:
        return self.clear[self._cells(pts)]


@dataclass
class TrainEnd:
    point: np.ndarray  # middle of the open end
    heading: float
    count: int
    last_id: int
    curl: float  # this train's preferred bend, in degrees per tile


class Builder:
    """Lays tiles on a layout, keeping them apart, and grows trains from the hub."""

    def __init__(self, layout: Layout, rng: np.random.Generator, doubles_across: bool) -> None:
        self.layout = layout
        self.rng = rng
        self.doubles_across = doubles_across
        self.occ = Occupancy(layout.table)
        self.ends: dict[str, TrainEnd] = {}
        self._ids = 0
        self.stuck = 0  # tiles laid over something because no heading was free
        if layout.hub is not None:
            self.occ.mark_disc(layout.hub.center, layout.hub.radius + 2.0, HUB_ID)

    def _new_id(self) -> int:
        self._ids += 1
        return self._ids

    def reserve_zone(self, corners: np.ndarray) -> None:
        self.occ.mark(corners, ZONE_ID, grow=0.0)

    def add(self, piece: Piece, mark: bool = True) -> int:
        piece.tint = float(np.clip(self.rng.normal(1.0, 0.015), 0.95, 1.04))  # no two tiles quite alike
        self.layout.pieces.append(piece)
        ident = self._new_id()
        if mark:
            d = self.layout.dims
            self.occ.mark(piece.footprint(d), ident)
        return ident

    # ---------------------------------------------------------------- trains
    def start_train(self, train: str, slot: int) -> None:
        hub = self.layout.hub
        assert hub is not None
        point, angle = hub.slot_start(slot)
        self.ends[train] = TrainEnd(point, angle, 0, HUB_ID, float(self.rng.normal(0, 6)))

    def start_free(self, train: str, point: np.ndarray, heading: float) -> None:
        """A chain that starts anywhere on the table, not at the hub."""
        self.ends[train] = TrainEnd(np.asarray(point, np.float64), heading, 0, 0, float(self.rng.normal(0, 8)))

    def next_on(self, train: str, values: tuple[int, int], commit: bool = True) -> Piece:
        """The next tile on ``train`` (values are (inner, outer)); placed only when ``commit``."""
        end = self.ends[train]
        d = self.layout.dims
        double = values[0] == values[1]
        across = double and self.doubles_across and end.count > 0
        along = d.width if across else d.length
        if end.count == 0:
            choice: tuple[float, np.ndarray, float] | None = (end.heading, end.point, 0.0)
        else:
            choice = self._choose(end, along, across)
            if choice is None and across:  # no room across the train: the double lies along it
                across, along = False, d.length
                choice = self._choose(end, along, across)
            if choice is None:
                choice = self._boxed_in(end, along, across)
        heading, start, _ = choice
        u = np.array([math.cos(heading), math.sin(heading)])
        center = start + u * (along / 2)
        angle = heading + math.pi / 2 if across else heading
        piece = Piece(values, center, angle, "up", train=train, position=end.count)
        if commit:
            ident = self.add(piece)
            end.point, end.heading, end.count, end.last_id = start + u * along, heading, end.count + 1, ident
            end.curl = float(np.clip(end.curl + self.rng.normal(0, 2.5), -14, 14))
        return piece

    def has_room(self, train: str, values: tuple[int, int]) -> bool:
        """Whether the next tile on ``train`` would lie clear of every other tile; asking draws
        nothing from the random stream, so a game that never asks lays the same table."""
        state, stuck = self.rng.bit_generator.state, self.stuck
        try:
            piece = self.next_on(train, values, commit=False)
        finally:
            self.rng.bit_generator.state = state
            boxed, self.stuck = self.stuck > stuck, stuck
        if boxed:
            return False
        d = self.layout.dims
        hits = self.occ.hits_many(piece.center[None], np.array([piece.angle]), d.length, d.width,
                                  self.ends[train].last_id, soft=ZONE_ID)
        return bool(hits[0] == 0)

    def _starts_after(self, end: TrainEnd, headings: np.ndarray) -> np.ndarray:
        """Middle of the new tile's inner end for each heading, pivoting on the inside corner (K, 2)."""
        w = self.layout.dims.width
        n_old = np.array([-math.sin(end.heading), math.cos(end.heading)])
        n_new = np.stack([-np.sin(headings), np.cos(headings)], -1)
        u_new = np.stack([np.cos(headings), np.sin(headings)], -1)
        delta = np.remainder(headings - end.heading + math.pi, 2 * math.pi) - math.pi
        side = np.sign(delta)[:, None]
        pivot = end.point + side * n_old * (w / 2)
        turned = pivot - side * n_new * (w / 2) + u_new * 0.3
        return np.where(np.abs(delta)[:, None] < 1e-9, end.point, turned)

    _TURNS = np.array([0, 8, -8, 16, -16, 28, -28, 42, -42, 60, -60, 80, -80, 100, -100, 130, -130, 160, -160],
                      np.float64)
    _BOXED = np.arange(-180.0, 180.1, 4.0)  # every turn, doubling back included: only when boxed in

    _COARSE = 2  # the room ahead is judged on every second occupancy cell: quick, and fine enough

    def _room(self, around: np.ndarray, reach: float, last_id: int) -> _Room:
        """The open table within ``reach`` mm of ``around`` that a train could still grow into."""
        occ, table, step = self.occ, self.layout.table, self._COARSE
        cell = occ.CELL * step
        h, w = occ.grid.shape
        ci, cj = (around - np.array([occ.x0, occ.y0])) / occ.CELL
        r = reach / occ.CELL
        i0, i1 = max(0, int(ci - r)), min(w, int(ci + r) + 1)
        j0, j1 = max(0, int(cj - r)), min(h, int(cj + r) + 1)
        sub = occ.grid[j0:j1:step, i0:i1:step]
        xs = occ.x0 + (np.arange(i0, i1, step) + 0.5) * occ.CELL
        ys = occ.y0 + (np.arange(j0, j1, step) + 0.5) * occ.CELL
        m = 20.0  # as far from the edge as a train tile must keep
        on = ((ys[:, None] >= table.y0 + m) & (ys[:, None] <= table.y1 - m)
              & (xs[None, :] >= table.x0 + m) & (xs[None, :] <= table.x1 - m))
        mask = (on & ((sub == 0) | (sub == last_id))).astype(np.uint8)
        clear = np.minimum(cv2.distanceTransform(mask, cv2.DIST_L2, 3), r) * cell  # no obstacle in view: huge
        k = max(1, int(self.layout.dims.width * 0.4 / cell))
        narrow = cv2.erode(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * k + 1, 2 * k + 1)))
        _, labels, stats, _ = cv2.connectedComponentsWithStats(narrow, connectivity=8)
        area = stats[:, cv2.CC_STAT_AREA].astype(np.float64) * cell**2
        area[0] = 0.0  # the background: blocked
        origin = np.array([occ.x0 + i0 * occ.CELL, occ.y0 + j0 * occ.CELL])
        return _Room(origin, cell, area[labels], clear)

    def _candidates(self, end: TrainEnd, deg: np.ndarray, along: float, across: bool) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float, np.ndarray]:
        """The next tile turned by each of ``deg`` degrees: headings, start points, unit directions,
        centres, its length and width as laid, and whether each lies wholly on the table."""
        d = self.layout.dims
        headings = end.heading + np.radians(deg)
        starts = self._starts_after(end, headings)
        u = np.stack([np.cos(headings), np.sin(headings)], -1)
        centers = starts + u * (along / 2)
        ln, wd = (d.width, d.length) if across else (d.length, d.width)
        on_table = self.layout.table.inside_many(rects(centers, headings, ln, wd), 20.0)
        return headings, starts, u, centers, ln, wd, on_table

    def _choose(self, end: TrainEnd, along: float, across: bool) -> tuple[float, np.ndarray, float] | None:
        """The best free heading for the next tile: straight on if it can, turning as little as it must;
        None when no heading is free."""
        d = self.layout.dims
        table = self.layout.table
        deg = self._TURNS + end.curl + self.rng.normal(0, 1.5, len(self._TURNS))
        headings, starts, u, centers, ln, wd, on_table = self._candidates(end, deg, along, across)
        free = (self.occ.hits_many(centers, headings, ln, wd, end.last_id) == 0) & on_table
        if not free.any():  # boxed in: cross a reserved zone rather than another tile
            free = (self.occ.hits_many(centers, headings, ln, wd, end.last_id, soft=ZONE_ID) == 0) & on_table
        # look three tiles further straight on, all candidates at once
        k3 = np.array([0.5, 1.5, 2.5])[:, None, None]
        c2 = (starts[None] + u[None] * (along + d.length * k3)).reshape(-1, 2)
        h3 = np.tile(headings, 3)
        blocked = (self.occ.hits_many(c2, h3, d.length, d.width, end.last_id) > 0).astype(float)
        blocked += ~table.inside_many(rects(c2, h3, d.length, d.width), 20.0)
        ahead = blocked.reshape(3, -1).sum(axis=0)
        # the open stretch past the new tile's far end: a pocket too small for a few more tiles is a dead end
        room = self._room(end.point, along + d.length * 6.5, end.last_id)
        pocket = np.clip(1.0 - room.area_at(starts + u * (along + d.width * 0.6)) / (6 * d.length * d.width), 0.0, 1.0)
        # and how close things crowd the way on: trains keep to open table rather than squeeze along others
        k4 = np.array([1.0, 2.0, 4.0])[:, None, None]
        gap = room.clear_at((starts[None] + u[None] * (along + d.length * k4)).reshape(-1, 2)).reshape(3, -1)
        crowd = np.clip(1.0 - gap / (1.5 * d.length), 0.0, 1.0).sum(axis=0)
        cost = (np.abs(deg) / 12.0 + 2.5 * ahead + 6.0 * pocket + 4.0 * crowd
                + self.rng.uniform(0, 0.6, len(deg)))
        if free.any():
            k = int(np.argmin(np.where(free, cost, np.inf)))
            return float(headings[k]), starts[k], float(deg[k])
        return None

    def _boxed_in(self, end: TrainEnd, along: float, across: bool) -> tuple[float, np.ndarray, float]:
        """No turn is free: double back alongside the last tile if that is free, else lie over as little
        as possible -- never off the table, never on a player's own tiles."""
        self.stuck += 1
        table = self.layout.table
        deg = self._BOXED
        headings, starts, _, centers, ln, wd, on_table = self._candidates(end, deg, along, across)
        hits = self.occ.hits_many(centers, headings, ln, wd, end.last_id, soft=ZONE_ID).astype(np.float64)
        on_rows = self.occ.hits_many(centers, headings, ln, wd, end.last_id, ignore_from=BONE_ID) > 0
        cost = hits + np.abs(deg) / 1000.0 + np.where(on_rows, 1e6, 0.0)
        if not on_table.any():  # nothing lies wholly on the table: the one that lies nearest its middle
            cost = np.linalg.norm(centers - table.center, axis=1)
        else:
            cost = np.where(on_table, cost, np.inf)
        k = int(np.argmin(cost))
        return float(headings[k]), starts[k], float(deg[k])

    # ------------------------------------------------------------ loose tiles
    def scatter(
        self,
        values: list[tuple[int, int]],
        center: np.ndarray,
        radius: float,
        face: str,
        owner: str | None = None,
        overlap_share: float = 0.0,
    ) -> list[Piece]:
        """Loose tiles dropped around ``center`` (a boneyard, a pile), mostly apart; every one is placed."""
        d = self.layout.dims
        table = self.layout.table
        out = []
        tries = 30
        first_id = self._ids + 1  # tiles of this pile may lie on each other, never on anything else
        for v in values:
            allow_overlap = self.rng.random() < overlap_share
            r = radius * np.sqrt(self.rng.random(tries))
            a = self.rng.uniform(0, 2 * math.pi, tries)
            centers = center + r[:, None] * np.stack([np.cos(a), np.sin(a)], -1)
            angles = self.rng.uniform(0, 2 * math.pi, tries)
            on_table = table.inside_many(rects(centers, angles, d.length, d.width), 5.0)
            ok = on_table & (self.occ.hits_many(centers, angles, d.length + 2, d.width + 2,
                                                ignore_from=first_id if allow_overlap else None) == 0)
            if not ok.any():  # no room left: it lands on the pile (never on a train or the hub)
                ok = on_table & (self.occ.hits_many(centers, angles, d.length, d.width, ignore_from=first_id) == 0)
            if not ok.any():
                ok = on_table if on_table.any() else np.ones(tries, bool)
            k = int(np.argmax(ok))
            placed = Piece(v, centers[k], float(angles[k]), face, owner=owner)
            self.add(placed)
            out.append(placed)
        return out

    def row(
        self,
        values: list[tuple[int, int]],
        origin: np.ndarray,
        direction: float,
        face: str,
        owner: str | None,
        upright: bool,
        gap: float = 4.0,
        jitter: float = 2.0,
    ) -> list[Piece]:
        """Tiles laid side by side from ``origin`` along ``direction`` (a hand laid out for counting)."""
        places = Row(origin, direction, upright, gap, self.layout.dims)
        out = []
        for i, v in enumerate(values):
            c, ang = places.place(i, len(values))
            c = c + self.rng.normal(0, jitter, 2)
            ang += math.radians(self.rng.normal(0, 3)) + (math.pi if self.rng.random() < 0.5 else 0.0)
            p = Piece(v, c, ang, face, owner=owner)
            self.add(p)
            out.append(p)
        return out


@dataclass
class Row:
    """The places in front of a seat where a player's tiles lie in lines.

    ``upright`` tiles point across the row (side by side), otherwise they lie end to end. Long
    hands wrap onto further lines, each behind the last (toward the table's middle).
    """

    origin: np.ndarray
    direction: float
    upright: bool
    gap: float
    dims: TileDims

    @property
    def per_line(self) -> int:
        return 10 if self.upright else 6

    def place(self, i: int, count: int | None = None) -> tuple[np.ndarray, float]:
        """Centre and angle of place ``i``; ``count`` centres a short last line (else lines are full)."""
        d = self.dims
        u = np.array([math.cos(self.direction), math.sin(self.direction)])
        n = np.array([-math.sin(self.direction), math.cos(self.direction)])
        step = (d.width if self.upright else d.length) + self.gap
        depth = (d.length if self.upright else d.width) + self.gap
        line, k = divmod(i, self.per_line)
        in_line = self.per_line if count is None else min(self.per_line, count - line * self.per_line)
        c = self.origin + u * ((k - (in_line - 1) / 2) * step) - n * (line * depth)
        return c, self.direction + (math.pi / 2 if self.upright else 0.0)


def make_hub(center: np.ndarray, dims: TileDims, rng: np.random.Generator, slots: int = 8) -> Hub:
    colours = [(40, 40, 40), (30, 30, 150), (140, 60, 20), (60, 120, 170), (200, 200, 200), (40, 100, 40),
               (50, 90, 150)]
    slot_inner = dims.length * 0.62 + dims.width * 0.3
    radius = slot_inner + dims.length * rng.uniform(0.45, 0.7)
    a0 = float(rng.uniform(0, 2 * math.pi))
    angles = tuple(a0 + 2 * math.pi * k / slots for k in range(slots))
    return Hub(np.asarray(center, np.float64), radius, angles, slot_inner, colours[int(rng.integers(len(colours)))])


def place_seats(table: Table, players: list[str], start: float, corner_gap: float = 220.0) -> None:
    """Seats evenly round the table's edge, clockwise, starting ``start`` (0..1) of the way round
    from the top side's middle, and kept ``corner_gap`` mm from the corners."""
    w, h = table.x1 - table.x0, table.y1 - table.y0
    perimeter = 2 * (w + h)
    # the edge, clockwise on screen from the top-left corner: top, right, bottom, left
    sides = ((np.array([table.x0, table.y0]), np.array([1.0, 0.0]), w),
             (np.array([table.x1, table.y0]), np.array([0.0, 1.0]), h),
             (np.array([table.x1, table.y1]), np.array([-1.0, 0.0]), w),
             (np.array([table.x0, table.y1]), np.array([0.0, -1.0]), h))
    for i, p in enumerate(players):
        t = ((w / 2) + (start + i / len(players)) * perimeter) % perimeter
        for origin, along, length in sides:
            if t <= length:
                gap = min(corner_gap, length / 2)
                t = min(max(t, gap), length - gap)
                edge = origin + along * t
                inward = math.atan2(along[0], -along[1])  # along turned a quarter clockwise on screen
                table.seats[p] = (edge, inward)
                break
            t -= length
