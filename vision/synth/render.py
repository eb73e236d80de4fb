"""Layout + camera + look -> a frame and its truth.

The order of drawing follows the order things stand up from the table: surface, shadows, hub,
the tiles' side walls, their top faces, glare, markers and cups, then whatever is in the air
(held tiles, hands) with their own shadows. All of it happens on the table-plane canvas; one
remap takes the canvas into the image and the light and the camera's faults are applied there.

A game keeps its camera, so the :class:`Renderer` caches the canvas of everything that lies
still (``static_version``) and only draws the hands and held tiles anew each frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .camera import Camera, canvas_for, homography, remap_maps
from .layout import Layout, Piece, Prop, TileDims
from .palette import TileStyle
from .photometric import Degrade, Lighting, apply_gain, degrade, light_field, motion_blur
from .props import Ctx, draw_hub, draw_prop, hub_shadow, prop_outline, prop_points
from .sprites import SpriteCache, rounded_rect, shade
from .surfaces import Surface, draw_surface
from .truth import HubTruth, PropTruth, SlotTruth, TileTruth

PROP_ID0 = 1_000_000
_Q = 4  # shadow maps are drawn at 1/_Q of the canvas resolution


@dataclass(frozen=True)
class Look:
    """What stays the same across a scene or a whole game: the set, the table, the light."""

    style: TileStyle
    surface: Surface
    lighting: Lighting
    floor: tuple[int, int, int]


@dataclass(frozen=True, eq=False)
class Rendered:
    image: np.ndarray
    tiles: tuple[TileTruth, ...]
    props: tuple[PropTruth, ...]
    hub: HubTruth | None


@dataclass(eq=False)
class _Static:
    version: int
    img: np.ndarray
    label: np.ndarray
    area: dict[int, tuple[int, int, int, np.ndarray]]  # id -> (x0, y0, count, mask) at label resolution


class Renderer:
    def __init__(self, camera: Camera, look: Look, dims: TileDims, sprites: SpriteCache | None = None) -> None:
        self.camera = camera
        self.look = look
        self.dims = dims
        self.canvas = canvas_for(camera)
        if camera.k1 == 0.0 and camera.k2 == 0.0:
            self._h: np.ndarray | None = homography(camera, self.canvas)
            self._maps: tuple[np.ndarray, np.ndarray] | None = None
        else:
            self._h = None
            mx, my = remap_maps(camera, self.canvas)
            self._maps = cv2.convertMaps(mx, my, cv2.CV_16SC2)
        hc = camera.height_mm
        top_scale = hc / (hc - dims.thickness)
        self.sprites = (sprites or SpriteCache()).get(look.style, dims.length * self.canvas.scale * top_scale)
        self._light = light_field(look.lighting, camera.width, camera.height, camera.cx, camera.cy)
        self._frame = self._frame_mask()
        self._static: _Static | None = None

    # ---------------------------------------------------------------- set-up
    def _label_shape(self) -> tuple[int, int]:
        return (self.canvas.height + 1) // 2, (self.canvas.width + 1) // 2

    def _frame_mask(self) -> np.ndarray:
        """At label resolution: which canvas points the image actually shows."""
        w, h = self.camera.width, self.camera.height
        n = 40
        xs, ys = np.linspace(-0.5, w - 0.5, n), np.linspace(-0.5, h - 0.5, n)
        border = np.concatenate([
            np.stack([xs, np.full(n, -0.5)], 1), np.stack([np.full(n, w - 0.5), ys], 1),
            np.stack([xs[::-1], np.full(n, h - 0.5)], 1), np.stack([np.full(n, -0.5), ys[::-1]], 1),
        ])
        pts = self.canvas.to_canvas(self.camera.to_table(border))
        mask = np.zeros(self._label_shape(), np.uint8)
        cv2.fillPoly(mask, [np.round(((pts + 0.5) / 2 - 0.5) * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
        return mask.astype(bool)

    # ---------------------------------------------------------------- render
    def render(
        self, layout: Layout, rng: np.random.Generator, faults: Degrade, static_version: int | None = None
    ) -> Rendered:
        still = [i for i, p in enumerate(layout.pieces) if not p.held]
        moving = [i for i, p in enumerate(layout.pieces) if p.held]
        still_props = [j for j, q in enumerate(layout.props) if q.kind != "hand"]
        hands = [j for j, q in enumerate(layout.props) if q.kind == "hand"]
        if static_version is None or self._static is None or self._static.version != static_version:
            version = -1 if static_version is None else static_version
            self._static = self._draw_static(layout, still, still_props, version)
        st = self._static
        img, label, area = st.img.copy(), st.label.copy(), dict(st.area)
        ctx = Ctx(self.camera, self.canvas, img, label)
        if moving or hands:
            self._shadows(ctx, [layout.pieces[i] for i in moving], [layout.props[j] for j in hands], dynamic=True)
            for i in moving:
                self._tile_wall(ctx, layout.pieces[i])
                area[i + 1] = self._tile_top(ctx, layout.pieces[i], i + 1)
            for j in hands:
                draw_prop(ctx, layout.props[j], PROP_ID0 + j)
        tiles = self._tile_truth(layout, label, area)
        props = self._prop_truth(layout)
        hub = self._hub_truth(layout)
        image = self._to_image(img, layout, hands, rng, faults)
        return Rendered(image, tiles, props, hub)

    def _draw_static(self, layout: Layout, still: list[int], still_props: list[int], version: int) -> _Static:
        img = draw_surface(self.look.surface, self.canvas)
        self._floor(img, layout)
        label = np.zeros(self._label_shape(), np.int32)
        ctx = Ctx(self.camera, self.canvas, img, label)
        self._shadows(ctx, [layout.pieces[i] for i in still], [layout.props[j] for j in still_props], dynamic=False,
                      layout=layout)
        if layout.hub is not None:
            draw_hub(ctx, layout.hub, self.dims.width)
        for i in still:
            self._tile_wall(ctx, layout.pieces[i])
        area = {i + 1: self._tile_top(ctx, layout.pieces[i], i + 1) for i in still}
        self._glare(ctx, layout)
        for j in sorted(still_props, key=lambda j: layout.props[j].height):
            draw_prop(ctx, layout.props[j], PROP_ID0 + j)
        return _Static(version, img, label, area)

    def _floor(self, img: np.ndarray, layout: Layout) -> None:
        """Paint the floor beyond the table's edge, and the edge itself, where the camera sees them.

        Table and canvas are both axis-aligned in table mm, so the floor is at most four slices.
        """
        t = layout.table
        (x0, y0), (x1, y1) = self.canvas.to_canvas(np.array([[t.x0, t.y0], [t.x1, t.y1]])) + 0.5
        h, w = img.shape[:2]
        if x0 <= 0 and y0 <= 0 and x1 >= w and y1 >= h:
            return
        floor = self.look.floor
        xa, xb = int(np.clip(round(x0), 0, w)), int(np.clip(round(x1), 0, w))
        ya, yb = int(np.clip(round(y0), 0, h)), int(np.clip(round(y1), 0, h))
        img[:ya] = floor
        img[yb:] = floor
        img[ya:yb, :xa] = floor
        img[ya:yb, xb:] = floor
        edge = max(1, round(3 * self.canvas.scale))
        box = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) - 0.5
        cv2.polylines(img, [np.round(box * 16).astype(np.int32)], True, shade(floor, 1.6), edge, cv2.LINE_AA, 4)

    # --------------------------------------------------------------- shadows
    def _shadows(
        self, ctx: Ctx, pieces: list[Piece], props: list[Prop], dynamic: bool, layout: Layout | None = None
    ) -> None:
        light = self.look.lighting
        q = _Q
        h, w = (self.canvas.height + q - 1) // q, (self.canvas.width + q - 1) // q
        soft = np.zeros((h, w), np.float32)
        contact = np.zeros((h, w), np.float32)
        tall = np.zeros((h, w), np.float32)

        def put(target: np.ndarray, outline: np.ndarray, z0: float, z1: float) -> None:
            pts = np.concatenate([outline + light.shadow_shift(z0), outline + light.shadow_shift(z1)])
            px = (self.canvas.to_canvas(pts) + 0.5) / q - 0.5
            hull = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2)
            cv2.fillConvexPoly(target, np.round(hull * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)

        th = self.dims.thickness
        if layout is not None and layout.hub is not None:
            outline, hh = hub_shadow(layout.hub)
            put(soft, outline, 0.0, hh)
            put(contact, outline, 0.0, 0.0)
        for p in pieces:
            fp = p.footprint(self.dims)
            put(tall if p.z > 5 else soft, fp, p.z, p.z + th)
            if p.z <= 5:
                put(contact, fp, 0.0, 0.0)
        for pr in props:
            outline = prop_outline(pr)
            if pr.kind == "hand":
                put(tall, outline, pr.z, pr.z + 20)
                continue
            put(tall if pr.height > 20 else soft, outline, pr.z, pr.height)
            put(contact, outline, 0.0, 0.0)
        mm = self.canvas.scale / q
        gain = np.ones((h, w), np.float32)
        if soft.any():
            gain -= light.shadow * cv2.GaussianBlur(soft, (0, 0), max(0.6, (1.0 + light.softness * th) * mm))
        if contact.any():
            gain -= 0.3 * cv2.GaussianBlur(contact, (0, 0), max(0.5, 1.2 * mm))
        if tall.any():
            gain -= light.shadow * 0.8 * cv2.GaussianBlur(tall, (0, 0), max(1.0, (3.0 + light.softness * 25) * mm))
        np.maximum(gain, 0.25, out=gain)
        if not dynamic:
            gain3 = gain[..., None] * np.float32(self.look.surface.tint)
            ctx.img[:] = apply_gain(ctx.img, gain3)
            return
        ys, xs = np.nonzero(gain < 0.995)
        if len(ys) == 0:
            return
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        Y0, Y1 = y0 * q, min(self.canvas.height, y1 * q)
        X0, X1 = x0 * q, min(self.canvas.width, x1 * q)
        roi = ctx.img[Y0:Y1, X0:X1]
        g = cv2.resize(gain[y0:y1, x0:x1], ((x1 - x0) * q, (y1 - y0) * q), interpolation=cv2.INTER_LINEAR)
        roi[:] = apply_gain(roi, g[: Y1 - Y0, : X1 - X0, None])

    # ----------------------------------------------------------------- tiles
    def _outline(self, p: Piece, z: float) -> np.ndarray:
        d = self.dims
        r = self.look.style.corner_radius * d.width
        loc = rounded_rect(-d.length / 2, -d.width / 2, d.length, d.width, r, 3)
        c, s = math.cos(p.angle), math.sin(p.angle)
        pts = p.center + loc @ np.array([[c, s], [-s, c]])
        return self.canvas.to_canvas(self.camera.on_plane(pts, z))

    def _tile_wall(self, ctx: Ctx, p: Piece) -> None:
        pts = np.concatenate([self._outline(p, p.z), self._outline(p, p.z + self.dims.thickness)])
        ctx.hull(pts, shade(self.look.style.body, 0.66 * p.tint))

    def _top_corners(self, p: Piece) -> np.ndarray:
        """The top face's corners on the canvas (TileTruth winding)."""
        fp = p.footprint(self.dims)
        return self.canvas.to_canvas(self.camera.on_plane(fp, p.z + self.dims.thickness))

    def _tile_top(self, ctx: Ctx, p: Piece, ident: int) -> tuple[int, int, int, np.ndarray]:
        dst = self._top_corners(p)
        sprite = self.sprites.tile(*p.values) if p.face == "up" else self.sprites.back
        src = self.sprites.corners()
        x0 = max(0, int(math.floor(dst[:, 0].min())) - 2)
        y0 = max(0, int(math.floor(dst[:, 1].min())) - 2)
        x1 = min(self.canvas.width, int(math.ceil(dst[:, 0].max())) + 3)
        y1 = min(self.canvas.height, int(math.ceil(dst[:, 1].max())) + 3)
        if x1 > x0 and y1 > y0:
            m = cv2.getAffineTransform(src[:3].astype(np.float32), (dst[:3] - [x0, y0]).astype(np.float32))
            warped = cv2.warpAffine(sprite, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
            roi = ctx.img[y0:y1, x0:x1]
            a = warped[..., 3].astype(np.float32) * (1 / 255)
            colour = warped[..., :3]
            if p.tint != 1.0:
                colour = cv2.convertScaleAbs(colour, alpha=p.tint)
            roi[:] = cv2.blendLinear(colour, roi, a, 1.0 - a)
        # occlusion bookkeeping at label resolution, on the face inset by a canvas pixel so that
        # tiles touching end to end do not share raster cells and count as covering each other
        c = dst.mean(axis=0)
        inset = c + (dst - c) * (1.0 - 1.2 / max(float(np.linalg.norm(dst[1] - dst[0])), 2.4) * 2)
        half = (inset + 0.5) / 2 - 0.5
        hx0, hy0 = int(math.floor(half[:, 0].min())) - 1, int(math.floor(half[:, 1].min())) - 1
        hx1, hy1 = int(math.ceil(half[:, 0].max())) + 2, int(math.ceil(half[:, 1].max())) + 2
        mask = np.zeros((hy1 - hy0, hx1 - hx0), np.uint8)
        cv2.fillPoly(mask, [np.round((half - [hx0, hy0]) * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
        ctx.label_poly(inset, ident)
        return hx0, hy0, int(mask.sum()), mask

    def _glare(self, ctx: Ctx, layout: Layout) -> None:
        """The lamp's reflection: a soft bright patch on tile tops (and, fainter, on a glossy table)."""
        light = self.look.lighting
        if light.glare <= 0.02 or not layout.pieces:
            return
        cam = self.camera
        h = self.dims.thickness
        hc, hl = cam.height_mm, light.lamp[2]
        t = (hc - h) / ((hc - h) + (hl - h))
        m = cam.center[:2] + (np.array(light.lamp[:2]) - cam.center[:2]) * t
        sigma_mm = 25 + 60 * (1 - light.glare)
        c = self.canvas.to_canvas(m[None])[0]
        r = 3 * sigma_mm * self.canvas.scale
        # work at label resolution (half the canvas) and scale the result up once
        lx0, ly0 = max(0, int((c[0] - r) / 2)), max(0, int((c[1] - r) / 2))
        lx1, ly1 = min(ctx.label.shape[1], int((c[0] + r) / 2) + 1), min(ctx.label.shape[0], int((c[1] + r) / 2) + 1)
        if lx1 - lx0 < 2 or ly1 - ly0 < 2:
            return
        yy, xx = np.ogrid[ly0:ly1, lx0:lx1]
        sig = sigma_mm * self.canvas.scale / 2
        blob = np.exp(-0.5 * (((xx - (c[0] + 0.5) / 2 + 0.5) ** 2 + (yy - (c[1] + 0.5) / 2 + 0.5) ** 2) / sig**2))
        lab = ctx.label[ly0:ly1, lx0:lx1]
        on_tile = ((lab > 0) & (lab < PROP_ID0)).astype(np.float32)
        gloss = 0.25 if self.look.surface.glossy else 0.05
        k = (light.glare * blob * (on_tile * self.look.style.gloss * 0.9 + (1 - on_tile) * gloss)).astype(np.float32)
        x0, y0 = lx0 * 2, ly0 * 2
        x1, y1 = min(self.canvas.width, lx1 * 2), min(self.canvas.height, ly1 * 2)
        k8 = np.clip(k * 255 + 0.5, 0, 255).astype(np.uint8)
        k8 = cv2.resize(k8, ((lx1 - lx0) * 2, (ly1 - ly0) * 2), interpolation=cv2.INTER_LINEAR)[: y1 - y0, : x1 - x0]
        roi = ctx.img[y0:y1, x0:x1]
        roi[:] = cv2.add(roi, cv2.multiply(cv2.bitwise_not(roi), cv2.cvtColor(k8, cv2.COLOR_GRAY2BGR), scale=1 / 255))

    # ----------------------------------------------------------------- truth
    def _tile_truth(
        self, layout: Layout, label: np.ndarray, area: dict[int, tuple[int, int, int, np.ndarray]]
    ) -> tuple[TileTruth, ...]:
        cam = self.camera
        w, h = cam.width, cam.height
        seen_map = np.where(self._frame & (label < PROP_ID0), label, 0)
        counts = np.bincount(seen_map.ravel(), minlength=len(layout.pieces) + 2)
        out = []
        for i, p in enumerate(layout.pieces):
            ident = i + 1
            if ident not in area:
                continue
            hx0, hy0, total, mask = area[ident]
            fh, fw = self._frame.shape
            ya, yb = max(hy0, 0), min(hy0 + mask.shape[0], fh)
            xa, xb = max(hx0, 0), min(hx0 + mask.shape[1], fw)
            if yb <= ya or xb <= xa or total == 0:
                continue
            sub = mask[ya - hy0:yb - hy0, xa - hx0:xb - hx0].astype(bool)
            in_frame = int((sub & self._frame[ya:yb, xa:xb]).sum())
            if in_frame == 0:
                continue
            seen = int(counts[ident]) if ident < len(counts) else 0
            fp = p.footprint(self.dims)
            top = np.concatenate([fp, np.full((4, 1), -(p.z + self.dims.thickness))], axis=1)
            corners = cam.project(top).astype(np.float32)
            truncated = bool(np.any(corners[:, 0] < -0.5) or np.any(corners[:, 0] > w - 0.5)
                             or np.any(corners[:, 1] < -0.5) or np.any(corners[:, 1] > h - 0.5))
            covered = in_frame - seen
            occluded = covered > max(1, 0.004 * total)
            out.append(TileTruth(corners, p.values, p.face, p.train, p.position, occluded, truncated,
                                 visible=min(1.0, seen / total), owner=p.owner, held=p.held))
        return tuple(out)

    def _prop_truth(self, layout: Layout) -> tuple[PropTruth, ...]:
        cam = self.camera
        out = []
        for pr in layout.props:
            px = cam.project(prop_points(pr))
            x0, y0 = np.clip(px.min(axis=0), -0.5, [cam.width - 0.5, cam.height - 0.5])
            x1, y1 = np.clip(px.max(axis=0), -0.5, [cam.width - 0.5, cam.height - 0.5])
            if x1 - x0 < 1 or y1 - y0 < 1:
                continue
            out.append(PropTruth(pr.kind, (float(x0), float(y0), float(x1), float(y1)), pr.train))
        return tuple(out)

    def _hub_truth(self, layout: Layout) -> HubTruth | None:
        hub = layout.hub
        if hub is None:
            return None
        cam = self.camera
        top = -self.dims.thickness
        rim = [hub.center[0] + hub.radius, hub.center[1], -hub.height]
        c = cam.project(np.array([[*hub.center, -hub.height], rim]))
        slots = []
        for k in range(1, len(hub.slot_angles) + 1):
            start, a = hub.slot_start(k)
            out = start + self.dims.length * np.array([math.cos(a), math.sin(a)])
            px = cam.project(np.array([[*start, top], [*out, top]]))
            point, outward = (float(px[0, 0]), float(px[0, 1])), (float(px[1, 0]), float(px[1, 1]))
            slots.append(SlotTruth(k, hub.trains.get(k), point, outward))
        return HubTruth((float(c[0, 0]), float(c[0, 1])), float(np.linalg.norm(c[1] - c[0])), tuple(slots))

    # ----------------------------------------------------------------- image
    def _to_image(self, canvas_img: np.ndarray, layout: Layout, hands: list[int], rng: np.random.Generator,
                  faults: Degrade) -> np.ndarray:
        cam = self.camera
        if self._maps is not None:
            img = cv2.remap(canvas_img, self._maps[0], self._maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        else:
            assert self._h is not None
            img = cv2.warpPerspective(canvas_img, self._h, (cam.width, cam.height), flags=cv2.INTER_LINEAR,
                                      borderMode=cv2.BORDER_REPLICATE)
        for j in hands:
            img = self._hand_blur(img, layout.props[j])
        img = apply_gain(img, self._light)
        return degrade(img, faults, rng)

    def _hand_blur(self, img: np.ndarray, hand: Prop) -> np.ndarray:
        """A moving hand smears along its motion during the exposure."""
        dx, dy = hand.motion
        if math.hypot(dx, dy) < 1.0:
            return img
        px = self.camera.project(prop_points(hand))
        length = math.hypot(dx, dy) * self.camera.px_per_mm
        pad = int(length) + 4
        x0, y0 = np.floor(px.min(axis=0)).astype(int) - pad
        x1, y1 = np.ceil(px.max(axis=0)).astype(int) + pad
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(img.shape[1], x1), min(img.shape[0], y1)
        if x1 - x0 < 4 or y1 - y0 < 4:
            return img
        img[y0:y1, x0:x1] = motion_blur(img[y0:y1, x0:x1], length, math.atan2(dy, dx))
        return img

