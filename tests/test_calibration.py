"""Calibration: the hub found from one frame with no clicks, trains mapped, stored, and re-checked."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from hub.calibration import (
    Calibration,
    CalibrationError,
    HubWatch,
    assign_trains,
    find_hub,
    from_config,
    match_slots,
    save_calibration,
)
from hub.config import load_config
from vision.frames import Frame
from vision.synth.truth import HubTruth


def drawn_hub(centre: tuple[float, float], radius: float, first_deg: float, size: tuple[int, int] = (960, 1280),
              cup: bool = True, body: tuple[int, int, int] = (40, 40, 150)) -> np.ndarray:
    """A hub as the renderer draws one: a disc with a wall and a shadow, a darker well round the engine,
    8 darker channels from the well to the rim (wider than half the gap between them near the well),
    tiles in some."""
    h, w = size
    img = np.full((h, w, 3), (60, 100, 140), np.uint8)  # wood-ish table
    rng = np.random.default_rng(1)
    img = np.clip(img + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8)
    c = np.array(centre)
    dark = tuple(int(v * 0.72) for v in body)
    cv2.circle(img, (int(c[0] + 3), int(c[1] + 4)), int(radius) + 2, (30, 50, 70), -1, cv2.LINE_AA)  # its shadow
    cv2.circle(img, (int(c[0]), int(c[1])), int(radius) + 2, tuple(int(v * 0.62) for v in body), -1, cv2.LINE_AA)
    cv2.circle(img, (int(c[0]), int(c[1])), int(radius), body, -1, cv2.LINE_AA)
    inner = 0.58 * radius
    cv2.circle(img, (int(c[0]), int(c[1])), int(inner), tuple(int(v * 0.78) for v in body), -1, cv2.LINE_AA)
    half = 0.22 * radius
    for k in range(8):
        a = math.radians(first_deg + 45 * k)
        d = np.array([math.cos(a), math.sin(a)])
        n = np.array([-d[1], d[0]])
        p0, p1 = c + d * inner, c + d * radius
        slot = np.array([p0 + n * half, p1 + n * half, p1 - n * half, p0 - n * half])
        cv2.fillConvexPoly(img, slot.astype(np.int32), dark, cv2.LINE_AA)
        if k % 3 == 0:
            t = half * 0.85
            tile = np.array([p0 + n * t, p1 + d * radius * 0.4 + n * t, p1 + d * radius * 0.4 - n * t, p0 - n * t])
            cv2.fillConvexPoly(img, tile.astype(np.int32), (235, 240, 245), cv2.LINE_AA)
    cv2.rectangle(img, (int(c[0] - radius * 0.38), int(c[1] - radius * 0.19)),
                  (int(c[0] + radius * 0.38), int(c[1] + radius * 0.19)), (235, 240, 245), -1)
    if cup:
        cv2.circle(img, (int(c[0] + radius * 2.6), int(c[1] - radius * 0.5)), int(radius * 0.7), (200, 200, 220), -1)
        cv2.circle(img, (int(c[0] + radius * 2.6), int(c[1] - radius * 0.5)), int(radius * 0.55), (30, 60, 90), -1)
    return img


@pytest.mark.parametrize(("centre", "radius", "first"), [((640, 480), 150, -90), ((500, 420), 110, -73),
                                                          ((760, 560), 190, -101)])
def test_the_hub_is_found_with_no_clicks(centre: tuple[float, float], radius: float, first: float) -> None:
    cal = find_hub(drawn_hub(centre, radius, first))
    assert math.dist(cal.centre, centre) < 0.05 * radius
    assert cal.radius == pytest.approx(radius, rel=0.1)
    expected = sorted(((first + 45 * k + 180) % 360 - 180 for k in range(8)), key=lambda a: abs(a + 90))
    assert abs(cal.slot_angles[0] - expected[0]) < 2.0  # slot 1 is the one nearest straight up
    steps = np.diff(np.unwrap(np.radians(cal.slot_angles)))
    assert np.allclose(np.degrees(steps), 45.0, atol=2.0)  # then clockwise round the hub


def test_no_hub_in_view_is_a_clear_error() -> None:
    table = np.full((480, 640, 3), (60, 100, 140), np.uint8)
    cv2.circle(table, (300, 240), 60, (200, 200, 220), -1)  # a cup is round but has no slots
    with pytest.raises(CalibrationError, match="no .*hub"):
        find_hub(table)


def test_players_get_slots_clockwise_in_seating_order() -> None:
    assert assign_trains(["Ana", "Ben", "Cy"]) == {1: "Ana", 2: "Ben", 3: "Cy", 8: "mexican"}
    assert assign_trains(["Ana", "Ben"], mexican_slot=1) == {1: "mexican", 2: "Ana", 3: "Ben"}
    with pytest.raises(ValueError, match="more than"):
        assign_trains([f"P{i}" for i in range(8)])


def test_trains_follow_their_direction_onto_the_found_slots() -> None:
    found = Calibration((0.0, 0.0), 10.0, tuple(-88.0 + 45 * k for k in range(8)))
    mapped = match_slots(found, {-90.0: "Ana", 180.0: "mexican", 46.0: "Ben"})
    assert dict(mapped.trains) == {1: "Ana", 4: "Ben", 7: "mexican"}


def test_the_calibration_is_stored_in_the_config_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[game]\nplayers = ["Ana", "Ben"]\n\n[calibration]\ncentre = [1.0, 2.0]\n\n'
        '[calibration.trains]\n1 = "Ben"\n\n[web]\nport = 8080\n'
    )
    angles = tuple(-90.0 + 45 * k for k in range(8))
    cal = Calibration((640.5, 480.25), 150.0, angles, {1: "Ana", 2: "Ben", 8: "mexican"})
    save_calibration(path, cal)
    config = load_config(path)
    assert config.web.port == 8080 and config.game.players == ("Ana", "Ben")
    back = from_config(config.calibration)
    assert back is not None
    assert back.centre == pytest.approx(cal.centre, abs=0.1) and back.radius == 150.0
    assert back.slot_angles == pytest.approx(cal.slot_angles) and dict(back.trains) == dict(cal.trains)
    assert path.read_text().count("[calibration]") == 1


def test_a_knocked_hub_is_noticed_after_two_looks_and_trains_keep_their_slots() -> None:
    start = find_hub(drawn_hub((640, 480), 150, -90)).with_trains({1: "Ana", 3: "Ben", 8: "mexican"})
    watch = HubWatch(start, every_s=1.0)
    still = drawn_hub((640, 480), 150, -90)
    knocked = drawn_hub((700, 430), 150, -80)
    assert watch.check(Frame(still, 0.0, "t", 0)) is None
    assert watch.check(Frame(knocked, 0.5, "t", 1)) is None  # not due yet
    assert watch.check(Frame(knocked, 1.0, "t", 2)) is None  # first look: maybe a hand
    moved = watch.check(Frame(knocked, 1.1, "t", 3))
    assert moved is not None and math.dist(moved.centre, (700, 430)) < 8
    assert moved.trains[moved.slot_of("Ana")] == "Ana"
    assert abs(moved.slot_angles[moved.slot_of("Ana") - 1] - (-80)) < 2.5
    assert abs(moved.slot_angles[moved.slot_of("Ben") - 1] - 10) < 2.5
    assert watch.check(Frame(knocked, 2.2, "t", 4)) is None  # settled again where it now is


def test_a_round_of_another_size_is_never_taken_for_the_knocked_hub() -> None:
    """Seen on dev seed 131: with hands over the hub, a slotted-looking round two thirds its size was found
    twice in a row elsewhere, and the game was lost. A knock moves the hub; it hardly changes its size."""
    start = find_hub(drawn_hub((640, 480), 150, -90)).with_trains({1: "Ana", 3: "Ben", 8: "mexican"})
    watch = HubWatch(start, every_s=1.0)
    smaller = drawn_hub((700, 430), 100, -80)
    for k in range(4):
        assert watch.check(Frame(smaller, 1.0 + k, "t", k)) is None
    assert watch.calibration == start


def test_a_double_far_from_the_hub_does_not_draw_its_near_look_away() -> None:
    """Seen on dev seed 144: at the count, with hands over the hub, a laid-out hand holding a double far off was
    looked round as the engine, and taken for the knocked hub. Looking near the hub, only doubles near it count."""
    from vision.types import DetectedTile, HalfReading

    start = find_hub(drawn_hub((640, 480), 150, -90)).with_trains({1: "Ana", 3: "Ben", 8: "mexican"})
    watch = HubWatch(start, every_s=1.0, lost_after=99)
    elsewhere = drawn_hub((300, 300), 150, -90, cup=False)  # something round and slotted, far from the hub
    sure = tuple(1.0 if v == 7 else 0.0 for v in range(13))
    corners = ((250.0, 280.0), (250.0, 320.0), (350.0, 320.0), (350.0, 280.0))
    double = DetectedTile(corners, (HalfReading((275.0, 300.0), sure), HalfReading((325.0, 300.0), sure)), 0.9, "up")
    for k in range(4):
        assert watch.check(Frame(elsewhere, 1.0 + k, "t", k), [double]) is None
    assert watch.calibration == start


def _assert_every_slot_found(cal: Calibration, hub: HubTruth) -> None:
    """Every slot the renderer printed is one of the found ones, within 3 degrees."""
    for slot in hub.slots:
        angle = math.degrees(math.atan2(slot.outward[1] - slot.point[1], slot.outward[0] - slot.point[0]))
        assert min(abs((angle - a + 180) % 360 - 180) for a in cal.slot_angles) < 3.0


@pytest.mark.parametrize("seed", [0, 1, 2, 75])
def test_the_hub_is_found_in_a_rendered_table(seed: int) -> None:
    from vision.synth.game import SyntheticGame

    image, truth = SyntheticGame(seed).render(0)
    assert truth.hub is not None
    cal = find_hub(image)
    assert math.dist(cal.centre, truth.hub.center) < 0.06 * truth.hub.radius
    assert cal.radius == pytest.approx(truth.hub.radius, rel=0.1)
    _assert_every_slot_found(cal, truth.hub)


def test_a_dark_hub_with_faint_slots_is_found_round_its_engine() -> None:
    """Fresh eval-hub seed 6010: a near-black hub on dark wood, its grooves a shade off its body. Found a pixel
    or two off, its slot fit falls under the bar (0.62-0.73 against 0.8), so rows of a laid-out hand were taken
    for the hub until a lucky look, and the first plays went to the wrong trains. Round the engine and inside a
    whole rim, faint slots are enough."""
    from hub.truth_reader import TruthReader
    from vision.synth.game import SyntheticGame

    game = SyntheticGame(6010)
    image, truth = game.render(24)  # the engine lies in the hub
    assert truth.hub is not None
    tiles = TruthReader(lambda frame: truth.tiles, top=game.rules.set)(Frame(image, 6.0, "t", 24))
    cal = find_hub(image, tiles=tiles)
    assert math.dist(cal.centre, truth.hub.center) < 0.06 * truth.hub.radius
    _assert_every_slot_found(cal, truth.hub)


def test_a_pale_hub_on_a_checked_cloth_is_found_round_its_engine() -> None:
    """Fresh eval-hub seed 7011: a pale grey hub on red and mint gingham was never found, so the game recorded
    nothing. Every ray from anywhere crosses a check's edge at every radius, so the rim counted no more than
    the cloth round it, and the look round the engine drifted to a ring of checks."""
    from hub.truth_reader import TruthReader
    from vision.synth.game import SyntheticGame

    game = SyntheticGame(7011)
    image, truth = game.render(22)  # the engine lies in the hub; no hand over it
    assert truth.hub is not None
    tiles = TruthReader(lambda frame: truth.tiles, top=game.rules.set)(Frame(image, 5.5, "t", 22))
    cal = find_hub(image, tiles=tiles)
    assert math.dist(cal.centre, truth.hub.center) < 0.06 * truth.hub.radius
    assert cal.radius == pytest.approx(truth.hub.radius, rel=0.1)
    _assert_every_slot_found(cal, truth.hub)


@pytest.mark.parametrize("seed", [7011, 7033])
def test_an_empty_hub_on_a_checked_cloth_is_found_before_the_engine(seed: int) -> None:
    """Set-up shows the hub found before any tile is down. On gingham no hub was found until the engine was
    laid (fresh eval-hub seeds 7011 and 7033), so the host had to type the engine: the checks' edges hid the
    rim, but the hub is the quiet round in a busy cloth."""
    from vision.synth.game import SyntheticGame

    image, truth = SyntheticGame(seed).render(0)
    assert truth.hub is not None
    with pytest.raises(CalibrationError):
        find_hub(image)  # during a round it is not looked for this way: laid-out hands look slotted too
    cal = find_hub(image, quiet=True)
    assert math.dist(cal.centre, truth.hub.center) < 0.06 * truth.hub.radius
    assert cal.radius == pytest.approx(truth.hub.radius, rel=0.1)
    _assert_every_slot_found(cal, truth.hub)


def test_a_hand_in_a_busy_cloth_is_not_taken_for_the_hub() -> None:
    """A wrong hub on the set-up page is worse than none yet. Among the quiet rounds of a striped cloth a
    hand of backs laid in rows looked slotted (fit 1.8; fresh eval-hub seed 7037 at 2028x1520)."""
    from vision.synth.game import SyntheticGame

    image, truth = SyntheticGame(7037, width=2028, height=1520).render(0)
    assert truth.hub is not None
    try:
        cal = find_hub(image, quiet=True)
    except CalibrationError:
        return  # no hub yet: the engine will show it
    assert math.dist(cal.centre, truth.hub.center) < 0.06 * truth.hub.radius


@pytest.mark.parametrize("start", [(0.0, 0.0), (18.0, -12.0), (-25.0, 10.0)])
def test_the_round_near_a_point_is_found_through_a_checked_cloth(start: tuple[float, float]) -> None:
    """The rim's edge points at its centre all round; the checks' straight edges point at no common centre."""
    from hub.calibration import _round_near

    ys, xs = np.mgrid[0:600, 0:800]
    checks = ((xs // 36) + (ys // 36)) % 2 == 0
    img = np.where(checks[..., None], np.uint8([90, 90, 200]), np.uint8([215, 235, 200])).astype(np.uint8)
    cv2.circle(img, (400, 300), 110, (185, 180, 180), -1, cv2.LINE_AA)
    centre, radius = _round_near(img, np.array([400.0 + start[0], 300.0 + start[1]]), 85.0, 150.0, 30.0)
    assert math.dist(centre, (400, 300)) < 2.0
    assert radius == pytest.approx(110, abs=2.0)


def test_a_knocked_camera_is_noticed_in_a_rendered_game() -> None:
    from vision.synth.game import SyntheticGame

    game = SyntheticGame(1)
    image, truth = game.render(game.frame_count // 2)
    start = find_hub(game.render(0)[0]).with_trains({1: "Ana", 5: "Ben"})
    watch = HubWatch(start, every_s=1.0)
    assert watch.check(Frame(image, 0.0, "t", 0)) is None  # mid-game, trains everywhere: still where it was
    shift = np.float32([[1, 0, 40], [0, 1, -25]])
    knocked = cv2.warpAffine(image, shift, (image.shape[1], image.shape[0]), borderMode=cv2.BORDER_REPLICATE)
    assert watch.check(Frame(knocked, 1.0, "t", 1)) is None
    moved = watch.check(Frame(knocked, 1.25, "t", 2))
    assert moved is not None
    assert math.dist(moved.centre, (start.centre[0] + 40, start.centre[1] - 25)) < 0.06 * start.radius
    assert moved.slot_angles[moved.slot_of("Ana") - 1] == pytest.approx(start.slot_angles[0], abs=3.0)


@pytest.mark.parametrize("radius", [3.0, 6.5, float("nan")])
def test_a_stray_tiny_circle_has_no_rim_to_refit_and_raises_nothing(radius: float) -> None:
    """The hub's re-check after a knock once fitted a circle a few pixels wide, and the rim search
    then crashed the camera loop (eval hub, seed 5018)."""
    from hub.calibration import _rim

    lab = np.zeros((120, 120, 3), np.float32)
    assert _rim(lab, np.array([60.0, 60.0]), radius).shape == (0, 2)
