"""Synthetic scenes rendered per second on one core, and game frames per second."""

from __future__ import annotations

import argparse
import json
import os
import platform
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=60, help="scenes to time (after a warm-up)")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=960)
    p.add_argument("--seed", type=int, default=1000, help="first scene seed")
    p.add_argument("--frames", type=int, default=40, help="game frames to time")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    import cv2
    import numpy as np

    cv2.setNumThreads(1)
    from vision.synth import render_scene
    from vision.synth.game import SyntheticGame
    from vision.synth.surfaces import KINDS, VARIANTS, texture

    t0 = time.perf_counter()
    for kind in KINDS:  # textures are made once per process; time them apart from the scenes
        for v in range(VARIANTS):
            texture(kind, v)
    textures_s = time.perf_counter() - t0
    for s in range(3):
        render_scene(args.seed - 10 + s, args.width, args.height)
    per_scene = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for s in range(args.seed, args.seed + args.n):
        t = time.perf_counter()
        render_scene(s, args.width, args.height)
        per_scene.append(time.perf_counter() - t)
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    game = SyntheticGame(args.seed, width=args.width, height=args.height)
    step = max(1, game.frame_count // max(1, args.frames))
    picks = list(range(0, game.frame_count, step))[: args.frames]
    g0 = time.process_time()
    for i in picks:
        game.render(i)
    game_cpu = time.process_time() - g0
    ms = np.array(per_scene) * 1000
    report = {
        "frame": [args.width, args.height],
        "scenes": args.n,
        "scenes_per_s_wall": round(args.n / wall, 2),
        "scenes_per_s_cpu": round(args.n / cpu, 2),
        "ms_p50": round(float(np.percentile(ms, 50)), 1),
        "ms_p95": round(float(np.percentile(ms, 95)), 1),
        "game_frames_per_s_cpu": round(len(picks) / game_cpu, 2),
        "textures_s": round(textures_s, 2),
        "opencv_threads": cv2.getNumThreads(),
        "opencv": cv2.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"synthetic scenes at {args.width}x{args.height}, one OpenCV thread, one process "
          f"(Python {report['python']}, OpenCV {report['opencv']}, {report['machine']}, "
          f"load average {report['load_avg_1m']} while measuring)")
    print(f"  {report['scenes_per_s_wall']:6.2f} scenes/s wall clock   {report['scenes_per_s_cpu']:6.2f} scenes/s "
          f"of CPU time   ({args.n} scenes, seeds {args.seed}..{args.seed + args.n - 1}; "
          f"p50 {report['ms_p50']} ms, p95 {report['ms_p95']} ms)")
    print(f"  {report['game_frames_per_s_cpu']:6.2f} game frames/s of CPU time ({len(picks)} frames of one game)")
    print(f"  surface textures made once per process: {report['textures_s']} s (not in the figures above)")
    print("  target: at least 10 scenes/s on one core")
    return 0
