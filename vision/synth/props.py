"""Drawing everything that is not a tile face: the hub, markers, cups, phones, hands and arms.

All drawing happens on the canvas (the table plane). A point ``z`` mm above the table is drawn
at its central projection (``Camera.on_plane``), so tall things lean away from the camera's
nadir and show their sides exactly as a real camera sees them. Things that can hide a tile
also paint their id into the half-resolution label map used to measure occlusion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .camera import Camera, Canvas
from .layout import Hub, Prop, Table
from .sprites import circle, fill, shade

Colour = tuple[float, float, float]


def ring(center: np.ndarray, radius: float, n: int = 28) -> np.ndarray:
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return center + radius * np.stack([np.cos(a), np.sin(a)], 1)


def local(center: np.ndarray, angle: float, pts: np.ndarray) -> np.ndarray:
    """Points given in an object's own frame (x along ``angle``) -> table mm."""
    c, s = math.cos(angle), math.sin(angle)
    return center + pts @ np.array([[c, s], [-s, c]])


@dataclass
class Ctx:
    """The canvas being drawn on, and how table mm at a height land on it."""

    camera: Camera
    canvas: Canvas
    img: np.ndarray  # canvas BGR
    label: np.ndarray  # int32 at half the canvas resolution

    def px(self, xy: np.ndarray, z: float | np.ndarray) -> np.ndarray:
        return self.canvas.to_canvas(self.camera.on_plane(np.asarray(xy, np.float64).reshape(-1, 2), z))

    def scale_at(self, xy: np.ndarray, z: float) -> float:
        """Canvas px per mm for something ``z`` mm up (it looks bigger, being nearer the camera)."""
        hc = self.camera.height_mm
        return self.canvas.scale * hc / (hc - z)

    def poly(self, pts_px: np.ndarray, colour: Colour, ident: int | None = None) -> None:
        fill(self.img, pts_px, colour)
        if ident is not None:
            self.label_poly(pts_px, ident)

    def label_poly(self, pts_px: np.ndarray, ident: int) -> None:
        half = np.round(((pts_px + 0.5) / 2 - 0.5) * 16).astype(np.int32)
        cv2.fillPoly(self.label, [half], ident, cv2.LINE_8, 4)

    def hull(self, pts_px: np.ndarray, colour: Colour, ident: int | None = None) -> None:
        h = cv2.convexHull(pts_px.astype(np.float32)).reshape(-1, 2)
        self.poly(h, colour, ident)

    def disc(self, c_px: np.ndarray, r_px: float, colour: Colour, ident: int | None = None) -> None:
        circle(self.img, (float(c_px[0]), float(c_px[1])), r_px, colour)
        if ident is not None:
            self.label_poly(ring(c_px, r_px, 24), ident)


# ---------------------------------------------------------------------- hub
def draw_hub(ctx: Ctx, hub: Hub, tile_width: float) -> None:
    base = ring(hub.center, hub.radius, 48)
    wall = np.concatenate([ctx.px(base, 0.0), ctx.px(base, hub.height)])
    ctx.hull(wall, shade(hub.colour, 0.62))
    top = ctx.px(base, hub.height)
    ctx.poly(top, shade(hub.colour, 1.0))
    inner = ring(hub.center, hub.radius - 2.5, 48)
    ctx.poly(ctx.px(inner, hub.height), shade(hub.colour, 0.93))
    well = ring(hub.center, hub.slot_inner - 1.0, 36)
    ctx.poly(ctx.px(well, hub.height), shade(hub.colour, 0.78))
    s = ctx.scale_at(hub.center, hub.height)
    light_text = sum(hub.colour) < 380
    for k, a in enumerate(hub.slot_angles, start=1):
        d = np.array([math.cos(a), math.sin(a)])
        n = np.array([-d[1], d[0]])
        w = tile_width / 2 + 2.0
        r0, r1 = hub.slot_inner - 1.0, hub.radius + 0.5
        channel = np.stack([hub.center + d * r0 - n * w, hub.center + d * r1 - n * w,
                            hub.center + d * r1 + n * w, hub.center + d * r0 + n * w])
        ctx.poly(ctx.px(channel, hub.height), shade(hub.colour, 0.72))
        label_r = hub.radius - 7.5
        off = math.asin(min(0.95, (w + 6.0) / label_r))
        p = hub.center + label_r * np.array([math.cos(a + off), math.sin(a + off)])
        c = ctx.px(p, hub.height)[0]
        scale = 0.028 * s * 6.0
        text = str(k)
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
        thick = max(1, round(scale * 1.6))
        colour = (235, 235, 235) if light_text else (25, 25, 25)
        cv2.putText(ctx.img, text, (round(c[0] - tw / 2), round(c[1] + th / 2)), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    colour, thick, cv2.LINE_AA)


def hub_shadow(hub: Hub) -> tuple[np.ndarray, float]:
    return ring(hub.center, hub.radius, 40), hub.height


# -------------------------------------------------------------------- props
def _box_corners(x0: float, x1: float, width: float) -> np.ndarray:
    """Corners of the box x0..x1 along an object, ``width`` across it, in the object's frame."""
    return np.array([[x0, -width / 2], [x1, -width / 2], [x1, width / 2], [x0, width / 2]])


def prop_points(p: Prop) -> np.ndarray:
    """3D points (world mm, z into the table) that bound the prop, for its box in the image."""
    if p.kind == "hand":
        palm, fingers, arm = hand_parts(p)
        return np.concatenate([
            np.concatenate([palm, np.full((len(palm), 1), -p.z - 12)], 1),
            np.concatenate([arm, -np.array([[p.z + 20], [p.height], [p.height], [p.z + 20]])], 1),
            np.array([[*b, -p.z - 4] for _, b, _ in fingers]),
        ])
    outline = prop_outline(p)
    return np.concatenate([np.concatenate([outline, np.full((len(outline), 1), -p.z)], 1),
                           np.concatenate([outline, np.full((len(outline), 1), -p.height)], 1)])


def prop_outline(p: Prop) -> np.ndarray:
    """The prop's footprint on the table (mm), for shadows."""
    if p.kind in ("coin", "cup"):
        return ring(p.center, p.size[0] / 2, 24)
    if p.kind == "hand":
        return hand_parts(p)[0]
    ln, wd = p.size
    return local(p.center, p.angle, _box_corners(-ln / 2, ln / 2, wd))


def draw_prop(ctx: Ctx, p: Prop, ident: int) -> None:
    {"coin": _coin, "train-token": _train_token, "cup": _cup, "phone": _phone, "hand": _hand}[p.kind](ctx, p, ident)


def _coin(ctx: Ctx, p: Prop, ident: int) -> None:
    r = p.size[0] / 2
    c = ctx.px(p.center, p.height)[0]
    s = ctx.scale_at(p.center, p.height)
    ctx.disc(ctx.px(p.center, 0.0)[0], r * ctx.canvas.scale, shade(p.colour, 0.55))
    ctx.disc(c, r * s, shade(p.colour, 0.8), ident)
    ctx.disc(c, r * s * 0.86, shade(p.colour, 1.0))
    ctx.disc(c + np.array([-0.2, -0.25]) * r * s, r * s * 0.45, shade(p.colour, 1.0, 255, 0.25))
    ctx.disc(c + np.array([0.12, 0.1]) * r * s, r * s * 0.3, shade(p.colour, 0.85))


def _box(ctx: Ctx, p: Prop, ident: int, length: float, width: float, top: Colour, side: Colour) -> np.ndarray:
    pts = local(p.center, p.angle, np.array([[-length / 2, -width / 2], [length / 2, -width / 2],
                                             [length / 2, width / 2], [-length / 2, width / 2]]))
    ctx.hull(np.concatenate([ctx.px(pts, p.z), ctx.px(pts, p.height)]), side, ident)
    ctx.poly(ctx.px(pts, p.height), top, ident)
    return pts


def _train_token(ctx: Ctx, p: Prop, ident: int) -> None:
    ln, wd = p.size
    _box(ctx, p, ident, ln, wd, shade(p.colour, 1.0), shade(p.colour, 0.6))
    cab = local(p.center, p.angle, _box_corners(-ln / 2, -ln / 6, wd))
    ctx.poly(ctx.px(cab, p.height + 3), shade(p.accent, 1.0), ident)
    chim = local(p.center, p.angle, np.array([[ln * 0.3, 0.0]]))
    ctx.disc(ctx.px(chim, p.height + 5)[0], wd * 0.22 * ctx.scale_at(p.center, p.height), shade(p.colour, 0.35), ident)


def _cup(ctx: Ctx, p: Prop, ident: int) -> None:
    r = p.size[0] / 2
    base = ring(p.center, r, 32)
    handle_pts = local(p.center, p.angle, np.array([[r - 2, -6], [r + 22, -6], [r + 22, 6], [r - 2, 6]]))
    ctx.hull(np.concatenate([ctx.px(handle_pts, p.height * 0.45), ctx.px(handle_pts, p.height * 0.75)]),
             shade(p.colour, 0.8), ident)
    ctx.hull(np.concatenate([ctx.px(base, 0.0), ctx.px(base, p.height)]), shade(p.colour, 0.72), ident)
    top_c = ctx.px(p.center, p.height)[0]
    s_top = ctx.scale_at(p.center, p.height)
    ctx.disc(top_c, r * s_top, shade(p.colour, 1.0), ident)
    ctx.disc(top_c, (r - 3.5) * s_top, shade(p.colour, 0.55))
    liquid_z = p.height * 0.8
    ctx.disc(ctx.px(p.center, liquid_z)[0], (r - 4.5) * ctx.scale_at(p.center, liquid_z), shade(p.accent, 1.0))


def _phone(ctx: Ctx, p: Prop, ident: int) -> None:
    ln, wd = p.size
    pts = _box(ctx, p, ident, ln, wd, shade(p.colour, 1.0), shade(p.colour, 0.6))
    del pts
    screen = local(p.center, p.angle, np.array([[-ln / 2 + 6, -wd / 2 + 3.5], [ln / 2 - 6, -wd / 2 + 3.5],
                                                 [ln / 2 - 6, wd / 2 - 3.5], [-ln / 2 + 6, wd / 2 - 3.5]]))
    ctx.poly(ctx.px(screen, p.height), shade(p.accent, 1.0))
    sheen = local(p.center, p.angle, np.array([[-ln / 4, -wd / 2 + 3.5], [0, -wd / 2 + 3.5], [-ln / 6, wd / 2 - 3.5],
                                                [-ln / 2.4, wd / 2 - 3.5]]))
    ctx.poly(ctx.px(sheen, p.height), shade(p.accent, 1.0, 255, 0.12))


# -------------------------------------------------------------------- hands
SKIN = ((140, 175, 230), (120, 160, 215), (95, 135, 195), (70, 105, 160), (50, 78, 120), (38, 56, 88))


def hand_parts(p: Prop) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, float]], np.ndarray]:
    """A hand reaching in: palm outline, fingers (start, end, width) and the arm outline, in table mm."""
    k = p.size[0] / 95.0  # palm length sets the hand's scale
    side = -1.0 if p.mirror else 1.0
    palm_local = np.array([[-45, -38], [10, -44], [42, -40], [48, -14], [48, 14], [42, 40], [10, 44], [-45, 36]]) * k
    palm = local(p.center, p.angle, palm_local * np.array([1, side]))
    fingers = []
    for y, ln, spread in ((-30, 66, -7), (-10, 78, -2), (10, 74, 3), (29, 58, 8)):
        a = math.radians(spread)
        s0 = np.array([44, y]) * k
        s1 = s0 + np.array([math.cos(a), math.sin(a)]) * ln * k * p.grip
        ends = local(p.center, p.angle, np.stack([s0, s1]) * np.array([1, side]))
        fingers.append((ends[0], ends[1], 17.0 * k))
    th0 = np.array([-5, 40]) * k
    th1 = th0 + np.array([math.cos(math.radians(40)), math.sin(math.radians(40))]) * 58 * k
    ends = local(p.center, p.angle, np.stack([th0, th1]) * np.array([1, side]))
    fingers.append((ends[0], ends[1], 22.0 * k))
    assert p.reach_from is not None
    back = np.array([-math.cos(p.angle), -math.sin(p.angle)])
    n = np.array([-back[1], back[0]])
    wrist = p.center + back * 42 * k
    arm = np.stack([wrist + n * 33 * k, p.reach_from + n * 48 * k, p.reach_from - n * 48 * k, wrist - n * 33 * k])
    return palm, fingers, arm


def _hand(ctx: Ctx, p: Prop, ident: int) -> None:
    """A hand and forearm, drawn flat on a layer, then rounded (darker toward the edges, as a
    cylinder lit from above) and feathered into the canvas."""
    palm, fingers, arm = hand_parts(p)
    arm_z = np.array([p.z + 20, p.height, p.height, p.z + 20])
    arm_px = ctx.px(arm, arm_z)
    sleeve_at = 0.55
    sleeve = np.stack([arm[0] + (arm[1] - arm[0]) * sleeve_at, arm[1], arm[2], arm[3] + (arm[2] - arm[3]) * sleeve_at])
    sz = np.array([arm_z[0] + (arm_z[1] - arm_z[0]) * sleeve_at, arm_z[1], arm_z[2],
                   arm_z[0] + (arm_z[1] - arm_z[0]) * sleeve_at])
    sleeve_px = ctx.px(sleeve, sz)
    palm_px = ctx.px(palm, p.z + 12)
    strokes = []
    for a, b, w in fingers:
        strokes.append((ctx.px(a, p.z + 10)[0], ctx.px(b, p.z + 4)[0], w * ctx.scale_at(a, p.z + 8)))
    pts = np.concatenate([arm_px, palm_px, *[np.stack([a, b]) for a, b, _ in strokes]])
    pad = int(max(w for _, _, w in strokes)) + 4
    x0, y0 = np.maximum(np.floor(pts.min(axis=0)).astype(int) - pad, 0)
    x1 = min(ctx.canvas.width, int(np.ceil(pts[:, 0].max())) + pad)
    y1 = min(ctx.canvas.height, int(np.ceil(pts[:, 1].max())) + pad)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    off = np.array([x0, y0], np.float64)
    layer = np.zeros((y1 - y0, x1 - x0, 3), np.uint8)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    skin = p.colour
    for poly, colour in ((arm_px, skin), (sleeve_px, p.accent) if p.sleeve else (None, None), (palm_px, skin)):
        if poly is not None:
            fill(layer, poly - off, colour)
            fill(mask, poly - off, 255)
    for a, b, w in strokes:
        for img, colour in ((layer, skin), (mask, 255)):
            cv2.line(img, tuple(np.round((a - off) * 16).astype(int)), tuple(np.round((b - off) * 16).astype(int)),
                     colour, max(1, round(w)), cv2.LINE_AA, 4)
        tip = b - (b - a) / max(float(np.linalg.norm(b - a)), 1e-6) * w * 0.28
        circle(layer, tuple(tip - off), w * 0.2, shade(skin, 1.0, 255, 0.22))  # a fingernail
    radius = 9.0 * ctx.scale_at(p.center, p.z)
    d = cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 3)
    round_ = (0.5 + 0.5 * np.sqrt(np.clip(d / max(radius, 1.0), 0, 1))).astype(np.float32)
    lit = cv2.multiply(layer.astype(np.float32), cv2.merge([round_] * 3))
    alpha = cv2.GaussianBlur(mask, (0, 0), 0.8).astype(np.float32) * (1 / 255)
    roi = ctx.img[y0:y1, x0:x1]
    roi[:] = cv2.blendLinear(lit, roi.astype(np.float32), alpha, 1 - alpha).astype(np.uint8)
    for poly in (arm_px, palm_px):
        ctx.label_poly(poly, ident)
    for a, b, w in strokes:
        hp = (round((a[0] + 0.5) / 2 * 16 - 8), round((a[1] + 0.5) / 2 * 16 - 8))
        hq = (round((b[0] + 0.5) / 2 * 16 - 8), round((b[1] + 0.5) / 2 * 16 - 8))
        cv2.line(ctx.label, hp, hq, ident, max(1, round(w / 2)), cv2.LINE_8, 4)


def make_hand(rng: np.random.Generator, table: Table, target: np.ndarray, camera_height: float,
              skin: tuple[int, int, int] | None = None, sleeve: tuple[int, int, int] | None = None,
              from_point: np.ndarray | None = None, hover: float | None = None, grip: float = 1.0,
              motion: tuple[float, float] = (0.0, 0.0)) -> Prop:
    """A hand whose fingertips reach ``target``, its arm coming from the nearest table edge (or ``from_point``)."""
    if from_point is None:
        c = table.center
        d = np.asarray(target) - c
        if np.linalg.norm(d) < 1:
            d = rng.normal(0, 1, 2)
        a = math.atan2(d[1], d[0]) + float(rng.normal(0, 0.4))
        dx, dy = math.cos(a), math.sin(a)
        hw, hh = (table.x1 - table.x0) / 2, (table.y1 - table.y0) / 2
        t = min(hw / max(abs(dx), 1e-9), hh / max(abs(dy), 1e-9))
        from_point = c + np.array([dx, dy]) * (t + 250)
    direction = np.asarray(target) - from_point
    angle = math.atan2(direction[1], direction[0])
    palm = float(rng.uniform(85, 105))
    center = np.asarray(target) - np.array([math.cos(angle), math.sin(angle)]) * (palm * 0.5 + 60 * grip)
    z = hover if hover is not None else float(rng.uniform(15, 60))
    z = min(z, camera_height * 0.25)
    skin = skin or SKIN[int(rng.integers(len(SKIN)))]
    sleeve_c = sleeve or tuple(int(v) for v in rng.integers(20, 230, 3))
    return Prop("hand", center, angle, (palm, palm * 0.9), min(camera_height * 0.45, z + 120), skin, z=z,
                reach_from=np.asarray(from_point, np.float64), accent=sleeve_c, grip=grip,  # type: ignore[arg-type]
                sleeve=bool(rng.random() < 0.75), mirror=bool(rng.random() < 0.5), motion=motion)
