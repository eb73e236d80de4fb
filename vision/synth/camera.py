"""The camera above the table: a pinhole with radial lens distortion, looking down or tilted.

World coordinates are millimetres on the table: x right, y down (as seen from above) and z
*into* the table, so a point h mm above the cloth has z = -h and the frame is right-handed.

Everything is drawn first on a "canvas": the table plane seen orthographically, where a point
above the table is drawn where the camera ray through it meets the table (its central
projection). One remap then carries the canvas into the image, so pixels and truth corners go
through the very same mapping: :meth:`Camera.project` of a 3D point lands exactly where the
remap puts that point's canvas pixel, under any tilt and distortion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import cv2
import numpy as np

from .truth import CameraTruth


@dataclass(frozen=True, eq=False)
class Camera:
    width: int
    height: int
    f: float  # focal length, px
    cx: float  # principal point, OpenCV pixel coordinates
    cy: float
    k1: float
    k2: float
    rotation: np.ndarray  # (3, 3) world -> camera
    center: np.ndarray  # (3,) camera centre in world mm; center[2] < 0 (above the table)
    tilt_deg: float
    r_lim: float = math.inf  # ideal radius beyond which the lens model continues in a straight line

    @property
    def height_mm(self) -> float:
        return float(-self.center[2])

    # ------------------------------------------------------------------ lens
    def _rd(self, r: np.ndarray) -> np.ndarray:
        """Distorted radius of ideal radius ``r``: the polynomial up to ``r_lim``, then its tangent,
        so the mapping stays monotonic and nothing far outside the frame folds back into it."""
        rl = min(self.r_lim, 1e6)
        rc = np.minimum(r, rl)
        r2 = rc * rc
        inside = rc * (1.0 + self.k1 * r2 + self.k2 * r2 * r2)
        slope = 1.0 + 3.0 * self.k1 * rl * rl + 5.0 * self.k2 * rl**4
        return np.where(r <= rl, inside, inside + slope * (r - rl))

    def _drd(self, r: np.ndarray) -> np.ndarray:
        rc = np.minimum(r, min(self.r_lim, 1e6))
        r2 = rc * rc
        return 1.0 + 3.0 * self.k1 * r2 + 5.0 * self.k2 * r2 * r2

    # ------------------------------------------------------------------ points
    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (N, 3) -> image px (N, 2), with distortion. Points behind the camera land far away."""
        pc = (np.asarray(points, np.float64) - self.center) @ self.rotation.T
        z = np.maximum(pc[:, 2], 1e-9)
        x = pc[:, 0] / z
        y = pc[:, 1] / z
        far = pc[:, 2] <= 1e-9
        x[far] *= 1e9
        y[far] *= 1e9
        if self.k1 == 0.0 and self.k2 == 0.0:
            return np.stack([self.f * x + self.cx, self.f * y + self.cy], axis=1)
        r = np.sqrt(x * x + y * y)
        k = np.where(r > 1e-12, self._rd(r) / np.maximum(r, 1e-12), 1.0)
        return np.stack([self.f * x * k + self.cx, self.f * y * k + self.cy], axis=1)

    def _undistort(self, px: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Image px (N, 2) -> ideal normalised coordinates, by Newton on the (monotonic) radius."""
        xd = (px[:, 0] - self.cx) / self.f
        yd = (px[:, 1] - self.cy) / self.f
        if self.k1 == 0.0 and self.k2 == 0.0:
            return xd, yd
        rd = np.sqrt(xd * xd + yd * yd)
        r = rd.copy()
        for _ in range(10):
            r = np.maximum(r - (self._rd(r) - rd) / self._drd(r), 0.0)
        scale = np.where(rd > 1e-12, r / np.maximum(rd, 1e-12), 1.0)
        return xd * scale, yd * scale

    def to_table(self, px: np.ndarray) -> np.ndarray:
        """Image px (N, 2) -> the table points (N, 2) that they show (z = 0)."""
        x, y = self._undistort(np.asarray(px, np.float64))
        rays = np.stack([x, y, np.ones_like(x)], axis=1) @ self.rotation  # camera -> world directions
        lam = -self.center[2] / rays[:, 2]
        return self.center[:2] + rays[:, :2] * lam[:, None]

    def on_plane(self, xy: np.ndarray, height: float | np.ndarray) -> np.ndarray:
        """Where the camera ray through points ``height`` mm above ``xy`` meets the table (N, 2)."""
        h = np.asarray(height, np.float64)
        if h.ndim:
            h = h[:, None]
        hc = self.height_mm
        return self.center[:2] + (np.asarray(xy, np.float64) - self.center[:2]) * (hc / (hc - h))

    @property
    def corner_ray(self) -> float:
        """The widest angle, in radians, between the lens axis and the ray through a frame corner."""
        w, h = self.width, self.height
        x, y = self._undistort(np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]]))
        return float(np.arctan(np.hypot(x, y).max()))

    @cached_property
    def px_per_mm(self) -> float:
        """Image pixels per table millimetre at the image centre."""
        c = np.array([[self.cx, self.cy], [self.cx + 10.0, self.cy]])
        t = self.to_table(c)
        return 10.0 / float(np.linalg.norm(t[1] - t[0]))

    def truth(self) -> CameraTruth:
        return CameraTruth(
            matrix=((self.f, 0.0, self.cx), (0.0, self.f, self.cy), (0.0, 0.0, 1.0)),
            distortion=(self.k1, self.k2),
            rotation=tuple(tuple(float(v) for v in row) for row in self.rotation),
            position=tuple(float(v) for v in self.center),  # type: ignore[arg-type]
            tilt_deg=self.tilt_deg,
            px_per_mm=round(self.px_per_mm, 4),
        )


def look_at(
    target: np.ndarray, distance: float, tilt: float, azimuth: float, yaw: float
) -> tuple[np.ndarray, np.ndarray]:
    """Rotation and centre of a camera ``distance`` mm from ``target`` on the table, tilted ``tilt`` rad."""
    axis = np.array([math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth), math.cos(tilt)])
    center = np.array([target[0], target[1], 0.0]) - distance * axis
    right = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    right = right - axis * float(right @ axis)
    right /= np.linalg.norm(right)
    down = np.cross(axis, right)
    return np.stack([right, down, axis]), center


FAR_RAY_MAX = math.radians(84.0)  # the frame corner's ray from straight down, at most


@dataclass(frozen=True)
class CameraSpec:
    """How to draw a random camera."""

    tile_px: tuple[float, float] = (40.0, 400.0)  # tile length at the image centre
    tilt_max_deg: float = 20.0
    distortion: bool = True
    straight_share: float = 0.35  # share of cameras looking exactly straight down (none when tilt_min_deg > 0)
    tilt_min_deg: float = 0.0


def sample_camera(
    rng: np.random.Generator,
    width: int,
    height: int,
    target: np.ndarray,
    tile_mm: float,
    spec: CameraSpec,
) -> Camera:
    lo, hi = spec.tile_px
    hi = min(hi, 0.6 * min(width, height) * 2)  # a tile never fills more than the frame
    lo = min(lo, hi)
    tile_px = float(math.exp(rng.uniform(math.log(lo), math.log(hi)))) if hi > lo else lo
    hfov = math.radians(rng.uniform(48.0, 78.0))
    f = (width / 2) / math.tan(hfov / 2)
    # a close-up is a longer lens, not a camera 10 cm above the table
    min_distance = float(rng.uniform(260.0, 450.0))
    f = max(f, min_distance * tile_px / tile_mm)
    k1 = k2 = 0.0
    r_lim = math.inf
    r_corner = math.hypot(width / 2, height / 2) / f  # the frame corner's ray, as an ideal radius
    if spec.distortion:
        # distortion as the squeeze of the frame's corner (barrel < 1 < pincushion); the polynomial
        # stays monotonic to 1.25x the corner's ideal radius, and continues straight beyond it
        squeeze = float(rng.uniform(0.82, 1.03))
        r_corner /= squeeze
        k1 = (squeeze - 1.0) / r_corner**2
        r_lim = 1.25 * r_corner
    straight = rng.random() < spec.straight_share and spec.tilt_min_deg == 0.0
    tilt = 0.0 if straight else math.radians(rng.uniform(spec.tilt_min_deg, spec.tilt_max_deg))
    azimuth = float(rng.uniform(0, 2 * math.pi))
    yaw = float(rng.uniform(0, 2 * math.pi))
    distance = f * tile_mm / tile_px
    cx = (width - 1) / 2 + float(rng.normal(0, 0.01 * width))
    cy = (height - 1) / 2 + float(rng.normal(0, 0.01 * height))
    lens = Camera(width, height, f, cx, cy, k1, k2, np.eye(3), np.zeros(3), 0.0, r_lim)
    # a wide lens tilted far (a phone held low over the table) still shows the table in its far corner,
    # not the sky: no ray is further from straight down than the tilt plus its angle off the lens axis
    tilt = min(tilt, FAR_RAY_MAX - lens.corner_ray)
    rotation, center = look_at(target, distance, tilt, azimuth, yaw)
    return replace(lens, rotation=rotation, center=center, tilt_deg=math.degrees(tilt))


@dataclass(frozen=True, eq=False)
class Canvas:
    """The table region a camera sees, rasterised at ``scale`` px/mm, and the remap into the image."""

    origin: np.ndarray  # world (x, y) of the canvas's top-left edge
    scale: float  # canvas px per mm
    width: int
    height: int

    def to_canvas(self, xy: np.ndarray) -> np.ndarray:
        """World mm (N, 2) -> canvas OpenCV px."""
        return (np.asarray(xy, np.float64) - self.origin) * self.scale - 0.5

    def affine(self) -> np.ndarray:
        """2x3 matrix of :meth:`to_canvas`."""
        s = self.scale
        return np.array([[s, 0, -self.origin[0] * s - 0.5], [0, s, -self.origin[1] * s - 0.5]])


def canvas_for(camera: Camera, max_area_ratio: float = 1.3, margin_mm: float = 4.0) -> Canvas:
    """The smallest canvas covering the camera's view, fine enough for its nearest pixels."""
    w, h = camera.width, camera.height
    n = 24
    xs = np.linspace(-0.5, w - 0.5, n)
    ys = np.linspace(-0.5, h - 0.5, n)
    border = np.concatenate([
        np.stack([xs, np.full(n, -0.5)], 1), np.stack([xs, np.full(n, h - 0.5)], 1),
        np.stack([np.full(n, -0.5), ys], 1), np.stack([np.full(n, w - 0.5), ys], 1),
    ])
    pts = camera.to_table(border)
    lo = pts.min(axis=0) - margin_mm
    hi = pts.max(axis=0) + margin_mm
    # finest sampling: pixels per mm across a grid of small steps in the image
    gx, gy = np.meshgrid(np.linspace(0, w - 1, 7), np.linspace(0, h - 1, 7))
    g = np.stack([gx.ravel(), gy.ravel()], 1)
    step = 4.0
    d = np.minimum(
        np.linalg.norm(camera.to_table(g + [step, 0]) - camera.to_table(g), axis=1),
        np.linalg.norm(camera.to_table(g + [0, step]) - camera.to_table(g), axis=1),
    )
    scale = float(step / d.min())
    area = (hi - lo).prod()
    scale = min(scale, math.sqrt(max_area_ratio * w * h / area))
    size = np.ceil((hi - lo) * scale).astype(int)
    return Canvas(lo, scale, int(size[0]), int(size[1]))


def remap_maps(camera: Camera, canvas: Canvas, grid: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """For every image pixel, the canvas pixel it shows (float32 maps for ``cv2.remap``).

    The mapping is computed exactly on a grid every ``grid`` px (with a ring outside the frame)
    and interpolated bilinearly; it is smooth, so the error is far below a hundredth of a pixel.
    """
    w, h = camera.width, camera.height
    pad = 2 * grid
    wp, hp = w + 2 * pad, h + 2 * pad
    gw, gh = wp // grid + 1, hp // grid + 1
    # grid point k sits where cv2.resize's half-pixel convention puts input sample k
    xs = (np.arange(gw) + 0.5) * (wp / gw) - 0.5 - pad
    ys = (np.arange(gh) + 0.5) * (hp / gh) - 0.5 - pad
    gx, gy = np.meshgrid(xs, ys)
    table = camera.to_table(np.stack([gx.ravel(), gy.ravel()], 1))
    c = canvas.to_canvas(table).astype(np.float32).reshape(gh, gw, 2)
    full = cv2.resize(c, (wp, hp), interpolation=cv2.INTER_LINEAR)[pad:pad + h, pad:pad + w]
    return np.ascontiguousarray(full[..., 0]), np.ascontiguousarray(full[..., 1])


def homography(camera: Camera, canvas: Canvas) -> np.ndarray:
    """Canvas px -> image px for an undistorted camera (exact, for ``cv2.warpPerspective``)."""
    w, h = camera.width - 1, camera.height - 1
    img = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    src = canvas.to_canvas(camera.to_table(img)).astype(np.float32)
    return cv2.getPerspectiveTransform(src, img.astype(np.float32))
