"""Whole rounds of Mexican Train, played by the rules engine's random players and filmed.

A fixed camera looks down on one table for the whole game. Every action the simulator takes
becomes a few seconds of frames at a fixed rate of game time (:class:`GameTiming`):

- a play: the player's hand reaches in from their seat carrying the tile (``reach`` frames),
  rests on it as it lies down (``place``), leaves (``withdraw``), and then nothing moves for
  at least ``still_s`` seconds;
- an illegal attempt: the same, then the tile lies there ``illegal_s`` seconds before a hand
  takes it back to the player's tiles; the table log records it with its expected verdict. While it
  lies there its truth names the train it was tried on and the next position (that is where it
  lies), and the frames' event is "illegal";
- a draw: a hand takes a face-down tile from the boneyard to the player's own face-down
  tiles, and the player presses "draw"; a pass: "pass" is pressed and a marker goes down at
  the player's train (it is lifted after the player next plays there);
- the round's end: "out" (or the host's "blocked"), then every player turns their remaining
  tiles face up where they lie, and once they have lain still the host enters the score.

Now and then someone presses "draw" twice by mistake and then "undo"; the inputs record it.
Players keep their own tiles face down in front of their seats, so the camera sees them but
cannot read them until the end.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scorekeeper import (
    MEXICAN,
    Action,
    Blocked,
    Draw,
    Out,
    Pass,
    Play,
    Score,
    Start,
    Tile,
    rules_from_spec,
    set_size,
)
from scorekeeper.actions import action_to_json
from scorekeeper.simulate import SimStep, Simulator, random_players

from .camera import Camera, look_at
from .layout import BONE_ID, ZONE_ID, Builder, Layout, Piece, Prop, Row, Table, make_hub, place_seats, rect, row_id
from .palette import sample_style
from .photometric import Degrade, sample_lighting
from .props import SKIN, make_hand
from .render import Look, Renderer
from .scenes import tile_dims
from .surfaces import sample_surface
from .truth import HubTruth, PropTruth, TileTruth

EXPOSURE = 0.35  # share of a frame interval the shutter is open: how far a moving hand smears
MARKERS = ((40, 40, 200), (200, 90, 30), (40, 160, 40), (30, 200, 230), (160, 40, 160), (20, 20, 20), (230, 230, 230),
           (0, 120, 255), (120, 60, 0), (200, 200, 0))


@dataclass(frozen=True)
class GameTiming:
    """How game time passes, in frames at ``fps`` frames per second of game time."""

    fps: float = 4.0
    reach: int = 3  # frames a hand takes to come in
    place: int = 2  # frames it rests on what it puts down or picks up
    withdraw: int = 2  # frames it takes to leave
    still_s: float = 1.25  # after a tile is laid nothing moves for at least this long
    illegal_s: float = 2.0  # an illegal tile lies this long before it is taken back
    pause_s: float = 0.5  # after a draw or a pass
    end_s: float = 3.0  # the hands laid out face up lie still this long before the score

    def __post_init__(self) -> None:
        if not 0.5 <= self.fps <= 60:
            raise ValueError(f"fps must be within 0.5..60, not {self.fps}")
        if min(self.reach, self.place, self.withdraw) < 1:
            raise ValueError("reach, place and withdraw take at least one frame each")
        if self.still_s < 1.0:
            raise ValueError(f"a laid tile must lie still at least 1 s, not {self.still_s}")

    def frames(self, seconds: float) -> int:
        return max(1, math.ceil(seconds * self.fps - 1e-9))


@dataclass(frozen=True)
class PlayerInput:
    """What a player tells the hub by button or phone, at a frame."""

    frame: int
    time: float
    act: str  # "start" | "pass" | "draw" | "undo" | "out" | "blocked" | "score"
    player: str | None
    via: str  # "button" | "phone"
    action: Action | None  # the table-log action it stands for; None for undo
    mistaken: bool = False  # pressed by mistake; the next undo takes it back

    def to_json(self) -> dict[str, Any]:
        return {
            "frame": self.frame, "time": round(self.time, 3), "act": self.act, "player": self.player, "via": self.via,
            "action": None if self.action is None else action_to_json(self.action), "mistaken": self.mistaken,
        }


@dataclass(frozen=True, eq=False)
class FrameTruth:
    index: int
    time: float
    tiles: tuple[TileTruth, ...]
    props: tuple[PropTruth, ...]
    hub: HubTruth | None
    event: str  # what is going on: "deal", "still", "reach", "place", "withdraw", "take-back", "draw", ...
    steps: int  # how many table-log steps have happened by this frame
    inputs: tuple[PlayerInput, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "frame": self.index, "time": round(self.time, 3), "event": self.event, "steps": self.steps,
            "inputs": [i.to_json() for i in self.inputs],
            "tiles": [t.to_json() for t in self.tiles],
            "props": [p.to_json() for p in self.props],
            "hub": None if self.hub is None else self.hub.to_json(),
        }


@dataclass(frozen=True)
class FramePlan:
    """One frame of the timeline: which still table (``version``) and what moves over it."""

    version: int
    moving: tuple[Piece, ...]
    hands: tuple[Prop, ...]
    event: str
    steps: int


@dataclass
class _Seat:
    edge: np.ndarray
    inward: float
    row: Row
    tiles: dict[int, Piece] = field(default_factory=dict)  # place in the row -> tile
    skin: tuple[int, int, int] = (120, 160, 215)
    sleeve: tuple[int, int, int] = (90, 60, 40)
    marker: tuple[int, int, int] = (40, 40, 200)  # the colour of this player's marker token
    hand_seed: int = 0
    ident: int = 0  # the occupancy id that keeps trains off this seat's tile places


class SyntheticGame:
    """A game played and filmed; frames are drawn on demand by :meth:`render`.

    ``slots`` maps hub slot numbers (1..8, clockwise) to trains (players and ``"mexican"``);
    by default each train starts from the slot facing its owner.
    """

    def __init__(
        self,
        seed: int,
        players: Sequence[str] | int = 4,
        rules: str | Mapping[str, Any] = "classic",
        rounds: int = 1,
        width: int = 1280,
        height: int = 960,
        timing: GameTiming | None = None,
        illegal_rate: float = 0.06,
        undo_rate: float = 0.05,
        slots: Mapping[int, str] | None = None,
    ) -> None:
        self.seed = int(seed)
        self.timing = timing or GameTiming()
        self.rules_spec = rules
        self.rules = rules_from_spec(rules)
        names = random_players(players) if isinstance(players, int) else list(players)
        if rounds < 1:
            raise ValueError(f"rounds must be at least 1, not {rounds}")
        self.rng = np.random.default_rng([self.seed & 0xFFFFFFFF, 77])
        self.sim = Simulator(self.rules, names, random.Random(self.seed), illegal_rate=illegal_rate,
                             room=self._has_room)
        self.players: tuple[str, ...] = self.sim.game.players
        self.undo_rate = undo_rate
        style = sample_style(self.rng, self.rules.set)
        self.dims = tile_dims(self.rng, style)
        self.table = self._make_table()
        self.hub = make_hub(self.table.center + self.rng.normal(0, 15, 2), self.dims, self.rng,
                            slots=max(8, len(self.players) + 1))
        self.slots = self._slots(slots)
        self.hub.trains = dict(self.slots)
        self.camera = self._camera(width, height)
        look = Look(style, sample_surface(self.rng), sample_lighting(self.rng, self.table.center, clean=False),
                    tuple(int(v) for v in self.rng.integers(15, 60, 3)))  # type: ignore[arg-type]
        self.faults = Degrade(float(self.rng.uniform(0.0, 0.6)), 0.0, 0.0, float(self.rng.uniform(1.0, 4.0)), None)
        self.renderer = Renderer(self.camera, look, self.dims)
        self.log_steps: list[dict[str, Any]] = []
        self.inputs: list[PlayerInput] = []
        self._plan: list[FramePlan] = []
        self._versions: list[tuple[tuple[Piece, ...], tuple[Prop, ...]]] = []
        self._pieces: list[Piece] = []
        self._props: list[Prop] = []
        self._seats: dict[str, _Seat] = {}
        self._boneyard: dict[Tile, Piece] = {}  # this round's face-down pile, by tile
        self._marker_for: dict[str, Prop] = {}  # the marker lying at each passed player's train
        self.builder: Builder  # this round's table; set up by each start
        self._play(rounds)

    # ------------------------------------------------------------ the table
    def _make_table(self) -> Table:
        n = len(self.players)
        k = self.dims.length / 50.0 * math.sqrt(max(1.0, set_size(self.rules.set) / 91))  # bigger sets, longer trains
        w = (760 + 55 * n) * k
        h = w * float(self.rng.uniform(0.75, 0.9))
        table = Table(-w / 2, -h / 2, w / 2, h / 2)
        place_seats(table, list(self.players), 0.0 if n % 2 == 0 else float(self.rng.choice([0.0, 0.5])))
        return table

    def _slots(self, given: Mapping[int, str] | None) -> dict[int, str]:
        trains = [*self.players, MEXICAN]
        n = len(self.hub.slot_angles)
        if given is not None:
            out = {int(k): str(v) for k, v in given.items()}
            bad = [k for k in out if not 1 <= k <= n]
            if bad:
                raise ValueError(f"slots: the hub has slots 1..{n}, not {bad}")
            missing = sorted(set(trains) - set(out.values()))
            unknown = sorted(set(out.values()) - set(trains))
            if missing or unknown or len(set(out.values())) != len(out):
                raise ValueError(f"slots must give each of {', '.join(trains)} one slot"
                                 + (f"; missing {', '.join(missing)}" if missing else "")
                                 + (f"; unknown {', '.join(unknown)}" if unknown else ""))
            return out
        free = list(range(1, n + 1))
        out = {}
        for p in self.players:
            edge, _ = self.table.seats[p]
            target = math.atan2(edge[1] - self.hub.center[1], edge[0] - self.hub.center[0])
            best = min(free, key=lambda k: abs(math.remainder(self.hub.slot_angles[k - 1] - target, 2 * math.pi)))
            free.remove(best)
            out[best] = p
        out[free[int(self.rng.integers(len(free)))]] = MEXICAN
        return out

    def _camera(self, width: int, height: int) -> Camera:
        """A fixed camera above the hub that sees the whole table."""
        rng = self.rng
        hfov = math.radians(rng.uniform(55, 72))
        f = (width / 2) / math.tan(hfov / 2)
        tw, th = self.table.x1 - self.table.x0, self.table.y1 - self.table.y0
        turned = (tw > th) != (width > height)  # the table's long side along the frame's
        yaw = float((math.pi / 2 if turned else 0.0) + rng.choice([0.0, math.pi]) + rng.normal(0, 0.03))
        # fit the table (turned by yaw) inside the frame, with room for distortion and tilt
        span_x = abs(tw * math.cos(yaw)) + abs(th * math.sin(yaw))
        span_y = abs(tw * math.sin(yaw)) + abs(th * math.cos(yaw))
        px_per_mm = 0.88 * min(width / span_x, height / span_y)
        distance = f / px_per_mm
        tilt = math.radians(float(rng.uniform(0, 8)))
        rotation, center = look_at(self.table.center, distance, tilt, float(rng.uniform(0, 2 * math.pi)), yaw)
        squeeze = float(rng.uniform(0.9, 1.0))
        r_corner = math.hypot(width / 2, height / 2) / f / squeeze
        k1 = (squeeze - 1.0) / r_corner**2
        return Camera(width, height, f, (width - 1) / 2, (height - 1) / 2, k1, 0.0, rotation, center,
                      math.degrees(tilt), 1.25 * r_corner)

    # ------------------------------------------------------------ timeline
    @property
    def frame_count(self) -> int:
        return len(self._plan)

    @property
    def timeline(self) -> tuple[FramePlan, ...]:
        return tuple(self._plan)

    def time_of(self, index: int) -> float:
        return index / self.timing.fps

    def _commit(self) -> None:
        self._versions.append((tuple(self._pieces), tuple(self._props)))

    def _frames(self, n: int, event: str, moving: Sequence[Piece] = (), hands: Sequence[Prop] = ()) -> None:
        plan = FramePlan(len(self._versions) - 1, tuple(moving), tuple(hands), event, len(self.log_steps))
        self._plan.extend([plan] * n)

    def _still(self, seconds: float, event: str = "still") -> None:
        self._frames(self.timing.frames(seconds), event)

    def _input(self, act: str, player: str | None, via: str, action: Action | None, mistaken: bool = False,
               frame: int | None = None) -> None:
        f = max(0, len(self._plan) - 1) if frame is None else frame
        self.inputs.append(PlayerInput(f, self.time_of(f), act, player, via, action, mistaken))

    def _log(self, action: Action, illegal: str | None = None) -> None:
        d = action_to_json(action)
        if illegal is not None:
            d["expect"] = {"illegal": illegal}
        self.log_steps.append(d)

    def _hand(self, player: str, target: np.ndarray, hover: float, grip: float, motion: np.ndarray) -> Prop:
        seat = self._seats[player]
        inward = np.array([math.cos(seat.inward), math.sin(seat.inward)])
        return make_hand(np.random.default_rng(seat.hand_seed), self.table, target, self.camera.height_mm,
                         skin=seat.skin, sleeve=seat.sleeve, from_point=seat.edge - inward * 260, hover=hover,
                         grip=grip, motion=(float(motion[0]), float(motion[1])))

    def _trip(self, player: str, target: np.ndarray, inward: bool, carry: Piece | None, event: str) -> None:
        """A hand travelling between the player's edge of the table and ``target``, maybe carrying a tile."""
        t = self.timing
        seat = self._seats[player]
        start = seat.edge + np.array([math.cos(seat.inward), math.sin(seat.inward)]) * 40
        n = t.reach if inward else t.withdraw
        prev = None
        for k in range(1, n + 1):
            s = k / n if inward else 1 - k / n
            s = 0.5 - 0.5 * math.cos(math.pi * s)  # ease in and out
            pos = start + (target - start) * s
            hover = 12 + 55 * (1 - s)
            motion = np.zeros(2) if prev is None else (pos - prev) * EXPOSURE
            prev = pos
            hand = self._hand(player, pos, hover, 0.8 if carry is not None else 1.0, motion)
            moving: list[Piece] = []
            if carry is not None:
                moving.append(replace(carry, center=pos.copy(), z=max(0.0, hover - 14), held=True,
                                      train=None, position=None))
            self._frames(1, event, moving, [hand])

    def _rest(self, player: str, target: np.ndarray, event: str, carry: Piece | None = None) -> None:
        hand = self._hand(player, target, 12.0, 0.8 if carry is not None else 1.0, np.zeros(2))
        moving = [] if carry is None else [replace(carry, z=2.0, held=True, train=None, position=None)]
        self._frames(self.timing.place, event, moving, [hand])

    # -------------------------------------------------------------- playing
    def _play(self, rounds: int) -> None:
        for step in self.sim.game_steps(rounds=rounds):
            self._step(step)

    def _step(self, step: SimStep) -> None:
        a = step.action
        if isinstance(a, Start):
            self._start(a)
        elif isinstance(a, Play) and step.illegal is not None:
            self._illegal(a, step.illegal.value)
        elif isinstance(a, Play):
            self._legal(a)
        elif isinstance(a, Draw):
            self._draw(a)
        elif isinstance(a, Pass):
            self._pass(a)
        elif isinstance(a, (Out, Blocked)):
            self._log(a)
            self._input(a.act, a.player if isinstance(a, Out) else None, "phone", a)
        elif isinstance(a, Score):
            self._score(a)

    def _start(self, start: Start) -> None:
        rng = self.rng
        layout = Layout(self.table, self.dims, self.hub)
        self.builder = Builder(layout, rng, doubles_across=bool(rng.random() < 0.6))
        b = self.builder
        self._pieces, self._props = layout.pieces, layout.props
        if self._versions:  # the last round's tiles are gathered up
            self._commit()
            self._still(1.0, "gather")
        self._seats = {}
        for i, p in enumerate(self.players):
            edge, inward = self.table.seats[p]
            u_in = np.array([math.cos(inward), math.sin(inward)])
            row = Row(edge + u_in * (self.dims.length * 0.5 + 30), inward + math.pi / 2, True, 3.0, self.dims)
            b.reserve_zone(rect(edge + u_in * self.dims.length * 1.2, inward + math.pi / 2, self.dims.length * 7.5,
                                self.dims.length * 2.4))
            self._seats[p] = _Seat(edge, inward, row, skin=SKIN[(self.seed + 2 * i) % len(SKIN)],
                                   sleeve=tuple(int(v) for v in rng.integers(20, 230, 3)),  # type: ignore[arg-type]
                                   marker=MARKERS[i % len(MARKERS)], hand_seed=self.seed * 31 + i,
                                   ident=row_id(i))
        # the boneyard: in the corner farthest from everyone's seat
        t = self.table
        corners = [np.array(c, float) for c in ((t.x0, t.y0), (t.x1, t.y0), (t.x1, t.y1), (t.x0, t.y1))]
        corner = max(corners, key=lambda c: min(np.linalg.norm(c - e) for e, _ in t.seats.values()))
        bone_r = self.dims.length * (0.6 + 0.4 * math.sqrt(max(1, len(self.sim.boneyard))))
        inward = (t.center - corner) / np.linalg.norm(t.center - corner)
        bone_c = corner + inward * (bone_r * 1.1 + 40)
        b.occ.mark_disc(bone_c, bone_r + self.dims.length * 0.4, ZONE_ID)
        self._boneyard = {}
        b.occ.grid[b.occ.grid == ZONE_ID] = 0  # the pile itself may spread where it likes
        for piece in b.scatter([(t.low, t.high) for t in self.sim.boneyard], bone_c, bone_r, "down", overlap_share=0.1):
            self._boneyard[Tile.of(*piece.values)] = piece
        b.occ.mark_disc(bone_c, bone_r + self.dims.length * 0.4, ZONE_ID)
        for piece in self._boneyard.values():  # the pile's own tiles stay hard to cross within its zone
            b.occ.mark(piece.footprint(self.dims), BONE_ID)
        for p in self.players:
            seat = self._seats[p]
            for i, t in enumerate(self.sim.hands[p]):
                c, ang = seat.row.place(i)
                piece = Piece((t.low, t.high), c + rng.normal(0, 1.2, 2), ang + math.radians(rng.normal(0, 2.5)),
                              "down", owner=p)
                seat.tiles[i] = piece
                self._pieces.append(piece)
                b.occ.mark(rect(c, ang, self.dims.length, self.dims.width), seat.ident, grow=3.0)
        for train in (*self.players, MEXICAN):
            slot = next(k for k, v in self.slots.items() if v == train)
            b.start_train(train, slot)
        self._commit()
        self._still(1.0, "deal")
        # the first player sets the engine in the hub
        engine = Piece((start.engine, start.engine), self.hub.center.copy(), float(rng.uniform(0, math.pi)), "up",
                       train="engine")
        self._trip(start.first, engine.center, True, engine, "reach")
        self._pieces.append(engine)
        self._commit()
        self._rest(start.first, engine.center, "place")
        self._trip(start.first, engine.center, False, None, "withdraw")
        self._still(self.timing.still_s)
        self._log(start)
        self._input("start", start.first, "phone", start)
        self._marker_for = {}

    def _has_room(self, play: Play) -> bool:
        """Whether ``play``'s tile would lie clear of the others: a player with a choice avoids a spot
        where the tile would have to go over another train."""
        if play.train not in self.builder.ends:  # the engine is not down yet
            return True
        return self.builder.has_room(play.train, play.tile)

    def _take_from_row(self, player: str, values: tuple[int, int]) -> Piece:
        seat = self._seats[player]
        want = Tile.of(*values)
        place = next(i for i, p in seat.tiles.items() if Tile.of(*p.values) == want)
        piece = seat.tiles.pop(place)
        self._pieces.remove(piece)
        return piece

    def _free_place(self, player: str) -> int:
        """The first empty place in the seat's rows that lies on the table with nothing else on it
        (a train may have grown across a far line of the rows before the player needed it)."""
        seat, d, occ = self._seats[player], self.dims, self.builder.occ
        i = 0
        while True:
            if i not in seat.tiles:
                c, ang = seat.row.place(i)
                on_table = self.table.inside_many(rect(c, ang, d.length, d.width)[None], 5.0)[0]
                hits = occ.hits_many(c[None], np.array([ang]), d.length + 4, d.width + 4, seat.ident, soft=ZONE_ID)
                if on_table and hits[0] == 0:
                    return i
            i += 1
            if i > set_size(self.rules.set) + seat.row.per_line * 4:
                raise RuntimeError(f"no free place left on the table for another of {player}'s tiles")

    def _to_row(self, player: str, piece: Piece) -> None:
        seat = self._seats[player]
        i = self._free_place(player)
        c, ang = seat.row.place(i)
        self.builder.occ.mark(rect(c, ang, self.dims.length, self.dims.width), seat.ident, grow=3.0)
        back = replace(piece, center=c + self.rng.normal(0, 1.2, 2), angle=ang + math.radians(self.rng.normal(0, 2.5)),
                       face="down", z=0.0, held=False, train=None, position=None, owner=player)
        seat.tiles[i] = back
        self._pieces.append(back)

    def _legal(self, play: Play) -> None:
        player = play.player
        self._take_from_row(player, play.tile)
        self._commit()
        placed_tile = self.sim.game.trains[play.train][-1]
        piece = self.builder.next_on(play.train, (placed_tile.inner, placed_tile.outer))
        self._pieces.remove(piece)  # the builder added it; it goes down once the hand is there
        self._trip(player, piece.center, True, replace(piece, face="up"), "reach")
        self._pieces.append(piece)
        self._commit()
        self._log(play)
        self._rest(player, piece.center, "place")
        self._trip(player, piece.center, False, None, "withdraw")
        self._still(self.timing.still_s)
        marker = self._marker_for.get(player)
        if marker is not None and play.train == player and player not in self.sim.game.markers:
            self._trip(player, marker.center, True, None, "reach")
            self._props.remove(marker)
            del self._marker_for[player]
            self._commit()
            self._rest(player, marker.center, "lift-marker")
            self._trip(player, marker.center, False, None, "withdraw")
            self._still(self.timing.pause_s)

    def _illegal(self, play: Play, code: str) -> None:
        player = play.player
        held = self._take_from_row(player, play.tile)
        self._commit()
        game = self.sim.game
        end = game.end(play.train)
        a, b = play.tile
        values = (a, b) if a == end or b != end else (b, a)
        piece = self.builder.next_on(play.train, values, commit=False)
        piece = replace(piece, face="up")
        self._trip(player, piece.center, True, piece, "reach")
        self._pieces.append(piece)
        self._commit()
        self._log(play, illegal=code)
        self._rest(player, piece.center, "place")
        self._trip(player, piece.center, False, None, "withdraw")
        self._still(self.timing.illegal_s, "illegal")
        self._trip(player, piece.center, True, None, "take-back")
        self._pieces.remove(piece)
        self._commit()
        self._rest(player, piece.center, "take-back", carry=piece)
        self._trip(player, piece.center, False, piece, "take-back")
        self._to_row(player, held)
        self._commit()
        self._still(self.timing.pause_s)

    def _draw(self, draw: Draw) -> None:
        player = draw.player
        tile = self.sim.hands[player][-1]
        piece = self._boneyard.pop(tile)
        self._trip(player, piece.center, True, None, "draw")
        self._pieces.remove(piece)
        self._commit()
        self._rest(player, piece.center, "draw", carry=piece)
        self._trip(player, piece.center, False, piece, "draw")
        self._to_row(player, piece)
        self._commit()
        self._log(draw)
        self._input("draw", player, "button", draw)
        if self.rng.random() < self.undo_rate:  # a second press by mistake, then undo
            self._frames(1, "still")
            self._input("draw", player, "button", draw, mistaken=True)
            self._frames(2, "still")
            self._input("undo", player, "phone", None)
        self._still(self.timing.pause_s)

    def _pass(self, p: Pass) -> None:
        player = p.player
        self._log(p)
        self._input("pass", player, "button", p, frame=len(self._plan))
        if player not in self._marker_for:
            slot = next(k for k, v in self.slots.items() if v == player)
            start, a = self.hub.slot_start(slot)
            d = np.array([math.cos(a), math.sin(a)])
            n = np.array([-d[1], d[0]])
            out = self.hub.radius - self.hub.slot_inner + self.dims.length * 0.3
            pos = start + d * out + n * (self.dims.width / 2 + 13)
            marker = Prop("train-token", pos, a, (30.0, 13.0), 15.0, self._seats[player].marker, accent=(30, 30, 30),
                          train=player)
            self._trip(player, pos, True, None, "marker")
            self._props.append(marker)
            self._marker_for[player] = marker
            self._commit()
            self._rest(player, pos, "marker")
            self._trip(player, pos, False, None, "withdraw")
        self._still(self.timing.pause_s)

    def _score(self, score: Score) -> None:
        self._still(1.0)
        for p in self.players:
            seat = self._seats[p]
            if not seat.tiles:
                continue
            centre = np.mean([t.center for t in seat.tiles.values()], axis=0)
            self._trip(p, centre, True, None, "reveal")
            for i, piece in list(seat.tiles.items()):
                up = replace(piece, face="up")
                seat.tiles[i] = up
                self._pieces[self._pieces.index(piece)] = up
            self._commit()
            self._rest(p, centre, "reveal")
            self._trip(p, centre, False, None, "withdraw")
        self._still(self.timing.end_s, "count")
        self._log(score)
        self._input("score", None, "phone", score)
        self._still(1.0, "scored")

    # ------------------------------------------------------------ output
    def table_log(self) -> dict[str, Any]:
        """What really happened, as a table log that ``domino-hub rules check`` accepts."""
        return {"rules": self.rules_spec, "players": list(self.players), "steps": list(self.log_steps)}

    def inputs_at(self, index: int) -> tuple[PlayerInput, ...]:
        return tuple(i for i in self.inputs if i.frame == index)

    def layout_at(self, index: int) -> Layout:
        plan = self._plan[index]
        pieces, props = self._versions[plan.version]
        layout = Layout(self.table, self.dims, self.hub, [*pieces, *plan.moving], [*props, *plan.hands])
        return layout

    def render(self, index: int) -> tuple[np.ndarray, FrameTruth]:
        """Frame ``index``: its image (BGR) and its truth."""
        if not 0 <= index < len(self._plan):
            raise IndexError(f"frame {index} is outside 0..{len(self._plan) - 1}")
        plan = self._plan[index]
        rng = np.random.default_rng([self.seed & 0xFFFFFFFF, index, 5])
        out = self.renderer.render(self.layout_at(index), rng, self.faults, static_version=plan.version)
        truth = FrameTruth(index, self.time_of(index), out.tiles, out.props, out.hub, plan.event, plan.steps,
                           self.inputs_at(index))
        return out.image, truth

    def meta(self) -> dict[str, Any]:
        t = self.timing
        return {
            "seed": self.seed, "players": list(self.players), "rules": self.rules_spec,
            "frames": self.frame_count, "fps": t.fps,
            "timing": {"reach": t.reach, "place": t.place, "withdraw": t.withdraw, "still_s": t.still_s,
                       "illegal_s": t.illegal_s, "pause_s": t.pause_s, "end_s": t.end_s},
            "slots": {str(k): v for k, v in sorted(self.slots.items())},
            "camera": self.camera.truth().to_json(),
            "width": self.camera.width, "height": self.camera.height,
        }
