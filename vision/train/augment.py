"""Photometric domain randomisation on top of the renderer's own: what a real camera does to a frame.

Channel permutation and per-channel gains make pip and table colours worthless as a cue, so the
models must learn shapes; blur, noise, gamma and JPEG stand in for cheap lenses and sensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

_LEVELS = np.arange(256, dtype=np.float32)[:, None]  # every uint8 level, as one column


@dataclass(frozen=True)
class Smear:
    """A shaken camera or a moving hand: the share of looks smeared, and the smear's length range in the image's
    own pixels. The renderer smears 12% of its scenes, yet nearly all the misread and missed tiles of the
    validation scenes sat in a few smeared or defocused frames, so the models see more of it."""

    share: float = 0.15
    px: tuple[float, float] = (1.5, 8.0)


SMEAR = Smear()


@dataclass(frozen=True)
class Defocus:
    """A lens out of focus: the share of looks blurred once more, after the rest of the look, and the Gaussian's
    sigma range in the image's own pixels. Off unless asked for: a held-out scene defocused by 3 px held half the
    misread tiles of the reader that saw only the light blur of every look."""

    share: float = 0.0
    sigma: tuple[float, float] = (1.4, 2.6)

    def apply(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``img`` blurred ``share`` of the time; off, it draws nothing from ``rng`` (earlier recipes' batches stay)."""
        if self.share <= 0.0 or rng.random() >= self.share:
            return img
        return cv2.GaussianBlur(img, (0, 0), rng.uniform(*self.sigma))


IN_FOCUS = Defocus()


@dataclass(frozen=True)
class Tone:
    """One camera's colour response: which channel feeds which, saturation, gains, contrast, gamma, light ramp."""

    perm: np.ndarray | None
    desaturate: float | None  # keep this share of each pixel's colour
    gains: np.ndarray  # (3,) float32 white balance
    contrast: float
    offset: float
    gamma: np.float32
    ramp: np.ndarray | None  # (2,) brightness slope across x and y

    @property
    def pointwise(self) -> bool:
        """Each output level depends only on the same pixel's level in one channel."""
        return self.desaturate is None and self.ramp is None


def draw_tone(rng: np.random.Generator, strength: float = 1.0) -> Tone:
    """A random tone. The order of the draws is part of the training recipe: changing it changes every batch."""
    perm = rng.permutation(3) if rng.random() < 0.5 else None
    desaturate = rng.uniform(0.0, 0.7) if rng.random() < 0.2 else None
    gains = rng.uniform(1 - 0.25 * strength, 1 + 0.25 * strength, 3).astype(np.float32)
    contrast = rng.uniform(1 - 0.4 * strength, 1 + 0.3 * strength)
    offset = rng.uniform(-0.1, 0.1) * strength
    gamma = np.float32(np.exp(rng.uniform(-0.5, 0.5) * strength))
    ramp = rng.uniform(-0.3, 0.3, 2) * strength if rng.random() < 0.25 else None
    return Tone(perm, desaturate, gains, contrast, offset, gamma, ramp)


def apply_tone(img: np.ndarray, tone: Tone) -> np.ndarray:
    """BGR uint8 through ``tone``. A pointwise tone goes through a lookup table of the 256 levels,
    which gives the same bytes as the per-pixel arithmetic (``tone_per_pixel``) several times sooner:
    making batches is what holds training back on two cores."""
    if not tone.pointwise:
        return tone_per_pixel(img, tone)
    lut = _to_uint8(_levels(_LEVELS * (1 / 255.0), tone))  # (256, 3)
    src = img if tone.perm is None else img[..., tone.perm]
    return cv2.LUT(np.ascontiguousarray(src), lut[None])


def tone_per_pixel(img: np.ndarray, tone: Tone) -> np.ndarray:
    """The tone worked out on every pixel: needed when it mixes channels or varies across the image."""
    f = img.astype(np.float32) * (1 / 255.0)
    if tone.perm is not None:
        f = f[..., tone.perm]
    if tone.desaturate is not None:
        grey = f.mean(axis=-1, keepdims=True)
        f = grey + (f - grey) * tone.desaturate
    f = _levels(f, tone)
    if tone.ramp is not None:
        h, w = f.shape[:2]
        f = f * (1 + tone.ramp[0] * np.linspace(-1, 1, w, dtype=np.float32)[None, :]
                 + tone.ramp[1] * np.linspace(-1, 1, h, dtype=np.float32)[:, None])[..., None]
    return _to_uint8(f)


def photometric(img: np.ndarray, rng: np.random.Generator, strength: float = 1.0, smear: Smear = SMEAR) -> np.ndarray:
    """One random camera look for a BGR uint8 image (any size); returns a new uint8 image."""
    out = apply_tone(img, draw_tone(rng, strength))
    if rng.random() < 0.4:
        sigma = rng.uniform(0.3, 1.4) * strength
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    if rng.random() < smear.share:
        out = cv2.filter2D(out, -1, motion_kernel(rng.uniform(*smear.px) * strength, rng.uniform(0, np.pi)))
    if rng.random() < 0.5:
        noise = rng.normal(0, rng.uniform(1, 7) * strength, out.shape).astype(np.float32)
        out = np.clip(out.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 95))])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def camera_looks(patches: np.ndarray, rng: np.random.Generator, group: int, strength: float = 1.0,
                 smear: Smear = SMEAR, defocus: Defocus = IN_FOCUS) -> None:
    """Patches (N, H, W, 3) uint8 given camera looks in place, one look per ``group`` of them side by side (a look
    drawn per patch costs more than the warp that made it)."""
    w = patches.shape[2]
    for g in range(0, len(patches), group):
        strip = np.concatenate(list(patches[g : g + group]), axis=1)
        strip = defocus.apply(photometric(strip, rng, strength, smear), rng)
        patches[g : g + group] = np.stack(np.split(strip, strip.shape[1] // w, axis=1))


def motion_kernel(length: float, angle: float) -> np.ndarray:
    """A straight smear ``length`` pixels long at ``angle`` (radians), as a normalised filter kernel."""
    size = int(np.ceil(length)) | 1
    k = np.zeros((size, size), np.float32)
    c = (size - 1) / 2
    dx, dy = np.cos(angle) * (length - 1) / 2, np.sin(angle) * (length - 1) / 2
    shift = 4  # sub-pixel end points: cv2.line takes coordinates in 1/2**shift of a pixel
    p0 = (round((c - dx) * (1 << shift)), round((c - dy) * (1 << shift)))
    p1 = (round((c + dx) * (1 << shift)), round((c + dy) * (1 << shift)))
    cv2.line(k, p0, p1, 1.0, 1, cv2.LINE_AA, shift)
    return k / k.sum()


def _levels(f: np.ndarray, tone: Tone) -> np.ndarray:
    """Gain per channel, then contrast and brightness, then gamma, on levels in 0..1 (last axis: channel)."""
    f = f * tone.gains
    f = f * tone.contrast + tone.offset
    return np.clip(f, 0, 1) ** tone.gamma


def _to_uint8(f: np.ndarray) -> np.ndarray:
    return np.clip(f * 255, 0, 255).astype(np.uint8)
