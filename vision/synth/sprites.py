"""Tile sprites: each set's look drawn once per size, then reused for every tile.

A sprite is a BGRA image of one tile lying horizontally, half ``values[0]`` on the left. The
body (rounded corners, bevel shading, grain, divider, spinner pin) is drawn once; each value's
left and right half is drawn once on top of it; a tile is then the two halves side by side, a
single array concatenation. Small sprites are drawn supersampled and shrunk, so pips and edges
are antialiased at every size.
"""

from __future__ import annotations

import math
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field

import cv2
import numpy as np

from .palette import TileStyle
from .pips import grid_extent, grid_shift, layout, pip_radius

PAD = 3  # transparent border, px, so warps never clip the antialiased edge
_SHIFT = 4  # fixed-point bits for cv2 drawing (1/16 px)


def rounded_rect(x0: float, y0: float, w: float, h: float, r: float, n: int = 8) -> np.ndarray:
    """Outline of a rounded rectangle, clockwise on screen, as (M, 2) float points."""
    r = min(r, w / 2, h / 2)
    pts = []
    centres = ((x0 + w - r, y0 + r, -90), (x0 + w - r, y0 + h - r, 0), (x0 + r, y0 + h - r, 90), (x0 + r, y0 + r, 180))
    for cx, cy, a0 in centres:
        for k in range(n + 1):
            a = math.radians(a0 + 90 * k / n)
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return np.asarray(pts, np.float64)


def fixed(points: np.ndarray) -> np.ndarray:
    """Float OpenCV coordinates -> int32 points for drawing with ``shift=_SHIFT``."""
    return np.round(np.asarray(points) * (1 << _SHIFT)).astype(np.int32)


def fill(img: np.ndarray, points: np.ndarray, colour: tuple[float, ...] | float) -> None:
    cv2.fillPoly(img, [fixed(points)], colour, cv2.LINE_AA, _SHIFT)


def circle(img: np.ndarray, center: tuple[float, float], radius: float, colour: tuple[float, ...] | float) -> None:
    c = (round(center[0] * (1 << _SHIFT)), round(center[1] * (1 << _SHIFT)))
    cv2.circle(img, c, max(1, round(radius * (1 << _SHIFT))), colour, -1, cv2.LINE_AA, _SHIFT)


def shade(c: tuple[float, ...], k: float, toward: float = 0.0, amount: float = 0.0) -> tuple[float, float, float]:
    """A colour scaled by ``k`` and pulled ``amount`` of the way toward grey level ``toward``."""
    return tuple(min(255.0, max(0.0, v * k * (1 - amount) + toward * amount)) for v in c)  # type: ignore[return-value]


@dataclass(eq=False)
class SpriteSet:
    """One style's tiles at one size. ``length`` and ``width`` are the body's size in sprite px."""

    style: TileStyle
    length: int  # even
    width: float
    ss: int  # supersampling factor used while drawing
    face: np.ndarray  # supersampled BGRA body with divider and spinner
    back: np.ndarray  # final-size BGRA face-down tile
    _left: dict[int, np.ndarray] = field(default_factory=dict)
    _right: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def split(self) -> int:
        return PAD + self.length // 2

    def corners(self) -> np.ndarray:
        """Body corners in sprite px (OpenCV convention), in TileTruth winding (values[0] on the left)."""
        x0 = y0 = PAD - 0.5
        return np.array([[x0, y0 + self.width], [x0, y0], [x0 + self.length, y0], [x0 + self.length, y0 + self.width]])

    def tile(self, a: int, b: int) -> np.ndarray:
        """A face-up tile, ``a`` on the left half."""
        return np.concatenate([self._half(a, left=True), self._half(b, left=False)], axis=1)

    def _half(self, value: int, left: bool) -> np.ndarray:
        cache = self._left if left else self._right
        half = cache.get(value)
        if half is None:
            if value > self.style.max_value:
                raise ValueError(f"{value} is not on a double-{self.style.max_value} tile")
            half = self._draw_half(value, left)
            cache[value] = half
        return half

    def _draw_half(self, value: int, left: bool) -> np.ndarray:
        ss = self.ss
        cut = self.split * ss
        img = (self.face[:, :cut] if left else self.face[:, cut:]).copy()
        w = self.width * ss
        x0 = PAD * ss - 0.5
        y_mid = PAD * ss - 0.5 + w / 2
        quarter = self.length * ss / 4
        cx = (x0 + quarter) if left else (x0 + 3 * quarter - cut)
        sign = -1.0 if left else 1.0  # "along" +1 points to the tile's own end
        ea, ec = grid_extent(value)
        cx += sign * grid_shift(value) * w
        r = pip_radius(value) * w * self.style.pip_scale
        colour = self.style.pips[value]
        rim = shade(colour, 0.62)
        mid = shade(colour, 0.93)
        spec = shade(colour, 1.0, 255, 0.25 + 0.35 * self.style.gloss)
        for a, c in layout(value, self.style.ten):
            p = (cx + sign * a * ea * w, y_mid + sign * c * ec * w)
            circle(img, p, r, (*rim, 255))
            circle(img, p, r * 0.8, (*mid, 255))
            circle(img, p, r * 0.42, (*shade(colour, 1.04), 255))
            circle(img, (p[0] - 0.18 * r, p[1] - 0.18 * r), r * 0.16, (*spec, 255))
        if ss > 1:
            img = cv2.resize(img, (img.shape[1] // ss, img.shape[0] // ss), interpolation=cv2.INTER_AREA)
        img.setflags(write=False)
        return img


def make_sprites(style: TileStyle, length_px: float) -> SpriteSet:
    """Draw a style's body at a tile length of about ``length_px`` (rounded to even px)."""
    length = max(16, int(round(length_px / 2)) * 2)
    width = length / style.aspect
    ss = 4 if length < 64 else 2 if length < 180 else 1
    wb, hb = (2 * PAD + length) * ss, (2 * PAD + math.ceil(width)) * ss
    x0 = y0 = PAD * ss - 0.5
    L, W = length * ss, width * ss
    outline = rounded_rect(x0, y0, L, W, style.corner_radius * W)
    mask = np.zeros((hb, wb), np.uint8)
    fill(mask, outline, 255)
    d = cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 5)
    t = np.clip(1.0 - d / max(style.bevel * W, 1.0), 0.0, 1.0)
    shade = 1.0 - 0.2 * t**1.6
    rng = np.random.default_rng(zlib.crc32(style.key.encode()))
    mottle = cv2.resize(rng.standard_normal((4, 8)).astype(np.float32), (wb, hb), interpolation=cv2.INTER_CUBIC)
    shade = shade * (1.0 + 0.025 * style.grain * mottle)
    highlight = style.gloss * 0.35 * np.exp(-(((t - 0.45) / 0.16) ** 2))
    body = np.asarray(style.body, np.float32)
    bgr = body * shade[..., None] + (255 - body) * highlight[..., None]
    edge = body * 0.7
    outside = mask == 0
    bgr[outside] = edge
    face = np.dstack([np.clip(bgr, 0, 255).astype(np.uint8), mask])
    back = face.copy()
    _divider(face, style, x0 + L / 2, y0 + W / 2, W)
    _back_mark(back, style, x0 + L / 2, y0 + W / 2, W)
    if ss > 1:
        back = cv2.resize(back, (wb // ss, hb // ss), interpolation=cv2.INTER_AREA)
    back.setflags(write=False)
    return SpriteSet(style, length, width, ss, face, back)


def _divider(img: np.ndarray, style: TileStyle, cx: float, cy: float, w: float) -> None:
    body = style.body
    if style.divider_kind == "bar":
        dw, dl = 0.06 * w, 0.8 * w
        fill(img, rounded_rect(cx - dw / 2, cy - dl / 2, dw, dl, dw / 2, 3), (*style.divider, 255))
    elif style.divider_kind == "groove":
        dw, dl = 0.035 * w, 0.86 * w
        fill(img, rounded_rect(cx - dw / 2, cy - dl / 2, dw, dl, dw / 2, 3), (*shade(body, 0.55), 255))
        fill(img, rounded_rect(cx + dw / 2, cy - dl / 2, dw * 0.6, dl, dw * 0.3, 3), (*shade(body, 1.0, 255, 0.4), 255))
    if style.spinner is not None:
        r = 0.075 * w
        circle(img, (cx, cy), r, (*shade(style.spinner, 0.6), 255))
        circle(img, (cx, cy), r * 0.8, (*style.spinner, 255))
        circle(img, (cx - 0.25 * r, cy - 0.25 * r), r * 0.3, (*shade(style.spinner, 1.0, 255, 0.55), 255))


def _back_mark(img: np.ndarray, style: TileStyle, cx: float, cy: float, w: float) -> None:
    if style.back == "line":
        dw, dl = 0.03 * w, 0.7 * w
        fill(img, rounded_rect(cx - dw / 2, cy - dl / 2, dw, dl, dw / 2, 3), (*shade(style.body, 0.82), 255))
    elif style.back == "dot":
        circle(img, (cx, cy), 0.08 * w, (*shade(style.body, 0.85), 255))


class SpriteCache:
    """The most recently used sprite sets (a game reuses one set for every frame)."""

    def __init__(self, size: int = 6) -> None:
        self.size = size
        self._sets: OrderedDict[tuple[str, int], SpriteSet] = OrderedDict()

    def get(self, style: TileStyle, length_px: float) -> SpriteSet:
        key = (style.key, max(16, int(round(length_px / 2)) * 2))
        s = self._sets.get(key)
        if s is None:
            s = make_sprites(style, length_px)
            self._sets[key] = s
            if len(self._sets) > self.size:
                self._sets.popitem(last=False)
        else:
            self._sets.move_to_end(key)
        return s
