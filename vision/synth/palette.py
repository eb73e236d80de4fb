"""Domino sets as they are sold: body colours, pip colour schemes, dividers and spinner pins.

Pip colour must never tell a model the value, so schemes mix real sets (each number its own
colour, in several makers' orders), shuffled and random colours, single-colour sets (black
pips among them) and pale pips (yellow, light grey, light green) that vanish in grayscale.
Every pip colour keeps a minimum colour distance from the body, as printed sets do.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .pips import MAX_VALUE, TEN_INNER, TEN_RING

BGR = tuple[int, int, int]


def _bgr(hex_rgb: str) -> BGR:
    v = int(hex_rgb.lstrip("#"), 16)
    return (v & 255, (v >> 8) & 255, v >> 16)


# value -> colour, 1..18; common printed orders (approximate), RGB hex for readability
_SCHEMES: dict[str, tuple[str, ...]] = {
    "classic-12": (
        "#2b8fd6", "#1f8a3c", "#d0262b", "#7a4a22", "#1f3f9e", "#e8b51c",  # 1-6
        "#7b3aa6", "#0f5e3a", "#1b3f8f", "#c8332d", "#1e6fbf", "#6b6b6b",  # 7-12
        "#c23b8a", "#2aa39a", "#8c6d1f", "#3d3d9c", "#b5651d", "#4e8c2b",  # 13-18
    ),
    "warm-12": (
        "#8a7f2c", "#6e1f2b", "#8e2233", "#4a2a1c", "#2e7a3a", "#e39a1e",
        "#3a6a2e", "#2a55a8", "#4b3a8e", "#167a78", "#c83228", "#e2502a",
        "#a0306a", "#2f8f6a", "#9b7b20", "#34349a", "#c06a2a", "#5a8f2a",
    ),
    "bright-12": (
        "#e5332a", "#f28c1e", "#f3c91c", "#3aa935", "#2f7fd8", "#7c3fb5",
        "#e0458e", "#1aa6a6", "#8fbf26", "#9a5b2e", "#3b3b3b", "#d6262f",
        "#2b4fa0", "#e07a1f", "#46a049", "#8a2ea0", "#16869a", "#b03060",
    ),
    "pale-12": (  # the pale colours grayscale hides, mixed with darker ones
        "#e9df5c", "#b9bcc0", "#a8d89a", "#f2b8c6", "#9fd3e8", "#f3d27a",
        "#c9b8e6", "#d7e27a", "#f0c09a", "#b3e0c8", "#d9d9a0", "#e8a0a0",
        "#c0c8f0", "#e6e07a", "#a6e3b0", "#f0b0e0", "#bfbfbf", "#f4e27a",
    ),
}
_PALE = ("#efe46a", "#f2e98a", "#c4c7cb", "#b7bbbf", "#aee0a0", "#bde8b0", "#f3e6a0")
_SOLID = ("#151515", "#1c1c1c", "#0d2a6b", "#7a1515", "#124a22", "#2a2a2a")
_BODIES_WHITE = ("#f7f6f2", "#f4f1e6", "#f1ebd8", "#ede4cc", "#f6f0dc", "#e9e1c9", "#fbfaf7")
_BODIES_COLOURED = (  # coloured sets, usually with white or gold pips
    ("#1d1d1f", "#f2f2f2"), ("#0f2d63", "#f5f5f5"), ("#6d1020", "#f4f0e0"), ("#1f5d34", "#f5f1e0"),
    ("#3a1f5e", "#f0e6c8"), ("#c4a02a", "#1a1a1a"), ("#b3261e", "#ffffff"), ("#2a7ab0", "#ffffff"),
)
_DIVIDERS = ("#111111", "#1a1a1a", "#262626", "#3a3a3a")
_BRASS = ("#b8943a", "#c9a64a", "#a88432", "#d4b15a", "#9a9a9a")


def _lab(c: BGR) -> np.ndarray:
    px = np.uint8([[c]])
    return cv2.cvtColor(px, cv2.COLOR_BGR2LAB)[0, 0].astype(np.float32) * np.float32([100 / 255, 1, 1]) - np.float32(
        [0, 128, 128]
    )


def colour_distance(a: BGR, b: BGR) -> float:
    """CIE76 distance in Lab: about 2.3 is a just-noticeable difference."""
    return float(np.linalg.norm(_lab(a) - _lab(b)))


MIN_PIP_CONTRAST = 22.0  # Lab distance between every pip colour and its body


@dataclass(frozen=True)
class TileStyle:
    """One domino set's look. ``key`` identifies it for sprite caches."""

    key: str
    scheme: str  # name of the pip colour scheme, for reports
    max_value: int
    body: BGR
    pips: tuple[BGR, ...]  # index = value (entry 0 unused)
    divider: BGR
    divider_kind: str  # "bar" | "groove" | "none"
    spinner: BGR | None  # brass pin in the middle of the divider
    corner_radius: float  # fraction of the tile's width
    bevel: float  # fraction of the width over which the edge rounds off
    gloss: float  # 0..1: strength of highlights on the bevel and pips
    aspect: float  # length / width
    thickness: float  # height / width
    back: str  # face-down look: "plain" | "line" | "dot"
    grain: float  # 0..1: faint mottling of the body (bone, ivory, resin)
    pip_scale: float  # pip size relative to the usual
    ten: str  # how its 10 places the middle line's two pips (vision.synth.pips.TEN_LAYOUTS)


PIP_FAMILIES = ("printed", "random", "dark", "pale", "coloured-body")
"""Kinds of colouring: real makers' per-number colours, random per-number colours, one dark
colour (black pips among them), pale colours that grayscale hides, and coloured bodies."""


def sample_style(rng: np.random.Generator, max_value: int = 12, family: str | None = None) -> TileStyle:
    """A random set of double-``max_value`` tiles, of the given pip colour ``family`` or any."""
    if not 0 < max_value <= MAX_VALUE:
        raise ValueError(f"sets run up to double-{MAX_VALUE}, not double-{max_value}")
    if family is not None and family not in PIP_FAMILIES:
        raise ValueError(f"pips must be one of {', '.join(PIP_FAMILIES)}, not {family!r}")
    coloured = family == "coloured-body" or (family is None and rng.random() < 0.08)
    if coloured:
        body_hex, pip_hex = _BODIES_COLOURED[int(rng.integers(len(_BODIES_COLOURED)))]
        body = _bgr(body_hex)
        pips = [_bgr(pip_hex)] * (MAX_VALUE + 1)
        scheme = "coloured-body"
    else:
        body = _jitter(_bgr(_BODIES_WHITE[int(rng.integers(len(_BODIES_WHITE)))]), rng, 4)
        pips, scheme = _pip_scheme(rng, family)
    pips = [_ensure_contrast(p, body) for p in pips]
    divider_kind = str(rng.choice(["bar", "bar", "bar", "groove", "none"], p=[0.5, 0.2, 0.1, 0.15, 0.05]))
    if coloured:
        divider = pips[1]
    else:
        dark = _bgr(_DIVIDERS[int(rng.integers(len(_DIVIDERS)))])
        divider = dark if rng.random() < 0.85 else pips[int(rng.integers(1, 13))]
    spinner = _bgr(_BRASS[int(rng.integers(len(_BRASS)))]) if rng.random() < 0.4 else None
    key = int(rng.integers(1 << 62))
    return TileStyle(
        key=f"style-{key}",
        scheme=scheme,
        max_value=max_value,
        body=body,
        pips=tuple(pips),
        divider=divider,
        divider_kind=divider_kind,
        spinner=spinner,
        corner_radius=float(rng.uniform(0.08, 0.2)),
        bevel=float(rng.uniform(0.05, 0.12)),
        gloss=float(rng.uniform(0.2, 1.0)),
        aspect=float(rng.uniform(1.92, 2.06)),
        thickness=float(rng.uniform(0.3, 0.42)),
        back=str(rng.choice(["plain", "plain", "line", "dot"])),
        grain=float(rng.uniform(0.0, 1.0)),
        pip_scale=float(rng.uniform(0.9, 1.1)),
        # one set in four prints its 10 the other way; taken from the key, so every other draw stays as it was
        ten=TEN_INNER if key % 4 == 0 else TEN_RING,
    )


_FAMILY_DRAW = {"printed": 0.2, "random": 0.55, "dark": 0.7, "pale": 0.8}  # a draw of r inside that family


def _pip_scheme(rng: np.random.Generator, family: str | None = None) -> tuple[list[BGR], str]:
    r = rng.random() if family is None else _FAMILY_DRAW[family]
    names = list(_SCHEMES)
    if r < 0.45:
        name = names[int(rng.integers(len(names)))]
        cols = [_bgr(h) for h in _SCHEMES[name]]
        if rng.random() < 0.35:  # same colours, another maker's order
            rng.shuffle(cols)
            name += "-shuffled"
        cols = [_jitter(c, rng, 10) for c in cols]
        return [cols[0], *cols], name
    if r < 0.65:  # every number its own random colour
        return [_random_colour(rng) for _ in range(MAX_VALUE + 1)], "random"
    if r < 0.78:
        c = _bgr(_SOLID[int(rng.integers(len(_SOLID)))])
        return [_jitter(c, rng, 6)] * (MAX_VALUE + 1), "solid-dark"
    if r < 0.9:  # a set with pale pips throughout, or pale numbers mixed in
        pale = [_jitter(_bgr(_PALE[int(rng.integers(len(_PALE)))]), rng, 8) for _ in range(MAX_VALUE + 1)]
        if rng.random() < 0.5:
            return pale, "pale"
        mixed = [_random_colour(rng) for _ in range(MAX_VALUE + 1)]
        for v in rng.choice(np.arange(1, MAX_VALUE + 1), size=6, replace=False):
            mixed[int(v)] = pale[int(v)]
        return mixed, "pale-mixed"
    c = _random_colour(rng)
    return [c] * (MAX_VALUE + 1), "solid-random"


def _random_colour(rng: np.random.Generator) -> BGR:
    hsv = np.uint8([[[rng.integers(0, 180), rng.integers(60, 256), rng.integers(40, 235)]]])
    b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)


def _jitter(c: BGR, rng: np.random.Generator, amount: int) -> BGR:
    j = rng.integers(-amount, amount + 1, size=3)
    return tuple(int(np.clip(v + d, 0, 255)) for v, d in zip(c, j, strict=True))  # type: ignore[return-value]


def _ensure_contrast(pip: BGR, body: BGR) -> BGR:
    """Darken (or on a dark body, lighten) a pip colour until it stands apart from the body."""
    c = np.array(pip, np.float32)
    target = np.zeros(3, np.float32) if sum(body) > 300 else np.full(3, 255, np.float32)
    for _ in range(12):
        if colour_distance(tuple(int(v) for v in c), body) >= MIN_PIP_CONTRAST:  # type: ignore[arg-type]
            break
        c = c * 0.88 + target * 0.12
    return tuple(int(v) for v in c)  # type: ignore[return-value]
