"""Stretched views of an oblique photo (vision/view.py): the geometry, the rule that picks one, and the gain."""

from __future__ import annotations

import math

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.eval_run import synthetic_truth
from vision.evaluate import Tally, score_synthetic
from vision.geometry import points_in_quads, shoelace
from vision.reader import OnnxTileReader
from vision.synth import render_scene
from vision.synthetic_sets import EVAL_SEED0, oblique_scene_options
from vision.types import DetectedTile, HalfReading
from vision.view import (
    ELSEWHERE_SURE,
    MARGIN,
    SEARCHED_VIEWS,
    STRAIGHT,
    View,
    ViewEvidence,
    choose_view,
    to_frame,
    with_tiles_seen_elsewhere,
)


@settings(max_examples=40, deadline=None)
@given(angle=st.floats(0, math.pi), stretch=st.floats(1.0, 2.0), w=st.integers(60, 2400), h=st.integers(60, 1800),
       fx=st.floats(0.0, 1.0), fy=st.floats(0.0, 1.0))
def test_a_point_in_the_view_maps_back_to_where_it_lies_in_the_frame(angle, stretch, w, h, fx, fy) -> None:
    """A bright spot drawn in the frame is found in the view where the affine says, and maps back onto itself."""
    image = np.zeros((h, w, 3), np.uint8)
    r = math.ceil(3 * max(1.0, max(w, h) / 1152))  # still a few pixels wide once the frame is shrunk
    spot = r + 1 + np.array([fx * (w - 3 - 2 * r), fy * (h - 3 - 2 * r)])  # whole, inside the frame
    cv2.circle(image, tuple(int(v) for v in np.round(spot)), r, (255, 255, 255), -1)
    spot = np.round(spot)
    view = View(angle, stretch)
    seen, affine = view.warp(image)
    expected = affine[:, :2] @ spot + affine[:, 2]
    grey = seen[..., 0].astype(np.float64)
    ys, xs = np.nonzero(grey > 0)
    found = np.array([np.average(xs, weights=grey[ys, xs]), np.average(ys, weights=grey[ys, xs])])
    tol = 1.0 + stretch * max(w, h) / 1152  # a pixel of the frame, shrunk or not, and one of the view
    assert np.linalg.norm(found - expected) <= tol
    np.testing.assert_allclose(to_frame(expected, affine), spot, atol=1e-3)
    quad = np.array([[10.0, 10.0], [30.0, 10.0], [30.0, 20.0], [10.0, 20.0]], np.float32)
    assert shoelace(to_frame(quad, affine)[None])[0] > 0  # the winding survives the round trip


def _evidence(sure: int, certainty: float) -> ViewEvidence:
    return ViewEvidence(sure_tiles=sure, read_certainty=certainty)


@given(base=st.floats(0.0, 1.0 - MARGIN), gain=st.floats(-0.5, 0.5), fewer=st.integers(0, 3), sure=st.integers(0, 40))
def test_a_stretched_view_is_kept_only_when_read_more_surely_with_no_fewer_sure_tiles(base, gain, fewer, sure) -> None:
    stretched = SEARCHED_VIEWS[3]
    picked = choose_view([(STRAIGHT, _evidence(sure, base)), (stretched, _evidence(sure - fewer, base + gain))])
    assert picked == (stretched if gain >= MARGIN and fewer == 0 else STRAIGHT)


def test_the_surest_of_several_views_is_the_one_kept() -> None:
    a, b = SEARCHED_VIEWS[1], SEARCHED_VIEWS[6]
    evidence = [(STRAIGHT, _evidence(5, 0.70)), (a, _evidence(6, 0.80)), (b, _evidence(7, 0.90))]
    assert choose_view(evidence) == b
    assert choose_view([(STRAIGHT, _evidence(5, 0.7))]) == STRAIGHT


def test_a_surer_view_that_found_fewer_tiles_does_not_hide_one_that_qualifies() -> None:
    almost_empty, fair, weak = SEARCHED_VIEWS[8], SEARCHED_VIEWS[7], SEARCHED_VIEWS[2]
    evidence = [(STRAIGHT, _evidence(3, 0.46)), (almost_empty, _evidence(0, 0.56)), (fair, _evidence(3, 0.54)),
                (weak, _evidence(5, 0.465))]
    assert choose_view(evidence) == fair
    assert choose_view([evidence[0], evidence[1], evidence[3]]) == STRAIGHT  # none qualifies


# oblique validation scenes (seeds 730000 on, the kind the view rule was chosen on; never evaluation seeds),
# at 1280x960 so that the test stays quick
OBLIQUE_SEEDS = range(730_100, 730_106)


def _tally(reader: OnnxTileReader, scenes: list) -> Tally:
    tally = Tally()
    for scene in scenes:
        score_synthetic(synthetic_truth(scene), reader.read(scene.image), tally)
    return tally


def test_a_photo_from_the_side_is_read_better_in_a_stretched_view() -> None:
    scenes = [render_scene(s, **{**oblique_scene_options(s), "width": 1280, "height": 960}) for s in OBLIQUE_SEEDS]
    straight = _tally(OnnxTileReader(max_value=18), scenes)
    searching = OnnxTileReader(max_value=18, view_search=True)
    searched = _tally(searching, scenes)
    # 189 halves against 168 with the detector of 2026-11-30, 188 against 172 with its fine-tune, which reads a
    # frame from the side better as it is: the search must still read clearly more
    assert searched.halves_correct >= straight.halves_correct * 1.05, (searched.metrics(), straight.metrics())
    assert searched.true_detections >= straight.true_detections, (searched.metrics(), straight.metrics())


def test_a_photo_from_above_is_read_as_it_is() -> None:
    """The hub's everyday frame: the frame as it is is kept, tile for tile, on most such photos; a tile only a
    stretched view found surely is added after them, and lies on a real tile. Where a stretched view is kept
    instead (seed 1090001 with the fine-tuned detector: 8 tiles, the view 1.4 along x read 0.016 surer), it
    reads every tile the frame as it is reads, as well."""
    straight, searching = OnnxTileReader(max_value=18), OnnxTileReader(max_value=18, view_search=True)
    added, kept_straight = 0, 0
    for seed in range(EVAL_SEED0 + 90_000, EVAL_SEED0 + 90_004):  # the first of test_vision's overhead scenes
        scene = render_scene(seed, 1280, 960, tile_px=(60.0, 160.0))
        seen, as_is = searching.read(scene.image), straight.read(scene.image)
        if searching.view != STRAIGHT:
            found, plain = Tally(), Tally()
            score_synthetic(synthetic_truth(scene), seen, found)
            score_synthetic(synthetic_truth(scene), as_is, plain)
            assert found.true_detections >= plain.true_detections, seed
            assert found.halves_correct >= plain.halves_correct, seed
            assert found.detections - found.true_detections <= plain.detections - plain.true_detections, seed
            continue
        kept_straight += 1
        assert seen[: len(as_is)] == as_is
        real = np.array([t.corners for t in scene.tiles], np.float32)
        for tile in seen[len(as_is):]:
            assert tile.confidence >= ELSEWHERE_SURE and points_in_quads(np.array([tile.center]), real).any(), seed
            added += 1
    assert kept_straight >= 3
    assert added <= 2  # from above, the frame as it is finds nearly everything itself


def test_a_tile_only_another_view_found_surely_is_added_once() -> None:
    def tile(x: float, y: float, confidence: float, length: float = 40.0) -> DetectedTile:
        corners = ((x - 10, y - length / 2), (x + 10, y - length / 2), (x + 10, y + length / 2),
                   (x - 10, y + length / 2))
        half = HalfReading((x, y), ())
        return DetectedTile(corners, (half, half), confidence, "down")  # type: ignore[arg-type]

    kept = [tile(100, 100, 0.9)]
    others = [
        tile(100, 104, 0.95),  # the kept tile again, drawn a little lower
        tile(100, 170, 0.6),  # elsewhere, but not sure enough
        tile(200, 100, 0.8),  # elsewhere and sure: added
        tile(202, 101, 0.75),  # the same tile from a third view: not twice
        tile(100, 130, 0.9, length=120.0),  # a long box whose middle holds the kept tile's centre
    ]
    merged = with_tiles_seen_elsewhere(kept, others)
    assert merged == [kept[0], others[2]]
    assert with_tiles_seen_elsewhere(kept, others, sure=0.5) == [kept[0], others[2], others[1]]
    assert with_tiles_seen_elsewhere([], others[1:2]) == []  # below the bar even with nothing kept


def test_detect_searches_the_views_of_a_photo_unless_told_straight(tmp_path, capsys) -> None:
    import json

    from hub.cli import main

    seed = OBLIQUE_SEEDS[0]
    scene = render_scene(seed, **{**oblique_scene_options(seed), "width": 1280, "height": 960})
    photo = tmp_path / "side.png"
    cv2.imwrite(str(photo), scene.image)
    centres = {}
    for flags in ((), ("--straight",)):
        assert main(["detect", str(photo), "--json", "--set", "18", *flags]) == 0
        centres[flags] = sorted(tuple(t["center"]) for t in json.loads(capsys.readouterr().out)["tiles"])
    as_is = OnnxTileReader(max_value=18).read(cv2.imread(str(photo)))
    assert centres[("--straight",)] == sorted((round(t.center[0], 1), round(t.center[1], 1)) for t in as_is)
    assert centres[()] != centres[("--straight",)]
    assert main(["detect", str(photo)]) == 0 and "seen stretched" in capsys.readouterr().out
    assert main(["detect", str(photo), "--straight"]) == 0 and "seen as it is" in capsys.readouterr().out
