"""Corner-refiner training batches: wide patches seen through a badly drawn box, and where the tile truly lies.

Each draw moves, turns and stretches the true outline and nudges its corners, as the detector's boxes err: on
oblique rendered scenes (seeds 730200 on) its corners sat a median 3.6 and at the 90th percentile 9 patch pixels
from the truth along a 52-px tile, and half as far across. The target is the true outline seen from that box.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.corners import BOX, MOVE_SCALE, PATCH_H, PATCH_W, refiner_input
from vision.train.augment import Defocus, Smear, camera_looks
from vision.train.cache import WIDE_QUAD
from vision.train.reader_data import BoxErrors, drawn_box

GROUP = 8  # patches that share one camera look
BADLY_DRAWN = 0.5  # share of boxes drawn as an oblique view's are, a fifth too long or short
# the refiner's looks: the reader's last fine-tunes' shake and lens
REFINER_SMEAR = Smear(0.3, (1.5, 14.0))
REFINER_DEFOCUS = Defocus(0.15)
# a whole box moves at most 14 patch pixels, so its patch mostly shows real pixels
REFINER_BOXES = BoxErrors(BADLY_DRAWN, (3.0, 0.06, 0.07), (7.0, 0.18, 0.18), 0.07, 0.06, 0.06, scale_limit=0.45,
                          shift_limit=14.0)


def refiner_batch(wide: np.ndarray, rng: np.random.Generator, n: int, smear: Smear = REFINER_SMEAR,
                  defocus: Defocus = REFINER_DEFOCUS) -> tuple[np.ndarray, np.ndarray]:
    """n tiles -> network input (n, 2, PATCH_H, PATCH_W) float32 and the true corners' moves (n, 8) float32."""
    idx = rng.integers(len(wide), size=n)
    patches = np.empty((n, PATCH_H, PATCH_W, 3), np.uint8)
    target = np.empty((n, 4, 2), np.float32)
    for j, i in enumerate(idx):
        box, truth = drawn_box(rng, WIDE_QUAD, REFINER_BOXES), WIDE_QUAD
        if rng.random() < 0.5:  # the tile turned end for end: both outlines start at the other end
            box, truth = np.roll(box, 2, axis=0), np.roll(truth, 2, axis=0)
        m = cv2.getPerspectiveTransform(box, BOX)
        patches[j] = cv2.warpPerspective(wide[i], m, (PATCH_W, PATCH_H), flags=cv2.INTER_LINEAR,
                                         borderMode=cv2.BORDER_REPLICATE)
        target[j] = cv2.perspectiveTransform(truth[None], m)[0]
        if rng.random() < 0.5:  # mirrored: x -> W-1-x, and each end's two corners swap
            patches[j] = patches[j][:, ::-1]
            target[j, :, 0] = PATCH_W - 1 - target[j, :, 0]
            target[j] = target[j][[1, 0, 3, 2]]
    camera_looks(patches, rng, GROUP, smear=smear, defocus=defocus)
    return refiner_input(patches), ((target - BOX) / MOVE_SCALE).reshape(n, 8)
