"""Writing scenes and games to disk: images plus JSON truth, in a layout a training script can glob.

Scenes: ``scene-SEED.jpg`` (or .png) with ``scene-SEED.json`` (:meth:`Scene.truth_json`).

Games: ``frames/NNNNNN.jpg``, ``truth.jsonl`` (one :class:`FrameTruth` per line, in frame
order), ``table-log.json`` (what really happened; ``domino-hub rules check`` accepts it),
``inputs.json`` (the players' button and phone inputs with their frame numbers) and
``game.json`` (seed, players, rules, frame rate and timing, the hub's slots, the camera).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import cv2
import numpy as np

from .game import SyntheticGame
from .scenes import render_scene

FORMATS = ("jpg", "png")


def _encode(image: np.ndarray, fmt: str, quality: int) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"image format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    params = [cv2.IMWRITE_JPEG_QUALITY, quality] if fmt == "jpg" else [cv2.IMWRITE_PNG_COMPRESSION, 3]
    ok, buf = cv2.imencode("." + fmt, image, params)
    if not ok:  # pragma: no cover - OpenCV encodes any uint8 BGR image
        raise RuntimeError(f"could not encode a {fmt} image")
    return buf.tobytes()


def write_scenes(out: Path, seeds: Iterable[int], width: int, height: int, fmt: str = "jpg", quality: int = 92,
                 progress: Callable[[int], None] | None = None, **options: object) -> int:
    """Render one scene per seed into ``out``; returns how many were written."""
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for seed in seeds:
        scene = render_scene(seed, width, height, **options)
        (out / f"scene-{seed:06d}.{fmt}").write_bytes(_encode(scene.image, fmt, quality))
        (out / f"scene-{seed:06d}.json").write_text(json.dumps(scene.truth_json()), encoding="utf-8")
        n += 1
        if progress is not None:
            progress(n)
    return n


def write_game(out: Path, game: SyntheticGame, fmt: str = "jpg", quality: int = 92, limit: int | None = None,
               progress: Callable[[int], None] | None = None) -> int:
    """Film ``game`` into ``out``; returns how many frames were written (all, or the first ``limit``)."""
    frames = out / "frames"
    frames.mkdir(parents=True, exist_ok=True)
    (out / "table-log.json").write_text(json.dumps(game.table_log(), indent=1), encoding="utf-8")
    (out / "inputs.json").write_text(json.dumps([i.to_json() for i in game.inputs], indent=1), encoding="utf-8")
    (out / "game.json").write_text(json.dumps(game.meta(), indent=1), encoding="utf-8")
    count = game.frame_count if limit is None else min(limit, game.frame_count)
    with (out / "truth.jsonl").open("w", encoding="utf-8") as truth:
        for i in range(count):
            image, t = game.render(i)
            (frames / f"{i:06d}.{fmt}").write_bytes(_encode(image, fmt, quality))
            truth.write(json.dumps(t.to_json()) + "\n")
            if progress is not None:
                progress(i + 1)
    return count
