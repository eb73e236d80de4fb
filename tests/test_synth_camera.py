"""The renderer's random camera: how far it may tilt, and that it always looks down on the table."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.synth.camera import FAR_RAY_MAX, CameraSpec, sample_camera
from vision.synth.scenes import TILT_MAX_DEG
from vision.synthetic_sets import FRAME_SIZES


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from(FRAME_SIZES), share=st.floats(0.025, 0.25),
       distortion=st.booleans())
def test_a_steep_camera_still_sees_the_table_at_its_far_corner(seed: int, size: tuple[int, int], share: float,
                                                               distortion: bool) -> None:
    """A phone held low over the table: its frame's corners must still show the table, not the sky
    (a ray above the horizon has no table point, and the renderer would draw nonsense there)."""
    width, height = size
    side = share * max(size)
    spec = CameraSpec((side, side), TILT_MAX_DEG, distortion, straight_share=0.0)
    camera = sample_camera(np.random.default_rng(seed), width, height, np.zeros(2), 50.0, spec)
    assert 0.0 <= camera.tilt_deg <= TILT_MAX_DEG
    corners = np.array([[-0.5, -0.5], [width - 0.5, -0.5], [width - 0.5, height - 0.5], [-0.5, height - 0.5]])
    seen = camera.to_table(corners)
    back = camera.project(np.concatenate([seen, np.zeros((4, 1))], axis=1))
    assert np.allclose(back, corners, atol=1e-3), "a frame corner's ray misses the table"
    reach = np.linalg.norm(seen - camera.center[:2], axis=1) / camera.height_mm
    assert np.degrees(np.arctan(reach)).max() <= math.degrees(FAR_RAY_MAX) + 1e-6


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), low=st.floats(1.0, 60.0))
def test_a_camera_with_a_least_tilt_never_looks_straight_down(seed: int, low: float) -> None:
    spec = CameraSpec((100.0, 100.0), 62.0, True, straight_share=1.0, tilt_min_deg=low)
    camera = sample_camera(np.random.default_rng(seed), 1280, 960, np.zeros(2), 50.0, spec)
    capped = math.isclose(math.radians(camera.tilt_deg), FAR_RAY_MAX - camera.corner_ray)
    assert 0.0 < camera.tilt_deg <= 62.0
    assert camera.tilt_deg >= low - 1e-9 or capped  # only a wide lens's far corner holds it lower
