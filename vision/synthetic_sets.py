"""Which renderer scenes train and test the models: seeds, frame sizes, tile sizes, what counts.

Training and evaluation draw from the same distribution; only the seeds differ, so the held-out
figures measure generalisation to new scenes, not to a new kind of scene.
"""

from __future__ import annotations

import numpy as np

TRAIN_SEED_LIMIT = 500_000  # training uses seeds below this
EVAL_SEED0 = 1_000_000  # held-out synthetic seeds start here
OBLIQUE_EVAL_SEED0 = 1_200_000  # the oblique held-out set's seeds start here
# the oblique set's camera tilt: the real-dev photos' viewpoint, as the shapes of their tiles tell
OBLIQUE_EVAL_TILT = (45.0, 55.0)

# frame sizes drawn per scene: the Pi HQ camera's binned mode, and smaller ones
FRAME_SIZES = ((2028, 1520), (1640, 1232), (1280, 960), (1920, 1080))
# tile length range as a share of the frame's longest side (the renderer draws log-uniformly)
TILE_SHARE = (0.025, 0.25)
VISIBLE_REQUIRED = 0.9  # a tile at least this visible must be found and read; less is optional
OBLIQUE_SHARE = 0.25  # scenes whose camera may tilt up to 45 degrees (the renderer's default is 20)
# training scenes seen from the oblique set's angle (``python -m vision.train --oblique-scenes``) take seeds from here
OBLIQUE_TRAIN_SEED0 = 400_000


def scene_options(seed: int) -> dict:
    """Renderer options for one training or evaluation scene (deterministic by seed)."""
    rng = np.random.default_rng(seed)
    width, height = FRAME_SIZES[int(rng.integers(len(FRAME_SIZES)))]
    side = max(width, height)
    tilt = 45.0 if rng.random() < OBLIQUE_SHARE else 20.0
    return {"width": width, "height": height, "tile_px": (TILE_SHARE[0] * side, TILE_SHARE[1] * side),
            "tilt_max_deg": tilt}


def oblique_scene_options(seed: int) -> dict:
    """A held-out scene seen from the real photos' angle; only the tilt differs from :func:`scene_options`."""
    options = scene_options(seed)
    options["tilt_min_deg"], options["tilt_max_deg"] = OBLIQUE_EVAL_TILT
    return options


def training_scene_options(seed: int) -> dict:
    """A training scene's options: seeds from ``OBLIQUE_TRAIN_SEED0`` on are seen from the real photos' angle, which
    ``scene_options`` never reaches (its steepest camera tilts 45 degrees)."""
    return oblique_scene_options(seed) if seed >= OBLIQUE_TRAIN_SEED0 else scene_options(seed)
