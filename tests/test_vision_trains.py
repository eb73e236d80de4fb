"""Weak detections taken back when they continue a train (vision/trains.py)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.detector import Candidate
from vision.geometry import rect_corners
from vision.reader import OnnxTileReader
from vision.trains import linked, with_train_links

LENGTH, WIDTH = 60.0, 30.0


def tile(x: float, y: float, angle: float = 0.0, score: float = 0.9, face: str = "up",
         length: float = LENGTH, width: float = WIDTH) -> Candidate:
    corners = rect_corners(np.array([[x, y]]), np.array([angle]), np.array([length]), np.array([width]))[0]
    return Candidate(corners, score, face)


def run(n: int, angle: float = 0.0, scores: tuple[float, ...] = ()) -> list[Candidate]:
    """``n`` tiles end to end from (100, 100) along ``angle``, scored by ``scores`` (default sure)."""
    u = np.array([math.cos(angle), math.sin(angle)])
    return [tile(*(np.array([100.0, 100.0]) + k * LENGTH * u), angle=angle,
                 score=scores[k] if k < len(scores) else 0.9) for k in range(n)]


@given(st.floats(0, math.pi), st.sampled_from([0, 2]))
@settings(max_examples=50, deadline=None)
def test_tiles_end_to_end_are_linked_whichever_way_each_points(angle: float, roll: int) -> None:
    a, b = run(2, angle)
    assert linked(a.corners, b.corners)
    assert linked(np.roll(b.corners, roll, axis=0), a.corners)


def test_tiles_side_by_side_overlapping_turned_or_of_another_size_are_not_linked() -> None:
    a = tile(100, 100)
    assert not linked(tile(100, 100 + WIDTH).corners, a.corners)  # side by side
    assert not linked(tile(100 + LENGTH / 2, 100).corners, a.corners)  # half over it
    assert not linked(tile(100 + LENGTH, 100, angle=math.radians(25)).corners, a.corners)
    assert not linked(tile(100 + LENGTH, 100, length=1.4 * LENGTH).corners, a.corners)
    assert not linked(tile(100 + 1.5 * LENGTH, 100).corners, a.corners)  # a gap of half a tile
    assert not linked(tile(100 + LENGTH, 100 + WIDTH).corners, a.corners)  # beside the end, not on it


def test_a_run_of_weak_tiles_between_sure_ones_is_taken_from_its_ends() -> None:
    found = run(6, angle=0.4, scores=(0.9, 0.2, 0.15, 0.2, 0.12, 0.8))
    kept = with_train_links(found, bar=0.3, sure=0.5)
    assert len(kept) == 6
    assert {id(c) for c in kept} == {id(c) for c in found}


def test_a_weak_tile_with_no_sure_neighbour_stays_dropped() -> None:
    sure = run(3)
    lone = tile(400, 400, score=0.25)
    beside = tile(100, 100 + 2 * WIDTH, score=0.25)
    kept = with_train_links([*sure, lone, beside], bar=0.3, sure=0.5)
    assert [id(c) for c in kept] == [id(c) for c in sure]


def test_face_down_tiles_neither_link_nor_are_linked() -> None:
    back, weak_up = tile(100, 100, face="down"), tile(100 + LENGTH, 100, score=0.2)
    weak_back = tile(100 + LENGTH, 100, score=0.2, face="down")
    assert [id(c) for c in with_train_links([back, weak_up], bar=0.3, sure=0.5)] == [id(back)]
    assert len(with_train_links([tile(100, 100), weak_back], bar=0.3, sure=0.5)) == 1


def test_only_a_sure_tile_starts_a_run() -> None:
    doubtful, weak = run(2, scores=(0.4, 0.2))
    assert len(with_train_links([doubtful, weak], bar=0.3, sure=0.5)) == 1
    assert len(with_train_links([doubtful, weak], bar=0.3, sure=0.4)) == 2


def test_a_still_photos_detector_takes_back_tiles_a_shaken_train_hid() -> None:
    """Rendered validation scene 700072 (never an evaluation seed): two tiles of a train score under the bar."""
    from vision.eval_run import synthetic_truth
    from vision.geometry import points_in_quads, quad_core
    from vision.synth import render_scene
    from vision.synthetic_sets import scene_options
    from vision.view import STRAIGHT

    scene = render_scene(700072, **scene_options(700072))
    truth = np.array([t.corners for t in synthetic_truth(scene) if not t.ignore], np.float32)

    def found_and_false(cands: list[Candidate]) -> tuple[int, int]:
        quads = np.array([c.corners for c in cands], np.float32)
        hit = points_in_quads(truth.mean(axis=1), quad_core(quads)) & points_in_quads(quads.mean(axis=1),
                                                                                      quad_core(truth)).T
        return int(hit.any(axis=1).sum()), int((~hit.any(axis=0)).sum())

    reader = OnnxTileReader(threads=1, view_search=True, mirrored=True)
    with_links = reader.detector.detect(scene.image)
    reader.detector.link_bar = None
    without = reader.detector.detect(scene.image)
    (found, false), (found_before, false_before) = found_and_false(with_links), found_and_false(without)
    assert found == found_before + 2 and false == false_before
    assert OnnxTileReader(threads=1).detector.link_bar is None  # the hub's single look keeps its bar

    # the tiles the links took back do not judge the view (choose_view): they follow the view's own boxes
    evidence = []
    for cands in (with_links, without):
        reader._found_in = lambda image, view, *ends, cands=cands: cands  # type: ignore[method-assign]
        evidence.append(reader._read_in(scene.image, STRAIGHT, np.zeros((0, 2)), 0.0)[1])
    assert evidence[0] == evidence[1]
