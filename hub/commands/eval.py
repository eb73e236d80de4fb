"""``domino-hub eval TOPIC``: accuracy against truth. Each topic is its own function below."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _vision_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("eval-gallery/vision"),
                   help="where the report, confusion matrices and failure gallery go (git-ignored)")
    p.add_argument("--models", type=Path, default=None, help="folder holding the ONNX models")
    p.add_argument("--min-tiles", type=int, default=2000, help="held-out synthetic tiles to score, at least")
    p.add_argument("--min-oblique-tiles", type=int, default=600,
                   help="oblique synthetic tiles (cameras 45-55 degrees from straight down) to score; 0 skips them")
    p.add_argument("--real-dev", type=Path, default=None, help="labelled real photos (default ../shared/real-dev)")
    p.add_argument("--skip-real", action="store_true", help="score the synthetic set only")
    p.add_argument("--real-dev-resampled", action="store_true",
                   help="also score the real photos shrunk to 0.95-0.6 of their size, pooled: a steadier figure for "
                        "comparing models than the one look at 34 tiles")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--straight", action="store_true",
                   help="look at each frame only as it is (the hub's way), not also from the angles it may be taken at "
                        "and mirrored")


def _vision(args: argparse.Namespace) -> int:
    """Tile recall, precision and pip accuracy: held-out synthetic scenes, oblique ones and the real photos."""
    import platform
    from datetime import date

    from vision.eval_run import (
        eval_oblique,
        eval_real_dev,
        eval_real_dev_resampled,
        eval_synthetic,
        metrics_table,
        write_report,
    )
    from vision.onnx_session import MODELS_DIR, ModelMissingError
    from vision.reader import OnnxTileReader
    from vision.realdev import DEFAULT_DIR

    try:
        reader = OnnxTileReader(models_dir=args.models or MODELS_DIR, threads=args.threads, max_value=18,
                                view_search=not args.straight, mirrored=not args.straight)
    except ModelMissingError as e:
        print(f"domino-hub eval vision: {e}", file=sys.stderr)
        return 2
    gallery = args.out / "gallery"
    gallery.mkdir(parents=True, exist_ok=True)
    for old in gallery.glob("*.jpg"):
        old.unlink()
    log = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    results = [eval_synthetic(reader, gallery, min_tiles=args.min_tiles, log=log)]
    if args.min_oblique_tiles > 0:
        results.append(eval_oblique(reader, gallery, args.min_oblique_tiles, log=log))
    real_root = args.real_dev or DEFAULT_DIR
    if not args.skip_real:
        if (real_root / "labels.json").is_file():
            results.append(eval_real_dev(reader, gallery, real_root))
            if args.real_dev_resampled:
                results.append(eval_real_dev_resampled(reader, results[-1], real_root))
        else:
            print(f"domino-hub eval vision: no real-dev set at {real_root}; scoring synthetic only", file=sys.stderr)
    header = (f"Models in `{args.models or MODELS_DIR}`, onnxruntime on {args.threads} threads, "
              f"{platform.machine()} ({platform.processor() or 'cpu'}), {date.today().isoformat()}; "
              + ("each frame looked at only as it is." if args.straight else
                 "each frame looked at from the views in `vision/view.py`, each also mirrored, the surest kept with "
                 "the tiles only other views found surely."))
    path = write_report(args.out, results, header)
    print(metrics_table(results))
    print(f"\nreport: {path}\nfailure gallery: {gallery}")
    return 0


def _hub_arguments(p: argparse.ArgumentParser) -> None:
    from hub.commands.eval_hub import add_arguments

    add_arguments(p)


def _hub(args: argparse.Namespace) -> int:
    """The hub end to end: 20 filmed synthetic games through the models, against their truth."""
    from hub.commands.eval_hub import run

    return run(args)


# topic -> (add arguments, run)
TOPICS = {
    "vision": (_vision_arguments, _vision),
    "hub": (_hub_arguments, _hub),
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser("eval", help="accuracy against truth")
    esub = ev.add_subparsers(dest="topic", required=True, metavar="TOPIC")
    for topic, (arguments, run) in TOPICS.items():
        p = esub.add_parser(topic, help=(run.__doc__ or f"evaluate {topic}").strip().splitlines()[0])
        arguments(p)
        p.set_defaults(func=run)
