"""The tracker: tiles settle only when still, survive hands and nudges, and are placed in their trains."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from hub.calibration import Calibration
from hub.tracker import Board, SeenTile, Tracker, TrackerSettings
from vision.types import DetectedTile, HalfReading

L, W = 60.0, 30.0  # tile length and width in pixels
CAL = Calibration(
    centre=(500.0, 500.0),
    radius=70.0,
    slot_angles=tuple(-90.0 + 45.0 * k for k in range(8)),  # slot 1 points up, then clockwise
    trains={1: "Ana", 3: "Ben", 8: "mexican"},
)
FPS = 10.0


def probs(value: int, sharp: float = 0.96, top: int = 12) -> tuple[float, ...]:
    p = np.full(top + 1, (1 - sharp) / top)
    p[value] = sharp
    return tuple(float(x) for x in p)


def tile(centre: Sequence[float], angle_deg: float, values: tuple[int, int], *, conf: float = 0.95,
         face: str = "up", flip: bool = False) -> DetectedTile:
    """A detection: ``values[0]`` on the half at the +axis end (the axis at ``angle_deg``)."""
    a = math.radians(angle_deg + (180.0 if flip else 0.0))
    if flip:
        values = (values[1], values[0])
    u = np.array([math.cos(a), math.sin(a)])
    n = np.array([-math.sin(a), math.cos(a)])
    c = np.asarray(centre, float)
    a_, n_ = u * L / 2, n * W / 2
    corners = [c + a_ - n_, c + a_ + n_, c - a_ + n_, c - a_ - n_]
    halves = tuple(
        HalfReading(tuple(float(v) for v in c + s * u * L / 4), probs(v) if face == "up" else ())
        for s, v in ((1, values[0]), (-1, values[1]))
    )
    return DetectedTile(tuple((float(x), float(y)) for x, y in corners), halves, conf, face)  # type: ignore[arg-type]


def lay_train(slot: int, values: Sequence[tuple[int, int]], bend_deg: float = 0.0,
              cross_doubles: bool = False, gap: float = 2.0) -> list[DetectedTile]:
    """Tiles end to end out of ``slot`` (inner value first), turning ``bend_deg`` at each tile."""
    direction = CAL.direction(slot)
    entry = np.asarray(CAL.centre) + direction * CAL.radius * 0.6
    out = []
    for k, (inner, outer) in enumerate(values):
        cross = cross_doubles and inner == outer and k > 0
        half = W / 2 if cross else L / 2
        centre = entry + direction * (half + gap)
        heading = math.degrees(math.atan2(direction[1], direction[0]))
        axis = heading + 90 if cross else heading + 180  # values[0] (inner) towards the hub
        out.append(tile(centre, axis, (inner, outer), flip=k % 2 == 1))
        entry = centre + direction * half
        turn = math.radians(bend_deg)
        direction = np.array([direction[0] * math.cos(turn) - direction[1] * math.sin(turn),
                              direction[0] * math.sin(turn) + direction[1] * math.cos(turn)])
    return out


def blurred(det: DetectedTile, sharp: float) -> DetectedTile:
    """The same detection with its pips read unsurely (motion blur, a finger over them)."""
    halves = tuple(HalfReading(h.center, probs(int(np.argmax(h.probs)), sharp)) for h in det.halves)
    return DetectedTile(det.corners, halves, det.confidence, det.face)  # type: ignore[arg-type]


def engine(value: int = 12) -> DetectedTile:
    return tile(CAL.centre, 0.0, (value, value))


def run(tracker: Tracker, frames: Sequence[Sequence[DetectedTile]], t0: float = 0.0) -> list:
    changes = []
    for i, dets in enumerate(frames):
        changes += tracker.update(list(dets), t0 + i / FPS)
    return changes


def readings(board: Board, train: str) -> list[tuple[int, int]]:
    return [t.reading for t in board.trains[train]]


def test_a_tile_counts_only_after_it_has_been_still_long_enough() -> None:
    tracker = Tracker(CAL, TrackerSettings(stable_s=0.5))
    laid = lay_train(1, [(12, 5)])
    changes = run(tracker, [laid] * 5)  # 0.4 s
    assert changes == [] and tracker.board.trains["Ana"] == ()
    changes = run(tracker, [laid] * 2, t0=0.5)
    assert [c.kind for c in changes] == ["settled"]
    assert readings(tracker.board, "Ana") == [(12, 5)]  # inner half first, whichever way it was seen


def test_a_hand_moving_over_the_table_never_settles() -> None:
    tracker = Tracker(CAL)
    rng = np.random.default_rng(3)
    frames = [[tile((400 + rng.uniform(-40, 40), 300 + 15 * i), rng.uniform(0, 180), (3, 4))] for i in range(30)]
    assert run(tracker, frames) == []
    assert tracker.board.unsettled == 1


def test_a_tile_hidden_now_and_then_by_a_hand_still_settles_once() -> None:
    tracker = Tracker(CAL)
    laid = lay_train(1, [(12, 5)])
    frames = [laid if i % 3 else [] for i in range(12)]
    changes = run(tracker, frames)
    assert [c.kind for c in changes] == ["settled"]


def test_shaky_detections_and_weak_or_face_down_ones_are_ignored() -> None:
    tracker = Tracker(CAL)
    laid = lay_train(1, [(12, 5)])[0]
    weak = tile((300, 300), 0, (1, 2), conf=0.2)
    down = tile((700, 300), 0, (1, 2), face="down")
    changes = run(tracker, [[laid, weak, down]] * 10)
    assert [c.tile.reading for c in changes] == [(12, 5)]
    assert tracker.board.loose == ()


def test_a_tile_pushed_straight_stays_the_same_tile() -> None:
    tracker = Tracker(CAL)
    first = lay_train(1, [(12, 5)])[0]
    run(tracker, [[first]] * 8)
    settled_id = tracker.board.trains["Ana"][0].id
    c = np.mean(first.corners, axis=0)
    nudged = [tile(c + [3.0 * i, 1.5 * i], 90 + 2 * i, (12, 5)) for i in range(1, 5)]
    jumped = tile(c + [W * 0.8, -6], 95, (12, 5))  # one quick shove most of a tile width sideways
    changes = run(tracker, [[n] for n in nudged] + [[jumped]] * 8, t0=1.0)
    assert changes == []  # never taken away, never laid anew
    assert [t.id for t in tracker.board.loose] == [settled_id]  # pushed out of its slot, but the same tile


def test_a_tile_taken_away_is_noticed() -> None:
    tracker = Tracker(CAL, TrackerSettings(gone_s=0.6))
    laid = lay_train(1, [(12, 5)])
    run(tracker, [laid] * 8)
    assert run(tracker, [[]] * 5, t0=0.8) == []  # unseen for 0.5 s: may be a hand
    changes = run(tracker, [[]] * 3, t0=1.3)
    assert [c.kind for c in changes] == ["gone"] and changes[0].tile.reading == (12, 5)
    assert tracker.board.trains["Ana"] == ()


def test_trains_are_followed_out_from_their_slots_round_bends_and_doubles() -> None:
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 5), (5, 5), (5, 9), (9, 1), (1, 1), (1, 7)], bend_deg=12, cross_doubles=True)
    ben = lay_train(3, [(12, 3), (3, 8)], bend_deg=-15)
    mexican = lay_train(8, [(12, 0)])
    stray = tile((900, 900), 30, (6, 6))
    frames = [[engine(), *ana, *ben, *mexican, stray]] * 8
    run(tracker, frames)
    board = tracker.board
    assert board.engine is not None and board.engine.reading == (12, 12)
    assert readings(board, "Ana") == [(12, 5), (5, 5), (5, 9), (9, 1), (1, 1), (1, 7)]
    assert readings(board, "Ben") == [(12, 3), (3, 8)]
    assert readings(board, "mexican") == [(12, 0)]
    assert [t.reading for t in board.loose] == [(6, 6)]


def test_a_gap_in_a_train_stops_the_chain_there() -> None:
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 5), (5, 9), (9, 1)])
    run(tracker, [[ana[0], ana[2]]] * 8)  # the middle tile is hidden
    assert readings(tracker.board, "Ana") == [(12, 5)]
    assert [t.reading for t in tracker.board.loose] == [(9, 1)]


def test_a_tile_in_a_slot_with_no_train_is_loose() -> None:
    tracker = Tracker(CAL)
    run(tracker, [lay_train(5, [(12, 4)])] * 8)
    assert all(chain == () for chain in tracker.board.trains.values())
    assert len(tracker.board.loose) == 1


@pytest.mark.parametrize("flip_every_frame", [False, True])
def test_the_detectors_half_order_does_not_change_the_reading(flip_every_frame: bool) -> None:
    tracker = Tracker(CAL)
    c = CAL.centre[0], CAL.centre[1] - CAL.radius * 0.6 - L / 2 - 2
    frames = [[tile(c, 90, (12, 7), flip=flip_every_frame and i % 2 == 1)] for i in range(8)]
    run(tracker, frames)
    assert readings(tracker.board, "Ana") == [(12, 7)]


def lay_turning(slot: int, values: Sequence[tuple[int, int]], turns_deg: Sequence[float]) -> list[DetectedTile]:
    """A train that turns by ``turns_deg[k]`` before tile k, each tile pivoting on the inside corner of the
    last one's end (as trains turn round obstacles on a table)."""
    heading = math.atan2(*CAL.direction(slot)[::-1])
    end = np.asarray(CAL.centre) + CAL.direction(slot) * CAL.radius * 0.6
    out = []
    for (inner, outer), turn in zip(values, turns_deg, strict=True):
        new = heading + math.radians(turn)
        if turn:
            side = 1.0 if turn > 0 else -1.0
            n_old = np.array([-math.sin(heading), math.cos(heading)])
            n_new = np.array([-math.sin(new), math.cos(new)])
            end = end + side * n_old * W / 2 - side * n_new * W / 2
        u = np.array([math.cos(new), math.sin(new)])
        centre = end + u * (L / 2 + 1)
        out.append(tile(centre, math.degrees(new) + 180, (inner, outer)))
        end, heading = centre + u * (L / 2), new
    return out


def test_a_train_turning_sharply_round_an_obstacle_is_still_followed() -> None:
    tracker = Tracker(CAL)
    train = lay_turning(1, [(12, 4), (4, 9), (9, 2), (2, 6), (6, 1)], [0, 0, 95, 60, -130])
    run(tracker, [[engine(), *train]] * 8)
    assert readings(tracker.board, "Ana") == [(12, 4), (4, 9), (9, 2), (2, 6), (6, 1)]


def as_back(det: DetectedTile) -> DetectedTile:
    """The same detection taken for a back, its pips read anyway (``hub.pipeline.HubReader``)."""
    return DetectedTile(det.corners, det.halves, det.confidence, "down")


def test_a_tile_taken_for_a_back_continues_a_train_only_right_after_its_recorded_end() -> None:
    """The detector takes Ana's 0|1 for a back. Laid right after her train's recorded end it must be face
    up, so it continues her train, marked as a guess. Backs anywhere else (the boneyard, hands, after a
    tile not yet recorded) are no tiles of a train, nor laid-out hands, nor the engine."""
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 4), (4, 0), (0, 1)])
    ben = lay_train(3, [(12, 3), (3, 5)])
    boneyard = as_back(tile((200, 800), 0, (6, 6)))
    frames = [[as_back(engine()), *ana[:2], as_back(ana[2]), ben[0], as_back(ben[1]), boneyard]] * 8
    run(tracker, frames)
    for t in tracker.board.trains["Ana"][:2]:
        tracker.claim(t.id, "Ana")
    run(tracker, frames[:2], t0=1.0)
    board = tracker.board
    assert readings(board, "Ana") == [(12, 4), (4, 0), (0, 1)]
    assert [t.face_down for t in board.trains["Ana"]] == [False, False, True]
    assert readings(board, "Ben") == [(12, 3)]  # its back follows a tile the game does not hold yet
    assert board.loose == () and board.engine is None
    tracker.claim(board.trains["Ben"][0].id, "Ben")
    run(tracker, frames[:2], t0=1.2)
    assert readings(tracker.board, "Ben") == [(12, 3), (3, 5)]


def test_a_back_the_table_dismissed_stays_out_of_the_train_when_seen_there_again() -> None:
    """A stretch of striped cloth by Ana's end reads as a back; the table says it is no tile. Its track
    lost and found again (a hand passed over it) is still no tile of her train, but a tile laid face up
    in that place is."""
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 4), (4, 0)])
    stripe = as_back(ana[1])
    run(tracker, [[engine(), ana[0], stripe]] * 8)
    tracker.claim(tracker.board.trains["Ana"][0].id, "Ana")
    run(tracker, [[engine(), ana[0], stripe]] * 2, t0=1.0)
    (_, phantom) = tracker.board.trains["Ana"]
    assert phantom.face_down
    tracker.dismiss(phantom.id)
    run(tracker, [[engine(), ana[0], stripe]] * 2, t0=1.2)
    assert readings(tracker.board, "Ana") == [(12, 4)] and tracker.board.backs == ()
    run(tracker, [[engine(), ana[0]]] * 10, t0=1.4)  # gone for a second, then back on a new track
    run(tracker, [[engine(), ana[0], stripe]] * 8, t0=2.4)
    assert readings(tracker.board, "Ana") == [(12, 4)]
    run(tracker, [[engine(), ana[0]]] * 10, t0=3.2)
    run(tracker, [[engine(), *ana]] * 8, t0=4.2)  # Ana's 4|0 laid there, face up
    assert readings(tracker.board, "Ana") == [(12, 4), (4, 0)]


def test_a_tile_taken_from_a_face_down_row_and_laid_face_up_is_not_a_back() -> None:
    """Its track may follow it from the row (a back for a long while) to the train: only how it lies
    since it last moved counts."""
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 4), (4, 0)])
    run(tracker, [[ana[0]]] * 8)
    tracker.claim(tracker.board.trains["Ana"][0].id, "Ana")
    target = np.mean(ana[1].corners, axis=0)
    path = [target + np.array([15.0 * k, 0.0]) for k in range(4, 0, -1)]
    row = [[ana[0], as_back(tile(path[0] + [15.0, 0.0], 90.0, (4, 0)))]] * 20
    carried = [[ana[0], tile(p, 90.0, (4, 0))] for p in path]
    run(tracker, [*row, *carried, *[ana] * 8], t0=1.0)
    assert readings(tracker.board, "Ana") == [(12, 4), (4, 0)]
    assert not tracker.board.trains["Ana"][1].face_down


def test_a_tile_turned_face_up_where_it_lies_is_not_a_back() -> None:
    """At the end of a round the hands are turned face up where they lay face down all round; the tile
    knows it has lain face up only since then (the hand count leaves out what was face up before)."""
    tracker = Tracker(CAL)
    laid_out = tile((200, 800), 0, (0, 3))
    run(tracker, [[as_back(laid_out)]] * 200)
    run(tracker, [[laid_out]] * 5, t0=20.0)
    assert [t.reading for t in tracker.board.loose] == [(0, 3)]
    assert 20.0 <= tracker.board.loose[0].up_since < 20.5


def test_the_open_ends_are_beside_each_trains_last_recorded_tile_or_at_its_slots_mouth() -> None:
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 4), (4, 9)])
    run(tracker, [ana] * 8)
    tracker.claim(tracker.board.trains["Ana"][0].id, "Ana")
    points, within = tracker.open_ends()
    ends = dict(zip((train for _, train in CAL.trains.items()), points, strict=True))
    np.testing.assert_allclose(ends["Ana"], np.mean(ana[0].corners, axis=0), atol=1e-6)  # 4|9 is not held yet
    mouth = np.asarray(CAL.centre) + CAL.direction(3) * CAL.radius
    np.testing.assert_allclose(ends["Ben"], mouth, atol=1e-6)
    assert within == pytest.approx(1.6 * L)
    hand = [tile((500, 900 + 32 * k), 0.0, (k, 6)) for k in range(2)]  # Ben's hand, laid out at the end
    run(tracker, [ana + hand] * 8, t0=1.0)
    assert tracker.open_ends()[0] == points  # while the round is played, backs there are not read
    counting, _ = tracker.open_ends(counting=True)
    np.testing.assert_allclose(counting[len(points):], [np.mean(h.corners, axis=0) for h in hand], atol=1e-6)


def test_a_tile_recorded_in_one_train_is_never_taken_into_another() -> None:
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 4), (4, 9), (9, 7)])
    run(tracker, [ana] * 8)
    tiles = tracker.board.trains["Ana"]
    tracker.claim(tiles[1].id, "Ben")  # the game holds the middle tile in Ben's train
    run(tracker, [ana], t0=1.0)
    assert readings(tracker.board, "Ana") == [(12, 4)]  # Ana's train stops short of it
    assert sorted(tuple(sorted(t.reading)) for t in tracker.board.loose) == [(4, 9), (7, 9)]
    tracker.claim(tiles[1].id, "Ana")
    run(tracker, [ana], t0=1.1)
    assert readings(tracker.board, "Ana") == [(12, 4), (4, 9), (9, 7)]


def test_a_recorded_tile_hidden_for_long_stays_in_its_train() -> None:
    tracker = Tracker(CAL, TrackerSettings(gone_s=0.6))
    ana = lay_train(1, [(12, 4), (4, 9), (9, 2)])
    run(tracker, [ana] * 8)
    for t in tracker.board.trains["Ana"]:
        tracker.claim(t.id, "Ana")
    changes = run(tracker, [[ana[0], ana[2]]] * 40, t0=1.0)  # a cup stands on the middle tile for 4 s
    assert changes == []
    assert readings(tracker.board, "Ana") == [(12, 4), (4, 9), (9, 2)]


def test_a_different_tile_laid_over_a_settled_one_is_a_tile_of_its_own() -> None:
    tracker = Tracker(CAL)
    laid = lay_train(1, [(12, 4)])[0]
    run(tracker, [[laid]] * 8)
    first = tracker.board.trains["Ana"][0].id
    c = np.mean(laid.corners, axis=0) + np.array([6.0, 0.0])
    over = tile(c, 90, (7, 7))  # a tile dropped onto it (and it no longer shows)
    changes = run(tracker, [[over]] * 10, t0=1.0)
    settled = [ch.tile for ch in changes if ch.kind == "settled"]
    assert [t.reading for t in settled] == [(7, 7)] and settled[0].id != first


def test_a_phantom_across_two_recorded_tiles_is_neither_in_a_train_nor_loose() -> None:
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 5), (5, 9)])
    run(tracker, [ana] * 8)
    for t in tracker.board.trains["Ana"]:
        tracker.claim(t.id, "Ana")
    # the detector also sees a "5|5" across the two touching 5 halves
    junction = (np.mean(ana[0].corners, axis=0) + np.mean(ana[1].corners, axis=0)) / 2
    phantom = tile(junction, 90, (5, 5))
    run(tracker, [[*ana, phantom]] * 8, t0=1.0)
    assert readings(tracker.board, "Ana") == [(12, 5), (5, 9)]
    assert tracker.board.loose == ()
    # a real tile laid beyond the end is still followed
    nxt = lay_train(1, [(12, 5), (5, 9), (9, 3)])[2]
    run(tracker, [[*ana, phantom, nxt]] * 8, t0=2.0)
    assert readings(tracker.board, "Ana") == [(12, 5), (5, 9), (9, 3)]


def test_a_recorded_tile_whose_track_a_passing_hand_dragged_off_is_found_again() -> None:
    tracker = Tracker(CAL)
    laid = lay_train(1, [(12, 5)])[0]
    run(tracker, [[laid]] * 8)
    (first,) = tracker.board.trains["Ana"]
    tracker.claim(first.id, "Ana")
    c = np.mean(laid.corners, axis=0)
    in_hand = blurred(tile(c + [W / 2, 0], 90, (8, 1)), sharp=0.3)
    run(tracker, [[in_hand]] * 2, t0=1.0)  # a tile in a hand, seen blurred just beside it, for a moment
    run(tracker, [[laid]] * 8, t0=1.2)  # the recorded tile is seen again where it always lay
    (again,) = tracker.board.trains["Ana"]
    assert again.reading == (12, 5)
    assert tracker.claims == {again.id: "Ana"}  # the game's claim follows the tile, no stale second one


def test_a_recorded_tiles_box_slipping_onto_the_next_tile_does_not_hide_that_tile() -> None:
    """Seen on seed 21: with a double laid at the end of Ben's 5|8, the detector's box for the 5|8
    slid half onto the double and read 7|7. The game knows where the 5|8 lies: the double is the
    train's next tile, not a second look at the 5|8."""
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 5), (5, 8)])
    run(tracker, [ana] * 8)
    for t in tracker.board.trains["Ana"]:
        tracker.claim(t.id, "Ana")
    double = lay_train(1, [(12, 5), (5, 8), (8, 8)])[2]
    c = np.mean(ana[1].corners, axis=0) + CAL.direction(1) * L * 0.25  # slipped a quarter tile outwards
    slipped = blurred(tile(c, math.degrees(math.atan2(CAL.direction(1)[1], CAL.direction(1)[0])), (7, 7)), 0.4)
    run(tracker, [[ana[0], slipped, double]] * 8, t0=1.0)
    chain = tracker.board.trains["Ana"]
    assert [t.id for t in chain[:2]] == list(tracker.claims)  # the recorded tiles, where they were taken
    assert len(chain) == 3 and chain[2].reading == (8, 8)
    assert np.allclose(chain[1].corners, ana[1].corners)


def test_a_recorded_tile_found_again_as_an_offset_box_keeps_its_place_in_the_train() -> None:
    """Seen on seed 27: after a hand passed, the detector boxed the joint of a recorded 1|8 and 5|8 as
    "8|8" and missed the 5|8. The claim moves to that box, but the 5|8 still lies where it did, so the
    next tile (5|11) continues the train from there."""
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 1), (1, 8), (8, 5)])
    run(tracker, [ana] * 8)
    for t in tracker.board.trains["Ana"]:
        tracker.claim(t.id, "Ana")
    run(tracker, [ana[:2]] * 3, t0=1.0)  # a hand over the 5|8
    joint = (np.mean(ana[1].corners, axis=0) + np.mean(ana[2].corners, axis=0)) / 2
    ghost = tile(joint, math.degrees(math.atan2(CAL.direction(1)[1], CAL.direction(1)[0])), (8, 8))
    nxt = lay_train(1, [(12, 1), (1, 8), (8, 5), (5, 11)])[3]
    run(tracker, [[*ana[:2], ghost, nxt]] * 8, t0=1.3)
    chain = tracker.board.trains["Ana"]
    assert len(chain) == 4 and set(tracker.claims) == {t.id for t in chain[:3]}
    assert np.allclose(chain[2].corners, ana[2].corners)  # where the 5|8 lies, not where the box was
    assert chain[3].reading == (5, 11)


@pytest.mark.parametrize(("turn", "aside"), [(30.0, 0.0), (40.0, 0.0), (20.0, 0.3)])
def test_a_tile_laid_askew_in_an_empty_slot_starts_that_train_not_a_neighbours(turn: float, aside: float) -> None:
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 5)])  # slot 1; the Mexican train's slot 8 is next to it, empty
    d = CAL.direction(8)
    a = math.atan2(d[1], d[0]) + math.radians(turn)
    u = np.array([math.cos(a), math.sin(a)])
    inner = np.asarray(CAL.centre) + d * CAL.radius * 0.6 + np.array([-d[1], d[0]]) * aside * W
    laid = tile(inner + u * (L / 2 + 2), math.degrees(a) + 180, (12, 7))
    run(tracker, [[engine(), *ana, laid]] * 8)
    assert readings(tracker.board, "Ana") == [(12, 5)]
    assert readings(tracker.board, "mexican") == [(12, 7)]


def test_a_recorded_tile_nudged_by_a_box_round_the_next_tile_keeps_its_values() -> None:
    """Seen on dev seed 51: as Cy laid 4|11 after her recorded 3|4, one frame's box round both sat a
    little off the 3|4 and read 11|4. The 3|4's track moved with it and read 11|4 from then on, so the
    real 3|4 became a stranger and the 4|11 was taken for the recorded tile: the play was never seen.
    A settled tile nudged keeps its values, and the 4|11 continues the train."""
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 3), (3, 4)])
    run(tracker, [ana] * 8)
    for t in tracker.board.trains["Ana"]:
        tracker.claim(t.id, "Ana")
    nxt = lay_train(1, [(12, 3), (3, 4), (4, 11)])[2]
    box = blurred(tile(np.mean(ana[1].corners, axis=0) + CAL.direction(1) * W * 0.3,
                       math.degrees(math.atan2(CAL.direction(1)[1], CAL.direction(1)[0])), (4, 11), conf=0.4), 0.5)
    run(tracker, [[ana[0], box]], t0=1.0)
    run(tracker, [ana] * 2 + [[*ana, nxt]] * 8, t0=1.25)
    assert readings(tracker.board, "Ana") == [(12, 3), (3, 4), (4, 11)]
    assert [t.id for t in tracker.board.trains["Ana"][:2]] == list(tracker.claims)


def test_a_train_curling_back_beside_itself_keeps_the_order_the_game_took_its_tiles() -> None:
    """Seen on dev seed 62: the Mexican train turned sharply at one tile and, many tiles later, came back
    round to touch that tile's far end. Followed by shape alone, the chain then jumped from the old tile
    to the newest one and ran backwards, and the tile laid next was left out of every train. A train's
    recorded tiles are followed in the order the game took them."""
    tracker = Tracker(CAL)
    ana = lay_train(1, [(12, 3), (3, 4)])
    d = CAL.direction(1)
    n = np.array([-d[1], d[0]])
    end = np.mean(ana[1].corners, axis=0) + d * (L / 2 + 2)  # the middle of the 3|4's far end
    heading = math.degrees(math.atan2(d[1], d[0]))
    turned = tile(end + d * (W / 2) + n * (W / 2 + L / 2 + 1), heading + 270, (4, 6))  # a right-angle turn
    back = tile(end + d * (L / 2 + 1), heading + 180, (4, 9))  # much later, straight on from the 3|4's end
    run(tracker, [ana] * 8)
    for laid in ([*ana, turned], [*ana, turned, back]):
        run(tracker, [laid] * 8, t0=tracker.board.time + 0.1)
        for t in tracker.board.trains["Ana"]:
            tracker.claim(t.id, "Ana")
    run(tracker, [[*ana, turned, back]] * 2, t0=tracker.board.time + 0.1)
    assert readings(tracker.board, "Ana") == [(12, 3), (3, 4), (4, 6), (4, 9)]


def test_a_recorded_tile_whose_reading_drifted_still_takes_a_clear_reading_of_what_the_game_holds() -> None:
    """Seen on dev seed 140: Ana's 12|11 beside the engine came to read as 12|12 over the minutes, so a clear
    12|11 seen there was taken for another tile: a second track grew on it, and Ana's train was lost. The game
    holds the tile as what it was recorded as, so that reading is still this tile."""
    tracker = Tracker(CAL)
    (first,) = lay_train(1, [(12, 4)])
    run(tracker, [[engine(), first]] * 8)
    (held,) = tracker.board.trains["Ana"]
    tracker.claim(held.id, "Ana", (12, 4))
    unsure = DetectedTile(first.corners, (first.halves[0], HalfReading(
        first.halves[1].center, tuple(0.62 if v == 12 else 0.36 if v == 4 else 0.002 for v in range(13)))),
        first.confidence, first.face)
    run(tracker, [[engine(), unsure]] * 40, t0=1.0)
    assert readings(tracker.board, "Ana") == [(12, 12)]  # its own reading drifted
    run(tracker, [[engine(), first]] * 8, t0=5.0)
    assert [t.id for t in tracker.board.trains["Ana"]] == [held.id]
    assert len([t for t in tracker.board.loose]) == 0 and len(tracker._tracks) == 2


def seen_in_part(det: DetectedTile, share: float, towards: np.ndarray) -> DetectedTile:
    """The same tile with a hand over part of it: a box ``share`` its size, pulled towards ``towards``."""
    corners = np.asarray(det.corners)
    centre = corners.mean(axis=0)
    shift = (towards - centre) / np.linalg.norm(towards - centre) * L * (1 - share) / 2
    small = (corners - centre) * share + centre + shift
    halves = tuple(HalfReading(tuple(float(v) for v in (np.asarray(h.center) - centre) * share + centre + shift),
                               h.probs) for h in det.halves)
    return DetectedTile(tuple((float(x), float(y)) for x, y in small), halves, det.confidence, det.face)


def test_a_tile_seen_only_in_part_settles_once_seen_whole_and_the_train_runs_on_through_it() -> None:
    """Dev seed 147: Ben's sixth tile, still under the hand that laid it, was seen for half a second as a
    box two thirds its size and settled so. The game took that box for where it lies, and Ben's next
    tile was too far from it to join his train."""
    tracker = Tracker(CAL)
    tiles = lay_train(1, [(12, 5), (5, 8), (8, 2), (2, 9), (9, 4)])
    run(tracker, [[engine(), *tiles[:3]]] * 8)
    for t in tracker.board.trains["Ana"]:
        tracker.claim(t.id, "Ana", t.reading)
    hand = np.asarray(CAL.centre) + CAL.direction(1) * 400  # the player's hand, out along the train
    part = seen_in_part(tiles[3], 0.6, hand)
    changes = run(tracker, [[engine(), *tiles[:3], part]] * 8, t0=1.0)
    assert changes == []  # a box this much smaller than the tiles lying is a tile seen in part
    run(tracker, [[engine(), *tiles[:4]]] * 8, t0=2.0)  # the hand is gone
    chain = tracker.board.trains["Ana"]
    assert len(chain) == 4 and np.allclose(chain[3].corners, tiles[3].corners)
    tracker.claim(chain[3].id, "Ana", chain[3].reading)
    run(tracker, [[engine(), *tiles]] * 8, t0=3.0)
    assert readings(tracker.board, "Ana") == [(12, 5), (5, 8), (8, 2), (2, 9), (9, 4)]


def test_a_hand_standing_at_the_tables_edge_does_not_make_the_first_play_wait_as_too_long() -> None:
    """Dev seed 130: the tops of a hand standing on edge at the frame's top were boxed shorter than a tile, as
    blank tiles lying face up, and were most of the tiles settled when the first tile was laid: that tile, of
    the usual size, waited 2 s as a box too long to be one tile. The tiles the game holds are the measure."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    hand = [seen_in_part(tile((150.0 + 40 * k, 60.0), 90.0, (0, 0)), 0.7, np.array([150.0 + 40 * k, 0.0]))
            for k in range(5)]
    run(tracker, [[engine(), *hand]] * 8)
    assert len(tracker.board.loose) == 5
    (laid,) = lay_train(1, [(12, 5)])
    changes = run(tracker, [[engine(), *hand, laid]] * 10, t0=1.0)
    assert [sorted(c.tile.reading) for c in changes] == [[5, 12]]
    assert changes[0].tile.settled_at < 1.0 + settings.part_s


def test_a_tile_only_ever_seen_in_part_still_counts_after_a_while() -> None:
    """A tile half out of view, or under a cup, is seen in part for good: it still settles, later."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    tiles = lay_train(1, [(12, 5), (5, 8), (8, 2), (2, 9)])
    run(tracker, [[engine(), *tiles[:3]]] * 8)
    for t in tracker.board.trains["Ana"]:
        tracker.claim(t.id, "Ana", t.reading)
    part = seen_in_part(tiles[3], 0.6, np.asarray(CAL.centre) + CAL.direction(1) * 400)
    frames = int(settings.part_s * FPS) + 2
    changes = run(tracker, [[engine(), *tiles[:3], part]] * frames, t0=1.0)
    assert [c.kind for c in changes] == ["settled"]
    assert changes[0].tile.settled_at >= 1.0 + settings.part_s


def test_a_box_larger_than_any_tile_does_not_settle_with_the_tile_laid_beside_it() -> None:
    """Dev seed 139: a faint 0|0 box a third longer than a tile, on the striped cloth beside the Mexican
    train's end, settled in the same frame as the tile laid there and was taken for the play."""
    tracker = Tracker(CAL)
    tiles = lay_train(8, [(12, 5), (5, 8), (8, 2), (2, 9)])
    run(tracker, [[engine(), *tiles[:3]]] * 8)
    for t in tracker.board.trains["mexican"]:
        tracker.claim(t.id, "mexican", t.reading)
    end = np.mean(tiles[2].corners, axis=0)
    out = CAL.direction(8)
    beside = end + out * L * 0.75 + np.array([-out[1], out[0]]) * L * 0.9
    phantom = tile(beside, 0.0, (0, 0), conf=0.4)
    phantom = seen_in_part(phantom, 1.3, beside + out)  # grown, not shrunk
    changes = run(tracker, [[engine(), *tiles, phantom]] * 8, t0=1.0)
    assert [sorted(c.tile.reading) for c in changes] == [[2, 9]]
    assert readings(tracker.board, "mexican") == [(12, 5), (5, 8), (8, 2), (2, 9)]


def test_the_trackers_sure_bar_is_the_detectors_own() -> None:
    """Under it a detection comes only where a train's next tile would lie, and settles slowly."""
    from vision.detector import THRESHOLD

    assert TrackerSettings().sure_confidence == THRESHOLD


def weaker(det: DetectedTile, conf: float) -> DetectedTile:
    """The same detection, scored ``conf`` by the detector."""
    return DetectedTile(det.corners, det.halves, conf, det.face)  # type: ignore[arg-type]


def test_a_tile_seen_only_weakly_settles_but_only_after_a_while() -> None:
    """Eval-hub seed 6015: a blank 0|0 laid at Ana's end scored 0.33 for good against the detector's bar of
    0.35. Found under the bar where a train's next tile lies, it still counts, once it has lain there
    ``part_s``: a tile passing over a train's end in a hand is not one."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    first, blank = lay_train(1, [(12, 5), (5, 0)])
    run(tracker, [[engine(), first]] * 8)
    changes = run(tracker, [[engine(), first, weaker(blank, 0.33)]] * int(settings.part_s * FPS), t0=1.0)
    assert changes == []
    changes = run(tracker, [[engine(), first, weaker(blank, 0.33)]] * 3, t0=1.0 + settings.part_s)
    assert [c.tile.reading for c in changes] == [(0, 5)]
    assert not changes[0].tile.sure and tracker.board.trains[CAL.trains[1]][0].sure  # the reconciler never asks


def test_a_tile_first_seen_weakly_is_read_and_timed_from_its_first_sure_look() -> None:
    """Stop 52's lower bar at the trains' ends, tried alone: a tile laid there was found while still partly
    under the hand, settled on those looks and read less surely (eval-hub seed 5005). Its weak looks now
    neither read it nor start its clock: it settles as if they had never come."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    first, laid = lay_train(1, [(12, 5), (5, 8)])
    run(tracker, [[engine(), first]] * 8)
    halves = tuple(HalfReading(h.center, probs(3) if np.argmax(h.probs) == 8 else h.probs) for h in laid.halves)
    covered = DetectedTile(laid.corners, halves, 0.32, "up")  # its 8 under a finger, read as 3
    assert run(tracker, [[engine(), first, covered]] * 8, t0=1.0) == []
    changes = run(tracker, [[engine(), first, laid]] * 8, t0=1.8)
    assert [sorted(c.tile.reading) for c in changes] == [[5, 8]]
    assert changes[0].tile.settled_at >= 1.8 + settings.stable_s and changes[0].tile.sure


def test_weak_looks_at_a_tile_seen_surely_neither_keep_it_nor_move_it() -> None:
    """Eval-hub seed 6018: a phantom by Dee's slot, seen surely for a while, went on being seen weakly where a
    train's next tile lies; kept there by those looks, it was taken for the tile Dee laid beside it, and the
    train's next tile no longer joined it. Only the looks at the detector's own bar count for such a tile."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    (phantom,) = lay_train(1, [(0, 3)])
    run(tracker, [[engine(), phantom]] * 8)
    (settled,) = tracker.board.trains["Ana"]
    shifted = tile(np.asarray(phantom.center) + (0.0, 12.0), 90.0, (0, 3), conf=0.32)
    changes = run(tracker, [[engine(), shifted]] * int(settings.gone_s * FPS + 2), t0=1.0)
    assert [(c.kind, c.tile.id) for c in changes] == [("gone", settled.id)]


def test_a_double_scored_far_under_the_bar_at_a_trains_end_still_counts() -> None:
    """Eval-hub seed 7033 at 2028x1520: Ben's 1|1, laid crosswise at his train's end on gingham, scored 0.17-0.30
    in every frame; with the tracker's floor at 0.3 it was never taken, and 26 false alerts followed."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    first, double = lay_train(1, [(12, 5), (5, 5)], cross_doubles=True)
    run(tracker, [[engine(), first]] * 8)
    frames = int(settings.part_s * FPS) + 3
    changes = run(tracker, [[engine(), first, weaker(double, 0.17 + 0.01 * (i % 5))] for i in range(frames)], t0=1.0)
    assert [c.tile.reading for c in changes] == [(5, 5)]
    assert readings(tracker.board, "Ana") == [(12, 5), (5, 5)]


def test_an_empty_slot_scored_as_a_weak_tile_is_no_tile() -> None:
    """Eval-hub seed 7037 at 2028x1520, on stripes: the empty slots inside the hub's rim, tile-sized hollows,
    scored 0.15-0.25 as face-up tiles where the trains' first tiles would lie, and settled as tiles. Inside the
    rim a detection counts only from ``min_confidence``, so the slot is nothing while a tile laid there is a tile."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    direction = CAL.direction(3)
    hollow = tile(np.asarray(CAL.centre) + direction * CAL.radius * 0.8, 0.0, (0, 1), conf=0.25)
    assert settings.end_confidence < hollow.confidence < settings.min_confidence
    run(tracker, [[engine()]] * 8)
    frames = int(settings.part_s * FPS) + 10
    assert run(tracker, [[engine(), hollow]] * frames, t0=1.0) == []
    assert tracker.board.loose == () and tracker.board.trains["Ben"] == ()
    (laid,) = lay_train(3, [(12, 8)])
    changes = run(tracker, [[engine(), laid]] * 8, t0=1.0 + frames / FPS)
    assert [sorted(c.tile.reading) for c in changes] == [[8, 12]]


def test_only_a_whole_tiles_box_counts_when_weak() -> None:
    """Gate seed 5019: a box 0.72 of a tile's length, scored 0.21-0.24 alongside Cy's first tile (within reach of
    his train's end), settled in his train after 2 s, and the game went astray. A weak look must at least be the
    size of a whole tile, as the tiles the game holds are."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    *held, nxt = lay_train(1, [(12, 5), (5, 3), (3, 9), (9, 9)])
    run(tracker, [[engine(), *held]] * 8)
    for seen in tracker.board.trains["Ana"]:
        tracker.claim(seen.id, "Ana")
    centre = np.mean(nxt.corners, axis=0)
    short = DetectedTile(tuple(tuple(float(v) for v in centre + 0.7 * (np.asarray(c) - centre)) for c in nxt.corners),
                         nxt.halves, 0.22, "up")  # type: ignore[arg-type]
    frames = int(settings.part_s * FPS) + 10
    assert run(tracker, [[engine(), *held, short]] * frames, t0=1.0) == []
    changes = run(tracker, [[engine(), *held, weaker(nxt, 0.22)]] * frames, t0=1.0 + frames / FPS)
    assert [c.tile.reading for c in changes] == [(9, 9)]


def test_a_weak_look_beside_a_loose_tile_is_no_tile() -> None:
    """Eval-hub seed 7033's count at 2028x1520: with the hands laid out, the reader also looks beside each loose
    tile (``open_ends(counting=True)``), and weak looks at the cloth between them settled as tiles 0|0, 0|10 and
    0|12 in two hands. Only where a train's next tile would lie does a weak look count."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    hand = tile((800.0, 200.0), 0.0, (6, 12))
    beside = tile((800.0, 200.0 + 1.2 * W), 0.0, (0, 12), conf=0.2)
    run(tracker, [[engine(), hand]] * 8)
    frames = int(settings.part_s * FPS) + 10
    assert run(tracker, [[engine(), hand, beside]] * frames, t0=1.0) == []
    assert [t.reading for t in tracker.board.loose] == [(6, 12)]


def test_a_tile_whose_box_flicks_between_two_fits_settles() -> None:
    """Eval-hub seed 7037 at 2028x1520: the box round a 6|8 in Ben's slot flicked between two fits 10 px apart
    (a quarter of its width), in runs of a frame or two. Each flick moved it, and it never settled: the
    illegal play was taken back unseen. Back where it last moved from, it has lain still all along."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    (laid,) = lay_train(3, [(12, 8)])
    axis = CAL.direction(3)
    other = tile(np.asarray(laid.center) + axis * 0.3 * W, 180.0 + math.degrees(math.atan2(axis[1], axis[0])),
                 (12, 8))
    assert np.linalg.norm(np.subtract(other.center, laid.center)) > settings.still_px * W
    pattern = [laid, other, laid, laid, other, other, laid, other, laid, other, other, laid]
    run(tracker, [[engine()]] * 8)
    changes = run(tracker, [[engine(), det] for det in pattern], t0=1.0)
    assert [sorted(c.tile.reading) for c in changes] == [[8, 12]]
    assert changes[0].tile.settled_at <= 1.0 + settings.stable_s + 2 / FPS
    assert readings(tracker.board, "Ben") == [(12, 8)]


def test_a_tile_carried_on_past_where_it_was_still_starts_settling_again() -> None:
    """Only a look back where it last moved from keeps its clock: a tile moved on, step by step, is moving."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    (laid,) = lay_train(3, [(12, 8)])
    axis = CAL.direction(3)
    heading = 180.0 + math.degrees(math.atan2(axis[1], axis[0]))
    steps = [tile(np.asarray(laid.center) + axis * 0.3 * W * k, heading, (12, 8)) for k in range(8)]
    run(tracker, [[engine()]] * 8)
    assert run(tracker, [[engine(), det] for det in steps], t0=1.0) == []


def covered(det: DetectedTile, reads_as: int, sharp: float = 0.6, conf: float = 0.5) -> DetectedTile:
    """``det`` with the hand that laid it still over it: found less surely, its outer half read as ``reads_as``."""
    inner, outer = det.halves
    return DetectedTile(det.corners, (inner, HalfReading(outer.center, probs(reads_as, sharp))), conf,
                        det.face)  # type: ignore[arg-type]


def test_a_tile_read_under_the_hand_that_laid_it_is_read_from_its_first_clear_look() -> None:
    """Eval-hub seeds 5011 and 5014 at 2028x1520: the hand is drawn back off a tile about as it settles, and its
    looks under the hand, read as other tiles and averaged in, left 13 of 17 questions to ask. A look much
    clearer than every earlier one starts its reading afresh."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    first, laid = lay_train(1, [(12, 5), (5, 8)])
    run(tracker, [[engine(), first]] * 8)
    under = covered(laid, reads_as=3)
    changes = run(tracker, [[engine(), first, under]] * 3 + [[engine(), first, laid]] * 3, t0=1.0)
    assert [sorted(c.tile.reading) for c in changes] == [[5, 8]]
    assert max(changes[0].tile.outer) == pytest.approx(0.96)  # sure: only the clear looks count
    assert changes[0].tile.settled_at == pytest.approx(1.0 + settings.stable_s)  # settling is not put off


def test_looks_about_as_clear_as_the_earlier_ones_are_averaged_in_and_a_settled_tile_keeps_its_reading() -> None:
    """Only a clear step up drops the earlier looks: a tile read unsurely all along keeps every look, and once
    settled no look, however clear, replaces its reading (a hand bringing the next tile must not rewrite it)."""
    settings = TrackerSettings()
    tracker = Tracker(CAL, settings)
    first, laid = lay_train(1, [(12, 5), (5, 8)])
    run(tracker, [[engine(), first]] * 8)
    a_bit_clearer = covered(laid, reads_as=8, sharp=0.7, conf=0.55)
    under = covered(laid, reads_as=3)
    changes = run(tracker, [[engine(), first, under]] * 2 + [[engine(), first, a_bit_clearer]] * 4, t0=1.0)
    (seen,) = [c.tile for c in changes]

    def three(t: SeenTile) -> float:  # the 3 read under the hand (a change and a train order the halves apart)
        return max(t.inner[3], t.outer[3])

    assert three(seen) > 0.2 and max(seen.inner[8], seen.outer[8]) > 0.4  # both kinds of look are in its reading
    run(tracker, [[engine(), first, laid]] * 3, t0=1.6)
    (_, now) = tracker.board.trains["Ana"]
    assert now.id == seen.id and three(now) > 0.1  # the clear looks are averaged in, not put in its place
