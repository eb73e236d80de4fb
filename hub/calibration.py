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
    candidates: int = 8  # round outlines looked at closely
    min_rim: float = 0.6  # share of the rim that must show an edge
    min_slot_fit: float = 0.3  # how clearly the band inside the rim must show the slots


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
    the slots from the gaps between them, which a plain 8-fold pattern cannot.
    """
    period = 2 * math.pi / slots
    angles = np.linspace(0, 2 * math.pi, 360, endpoint=False)
    radii = radius * np.linspace(0.62, 0.95, 10)
    polar = _polar(lab, centre, radii, angles).reshape(-1, 3)  # (radii * angles, 3)
    r = np.repeat(radii, len(angles))
    theta = np.tile(angles, len(radii))
    best = (0.0, 0.0)
    for half in (0.15, 0.2, 0.25):
        for phase in np.linspace(0, period, 45, endpoint=False):
            off = (theta - phase + period / 2) % period - period / 2
            inside = np.abs(r * np.sin(off)) < half * radius
            if inside.all() or not inside.any():
                continue
            body = polar[~inside]
            body_mean = body.mean(axis=0)
            body_spread = math.sqrt(float(np.mean(np.sum((body - body_mean) ** 2, axis=1))))
            slot = ((theta - phase + period / 2) // period).astype(int) % slots
            count = np.bincount(slot[inside], minlength=slots).astype(np.float64)
            if (count == 0).any():
                continue
            sums = np.stack([np.bincount(slot[inside], polar[inside, c], slots) for c in range(3)], axis=1)
            contrast = np.linalg.norm(sums / count[:, None] - body_mean, axis=1)
            score = float(np.median(contrast)) / (body_spread + 3.0)
            if score > best[0]:
                best = (score, float(phase))
    return best


def _rim(lab: np.ndarray, centre: np.ndarray, radius: float, rays: int = 180) -> np.ndarray:
    """Points of the edge nearest ``radius`` along each ray, for refitting the circle."""
    h, w = lab.shape[:2]
    angles = np.linspace(0, 2 * math.pi, rays, endpoint=False)
    radii = np.arange(radius * 0.85, radius * 1.15, 0.5)
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


def _round_edges(lab: np.ndarray, centres: np.ndarray, r_min: float, r_max: float,
                 rays: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate centre: the radius at which the most rays cross an edge that runs round
    that centre (its colour changes along the ray), and the share of rays that do.

    Counting rays, not edge pixels, makes long straight edges (trains, the table's edge) weigh
    little: only a closed round outline, like the hub's rim, is crossed by nearly every ray.
    """
    import cv2

    gx = cv2.Sobel(lab.astype(np.float32), cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lab.astype(np.float32), cv2.CV_32F, 0, 1, ksize=3)
    jxx, jyy, jxy = (gx * gx).sum(2), (gy * gy).sum(2), (gx * gy).sum(2)
    magnitude = np.sqrt(0.5 * (jxx + jyy + np.sqrt((jxx - jyy) ** 2 + 4 * jxy ** 2)))
    normal = 0.5 * np.arctan2(2 * jxy, jxx - jyy)  # the direction of strongest change (mod pi)
    strong = magnitude > max(40.0, float(np.percentile(magnitude, 80)))
    h, w = strong.shape
    angles = np.linspace(0, 2 * math.pi, rays, endpoint=False)
    radii = np.arange(r_min, r_max, 1.0)
    xs = centres[:, 0, None, None] + np.cos(angles)[None, :, None] * radii[None, None, :]
    ys = centres[:, 1, None, None] + np.sin(angles)[None, :, None] * radii[None, None, :]
    xi = np.clip(np.round(xs).astype(np.int32), 0, w - 1)
    yi = np.clip(np.round(ys).astype(np.int32), 0, h - 1)
    radial = np.abs(np.cos(normal[yi, xi] - angles[None, :, None])) > 0.85
    hit = strong[yi, xi] & radial & (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    near = hit.copy()
    for k in (1, 2):  # a rim within 2 px of the radius counts: a tilted camera sees an ellipse
        near[:, :, k:] |= hit[:, :, :-k]
        near[:, :, :-k] |= hit[:, :, k:]
    share = near.mean(axis=1)  # (centres, radii)
    best = np.argmax(share, axis=1)
    return radii[best], share[np.arange(len(centres)), best]


def _centre_candidates(lab: np.ndarray, r_min: float, r_max: float, keep: int) -> list[tuple[np.ndarray, float]]:
    """The ``keep`` most complete round outlines in the (small) image, as (centre, radius)."""
    h, w = lab.shape[:2]
    step = max(2.0, r_min / 3)
    gx, gy = np.meshgrid(np.arange(step / 2, w, step), np.arange(step / 2, h, step))
    centres = np.stack([gx.ravel(), gy.ravel()], axis=1)
    radii, shares = np.empty(len(centres)), np.empty(len(centres))
    for i in range(0, len(centres), 256):
        radii[i:i + 256], shares[i:i + 256] = _round_edges(lab, centres[i:i + 256], r_min, r_max)
    out: list[tuple[np.ndarray, float]] = []
    for i in np.argsort(-shares):
        if shares[i] < 0.3 or len(out) >= keep:
            break
        if all(math.dist(c, centres[i]) > max(r, radii[i]) * 0.5 for c, r in out):
            out.append((centres[i], float(radii[i])))
    return out


def find_hub(image: np.ndarray, settings: HubSettings | None = None, slots: int = SLOTS,
             near: Calibration | None = None) -> Calibration:
    """The hub in one frame, with no clicks: a round outline with ``slots`` slots inside its rim.

    Candidate centres are those most rays from which cross a round edge (the hub's rim and
    wall); each is refitted to its rim, and the hub is the one whose band inside the rim is
    best explained by ``slots`` parallel-sided slots (empty, or holding a tile). Slot 1 is
    the slot nearest straight up in the image, then clockwise. ``near`` (the last known
    hub) limits the search to its surroundings, which is much quicker. Raises
    CalibrationError when no such hub is in view.
    """
    import cv2

    s = settings or HubSettings()
    h, w = image.shape[:2]
    scale = s.work_px / max(h, w)
    small = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0.8), cv2.COLOR_BGR2LAB)
    short = min(small.shape[:2])
    r_min, r_max = short * s.min_radius, short * s.max_radius
    if near is not None:
        c = np.asarray(near.centre) * scale
        r = near.radius * scale
        grid = np.stack(np.meshgrid(np.arange(-0.5, 0.51, 0.1), np.arange(-0.5, 0.51, 0.1)), -1).reshape(-1, 2)
        radii, shares = _round_edges(lab, c + grid * r, r * 0.7, r * 1.4)
        order = np.argsort(-shares)[:3]
        candidates = [((c + grid * r)[i], float(radii[i])) for i in order if shares[i] >= 0.3]
    else:
        small_lab = cv2.resize(lab, (lab.shape[1] // 2, lab.shape[0] // 2), interpolation=cv2.INTER_AREA)
        candidates = [(c * 2, r * 2) for c, r in _centre_candidates(small_lab, r_min / 2, r_max / 2, s.candidates)]
    best: tuple[float, np.ndarray, float, float] | None = None
    for centre, r in candidates:
        points = _rim(lab, centre, r)
        if len(points) < 12:
            continue
        fitted, radius = _fit_circle(points)
        if not r_min <= radius <= r_max or math.dist(fitted, centre) > 0.5 * r:
            continue
        _, (share,) = _round_edges(lab, fitted[None], radius * 0.9, radius * 1.1)
        fit, phase = _slot_fit(lab, fitted, radius, slots)
        if fit >= s.min_slot_fit and share >= s.min_rim and (best is None or fit * share > best[0]):
            best = (fit * share, fitted, radius, phase)
    if best is None:
        raise CalibrationError(f"no hub with {slots} slots in view: is it covered, or out of the picture?")
    _, centre, radius, phase = best
    degrees = sorted(math.degrees(phase + 2 * math.pi * k / slots) % 360 for k in range(slots))
    first = min(range(slots), key=lambda k: abs((degrees[k] + 90 + 180) % 360 - 180))
    ordered = tuple(_signed(degrees[(first + k) % slots]) for k in range(slots))
    return Calibration((centre[0] / scale, centre[1] / scale), radius / scale, ordered)


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

    A hand over the hub can hide it or fool one look, so a move counts only when two
    looks in a row agree on it; a look that finds nothing is ignored.
    """

    def __init__(self, calibration: Calibration, every_s: float = 2.0, tolerance: float = 0.15,
                 turn_deg: float = 6.0, settings: HubSettings | None = None) -> None:
        self.calibration = calibration
        self.every_s = every_s
        self.tolerance = tolerance
        self.turn_deg = turn_deg
        self.settings = settings
        self._next = -math.inf
        self._suspect: Calibration | None = None

    def _moved(self, seen: Calibration) -> bool:
        cal = self.calibration
        shift = math.dist(seen.centre, cal.centre)
        return shift > self.tolerance * cal.radius or self._turn(seen) > self.turn_deg

    def _turn(self, seen: Calibration) -> float:
        """How far the slots turned (degrees; slots repeat every 360/N, so at most half of that)."""
        step = 360 / len(seen.slot_angles)
        d = (seen.slot_angles[0] - self.calibration.slot_angles[0]) % step
        return min(d, step - d)

    def check(self, frame: Frame) -> Calibration | None:
        """The new calibration when the hub has moved; None while it has not (or this frame is not checked)."""
        if frame.timestamp < self._next:
            return None
        self._next = frame.timestamp + self.every_s
        try:
            seen = find_hub(frame.image, self.settings, len(self.calibration.slot_angles))
        except CalibrationError:
            return None
        if not self._moved(seen):
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
