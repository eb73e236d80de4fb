"""Table tops: wood, felt, cloth, marble and plain dark or light, as seamless procedural textures.

Each (kind, variant) texture is made once per process from FFT-filtered noise, which tiles
seamlessly, and kept; a scene only rotates, scales, shifts and tints it into its canvas. That
keeps the cost per scene to one warp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from .camera import Canvas

SIZE = 1024
KINDS = ("wood", "felt", "cloth", "marble", "plain-dark", "plain-light")
VARIANTS = 4

# physical size (mm) of one texture tile: what sets the scale of grain, weave and veins
_TILE_MM = {"wood": 700.0, "felt": 160.0, "cloth": 240.0, "marble": 900.0, "plain-dark": 500.0, "plain-light": 500.0}


def _noise(rng: np.random.Generator, size: int, scale: float, aniso: float = 1.0, power: float = 2.0) -> np.ndarray:
    """Seamless noise with features about ``scale`` px wide; ``aniso`` > 1 stretches them along x."""
    white = rng.standard_normal((size, size)).astype(np.float32)
    fy = np.fft.fftfreq(size)[:, None]
    fx = np.fft.rfftfreq(size)[None, :]
    f = np.sqrt((fx * aniso) ** 2 + fy**2) * scale
    spectrum = np.fft.rfft2(white) / (1.0 + f**power)
    out = np.fft.irfft2(spectrum, s=(size, size)).astype(np.float32)
    out -= out.mean()
    return out / (out.std() + 1e-6)


def _mix(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Colour a where t=0, b where t=1 (t: HxW in [0, 1])."""
    t = np.clip(t, 0, 1)[..., None]
    return np.asarray(a, np.float32) * (1 - t) + np.asarray(b, np.float32) * t


def _wood(rng: np.random.Generator) -> np.ndarray:
    tones = [((40, 80, 140), (80, 140, 200)), ((25, 45, 80), (50, 85, 130)), ((60, 110, 170), (120, 175, 225)),
             ((30, 55, 110), (70, 110, 170)), ((20, 30, 45), (45, 60, 85))]
    dark, light = tones[int(rng.integers(len(tones)))]
    y = np.arange(SIZE, dtype=np.float32)[:, None]
    warp = _noise(rng, SIZE, 220, aniso=6) * 18
    rings = 0.5 + 0.5 * np.sin((y + warp) * (2 * math.pi * int(rng.integers(34, 74)) / SIZE))
    grain = _noise(rng, SIZE, 3.0, aniso=40, power=1.5)
    t = 0.45 * rings + 0.18 * grain + 0.35 + 0.12 * _noise(rng, SIZE, 120, aniso=3)
    img = _mix(dark, light, t)
    plank = int(rng.choice([128, 256]))  # plank width in px: a divisor of SIZE keeps it seamless
    for p0 in range(0, SIZE, plank):
        img[p0:p0 + plank] *= rng.uniform(0.85, 1.12)
        img[p0:p0 + 2] *= 0.45
    return img


def _felt(rng: np.random.Generator) -> np.ndarray:
    colours = [(40, 110, 30), (30, 80, 20), (100, 50, 20), (40, 30, 120), (35, 35, 35), (90, 70, 40), (60, 40, 90)]
    base = np.array(colours[int(rng.integers(len(colours)))], np.float32) * rng.uniform(0.8, 1.2)
    fine = _noise(rng, SIZE, 1.2, power=1.0)
    mottle = _noise(rng, SIZE, 60)
    shade = 1.0 + 0.07 * fine + 0.05 * mottle
    return base * shade[..., None]


def _cloth(rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    period = float(SIZE / rng.choice([256, 320, 384]))
    weave = 0.5 + 0.25 * np.sin(xx * 2 * math.pi / period) * np.sin(yy * 2 * math.pi / period)
    threads = _noise(rng, SIZE, 1.5, aniso=8) * 0.05 + _noise(rng, SIZE, 1.5, aniso=1 / 8) * 0.05
    pattern = str(rng.choice(["linen", "gingham", "stripes"]))
    c1 = np.array([(225, 230, 235), (200, 215, 230), (180, 190, 200)][int(rng.integers(3))], np.float32)
    prints = [(40, 40, 180), (160, 80, 30), (40, 120, 40), (120, 120, 120), (30, 140, 200)]
    c2 = np.array(prints[int(rng.integers(len(prints)))], np.float32)
    check = SIZE // int(rng.choice([8, 16, 32]))
    strength = float(rng.uniform(0.35, 0.8))  # printed cloth is rarely full strength
    if pattern == "gingham":
        bx = ((xx // check) % 2).astype(np.float32)
        by = ((yy // check) % 2).astype(np.float32)
        img = _mix(c1, c2, 0.5 * (bx + by) * strength)
    elif pattern == "stripes":
        img = _mix(c1, c2, ((xx // check) % 2) * strength * 0.8)
    else:
        img = np.broadcast_to(c2 * 0.3 + c1 * 0.7 if rng.random() < 0.5 else c1, (SIZE, SIZE, 3)).astype(np.float32)
    return img * (0.88 + 0.24 * weave + threads)[..., None]


def _marble(rng: np.random.Generator) -> np.ndarray:
    bases = [(235, 238, 240), (215, 225, 218), (200, 205, 205), (60, 60, 62), (225, 232, 226)]
    veins_c = [(90, 95, 110), (70, 90, 130), (110, 90, 120), (170, 175, 180), (80, 80, 85)]
    i = int(rng.integers(len(bases)))
    base, vein = np.array(bases[i], np.float32), np.array(veins_c[i], np.float32)
    turb = _noise(rng, SIZE, 90, power=1.6) * 2.2 + _noise(rng, SIZE, 25) * 0.5
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    kx, ky = int(rng.integers(1, 4)), int(rng.integers(-1, 2))  # whole waves per tile keep it seamless
    v = np.abs(np.sin((xx * kx + yy * ky) * (2 * math.pi / SIZE) + turb))
    veins = np.clip(1.0 - v / 0.08, 0, 1) ** 1.5
    cloud = _noise(rng, SIZE, 150) * 0.05
    img = _mix(base * (1 + cloud[..., None]), vein, veins * rng.uniform(0.5, 0.9))
    specks = (rng.random((SIZE, SIZE)) < 0.004).astype(np.float32)
    specks = cv2.GaussianBlur(specks, (0, 0), 0.8) * 2.5
    return img + specks[..., None] * 40


def _plain(rng: np.random.Generator, dark: bool) -> np.ndarray:
    if dark:
        colours = [(30, 30, 30), (25, 35, 45), (40, 32, 28), (25, 45, 30), (50, 50, 55), (20, 25, 60)]
    else:
        colours = [(225, 225, 225), (200, 215, 225), (185, 195, 200), (170, 200, 215), (230, 235, 240), (160, 170, 150)]
    base = np.array(colours[int(rng.integers(len(colours)))], np.float32)
    shade = 1.0 + 0.04 * _noise(rng, SIZE, 200) + 0.015 * _noise(rng, SIZE, 1.5)
    return base * shade[..., None]


@lru_cache(maxsize=len(KINDS) * VARIANTS)
def texture(kind: str, variant: int) -> np.ndarray:
    """The seamless SIZE x SIZE BGR texture of one kind and variant (made once, then cached)."""
    if kind not in KINDS:
        raise ValueError(f"unknown surface {kind!r}; use one of {', '.join(KINDS)}")
    rng = np.random.default_rng([KINDS.index(kind), variant % VARIANTS, 7])
    if kind == "wood":
        img = _wood(rng)
    elif kind == "felt":
        img = _felt(rng)
    elif kind == "cloth":
        img = _cloth(rng)
    elif kind == "marble":
        img = _marble(rng)
    else:
        img = _plain(rng, dark=kind == "plain-dark")
    out = np.clip(img, 0, 255).astype(np.uint8)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=32)
def _level(kind: str, variant: int, level: int, across: bool) -> np.ndarray:
    """The texture halved ``level`` times (still seamless: INTER_AREA by exactly 2), turned a
    quarter when ``across``."""
    tex = texture(kind, variant)
    for _ in range(level):
        tex = cv2.resize(tex, (tex.shape[1] // 2, tex.shape[0] // 2), interpolation=cv2.INTER_AREA)
    if across:
        tex = cv2.transpose(tex)
    tex.setflags(write=False)
    return tex


@dataclass(frozen=True)
class Surface:
    kind: str
    variant: int
    across: bool  # grain and weave run along the table's x or y edge
    offset: tuple[float, float]  # fraction of a texture tile
    tint: tuple[float, float, float]  # per-channel gain, applied with the shadows

    @property
    def glossy(self) -> bool:
        return self.kind in ("marble", "plain-dark", "plain-light", "wood")


def sample_surface(rng: np.random.Generator, kind: str | None = None) -> Surface:
    kind = kind or str(rng.choice(KINDS, p=[0.26, 0.2, 0.16, 0.16, 0.11, 0.11]))
    tint = tuple(float(v) for v in rng.uniform(0.88, 1.12, 3) * rng.uniform(0.85, 1.15))
    return Surface(kind, int(rng.integers(VARIANTS)), bool(rng.random() < 0.5),
                   (float(rng.uniform(0, 1)), float(rng.uniform(0, 1))), tint)  # type: ignore[arg-type]


def draw_surface(surface: Surface, canvas: Canvas) -> np.ndarray:
    """The surface as the canvas sees it: the seamless texture tiled, cropped and resized once.

    (A resize costs a tenth of an affine warp; the texture is chosen from a small pyramid so the
    tiled region never grows much beyond the canvas.)
    """
    k = SIZE / _TILE_MM[surface.kind] / canvas.scale  # texture px per canvas px at full size
    level = 0
    while k > 1.5 and level < 6:
        k /= 2
        level += 1
    tex = _level(surface.kind, surface.variant, level, surface.across)
    th, tw = tex.shape[:2]
    need_w, need_h = math.ceil(canvas.width * k) + 2, math.ceil(canvas.height * k) + 2
    # the table-plane origin fixes where the pattern sits, so a game's frames keep the same grain
    ox = int((surface.offset[0] * tw + canvas.origin[0] * canvas.scale * k) % tw)
    oy = int((surface.offset[1] * th + canvas.origin[1] * canvas.scale * k) % th)
    region = _wrapped_crop(tex, ox, oy, need_w, need_h)
    return cv2.resize(region, (canvas.width, canvas.height), interpolation=cv2.INTER_LINEAR)


def _wrapped_crop(tex: np.ndarray, ox: int, oy: int, w: int, h: int) -> np.ndarray:
    """A w x h window of the endlessly repeated texture, starting at (ox, oy), copied block by block."""
    out = np.empty((h, w, tex.shape[2]), tex.dtype)
    th, tw = tex.shape[:2]
    y = 0
    while y < h:
        sy = (oy + y) % th
        ny = min(h - y, th - sy)
        x = 0
        while x < w:
            sx = (ox + x) % tw
            nx = min(w - x, tw - sx)
            out[y:y + ny, x:x + nx] = tex[sy:sy + ny, sx:sx + nx]
            x += nx
        y += ny
    return out
