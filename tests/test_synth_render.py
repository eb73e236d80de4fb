"""The synthetic renderer's truth matches its pixels (clean renders), and the same seed gives the same frame."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import cv2
import numpy as np
import pytest

from vision.synth import Scene, TileTruth, render_scene
from vision.synth.palette import PIP_FAMILIES, sample_style
from vision.synth.pips import TEN_LAYOUTS
from vision.synth.sprites import make_sprites

S = 120  # a rectified half is S x S px


def count_pips(image: np.ndarray, corners: np.ndarray) -> tuple[int, int]:
    """Pip blobs on each half of a tile, by a plain OpenCV blob count on the rectified tile.

    The body is the tile's commonest colour; pips are what stands apart from it (Otsu on the
    Lab distance, holes filled for pale pips that show mostly their rim), away from the divider
    and the bevelled edge, round and pip-sized.
    """
    dst = np.float32([[0, S], [0, 0], [2 * S, 0], [2 * S, S]]) - 0.5
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
    tile = cv2.warpPerspective(image, m, (2 * S, S), flags=cv2.INTER_LINEAR)
    lab = cv2.cvtColor(tile, cv2.COLOR_BGR2LAB).astype(np.float32)
    e = int(0.09 * S)
    inner = lab[e:-e, e:-e].reshape(-1, 3)
    q = (inner / 6).astype(np.int32)
    keys = q[:, 0] * 4096 + q[:, 1] * 64 + q[:, 2]
    vals, counts = np.unique(keys, return_counts=True)
    body = inner[keys == vals[np.argmax(counts)]].mean(axis=0)
    d = np.linalg.norm(lab - body, axis=2)
    band = int(S * 0.12)
    out = []
    for k in (0, 1):
        dk = d[:, k * S:(k + 1) * S]
        keep = np.zeros(dk.shape, bool)
        if k == 0:
            keep[e:-e, e:S - band] = True
        else:
            keep[e:-e, band:S - e] = True
        t, _ = cv2.threshold(np.clip(dk[keep], 0, 255).astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        mask = ((dk > max(t, 15)) & keep).astype(np.uint8)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        filled = np.zeros_like(mask)
        cv2.drawContours(filled, contours, -1, 1, -1)
        filled = cv2.morphologyEx(filled, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        _, _, stats, _ = cv2.connectedComponentsWithStats(filled, connectivity=4)
        w, h, area = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
        sized = (area >= 0.35 * np.pi * (0.045 * S) ** 2) & (area <= 2.2 * np.pi * (0.11 * S) ** 2)
        round_ = (np.minimum(w, h) >= 5) & (np.maximum(w, h) <= 1.8 * np.minimum(w, h)) & (area >= 0.5 * w * h)
        out.append(int((sized & round_).sum()))
    return out[0], out[1]


def readable(scene: Scene) -> list[TileTruth]:
    return [t for t in scene.tiles if t.face == "up" and not t.occluded and not t.truncated]


@pytest.mark.parametrize("pips", PIP_FAMILIES)
def test_each_labelled_half_holds_that_many_pip_blobs(pips: str) -> None:
    checked = 0
    for seed in range(100, 112):  # scenes until enough tiles are readable
        scene = render_scene(seed, 960, 720, clean=True, tile_px=(120, 260), pips=pips)
        for t in readable(scene):
            assert count_pips(scene.image, t.corners) == t.values, (
                f"seed {seed} ({scene.style}): tile {t.values} at {t.corners.tolist()}"
            )
            checked += 1
        if checked >= 12:
            break
    assert checked >= 12, f"only {checked} readable tiles in the {pips} scenes"


def test_double_fifteen_and_eighteen_layouts_count_true() -> None:
    checked = 0
    for n, seed in ((15, 7), (18, 8), (18, 9)):
        scene = render_scene(seed, 1280, 960, clean=True, tile_px=(180, 300), set=n, kind="loose")
        for t in readable(scene):
            assert count_pips(scene.image, t.corners) == t.values, f"seed {seed}, double-{n}: tile {t.values}"
            checked += int(max(t.values) > 12)
    assert checked >= 3


@pytest.mark.parametrize("ten", TEN_LAYOUTS)
def test_a_ten_counts_true_whichever_way_the_set_prints_it(ten: str) -> None:
    sprites = make_sprites(replace(sample_style(np.random.default_rng(5), family="dark"), ten=ten), 240)
    for a, b in ((10, 8), (11, 10)):
        tile = np.ascontiguousarray(sprites.tile(a, b)[..., :3])
        assert count_pips(tile, sprites.corners().astype(np.float32)) == (a, b), f"{ten}: tile {(a, b)}"


def test_sets_print_their_tens_both_ways() -> None:
    assert {sample_style(np.random.default_rng(seed)).ten for seed in range(40)} == set(TEN_LAYOUTS)


def _shoelace(c: np.ndarray) -> float:
    x, y = c[:, 0], c[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_corners_enclose_the_tile(seed: int) -> None:
    """On a dark table: the quad is all tile, and the tile's top face (its own colour) lies inside the quad."""
    scene = render_scene(seed, 960, 720, clean=True, kind="loose", surface="plain-dark", tile_px=(70, 160),
                         pips="pale")
    img = scene.image
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = img.shape[:2]
    all_tiles = np.zeros((h, w), np.uint8)
    for t in scene.tiles:
        cv2.fillConvexPoly(all_tiles, np.round(t.corners * 16).astype(np.int32), 1, cv2.LINE_8, 4)
    table = np.median(lab[~cv2.dilate(all_tiles, np.ones((25, 25), np.uint8)).astype(bool)], axis=0)
    seen = 0
    for t in scene.tiles:
        if t.occluded or t.truncated:
            continue
        assert _shoelace(t.corners) > 0, "corners must wind clockwise on screen"
        quad = t.corners.astype(np.float32)
        c = quad.mean(axis=0)
        inner = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(inner, np.round((c + (quad - c) * 0.9) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        body = np.median(lab[inner.astype(bool)], axis=0)
        # (a) the quad, a little inset, is tile: nothing of the dark table shows through
        table_like = np.linalg.norm(lab - table, axis=2) < 15
        assert table_like[inner.astype(bool)].mean() < 0.02, f"tile {t.values}: its quad is not all tile"
        # (b) every pixel of the top face's own colour near the tile lies within the quad (+1.5 px)
        grown = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(grown, np.round((c + (quad - c) * 1.6) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        enclosed = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(enclosed, np.round(quad * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        enclosed = cv2.dilate(enclosed, np.ones((4, 4), np.uint8))
        face_colour = (np.linalg.norm(lab - body, axis=2) < 6) & grown.astype(bool)
        others = np.zeros((h, w), np.uint8)
        for o in scene.tiles:
            if o is not t:
                cv2.fillConvexPoly(others, np.round(o.corners * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        stray = face_colour & ~enclosed.astype(bool) & ~cv2.dilate(others, np.ones((5, 5), np.uint8)).astype(bool)
        assert stray.sum() <= 3, f"tile {t.values}: {int(stray.sum())} px of its top face lie outside its corners"
        seen += 1
    assert seen >= 5


def test_the_same_seed_renders_the_same_pixels() -> None:
    a = render_scene(21, 640, 480)
    b = render_scene(21, 640, 480)
    assert hashlib.sha256(a.image.tobytes()).hexdigest() == hashlib.sha256(b.image.tobytes()).hexdigest()
    assert [t.to_json() for t in a.tiles] == [t.to_json() for t in b.tiles]
    c = render_scene(22, 640, 480)
    assert not np.array_equal(a.image, c.image)


def test_the_same_seed_renders_the_same_pixels_in_every_process() -> None:
    """Python salts str hashes per process: nothing drawn may depend on the order of a set of names
    (a table with several markers used to come out differently from run to run)."""
    import os
    import subprocess
    import sys

    code = ("import hashlib; from vision.synth import render_scene; "
            "s = render_scene(1090100, 1014, 760, kind='table', tile_px=(30.0, 40.0)); "
            "print(hashlib.sha256(s.image.tobytes()).hexdigest())")
    digests = {
        subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": str(salt)},
                       capture_output=True, text=True, check=True, timeout=120).stdout
        for salt in (1, 2, 3)
    }
    assert len(digests) == 1


@pytest.mark.parametrize("seed", range(30, 42))
def test_truth_is_consistent(seed: int) -> None:
    scene = render_scene(seed, 800, 600)
    n = scene.style["set"]
    assert scene.image.shape == (600, 800, 3) and scene.image.dtype == np.uint8
    tiles = [(min(t.values), max(t.values)) for t in scene.tiles]
    assert len(tiles) == len(set(tiles)), "a tile appears twice"
    for t in scene.tiles:
        assert t.corners.shape == (4, 2) and t.corners.dtype == np.float32
        assert np.isfinite(t.corners).all()
        assert all(0 <= v <= n for v in t.values)
        assert t.face in ("up", "down")
        assert 0.0 <= t.visible <= 1.0
        assert _shoelace(t.corners) > 0
        assert (t.train is None) == (t.position is None) or t.train == "engine"
        if not t.truncated:
            assert (t.corners[:, 0] >= -0.5).all() and (t.corners[:, 0] <= 799.5).all()
    trains: dict[str, list[TileTruth]] = {}
    for t in scene.tiles:
        if t.position is not None:
            trains.setdefault(t.train, []).append(t)
    for name, ts in trains.items():
        ts.sort(key=lambda t: t.position)
        for a, b in zip(ts, ts[1:], strict=False):
            if b.position == a.position + 1:
                assert b.values[0] == a.values[1], f"train {name}: {a.values} then {b.values} do not match"


def test_options_are_checked() -> None:
    with pytest.raises(TypeError, match="unknown scene option"):
        render_scene(1, colour="red")
    with pytest.raises(ValueError, match="set must be"):
        render_scene(1, set=7)
    with pytest.raises(ValueError, match="pips must be"):
        render_scene(1, pips="glow")
