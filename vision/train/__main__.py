"""``python -m vision.train``: render, train the three models, export ONNX, measure, write the model card.

Everything is seeded: the renderer by scene seed, the augmentation and the weights by --seed.
"""

from __future__ import annotations

import os

# Threads that sleep instead of spinning while they wait: on a 2-core machine shared with other
# jobs, spinning OpenMP threads made training steps about four times slower. Set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import platform
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

from vision.corners import REFINER_FILE
from vision.detector import DETECTOR_FILE
from vision.eval_run import eval_oblique, eval_real_dev, eval_synthetic
from vision.onnx_session import MODELS_DIR
from vision.pips import READER_FILE
from vision.synthetic_sets import OBLIQUE_EVAL_TILT, OBLIQUE_TRAIN_SEED0, TRAIN_SEED_LIMIT
from vision.train.augment import IN_FOCUS, SMEAR, Defocus, Smear
from vision.train.cache import load_or_render
from vision.train.card import write_card
from vision.train.fit import (
    bf16_fast,
    export_detector,
    export_reader,
    export_refiner,
    train_detector,
    train_reader,
    train_refiner,
)

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.train", description=__doc__)
    p.add_argument("--scenes", type=int, default=2000, help="training scenes (seeds 0..N-1)")
    p.add_argument("--oblique-scenes", type=int, default=0, metavar="N",
                   help=f"more training scenes seen {OBLIQUE_EVAL_TILT[0]:g}-{OBLIQUE_EVAL_TILT[1]:g} degrees from "
                        f"straight down, as the real photos are (seeds "
                        f"{OBLIQUE_TRAIN_SEED0}..{OBLIQUE_TRAIN_SEED0}+N-1; default 0)")
    p.add_argument("--det-steps", type=int, default=24000)
    p.add_argument("--detector-from", type=Path, metavar="ONNX",
                   help="fine-tune this exported detector (its batch norms frozen) instead of training one afresh")
    p.add_argument("--det-lr", type=float, help="the detector's peak learning rate (3e-3 afresh, 3e-4 fine-tuning)")
    p.add_argument("--reader-steps", type=int, default=5000)
    p.add_argument("--reader-from", type=Path, metavar="ONNX",
                   help="fine-tune this exported pip reader (its batch norms frozen) instead of training one afresh")
    p.add_argument("--reader-smear-share", type=float, default=SMEAR.share, metavar="SHARE",
                   help=f"share of the reader's looks smeared by a shaken camera (default {SMEAR.share})")
    p.add_argument("--reader-smear-px", type=float, default=SMEAR.px[1], metavar="PX",
                   help=f"the reader's longest smear, in the image's own pixels (default {SMEAR.px[1]:g})")
    p.add_argument("--reader-defocus-share", type=float, default=IN_FOCUS.share, metavar="SHARE",
                   help=f"share of the reader's looks blurred again as by a lens out of focus (Gaussian sigma "
                        f"{IN_FOCUS.sigma[0]} px to --reader-defocus-px; default {IN_FOCUS.share}, none)")
    p.add_argument("--reader-defocus-px", type=float, default=IN_FOCUS.sigma[1], metavar="PX",
                   help=f"the reader's widest defocus, Gaussian sigma in the image's own pixels "
                        f"(default {IN_FOCUS.sigma[1]:g})")
    p.add_argument("--refiner-steps", type=int, default=4000, help="the corner refiner's steps (default 4000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", type=Path, default=ROOT / "var" / "train-cache")
    p.add_argument("--out", type=Path, default=MODELS_DIR)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--precision", choices=("auto", "bf16", "fp32"), default="auto",
                   help="bf16: mixed precision (activations in bfloat16); auto takes it where the CPU has native bf16")
    p.add_argument("--skip-eval", action="store_true", help="do not measure or write the model card")
    alone = p.add_mutually_exclusive_group()
    alone.add_argument("--reader-only", action="store_true",
                       help="train the pip reader alone, keeping the other models already in --out")
    alone.add_argument("--detector-only", action="store_true",
                       help="train the tile detector alone, keeping the other models already in --out")
    alone.add_argument("--refiner-only", action="store_true",
                       help="train the corner refiner alone, keeping the other models already in --out")
    args = p.parse_args(argv)
    if not 0 < args.scenes <= OBLIQUE_TRAIN_SEED0:
        p.error(f"--scenes must lie in 1..{OBLIQUE_TRAIN_SEED0}: seeds from there on are --oblique-scenes'")
    if not 0 <= args.oblique_scenes <= TRAIN_SEED_LIMIT - OBLIQUE_TRAIN_SEED0:
        p.error(f"--oblique-scenes must lie in 0..{TRAIN_SEED_LIMIT - OBLIQUE_TRAIN_SEED0}: seeds from "
                f"{TRAIN_SEED_LIMIT} on are held out for evaluation")
    if not 0.0 <= args.reader_smear_share <= 1.0:
        p.error(f"--reader-smear-share must lie in 0..1, got {args.reader_smear_share}")
    if not 0.0 <= args.reader_defocus_share <= 1.0:
        p.error(f"--reader-defocus-share must lie in 0..1, got {args.reader_defocus_share}")
    if args.reader_smear_px < SMEAR.px[0]:
        p.error(f"--reader-smear-px must be at least {SMEAR.px[0]:g}, got {args.reader_smear_px}")
    reader_smear = Smear(args.reader_smear_share, (SMEAR.px[0], args.reader_smear_px))
    if args.reader_defocus_px < IN_FOCUS.sigma[0]:
        p.error(f"--reader-defocus-px must be at least {IN_FOCUS.sigma[0]:g}, got {args.reader_defocus_px}")
    reader_defocus = Defocus(args.reader_defocus_share, (IN_FOCUS.sigma[0], args.reader_defocus_px))
    for flag, start in (("--detector-from", args.detector_from), ("--reader-from", args.reader_from)):
        if start is not None and not start.is_file():
            p.error(f"{flag}: {start} does not exist")
    trains = {DETECTOR_FILE: not (args.reader_only or args.refiner_only),
              READER_FILE: not (args.detector_only or args.refiner_only),
              REFINER_FILE: not (args.detector_only or args.reader_only)}
    for flag, on in (("--reader-only", args.reader_only), ("--detector-only", args.detector_only),
                     ("--refiner-only", args.refiner_only)):
        for kept in (name for name, trained in trains.items() if on and not trained):
            if not (args.out / kept).is_file():
                p.error(f"{flag} keeps {kept} in --out, and {args.out / kept} does not exist")
    torch.set_num_threads(args.threads)
    bf16 = args.precision == "bf16" or (args.precision == "auto" and bf16_fast())
    args.out.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:7.0f}s] {msg}", flush=True)

    t0 = time.perf_counter()
    started = datetime.now(UTC)
    load_at_start = os.getloadavg()[0]
    log(f"precision: {'bf16 mixed' if bf16 else 'fp32'}")
    more = f" and {args.oblique_scenes} oblique ones" if args.oblique_scenes else ""
    log(f"rendering {args.scenes} training scenes{more} into {args.cache}")
    oblique = range(OBLIQUE_TRAIN_SEED0, OBLIQUE_TRAIN_SEED0 + args.oblique_scenes)
    samples = [s for seeds in (range(args.scenes), oblique)
               for s in load_or_render(args.cache, seeds, workers=args.threads, log=log)]
    t_render = time.perf_counter() - t0
    n_patches = sum(len(s.values) for s in samples)
    n_tiles = sum(len(s.corners) for s in samples)
    log(f"{len(samples)} scenes, {n_tiles} tiles, {n_patches} readable tile patches")

    t1 = time.perf_counter()
    workers = 1 if args.threads > 1 else 0  # a batch-making process beside torch pays off only with a core to spare
    if trains[DETECTOR_FILE]:
        # the batch-making process keeps one core busy: a second torch thread beside it only waited for it (under
        # bf16, steps of 0.17-0.21 s on two threads against 0.13-0.15 s on one, 2026-12-03)
        torch.set_num_threads(max(1, args.threads - workers))
        det = train_detector(samples, args.det_steps, lr=args.det_lr, seed=args.seed, workers=workers, log=log,
                             start=args.detector_from, bf16=bf16)
        export_detector(det, args.out / DETECTOR_FILE)
        torch.set_num_threads(args.threads)
    t_det = time.perf_counter() - t1
    t2 = time.perf_counter()
    if trains[READER_FILE]:  # the patches are joined only here: 2 GB for 6,000 scenes
        context = np.concatenate([s.context for s in samples])
        values = np.concatenate([s.values for s in samples])
        rd = train_reader(context, values, args.reader_steps, seed=args.seed, workers=workers, log=log, bf16=bf16,
                          start=args.reader_from, smear=reader_smear, defocus=reader_defocus)
        export_reader(rd, args.out / READER_FILE)
    t_reader = time.perf_counter() - t2
    t3 = time.perf_counter()
    if trains[REFINER_FILE]:
        wide = np.concatenate([s.wide for s in samples])
        rf = train_refiner(wide, args.refiner_steps, seed=args.seed, workers=workers, log=log, bf16=bf16)
        export_refiner(rf, args.out / REFINER_FILE)
        del wide
    t_refiner = time.perf_counter() - t3
    t_train = time.perf_counter() - t0
    load_at_end = os.getloadavg()[0]
    log(f"trained in {t_train / 60:.1f} min (render {t_render / 60:.1f}, detector {t_det / 60:.1f},"
        f" reader {t_reader / 60:.1f}, refiner {t_refiner / 60:.1f})")
    if args.skip_eval:
        return 0

    from vision.reader import OnnxTileReader

    reader = OnnxTileReader(models_dir=args.out, threads=args.threads, max_value=18, view_search=True,
                            mirrored=True)
    results = [eval_synthetic(reader, None, log=log), eval_oblique(reader, None, log=log)]
    try:
        results.append(eval_real_dev(reader, None))
    except FileNotFoundError as e:
        log(f"real-dev not scored: {e}")
    from hub.commands.bench_vision import bench_frame, measure

    image, bench_tiles = bench_frame()
    bench_ms, _, _ = measure(OnnxTileReader(models_dir=args.out, threads=args.threads, sticky=True), image, 30)
    log(f"bench: {bench_ms}")
    command = "python -m vision.train " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    write_card(
        args.out / "README.md",
        command=command.strip(),
        started=started,
        machine=f"{platform.machine()} {platform.processor() or ''}".strip() + f", {args.threads} torch threads",
        scenes=args.scenes,
        oblique_scenes=args.oblique_scenes,
        tiles=n_tiles,
        patches=n_patches,
        steps=(args.det_steps, args.reader_steps, args.refiner_steps),
        seed=args.seed,
        minutes={"render": t_render / 60, "detector": t_det / 60, "reader": t_reader / 60, "refiner": t_refiner / 60,
                 "total": t_train / 60},
        results=results,
        models_dir=args.out,
        bench=(bench_tiles, args.threads, bench_ms),
        load=(load_at_start, load_at_end),
        reader_smear=reader_smear,
        reader_defocus=reader_defocus,
        detector_kept=not trains[DETECTOR_FILE],
        reader_kept=not trains[READER_FILE],
        refiner_kept=not trains[REFINER_FILE],
        detector_from=args.detector_from,
        reader_from=args.reader_from,
        bf16=bf16,
    )
    log(f"wrote {args.out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
