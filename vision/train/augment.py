"""Photometric domain randomisation on top of the renderer's own: what a real camera does to a frame.

Channel permutation and per-channel gains make pip and table colours worthless as a cue, so the
models must learn shapes; blur, noise, gamma and JPEG stand in for cheap lenses and sensors.
"""

from __future__ import annotations

import cv2
import numpy as np


def photometric(img: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """One random camera look for a BGR uint8 image (any size); returns a new uint8 image."""
    f = img.astype(np.float32) * (1 / 255.0)
    if rng.random() < 0.5:
        f = f[..., rng.permutation(3)]
    if rng.random() < 0.2:
        grey = f.mean(axis=-1, keepdims=True)
        f = grey + (f - grey) * rng.uniform(0.0, 0.7)
    f = f * rng.uniform(1 - 0.25 * strength, 1 + 0.25 * strength, 3).astype(np.float32)  # white balance
    f = f * rng.uniform(1 - 0.4 * strength, 1 + 0.3 * strength) + rng.uniform(-0.1, 0.1) * strength
    f = np.clip(f, 0, 1) ** np.float32(np.exp(rng.uniform(-0.5, 0.5) * strength))
    if rng.random() < 0.25:  # uneven light across the image
        h, w = f.shape[:2]
        gx, gy = rng.uniform(-0.3, 0.3, 2) * strength
        ramp = (1 + gx * np.linspace(-1, 1, w, dtype=np.float32)[None, :]
                + gy * np.linspace(-1, 1, h, dtype=np.float32)[:, None])
        f = f * ramp[..., None]
    out = np.clip(f * 255, 0, 255).astype(np.uint8)
    if rng.random() < 0.4:
        sigma = rng.uniform(0.3, 1.4) * strength
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    if rng.random() < 0.5:
        noise = rng.normal(0, rng.uniform(1, 7) * strength, out.shape).astype(np.float32)
        out = np.clip(out.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 95))])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out
