"""Light and the camera's faults: uneven coloured light, vignetting, blur, sensor noise, JPEG.

Everything full-frame is one OpenCV pass: the light is a low-resolution gain field scaled up
once; noise comes from a bank drawn once per frame size and cropped at a random offset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np


@dataclass(frozen=True)
class Lighting:
    azimuth: float  # table-plane direction the light comes from, rad
    elevation: float  # rad above the table; low light casts long shadows
    shadow: float  # 0..1 darkness of drop shadows
    softness: float  # shadow blur per mm of height
    white: tuple[float, float, float]  # BGR gains (white balance, lamp colour)
    exposure: float
    unevenness: float  # 0..1 strength of the smooth light field
    tint_field: float  # 0..1 how coloured the unevenness is
    field_seed: int
    vignette: float  # 0..1 darkening at the corners
    lamp: tuple[float, float, float]  # x, y, height (mm) of the main lamp, for glare
    glare: float  # 0..1 strength of its reflection on tiles and glossy tables

    def shadow_shift(self, height: float) -> np.ndarray:
        """Table-plane offset of the shadow of a point ``height`` mm up."""
        d = height / math.tan(self.elevation)
        return -d * np.array([math.cos(self.azimuth), math.sin(self.azimuth)])


def sample_lighting(rng: np.random.Generator, center: np.ndarray, clean: bool) -> Lighting:
    kind = rng.random()
    if kind < 0.35:
        white = (0.78, 0.93, 1.1)  # warm tungsten
    elif kind < 0.55:
        white = (1.08, 1.0, 0.9)  # cool daylight
    elif kind < 0.65:
        white = (0.95, 1.06, 0.93)  # greenish fluorescent
    else:
        white = (1.0, 1.0, 1.0)
    white = tuple(float(v * rng.uniform(0.96, 1.04)) for v in white)
    lamp_r = rng.uniform(0, 500)
    lamp_a = rng.uniform(0, 2 * math.pi)
    return Lighting(
        azimuth=float(rng.uniform(0, 2 * math.pi)),
        elevation=math.radians(rng.uniform(40, 85)),
        shadow=float(rng.uniform(0.2, 0.55)),
        softness=float(rng.uniform(0.25, 0.8)),
        white=white,  # type: ignore[arg-type]
        exposure=float(rng.uniform(0.95, 1.05) if clean else rng.uniform(0.7, 1.15)),
        unevenness=float(rng.uniform(0.0, 0.12) if clean else rng.uniform(0.05, 0.45)),
        tint_field=float(0.0 if clean else rng.uniform(0.0, 0.15)),
        field_seed=int(rng.integers(1 << 31)),
        vignette=float(rng.uniform(0.0, 0.1) if clean else rng.uniform(0.0, 0.5)),
        lamp=(float(center[0] + lamp_r * math.cos(lamp_a)), float(center[1] + lamp_r * math.sin(lamp_a)),
              float(rng.uniform(700, 1800))),
        glare=float(0.0 if clean else rng.uniform(0.0, 0.9) ** 1.5),
    )


@dataclass(frozen=True)
class Degrade:
    focus_sigma: float  # px
    motion_px: float  # length of camera shake
    motion_angle: float
    noise: float  # sensor noise, grey levels (one sigma)
    jpeg_quality: int | None
    sharpen: float = 0.0  # unsharp-mask strength, as phone and Pi camera pipelines apply (with halos)

    @staticmethod
    def none() -> Degrade:
        return Degrade(0.0, 0.0, 0.0, 0.0, None)


def sample_degrade(rng: np.random.Generator, clean: bool, scale: float = 1.0) -> Degrade:
    """Random faults; ``scale`` grows blur with the frame (a 4K frame blurs over more pixels)."""
    if clean:
        return Degrade.none()
    focus = float(rng.uniform(0.4, 2.2) * scale) if rng.random() < 0.35 else 0.0
    motion = float(rng.uniform(2, 9) * scale) if rng.random() < 0.12 else 0.0
    noise = float(rng.uniform(1.0, 9.0)) if rng.random() < 0.85 else 0.0
    jpeg = int(rng.integers(45, 96)) if rng.random() < 0.75 else None
    sharpen = float(rng.uniform(0.3, 1.2)) if rng.random() < 0.3 else 0.0
    return Degrade(focus, motion, float(rng.uniform(0, math.pi)), noise, jpeg, sharpen)


def light_field(lighting: Lighting, width: int, height: int, cx: float, cy: float) -> np.ndarray:
    """Low-resolution (H/8, W/8, 3) float32 gain: colour, exposure, uneven light and vignetting."""
    gw, gh = max(2, width // 8), max(2, height // 8)
    rng = np.random.default_rng(lighting.field_seed)
    coarse = rng.standard_normal((4, 5, 3)).astype(np.float32)
    coarse = coarse * np.float32([lighting.tint_field, lighting.tint_field, lighting.tint_field]) + coarse.mean(
        axis=2, keepdims=True
    ) * (1 - lighting.tint_field)
    field = cv2.resize(coarse, (gw, gh), interpolation=cv2.INTER_CUBIC)
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    xs = (xx + 0.5) * (width / gw) - 0.5 - cx
    ys = (yy + 0.5) * (height / gh) - 0.5 - cy
    ramp = (xs * rng.normal() + ys * rng.normal()) / max(width, height)
    r2 = (xs**2 + ys**2) / (0.25 * (width**2 + height**2))
    gain = 1.0 + lighting.unevenness * (0.35 * field + 0.6 * ramp[..., None])
    gain *= (1.0 - lighting.vignette * r2**1.2)[..., None]
    gain *= np.float32(lighting.white) * lighting.exposure
    return np.clip(gain, 0.2, 2.0).astype(np.float32)


def apply_gain(img: np.ndarray, gain_lowres: np.ndarray) -> np.ndarray:
    """Multiply an image by a smooth gain field (< 2) given at low resolution.

    The gain travels as uint8 in 1/128 steps: a same-type multiply is over ten times faster
    than a float one, and the steps are far below what noise and JPEG leave.
    """
    h, w = img.shape[:2]
    g = np.clip(gain_lowres * 128.0 + 0.5, 0, 255).astype(np.uint8)
    if g.ndim == 2 or g.shape[2] == 1:
        g = cv2.cvtColor(g.reshape(g.shape[:2]), cv2.COLOR_GRAY2BGR)
    return cv2.multiply(img, cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR), scale=1 / 128)


_BANK_SIGMA = 24.0
_BANK_PAD = 64


@lru_cache(maxsize=4)
def _noise_bank(height: int, width: int) -> np.ndarray:
    """Mostly luminance, partly chroma noise, centred on 128 with sigma _BANK_SIGMA (fixed seed)."""
    rng = np.random.default_rng(1234)
    h, w = height + _BANK_PAD, width + _BANK_PAD
    luma = rng.standard_normal((h, w, 1), np.float32)
    chroma = rng.standard_normal((h, w, 3), np.float32)
    n = (0.85 * luma + 0.5 * chroma) / math.sqrt(0.85**2 + 0.5**2)
    bank = np.clip(128 + n * _BANK_SIGMA, 0, 255).astype(np.uint8)
    bank.setflags(write=False)
    return bank


def add_noise(img: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    if sigma <= 0:
        return img
    h, w = img.shape[:2]
    bank = _noise_bank(h, w)
    dy, dx = (int(v) for v in rng.integers(0, _BANK_PAD, 2))
    crop = bank[dy:dy + h, dx:dx + w]
    k = sigma / _BANK_SIGMA
    return cv2.addWeighted(img, 1.0, crop, k, -128.0 * k)


def degrade(img: np.ndarray, d: Degrade, rng: np.random.Generator) -> np.ndarray:
    if d.focus_sigma > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), d.focus_sigma)
    if d.motion_px >= 1.5:
        img = motion_blur(img, d.motion_px, d.motion_angle)
    if d.sharpen > 0:
        img = cv2.addWeighted(img, 1 + d.sharpen, cv2.GaussianBlur(img, (0, 0), 1.3), -d.sharpen, 0)
    img = add_noise(img, d.noise, rng)
    if d.jpeg_quality is not None:
        img = jpeg(img, d.jpeg_quality)
    return img


def motion_blur(img: np.ndarray, length: float, angle: float) -> np.ndarray:
    n = int(math.ceil(length)) | 1
    k = np.zeros((n, n), np.float32)
    c = n // 2
    dx, dy = math.cos(angle) * length / 2, math.sin(angle) * length / 2
    cv2.line(k, (round((c - dx) * 16), round((c - dy) * 16)), (round((c + dx) * 16), round((c + dy) * 16)), 1.0, 1,
             cv2.LINE_AA, 4)
    return cv2.filter2D(img, -1, k / max(k.sum(), 1e-6))


def jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:  # pragma: no cover - OpenCV always encodes a uint8 BGR image
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)
