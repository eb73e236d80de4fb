"""False doubles over the joint of two tiles laid end to end (vision/ghosts.py)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.geometry import half_centers, rect_corners
from vision.ghosts import joint_ghosts, without_joint_ghosts
from vision.reader import OnnxTileReader
from vision.types import DetectedTile, HalfReading

LENGTH, WIDTH = 60.0, 30.0


def tile(values: tuple[int, int], x: float, y: float, angle: float = 0.0, confidence: float = 0.9,
         face: str = "up", roll: int = 0) -> DetectedTile:
    """A tile centred at (x, y) whose axis points along ``angle`` towards halves[0]; ``roll`` turns its corners
    round by two, so the same box starts from its other end (its values then read the other way)."""
    corners = rect_corners(np.array([[x, y]]), np.array([angle]), np.array([LENGTH]), np.array([WIDTH]))
    corners = np.roll(corners, roll, axis=1)
    values = values if roll % 4 == 0 else values[::-1]
    centers = half_centers(corners)[0]

    def half(k: int) -> HalfReading:
        probs = np.full(13, 0.01)
        probs[values[k]] = 0.88
        return HalfReading((float(centers[k, 0]), float(centers[k, 1])), tuple(probs) if face == "up" else ())

    quad = tuple((float(px), float(py)) for px, py in corners[0])
    return DetectedTile(quad, (half(0), half(1)), confidence, face)  # type: ignore[arg-type]


def train(values: list[tuple[int, int]], angle: float = 0.0, x: float = 100.0, y: float = 100.0,
          confidence: float = 0.9) -> list[DetectedTile]:
    """Tiles end to end from (x, y) along ``angle``; each tile's halves[0] lies towards the start."""
    u = np.array([math.cos(angle), math.sin(angle)])
    return [tile(v, *(np.array([x, y]) + k * LENGTH * u), angle=angle + math.pi, confidence=confidence)
            for k, v in enumerate(values)]


def over_joint(value: int, angle: float = 0.0, confidence: float = 0.5, roll: int = 0) -> DetectedTile:
    """A box over the joint between the first two tiles of ``train(..., angle)``."""
    u = np.array([math.cos(angle), math.sin(angle)])
    x, y = np.array([100.0, 100.0]) + 0.5 * LENGTH * u
    return tile((value, value), x, y, angle=angle, confidence=confidence, roll=roll)


@given(st.floats(0, 2 * math.pi), st.sampled_from([0, 2]), st.floats(0.3, 1.0))
@settings(max_examples=50, deadline=None)
def test_a_double_over_the_joint_of_two_matching_tiles_is_dropped(angle: float, roll: int, sure: float) -> None:
    real = train([(3, 8), (8, 5)], angle)
    ghost = over_joint(8, angle, confidence=sure, roll=roll)
    assert without_joint_ghosts([*real, ghost]) == real


def test_a_real_double_laid_on_in_a_train_is_kept() -> None:
    tiles = train([(3, 8), (8, 8), (8, 5)])
    assert joint_ghosts(tiles) == set()
    crosswise = [*train([(3, 8)]), tile((8, 8), 100 + LENGTH / 2 + WIDTH / 2, 100, angle=math.pi / 2)]
    assert joint_ghosts(crosswise) == set()


def test_one_neighbour_seen_drops_the_double_only_when_that_neighbour_is_surer_and_along_it() -> None:
    first = train([(3, 8)], confidence=0.9)[0]  # the other tile at the joint is unseen
    assert joint_ghosts([first, over_joint(8, confidence=0.5)]) == {1}
    weaker = train([(3, 8)], confidence=0.4)[0]
    assert joint_ghosts([weaker, over_joint(8, confidence=0.5)]) == set()
    ghost = over_joint(8, confidence=0.5)
    across = tile((3, 8), ghost.halves[0].center[0], ghost.halves[0].center[1] - LENGTH / 4, angle=-math.pi / 2)
    assert np.allclose(across.halves[1].center, ghost.halves[0].center)  # its 8 under the half, turned 90 degrees
    assert joint_ghosts([across, ghost]) == set()


def test_a_double_on_halves_of_other_values_is_kept() -> None:
    real = train([(3, 7), (6, 5)])
    assert joint_ghosts([*real, over_joint(8)]) == set()


def test_face_down_tiles_and_tiles_that_are_not_doubles_are_never_dropped() -> None:
    real = train([(3, 8), (8, 5)])
    not_double = tile((8, 9), 100 + LENGTH / 2, 100, confidence=0.5)
    assert joint_ghosts([*real, not_double]) == set()
    back = over_joint(8, confidence=0.5)
    back = DetectedTile(back.corners, tuple(HalfReading(h.center, ()) for h in back.halves),  # type: ignore[arg-type]
                        back.confidence, "down")
    assert joint_ghosts([*real, back]) == set()
    assert joint_ghosts([]) == set() and joint_ghosts(real[:1]) == set()


def test_the_reader_drops_a_rendered_ghost_and_keeps_the_real_double() -> None:
    """Rendered validation scene 710012 (never an evaluation seed): a 10|10 stands alone, and a box over a joint
    of two tiles that meet with 10 beside 10 reads as a second one."""
    from vision.synth import render_scene
    from vision.synthetic_sets import scene_options
    from vision.view import STRAIGHT

    image = render_scene(710012, **scene_options(710012)).image
    real, ghost = np.array([1200.0, 349.0]), np.array([1280.0, 426.0])

    def doubles_near(tiles: list[DetectedTile], point: np.ndarray) -> int:
        return sum(t.values == (10, 10) and float(np.hypot(*(np.array(t.center) - point))) < 15 for t in tiles)

    for reader in (OnnxTileReader(threads=1, max_value=12),  # the hub's single look
                   OnnxTileReader(threads=1, max_value=12, view_search=True, mirrored=True)):  # a still photo
        tiles = reader.read(image)
        assert doubles_near(tiles, real) == 1 and doubles_near(tiles, ghost) == 0
    single = OnnxTileReader(threads=1, max_value=12)
    unfiltered = single._read_in(image, STRAIGHT, np.zeros((0, 2)), 0.0)[0]
    assert doubles_near(unfiltered, ghost) == 1  # the detector and reader alone keep it
