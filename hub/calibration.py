"""Where the hub is: its centre, its size, the direction of each train slot, and whose train each slot holds.

Found from one frame with no clicks (:func:`find_hub`), mapped to the players from the
set-up (:func:`assign_trains`), kept in the config's ``[calibration]`` section, and
re-checked while the game runs (:class:`HubWatch`) so a knocked camera or hub is noticed.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from scorekeeper import MEXICAN
from vision.frames import Frame
from vision.types import DetectedTile

from .config import SLOTS, CalibrationConfig


class CalibrationError(RuntimeError):
    """The hub cannot be found in the frame (covered, out of view, or no hub there)."""


@dataclass(frozen=True)
class Calibration:
    """The hub in image pixels. Slots are numbered 1..N clockwise on screen, as printed on the hub."""

    centre: tuple[float, float]
    radius: float
    slot_angles: tuple[float, ...]  # degrees, image coordinates (x right, y down), slot 1 first
    trains: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))  # slot -> train name

    def direction(self, slot: int) -> np.ndarray:
        """Unit vector from the centre out along ``slot``."""
        a = math.radians(self.slot_angles[slot - 1])
        return np.array([math.cos(a), math.sin(a)])

    def slot_of(self, train: str) -> int | None:
        for slot, name in self.trains.items():
            if name == train:
                return slot
        return None

    def with_trains(self, trains: Mapping[int, str]) -> Calibration:
        return Calibration(self.centre, self.radius, self.slot_angles, MappingProxyType(dict(trains)))

    def seat_angle(self, player: str) -> float | None:
        """The direction (degrees) of a player's seat: their train's slot points at them."""
        slot = self.slot_of(player)
        return None if slot is None else self.slot_angles[slot - 1]


def assign_trains(players: Sequence[str], slots: int = SLOTS, mexican_slot: int | None = None) -> dict[int, str]:
    """The set-up's proposal: players take slots 1, 2, ... clockwise in seating order, the Mexican train the last.

    The host confirms or changes it on the set-up page; a slot left out holds no train.
    """
    if len(players) + 1 > slots:
        raise ValueError(f"{len(players)} players and the Mexican train need more than the hub's {slots} slots")
    mexican = slots if mexican_slot is None else mexican_slot
    if not 1 <= mexican <= slots:
        raise ValueError(f"the Mexican train's slot must be 1..{slots}, not {mexican}")
    free = [s for s in range(1, slots + 1) if s != mexican]
    out = {slot: player for slot, player in zip(free, players, strict=False)}
    out[mexican] = MEXICAN
    return dict(sorted(out.items()))


# ------------------------------------------------------------------ the config file
def from_config(section: CalibrationConfig) -> Calibration | None:
    """The stored calibration, or None when the config holds none yet (the hub then finds it itself)."""
    if section.centre is None or section.radius is None or len(section.slot_angles) != SLOTS:
        return None
    trains = MappingProxyType(dict(section.trains))
    return Calibration(section.centre, section.radius, tuple(section.slot_angles), trains)


def to_toml(calibration: Calibration) -> str:
    """The ``[calibration]`` section as the config file holds it."""
    lines = [
        "[calibration]",
        f"centre = [{calibration.centre[0]:.1f}, {calibration.centre[1]:.1f}]",
        f"radius = {calibration.radius:.1f}",
        "slot_angles = [" + ", ".join(f"{a:.2f}" for a in calibration.slot_angles) + "]",
    ]
    if calibration.trains:
        lines += ["", "[calibration.trains]"]
        lines += [f"{slot} = {json.dumps(name)}" for slot, name in sorted(calibration.trains.items())]
    return "\n".join(lines) + "\n"


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def save_calibration(path: str | Path, calibration: Calibration) -> None:
    """Write the calibration into the config file, replacing any ``[calibration]`` tables and keeping the rest.

    The file is replaced atomically, so a power cut leaves the old or the new file, never half of one.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header is not None:
            name = header.group(1)
            skipping = name == "calibration" or name.startswith("calibration.")
        if not skipping:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    new = "\n".join(kept) + ("\n\n" if kept else "") + to_toml(calibration)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(new)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


# ------------------------------------------------------------------ finding the hub
@dataclass(frozen=True)
class HubSettings:
    work_px: int = 640  # the frame is searched at this size (longest side)
    min_radius: float = 0.04  # of the frame's shorter side
    max_radius: float = 0.35
    candidates: int = 10  # round outlines looked at closely
    min_rim: float = 0.45  # share of the rim that must show an edge (tiles in the slots hide some of it)
    min_slot_fit: float = 0.8  # how clearly the band inside the rim must show the slots
    # round a double (the engine) and inside a whole rim, faint slots are enough: a dark hub's grooves barely
    # show on its body, and its fit falls under min_slot_fit when the rim found is a pixel or two off
    engine_slot_fit: float = 0.5
    engine_rim: float = 0.9
    # a round found by where its edges point (round a double, or quiet in a busy cloth) must show its slots
    # clearly: laid-out hands looked slotted that way (fit up to 1.8 on fresh eval-hub seeds 7000-7149)
    pointed_slot_fit: float = 2.0


def _polar(lab: np.ndarray, centre: np.ndarray, radii: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Colours (radii, angles, 3) sampled round ``centre`` (nearest pixel; outside the frame: edge pixels)."""
    h, w = lab.shape[:2]
    xs = centre[0] + np.cos(angles)[None, :] * radii[:, None]
    ys = centre[1] + np.sin(angles)[None, :] * radii[:, None]
    xi = np.clip(np.round(xs).astype(int), 0, w - 1)
    yi = np.clip(np.round(ys).astype(int), 0, h - 1)
    return lab[yi, xi].astype(np.float64)


def _slot_fit(lab: np.ndarray, centre: np.ndarray, radius: float, slots: int) -> tuple[float, float]:
    """(score, angle of slot centres in radians): how well ``slots`` straight, parallel-sided channels
    explain the band inside the rim.

    Between the slots lies the hub's body, one colour all round; in each slot lies an empty
    channel or a tile, which stands out from it. So the right fit leaves a uniform remainder
    that every slot differs from. Because a channel has parallel sides it spans a smaller
    angle farther out, while the body between two channels widens; fitting that shape tells
    the slots from the gaps between them, which a plain 8-fold pattern cannot. The band
    lies inside the numbers printed near the rim.
    """
    period = 2 * math.pi / slots
    angles = np.linspace(0, 2 * math.pi, 360, endpoint=False)
    radii = radius * np.linspace(0.6, 0.8, 8)
    polar = _polar(lab, centre, radii, angles).reshape(-1, 3)  # (pixels, 3)
    squares = (polar ** 2).sum(axis=1)
    r = np.repeat(radii, len(angles))
    theta = np.tile(angles, len(radii))
    phases = np.linspace(0, period, 45, endpoint=False)
    shifted = theta[None, :] - phases[:, None] + period / 2  # (phases, pixels)
    off = shifted % period - period / 2
    slot = (shifted // period).astype(int) % slots
    best = (0.0, 0.0)
    for half in (0.17, 0.21, 0.25):
        inside = np.abs(r[None, :] * np.sin(off)) < half * radius
        body = (~inside).astype(np.float64)
        n_body = body.sum(axis=1)
        if (n_body < 16).any():
            continue
        body_mean = body @ polar / n_body[:, None]
        body_var = body @ squares / n_body - (body_mean ** 2).sum(axis=1)
        body_spread = np.sqrt(np.maximum(body_var, 0.0))
        contrast = np.empty((len(phases), slots))
        light = np.empty((len(phases), slots))
        for k in range(slots):
            mask = (inside & (slot == k)).astype(np.float64)
            n = np.maximum(mask.sum(axis=1), 1.0)
            mean = mask @ polar / n[:, None]
            contrast[:, k] = np.linalg.norm(mean - body_mean, axis=1)
            light[:, k] = mean[:, 0]
        score = np.median(contrast, axis=1) / (body_spread + 2.0)
        # empty slots are grooves, darker than the hub: lighter "slots" are mostly the hub between them
        score = np.where(np.median(light, axis=1) > body_mean[:, 0], score * 0.6, score)
        i = int(np.argmax(score))
        if score[i] > best[0]:
            best = (float(score[i]), float(phases[i]))
    return best


def _rim(lab: np.ndarray, centre: np.ndarray, radius: float, rays: int = 180) -> np.ndarray:
    """Points of the edge nearest ``radius`` along each ray, for refitting the circle."""
    if not math.isfinite(radius):
        return np.zeros((0, 2))
    radii = np.arange(radius * 0.85, radius * 1.15, 0.5)
    if len(radii) <= 4:
        return np.zeros((0, 2))  # too small a circle for an edge across 4 samples: no rim to refit (a stray fit)
    angles = np.linspace(0, 2 * math.pi, rays, endpoint=False)
    samples = _polar(lab, centre, radii, angles).transpose(1, 0, 2)  # (rays, radii, 3)
    step = np.linalg.norm(samples[:, 4:] - samples[:, :-4], axis=2)
    k = np.argmax(step, axis=1)
    strong = step[np.arange(rays), k] > max(8.0, 2.0 * float(np.median(step)))
    r = radii[k] + 1.0
    return np.stack([centre[0] + np.cos(angles) * r, centre[1] + np.sin(angles) * r], axis=1)[strong]


def _fit_circle(points: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares circle through the points (Kasa's algebraic fit), dropping the worst outliers once."""
    for _ in range(2):
        a = np.column_stack([points * 2, np.ones(len(points))])
        b = (points ** 2).sum(axis=1)
        (cx, cy, c), *_ = np.linalg.lstsq(a, b, rcond=None)
        r = math.sqrt(max(c + cx * cx + cy * cy, 0.0))
        err = np.abs(np.linalg.norm(points - [cx, cy], axis=1) - r)
        keep = err < max(2.0, 2.5 * float(np.median(err)))
        if keep.all() or keep.sum() < 12:
            break
        points = points[keep]
    return np.array([cx, cy]), r


class _Edges:
    """Where the (small) image has a strong colour edge, and which way the colour changes there."""

    def __init__(self, lab: np.ndarray) -> None:
        import cv2

        gx = cv2.Sobel(lab.astype(np.float32), cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(lab.astype(np.float32), cv2.CV_32F, 0, 1, ksize=3)
        jxx, jyy, jxy = (gx * gx).sum(2), (gy * gy).sum(2), (gx * gy).sum(2)
        magnitude = np.sqrt(0.5 * (jxx + jyy + np.sqrt((jxx - jyy) ** 2 + 4 * jxy ** 2)))
        self.normal = 0.5 * np.arctan2(2 * jxy, jxx - jyy)  # the direction of strongest change (mod pi)
        self.strong = magnitude > max(20.0, float(np.percentile(magnitude, 75)))

    def round_share(self, centres: np.ndarray, r_min: float, r_max: float, rays: int = 40,
                    outermost: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """For each centre: the radius at which the most rays cross an edge running round that centre
        (with ``outermost``: the largest radius where nearly as many do), and the share of rays that do.

        Counting rays, not edge pixels, makes long straight edges (trains, the table's edge)
        weigh little: only a closed round outline, like the hub's rim, is crossed by nearly
        every ray.
        """
        h, w = self.strong.shape
        angles = np.linspace(0, 2 * math.pi, rays, endpoint=False)
        radii = np.arange(r_min, r_max, 1.0)
        xs = centres[:, 0, None, None] + np.cos(angles)[None, :, None] * radii[None, None, :]
        ys = centres[:, 1, None, None] + np.sin(angles)[None, :, None] * radii[None, None, :]
        xi = np.clip(np.round(xs).astype(np.int32), 0, w - 1)
        yi = np.clip(np.round(ys).astype(np.int32), 0, h - 1)
        radial = np.abs(np.cos(self.normal[yi, xi] - angles[None, :, None])) > 0.85
        hit = self.strong[yi, xi] & radial & (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        near = hit.copy()
        for k in (1, 2):  # a rim within 2 px of the radius counts: a tilted camera sees an ellipse
            near[:, :, k:] |= hit[:, :, :-k]
            near[:, :, :-k] |= hit[:, :, k:]
        share = near.mean(axis=1)  # (centres, radii)
        best = np.argmax(share, axis=1)
        if outermost:  # the rim encloses the engine's well and the slot ends, which may look rounder
            top = share.max(axis=1, keepdims=True)
            best = len(radii) - 1 - np.argmax(((share >= 0.7 * top) & (top > 0))[:, ::-1], axis=1)
        return radii[best], share[np.arange(len(centres)), best]


def _candidates(edges: _Edges, r_min: float, r_max: float, keep: int) -> list[tuple[np.ndarray, float]]:
    """The ``keep`` most complete round outlines, as (centre, radius), from a coarse grid of centres."""
    h, w = edges.strong.shape
    step = max(2.0, r_min / 2)
    gx, gy = np.meshgrid(np.arange(step / 2, w, step), np.arange(step / 2, h, step))
    centres = np.stack([gx.ravel(), gy.ravel()], axis=1)
    radii, shares = np.empty(len(centres)), np.empty(len(centres))
    for i in range(0, len(centres), 256):
        radii[i:i + 256], shares[i:i + 256] = edges.round_share(centres[i:i + 256], r_min, r_max, rays=32)
    out: list[tuple[np.ndarray, float]] = []
    for i in np.argsort(-shares):
        if shares[i] < 0.3 or len(out) >= keep:
            break
        if all(math.dist(c, centres[i]) > max(r, radii[i]) * 0.5 for c, r in out):
            out.append((centres[i], float(radii[i])))
    rims = []  # the same centres, taking the outermost round edge: a hub's rim rather than its well
    for c, r in out:
        (outer,), _ = edges.round_share(c[None], r_min, r_max, rays=32, outermost=True)
        if outer > 1.25 * r:
            rims.append((c, float(outer)))
    return out + rims


def _refine(edges: _Edges, lab: np.ndarray, centre: np.ndarray, radius: float,
            reach: float = 0.3) -> tuple[np.ndarray, float, float]:
    """The best round outline within ``reach`` radii of a rough one: (centre, radius, share of its rim)."""
    span = max(2.0, reach * radius)
    for step in (max(1.0, span / 6), 1.0):  # coarse, then fine round the coarse best
        offsets = np.arange(-span, span + 1e-6, step)
        grid = np.stack(np.meshgrid(offsets, offsets), -1).reshape(-1, 2) + centre
        radii, shares = edges.round_share(grid, radius * 0.75, radius * 1.3)
        k = int(np.argmax(shares))
        centre, radius, span = grid[k], float(radii[k]), step
    for _ in range(2):
        points = _rim(lab, centre, radius)
        if len(points) < 12:
            break
        centre, radius = _fit_circle(points)
    _, (share,) = edges.round_share(centre[None], radius * 0.92, radius * 1.08)
    return centre, radius, float(share)


def _round_near(image: np.ndarray, centre: np.ndarray, r_lo: float, r_hi: float,
                reach: float) -> tuple[np.ndarray, float]:
    """The round edge that most edge pixels point at, centred within ``reach`` of ``centre`` with a radius
    in [r_lo, r_hi] (a Hough transform on a crop of the frame scaled to ~80 px radius; frame units).

    Round the engine this finds a rim that counting rays cannot: on a checked cloth nearly
    every ray crosses an edge at every radius, but the straight edges of the checks point
    at no common centre, while a rim's edge points at its centre all round (eval-hub seed
    7011: a pale hub on red and white gingham was never found).
    """
    import cv2

    k = min(1.0, 80.0 / r_hi)
    h, w = image.shape[:2]
    pad = r_hi * 1.1 + reach
    x0, y0 = max(0, int(centre[0] - pad)), max(0, int(centre[1] - pad))
    x1, y1 = min(w, int(centre[0] + pad) + 1), min(h, int(centre[1] + pad) + 1)
    crop = cv2.resize(image[y0:y1, x0:x1], None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
    edges = _Edges(cv2.cvtColor(cv2.GaussianBlur(crop, (3, 3), 0.8), cv2.COLOR_BGR2LAB))
    c = (np.asarray(centre, np.float64) - (x0, y0)) * k
    span = math.ceil(reach * k)
    side = 2 * span + 1
    radii = np.arange(r_lo * k, r_hi * k, 1.0)
    ys, xs = np.nonzero(edges.strong)
    near = np.abs(np.hypot(xs - c[0], ys - c[1]) - (radii[0] + radii[-1]) / 2) < (radii[-1] - radii[0]) / 2 + span + 2
    ys, xs = ys[near], xs[near]
    normal = edges.normal[ys, xs]
    votes = []
    for sign in (1.0, -1.0):  # the normal's sign is unknown: the centre lies one way or the other
        vx = np.round(xs[:, None] + sign * np.cos(normal)[:, None] * radii - c[0]).astype(np.int64) + span
        vy = np.round(ys[:, None] + sign * np.sin(normal)[:, None] * radii - c[1]).astype(np.int64) + span
        inside = (vx >= 0) & (vx < side) & (vy >= 0) & (vy < side)
        votes.append(((vy * side + vx) * len(radii) + np.arange(len(radii)))[inside])
    acc = np.bincount(np.concatenate(votes), minlength=side * side * len(radii)).astype(np.float32)
    acc = acc.reshape(side, side, len(radii))
    acc = cv2.boxFilter(acc, -1, (3, 3), normalize=False, borderType=cv2.BORDER_CONSTANT)  # a rim's votes scatter
    acc[:, :, 1:-1] += acc[:, :, :-2] + acc[:, :, 2:]  # over neighbouring cells and radii
    acc /= 2 * math.pi * radii  # a whole rim casts votes in proportion to its length
    iy, ix, ir = np.unravel_index(int(np.argmax(acc)), acc.shape)
    return (np.array([ix - span, iy - span]) + c) / k + (x0, y0), float(radii[ir]) / k


def _round_at(image: np.ndarray, edges: _Edges, scale: float, centre: np.ndarray, r_lo: float, r_hi: float,
              reach: float) -> tuple[np.ndarray, float, float]:
    """:func:`_round_near`, as (centre, radius, share of its rim) on the small image ``edges`` came from."""
    centre, radius = _round_near(image, centre, r_lo, r_hi, reach)
    _, (share,) = edges.round_share(centre[None] * scale, radius * scale * 0.92, radius * scale * 1.08)
    return centre * scale, radius * scale, float(share)


def _busyness(lab: np.ndarray, size: int) -> np.ndarray:
    """How busy the colour is round each pixel: the mean edge strength over ``size`` x ``size`` (3 channels,
    as :class:`_Edges` takes).

    On a checked or patterned cloth the hub is a quiet round in a busy field, and the edge of
    this map is its rim (eval-hub seeds 7011, 7023, 7033: gingham; found no hub before the
    engine was laid).
    """
    import cv2

    lab = lab.astype(np.float32)
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)
    busy = cv2.blur(np.sqrt((gx * gx + gy * gy).sum(axis=2)), (size, size))
    return np.repeat(busy[..., None], 3, axis=2)


def find_hub(image: np.ndarray, settings: HubSettings | None = None, slots: int = SLOTS,
             near: Calibration | None = None, tiles: Sequence[DetectedTile] = (), quiet: bool = False) -> Calibration:
    """The hub in one frame, with no clicks: a round outline with ``slots`` slots inside its rim.

    Candidate centres are those from which most rays cross a round edge (the hub's rim and
    wall); each is refined and refitted to its rim, and the hub is the one whose band inside
    the rim is best explained by ``slots`` parallel-sided slots (empty, or holding a tile),
    judged on the full-resolution image. Slot 1 is the slot nearest straight up in the
    image, then clockwise. ``near`` (the last known hub) limits the search to its
    surroundings, which is much quicker. ``tiles`` (this frame's detections) help during a
    round: the engine, a double, lies in the hub's centre, and the rim round it is found by
    where its edges point. With ``quiet`` (no round in play), when nothing is found the quiet
    rounds in a busy cloth are looked at too. Raises CalibrationError when no hub is in view.
    """
    import cv2

    s = settings or HubSettings()
    h, w = image.shape[:2]
    scale = s.work_px / max(h, w)
    small = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0.8), cv2.COLOR_BGR2LAB)
    edges = _Edges(lab)
    short = min(small.shape[:2])
    r_min, r_max = short * s.min_radius, short * s.max_radius
    if near is not None:
        rough = [(np.asarray(near.centre) * scale, near.radius * scale)]
    else:
        half = cv2.resize(lab, (lab.shape[1] // 2, lab.shape[0] // 2), interpolation=cv2.INTER_AREA)
        rough = [(c * 2, r * 2) for c, r in _candidates(_Edges(half), r_min / 2, r_max / 2, s.candidates)]
    doubles = face_up_doubles(tiles)
    if near is not None:  # only where the hub may have gone: doubles lie in trains and laid-out hands too
        doubles = [t for t in doubles if math.dist(t.center, near.centre) < 2 * near.radius]
    engines = [np.asarray(t.center) * scale for t in doubles]
    lengths = [float(np.hypot(*np.subtract(t.corners[0], t.corners[3]))) for t in doubles]
    rough += [(c, 1.35 * length * scale) for c, length in zip(engines, lengths, strict=True)]
    rounds = [_refine(edges, lab, centre, r, 0.8 if near is not None else 0.3) for centre, r in rough]
    # a hub is 1.2-1.5 tiles in radius (1.8: a roomy one)
    pointed = [_round_at(image, edges, scale, np.asarray(t.center), 1.0 * length, 1.8 * length, 0.3 * length)
               for t, length in zip(doubles, lengths, strict=True)]

    def judge(rounds: Sequence[tuple[np.ndarray, float, float]],
              bar: float = s.min_slot_fit) -> list[tuple[float, np.ndarray, float, float]]:
        """(score, centre, radius, slot phase) of the rounds that look like the hub, in the frame's pixels."""
        found = []
        for centre, radius, share in rounds:
            if not r_min <= radius <= r_max or share < s.min_rim:
                continue
            fit, phase = _full_resolution_fit(image, centre / scale, radius / scale, slots)
            # a complete rim counts most; any busy patch can look slotted. With share ** 4 a hand laid in two
            # rows (3/4 of a rim, fit 2.9) beat a dim black hub (whole rim, fit 0.87): rendered seed 2
            score = min(fit, 3.0) * share ** 6
            engine = any(math.dist(e, centre) < 0.25 * radius for e in engines)
            if engine:
                score *= 2.0  # a double lies in its centre: the engine
            if fit >= (s.engine_slot_fit if engine and share >= s.engine_rim else bar):
                found.append((score, centre / scale, radius / scale, phase))
        return found

    found = judge(rounds) + judge(pointed, s.pointed_slot_fit)
    # a busy cloth can hide the rim among its own edges: then look for a quiet round, but not during a round (laid
    # out face up at the count, a hand in a busy cloth looked more slotted than the hub crowded with trains: fit 2.5
    # against 1.9, fresh eval-hub seed 7023); by then the engine shows the hub
    if not found and near is None and quiet:
        busy = _Edges(_busyness(half, max(3, round(r_min / 3))))
        calm = [(c * 2 / scale, r * 2 / scale) for c, r in _candidates(busy, r_min / 2, r_max / 2, s.candidates)]
        found = judge([_round_at(image, edges, scale, c, 0.7 * r, 1.5 * r, 0.3 * r) for c, r in calm],
                      s.pointed_slot_fit)
    if not found:
        raise CalibrationError(f"no hub with {slots} slots in view: is it covered, or out of the picture?")
    best = max(found, key=lambda f: f[0])
    around = [f for f in found if math.dist(f[1], best[1]) < 0.15 * best[2] and f[2] > 1.25 * best[2]]
    _, centre, radius, phase = max(around, key=lambda f: f[2]) if around else best  # the rim round a well
    degrees = sorted(math.degrees(phase + 2 * math.pi * k / slots) % 360 for k in range(slots))
    first = min(range(slots), key=lambda k: abs((degrees[k] + 90 + 180) % 360 - 180))
    ordered = tuple(_signed(degrees[(first + k) % slots]) for k in range(slots))
    return Calibration((float(centre[0]), float(centre[1])), float(radius), ordered)


def face_up_doubles(tiles: Sequence[DetectedTile]) -> list[DetectedTile]:
    """The tiles read as doubles: one of them may be the engine, which lies in the hub's centre."""
    return [t for t in tiles if t.face == "up" and t.values is not None and t.values[0] == t.values[1]]


def engine_hints(tiles: Sequence[DetectedTile], engine: int | None) -> list[DetectedTile]:
    """The doubles that may be the engine: those of the round's engine number, when it is known (``engine``).

    A back has no pips, and the detector reads some backs face up as 0|0: at the deal of eval-hub seed 7020,
    nine backs of the hands (scored 0.38-0.62) drew the hub found rightly to a row of them.
    """
    doubles = face_up_doubles(tiles)
    return doubles if engine is None else [t for t in doubles if t.values is not None and t.values[0] == engine]


def holds_engine(calibration: Calibration, tiles: Sequence[DetectedTile], within: float = 0.3) -> bool:
    """Whether a double lies in the hub's centre (within ``within`` radii): only the true hub holds one there."""
    return any(math.dist(t.center, calibration.centre) < within * calibration.radius for t in face_up_doubles(tiles))


def _full_resolution_fit(image: np.ndarray, centre: np.ndarray, radius: float, slots: int) -> tuple[float, float]:
    """The slot fit on the frame's own pixels round the hub (at most ~160 px across the hub)."""
    import cv2

    h, w = image.shape[:2]
    x0, y0 = max(0, int(centre[0] - radius * 1.05)), max(0, int(centre[1] - radius * 1.05))
    x1, y1 = min(w, int(centre[0] + radius * 1.05) + 1), min(h, int(centre[1] + radius * 1.05) + 1)
    crop = image[y0:y1, x0:x1]
    if crop.size == 0:
        return 0.0, 0.0
    k = min(1.0, 80.0 / radius)
    if k < 1.0:
        crop = cv2.resize(crop, (max(1, round(crop.shape[1] * k)), max(1, round(crop.shape[0] * k))),
                          interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB)
    return _slot_fit(lab, (centre - (x0, y0)) * k, radius * k, slots)


def _signed(deg: float) -> float:
    """An angle in (-180, 180]."""
    d = deg % 360
    return d - 360 if d > 180 else d


def match_slots(found: Calibration, trains_at: Mapping[float, str]) -> Calibration:
    """Give each found slot the train lying in that direction (``trains_at``: degrees -> train)."""
    trains: dict[int, str] = {}
    for angle, train in trains_at.items():
        slot = 1 + min(range(len(found.slot_angles)),
                       key=lambda k: abs((found.slot_angles[k] - angle + 180) % 360 - 180))
        trains[slot] = train
    return found.with_trains(trains)


class HubWatch:
    """Re-finds the hub every ``every_s`` seconds of game time and reports when it has moved.

    It looks near where the hub was (quick); after ``lost_after`` looks in a row find it
    nowhere near, it searches the whole frame. A hand over the hub can hide it or fool one
    look, so a move counts only when two looks in a row agree on it, and a look that finds
    no hub changes nothing; nor does one that finds a round more than ``resize`` larger or
    smaller than the hub (dev seed 131: with hands over the hub, a double in a train and the
    tiles crossing it were taken twice for a hub two thirds the size, and the game was lost).
    """

    def __init__(self, calibration: Calibration, every_s: float = 2.0, tolerance: float = 0.15,
                 turn_deg: float = 6.0, lost_after: int = 10, settings: HubSettings | None = None,
                 resize: float = 0.2) -> None:
        self.calibration = calibration
        self.every_s = every_s
        self.tolerance = tolerance
        self.resize = resize
        self.turn_deg = turn_deg
        self.lost_after = lost_after
        self.settings = settings
        self._next = -math.inf
        self._suspect: Calibration | None = None
        self._misses = 0

    def _turn(self, seen: Calibration) -> float:
        """How far the slots turned (degrees; slots repeat every 360/N, so at most half of that)."""
        step = 360 / len(seen.slot_angles)
        d = (seen.slot_angles[0] - self.calibration.slot_angles[0]) % step
        return min(d, step - d)

    def _moved(self, seen: Calibration) -> bool:
        cal = self.calibration
        if math.dist(seen.centre, cal.centre) > self.tolerance * cal.radius:
            return True
        # turned in place: a small turn is a knock; half a slot's turn is a misfit, not a move
        return self.turn_deg < self._turn(seen) < 360 / len(seen.slot_angles) / 3

    def check(self, frame: Frame, tiles: Sequence[DetectedTile] = (), in_place: bool = False) -> Calibration | None:
        """The new calibration when the hub has moved; None while it has not (or this frame is not checked).

        ``in_place``: the tiles on the table are still seen where they lay, so the camera has not
        moved, whatever a look at the hub (half hidden by a hand, say) suggests.
        """
        if frame.timestamp < self._next:
            return None
        if in_place:
            self._suspect = None
        self._next = frame.timestamp + self.every_s
        slots = len(self.calibration.slot_angles)
        try:
            if self._misses < self.lost_after:
                seen = find_hub(frame.image, self.settings, slots, near=self.calibration, tiles=tiles)
            else:
                seen = find_hub(frame.image, self.settings, slots, tiles=tiles)
        except CalibrationError:
            self._misses += 1
            return None
        if abs(seen.radius / self.calibration.radius - 1) > self.resize:
            return None  # not the hub: a knock moves it, but hardly changes its size
        self._misses = 0
        if in_place or not self._moved(seen):
            self._suspect = None
            return None
        if self._suspect is None or math.dist(self._suspect.centre, seen.centre) > self.tolerance * seen.radius:
            self._suspect = seen
            self._next = frame.timestamp  # look again at the next frame
            return None
        self._suspect = None
        old = self.calibration
        moved = match_slots(seen, {old.slot_angles[s - 1]: name for s, name in old.trains.items()})
        self.calibration = moved
        return moved
