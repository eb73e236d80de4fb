"""The contact sheet in docs/images: 24 varied scenes, then 8 frames of one filmed game."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from .game import SyntheticGame
from .scenes import render_scene

THUMB = (288, 216)
COLUMNS = 6


def _label(img: np.ndarray, text: str) -> np.ndarray:
    out = img.copy()
    cv2.rectangle(out, (0, 0), (out.shape[1], 16), (0, 0, 0), -1)
    cv2.putText(out, text, (4, 12), cv2.FONT_HERSHEY_SIMPLEX, 0.38, (235, 235, 235), 1, cv2.LINE_AA)
    return out


def _thumb(img: np.ndarray, size: tuple[int, int] = THUMB) -> np.ndarray:
    return cv2.resize(img, size, interpolation=cv2.INTER_AREA)


def scene_grid(seed: int = 0, count: int = 24) -> np.ndarray:
    tiles = []
    for i in range(count):
        s = render_scene(seed + i, 1280, 960)
        st = s.style
        text = f"{seed + i}: {s.kind}, {st['surface']}, d{st['set']} {st['scheme']}, {len(s.tiles)} tiles"
        tiles.append(_label(_thumb(s.image), text))
    rows = [np.concatenate(tiles[r:r + COLUMNS], axis=1) for r in range(0, count, COLUMNS)]
    return np.concatenate(rows, axis=0)


def game_strip(seed: int = 5, count: int = 8) -> np.ndarray:
    """Frames spread over one game, each at a moment where something happens."""
    game = SyntheticGame(seed, players=4, width=1280, height=960)
    n = game.frame_count
    wanted = [0.0, 0.03, 0.2, 0.45, 0.62, 0.8, 0.97, 1.0][:count]
    picks = []
    for f in wanted:
        i = min(n - 1, int(f * (n - 1)))
        # move to a nearby frame with a hand in it (except at the start and the count at the end)
        if 0 < f < 0.97:
            for j in range(i, min(n, i + 40)):
                if game.layout_at(j).props and any(p.kind == "hand" for p in game.layout_at(j).props):
                    i = j
                    break
        picks.append(i)
    w = COLUMNS * THUMB[0] // count
    size = (w, w * 3 // 4)
    frames = []
    for i in picks:
        image, truth = game.render(i)
        frames.append(_label(_thumb(image, size), f"frame {i} t={truth.time:.1f}s {truth.event}"))
    return np.concatenate(frames, axis=1)


def contact_sheet(path: Path, seed: int = 0) -> int:
    """Write the sheet as PNG; returns its size in bytes."""
    grid = scene_grid(seed)
    strip = game_strip()
    if strip.shape[1] != grid.shape[1]:
        strip = cv2.resize(strip, (grid.shape[1], strip.shape[0] * grid.shape[1] // strip.shape[1]),
                           interpolation=cv2.INTER_AREA)
    gap = np.full((6, grid.shape[1], 3), 255, np.uint8)
    sheet = np.concatenate([grid, gap, strip], axis=0)
    ok, buf = cv2.imencode(".png", sheet, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    if not ok:  # pragma: no cover
        raise RuntimeError("could not encode the contact sheet")
    path.write_bytes(buf.tobytes())
    return len(buf)
