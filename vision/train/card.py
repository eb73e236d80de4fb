"""Writes models/README.md, the model card, from what a training run actually did and measured."""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

from vision.corners import MARGIN_X as REFINER_MARGIN_X
from vision.corners import MARGIN_Y as REFINER_MARGIN_Y
from vision.corners import MOVE_SCALE, PASSES, PATCH_H, PATCH_W
from vision.detector import (
    COVERED,
    END_BAR,
    LINK_BAR,
    MAX_SIDE_LIMIT,
    MIRRORED_THRESHOLD,
    SCALE_LOW,
    SCALE_TARGET,
    SNAP,
    SURE,
    THRESHOLD,
)
from vision.eval_run import SetResult, confusion_markdown, metrics_table
from vision.geometry import DET_MAX_SIDE, DET_STRIDE, HALF_PATCH, NUM_VALUES
from vision.pips import MARGIN_X, MARGIN_Y
from vision.sizes import LEAST, MEASURE, NEIGHBOURS
from vision.sizes import SCALE as SIZE_SCALE
from vision.synthetic_sets import (
    EVAL_SEED0,
    FRAME_SIZES,
    OBLIQUE_EVAL_TILT,
    OBLIQUE_SHARE,
    OBLIQUE_TRAIN_SEED0,
    TILE_SHARE,
    TRAIN_SEED_LIMIT,
    VISIBLE_REQUIRED,
)
from vision.train.augment import IN_FOCUS, SMEAR, Defocus, Smear
from vision.train.detector_data import ZOOM
from vision.train.reader_data import BAD_OUTLINE
from vision.train.refiner_data import BADLY_DRAWN, REFINER_DEFOCUS, REFINER_SMEAR
from vision.trains import SIZE as LINK_SIZE
from vision.trains import TURN as LINK_TURN

# The accuracy targets, per evaluation set: metric -> least acceptable value.
TARGETS: dict[str, dict[str, float]] = {
    "synthetic held-out": {"tile_recall": 0.995, "tile_precision": 0.995, "half_accuracy": 0.995,
                           "exact_tile_accuracy": 0.99},
    "real-dev photos": {"tile_recall": 0.95, "half_accuracy": 0.95},
}


def targets_markdown(results: list[SetResult]) -> str:
    """One line per target: the measured figure, and MET or MISSED by how much."""
    lines = []
    for r in results:
        measured = r.tally.metrics()
        for metric, least in TARGETS.get(r.name, {}).items():
            value = measured.get(metric)
            if value is None:
                lines.append(f"- {r.name}, {metric.replace('_', ' ')}: not measured (target {least})")
                continue
            verdict = "met" if value >= least else f"**MISSED by {least - value:.3f}**"
            lines.append(f"- {r.name}, {metric.replace('_', ' ')}: {value:.3f} against a target of {least}: {verdict}")
    return "\n".join(lines)


def write_card(path: Path, *, command: str, started: datetime, machine: str, scenes: int, tiles: int, patches: int,
               oblique_scenes: int, steps: tuple[int, int, int], seed: int, minutes: dict[str, float],
               results: list[SetResult],
               models_dir: Path, bench: tuple[int, int, dict[str, float]], load: tuple[float, float],
               detector_kept: bool = False, reader_kept: bool = False, refiner_kept: bool = False,
               detector_from: Path | None = None, reader_from: Path | None = None, bf16: bool = False,
               reader_smear: Smear = SMEAR, reader_defocus: Defocus = IN_FOCUS) -> None:
    """``load`` is the machine's 1-minute load average when training started and when it ended: the
    wall times and the bench below are only comparable between runs on an equally quiet machine.
    ``detector_kept``, ``reader_kept``, ``refiner_kept``: this run kept that model from an earlier run
    (``--reader-only``, ``--detector-only`` or ``--refiner-only`` train one model alone). ``detector_from``: the
    exported detector that this run fine-tuned (``--detector-from``), ``reader_from`` likewise the reader
    (``--reader-from``).
    ``oblique_scenes``: training scenes seen from the oblique set's angle (``--oblique-scenes``), beside ``scenes``.
    ``bf16``: the run trained in mixed precision. ``reader_smear``, ``reader_defocus``: the camera shake and
    lens of the reader's looks."""
    sizes = {f.name: f.stat().st_size / 1e6 for f in sorted(models_dir.glob("*.onnx"))}
    frames = ", ".join(f"{w}x{h}" for w, h in FRAME_SIZES)
    defocus_text = (f"; then {reader_defocus.share:.0%} of the reader's looks blurred again, a lens out of focus "
                    f"(Gaussian sigma {reader_defocus.sigma[0]}-{reader_defocus.sigma[1]} px)"
                    if reader_defocus.share > 0 else "")
    last = OBLIQUE_TRAIN_SEED0 + oblique_scenes - 1
    oblique_text = (f"\n  Also renderer seeds {OBLIQUE_TRAIN_SEED0}..{last}, each seen "
                    f"{OBLIQUE_EVAL_TILT[0]:g}-{OBLIQUE_EVAL_TILT[1]:g} degrees from straight down as the oblique set "
                    f"is (`training_scene_options`)." if oblique_scenes else "")
    detector_time = "not trained (kept)" if detector_kept else f"{minutes['detector']:.1f} min"
    reader_time = "not trained (kept)" if reader_kept else f"{minutes['reader']:.1f} min"
    refiner_time = "not trained (kept)" if refiner_kept else f"{minutes['refiner']:.1f} min"
    kept = [name for name, k in (("tile detector", detector_kept), ("pip reader", reader_kept),
                                 ("corner refiner", refiner_kept)) if k]
    precision = "bf16 mixed precision (activations in bfloat16)" if bf16 else "float32"
    text = f"""# Models: tile detector, corner refiner and pip reader

Written by `{command}` on {started:%Y-%m-%d %H:%M} UTC ({machine}). The models are trained
only on scenes from the renderer (`vision/synth`); the real photos are never seen in training.
""" + (f"""
This run kept the {" and the ".join(kept)} from an earlier run, and their lines in the recipe below describe
that run.
""" if kept else "") + (f"""
The tile detector was fine-tuned from `{detector_from}` (`--detector-from`): its weights were loaded back
from that ONNX file, each batch norm folded into its convolution as exported and kept frozen, and
trained the {steps[0]} detector steps below from there.
""" if detector_from is not None else "") + (f"""
The pip reader was fine-tuned from `{reader_from}` (`--reader-from`) the same way, and trained the
{steps[1]} reader steps below from there.
""" if reader_from is not None else "") + """
| file | size |
|---|---|
""" + "".join(f"| `{name}` | {mb:.2f} MB |\n" for name, mb in sizes.items()) + f"""
## tile_detector.onnx

- **Input** `image`: float32 (1, 3, H, W), the BGR frame resized so its longest side is {DET_MAX_SIDE}
  px (area averaging), scaled as (pixel/255 - 0.5)/0.25 and zero-padded right and bottom to a
  multiple of 32 (see `vision/detector.py: detector_input`). When the sure tiles found are shorter
  than {SCALE_LOW:.0f} px there, the frame is looked at again with its longest side up to {MAX_SIDE_LIMIT} px,
  so they come out about {SCALE_TARGET:.0f} px long, or at a whole fraction of the frame's own size within
  {SNAP:.0%} of that while they stay at least {SCALE_LOW:.0f} px long, for a still camera only (`whole_fraction`:
  a resize by a whole factor takes a twentieth of the time); the hub's still camera keeps that size from
  frame to frame (`side_for`, `sticky`).
- **Output** `maps`: float32 (1, 8, H/{DET_STRIDE}, W/{DET_STRIDE}). Channels 0-1: face-up and face-down
  tile-centre heatmap logits; 2-3: the centre's offset within the cell (cells); 4-5: the long axis as
  (cos 2a, sin 2a); 6-7: log length and log width in input pixels. Decoding (`decode`) keeps 3x3
  local maxima above {THRESHOLD}, drops a peak whose centre falls in the middle 60% of a stronger tile, and
  drops one lying {COVERED:.0%} or more on stronger tiles (a ghost over the joint of two tiles laid end
  to end, which would read as a double).
  For a still photo the frame is also run mirrored left to right; the two looks' maps are averaged
  cell by cell, and the bar is then {MIRRORED_THRESHOLD} (`mirrored`). Those two looks also keep a
  peak down to {LINK_BAR} that continues a train: laid end to end with a face-up tile scored at least {SURE}, or
  with one kept so, its size within {LINK_SIZE:.0%} and its axis turned at most {math.degrees(LINK_TURN):.0f}
  degrees (`vision/trains.py`).
  The hub's camera is looked at once, but where it says a train's next tile would lie (`Tracker.open_ends`), a
  face-up peak counts from {END_BAR} (`END_BAR`, `at_ends`): a blank double there scores under {THRESHOLD}
  (eval-hub seed 6015), a double laid crosswise on gingham 0.17-0.30 (seed 7033 at 2028x1520). The hub's tracker
  takes such a tile only once it has lain there 2 s, as a box the size of a whole tile, and inside the hub's rim
  only from 0.3: an empty slot scores up to 0.25 (seed 7037, on stripes; `hub/tracker.py`). Peaks under the bar
  are decoded only round those places (`decode`'s `near`): decoding them all cost the hub a fifth of its frames.
- **Architecture**: CenterNet-style; a stride-32 encoder of plain and depthwise-separable convolutions
  (dilated at the bottom) and a light stride-4 decoder with lateral connections (`vision/train/nets.py`).

## corner_refiner.onnx

- **Input** `patches`: float32 (N, 2, {PATCH_H}, {PATCH_W}). Each tile the reader will read is rectified from
  the full-resolution frame through the detector's quad, which lands on the middle {HALF_PATCH}x{2 * HALF_PATCH},
  with {REFINER_MARGIN_X} px of the frame across and {REFINER_MARGIN_Y} along round it; the reader's two channels,
  the face colour taken over the box (`vision/corners.py`).
- **Output** `moves`: float32 (N, 8): each corner's move in the patch (x, y; pixels / {MOVE_SCALE:g}). The moved
  corners are looked at again, {PASSES} passes in all; each later look and the reader's patch are taken from the
  first patch. The reader reads the moved quad; the tile keeps the detector's corners.

## pip_reader.onnx

- **Input** `halves`: float32 (2N, 2, {HALF_PATCH}, {HALF_PATCH}). Each tile is rectified from the full-resolution
  frame into a {HALF_PATCH}x{2 * HALF_PATCH} upright patch (halves[0] on top; large tiles are first shrunk by area
  averaging). The tile's box fills its middle {HALF_PATCH - 2 * MARGIN_X}x{2 * HALF_PATCH - 2 * MARGIN_Y}, with a margin
  of the frame round it, so a box drawn short still shows the pips it cut off. The patch is split
  into two squares, the lower turned 180 degrees so the divider is always at the bottom.
  Channels: darkness relative to the tile's face colour (70th percentile per channel, over the box), and
  colour distance from it, both divided by the face's brightness (`vision/pips.py`). Neither
  channel carries which colour a pip is.
- **Output** `logits`: float32 (2N, {NUM_VALUES}): pip values 0..{NUM_VALUES - 1}; softmax gives the probabilities. The
  reader keeps 0..max_value of the set and renormalises.
- **After reading**: a tile read as a double is dropped when each of its halves lies on a half of another tile
  that reads the same value, or one half does and that tile is as sure and lies along it: a box over the joint of
  two tiles that match where they meet (`vision/ghosts.py`). Then a tile is dropped when its size (the square root of
  its box's length times its width) is over {SIZE_SCALE:g} times, or under 1/{SIZE_SCALE:g} of, the median size
  of the {NEIGHBOURS} sure tiles (scored at least {MEASURE}) nearest it, with {LEAST} at least to measure it by: a table
  holds one set, so every tile is the same size (`vision/sizes.py`).

## Data recipe

- Training scenes: renderer seeds 0..{scenes - 1} (held-out evaluation seeds start at {EVAL_SEED0}; training
  refuses seeds at or above {TRAIN_SEED_LIMIT}). Frame size drawn per seed from {frames}; tile length
  {TILE_SHARE[0]:.1%}-{TILE_SHARE[1]:.0%} of the frame's longest side; camera tilt up to 45 degrees in
  {OBLIQUE_SHARE:.0%} of scenes (else the renderer's 20); everything else (kind of scene,
  set, colours, camera tilt and lens, light, occluders, blur, noise, JPEG) as the renderer randomises it
  by seed. A tile at least {VISIBLE_REQUIRED:.0%} visible and not held in a hand must be found and read.{oblique_text}
  {scenes + oblique_scenes} scenes, {tiles} tiles, {patches} readable tile patches.
- Detector: frames cached at longest side 768 (JPEG 93); random 256x256 crops at zoom {ZOOM[0]}-{ZOOM[1]}x
  relative to the run-time scale, any rotation, mirror; the loss ignores tiles held in a hand or under
  60% visible, and tiles the crop cuts to under 70%.
- Reader: per fully visible face-up tile, a context patch with a margin; at each step its corners are
  jittered (shift, turn, scale, each corner on its own: an imperfect detector and an oblique camera;
  {BAD_OUTLINE:.0%} of them about three times as far along the tile, as boxes on oblique views are drawn),
  mirrored, turned end for end.
- Refiner: per fully visible face-up tile, a wide patch with a margin twice the reader's; at each step it is seen
  through a box drawn as the detector might (moved, turned, stretched, each corner on its own; {BADLY_DRAWN:.0%} of them
  about three times as far along the tile), mirrored, turned end for end; the target is the true outline seen from
  that box. Its looks smear {REFINER_SMEAR.share:.0%} by {REFINER_SMEAR.px[0]}-{REFINER_SMEAR.px[1]:g} px and blur
  {REFINER_DEFOCUS.share:.0%} again as a lens out of focus.
- All: colour channels permuted, white balance, brightness, gamma, uneven light, blur, a camera shake
  ({SMEAR.share:.0%} of the detector's looks smeared {SMEAR.px[0]}-{SMEAR.px[1]:g} px in a random direction,
  {reader_smear.share:.0%} of the reader's {reader_smear.px[0]}-{reader_smear.px[1]:g} px), noise, JPEG
  (`vision/train/augment.py`){defocus_text}.
- Optimiser: AdamW, cosine schedule, {steps[0]} detector steps (batch 12), {steps[1]} reader steps
  (batch 128 tiles), {steps[2]} refiner steps (batch 128 tiles, smooth L1 loss), torch seed {seed}, {precision}.
  With more than one thread, one worker process makes the next batches while torch trains on the last (the
  detector then on one torch thread).

## Training time

Wall time on this run (load average {load[0]:.1f} when training started, {load[1]:.1f} when it ended):
render or load the cached scenes {minutes['render']:.1f} min, detector {detector_time},
reader {reader_time}, corner refiner {refiner_time},
**total {minutes['total']:.1f} min**. Re-running reuses the render cache in `var/train-cache/`.

Retrain with exactly: `.venv/bin/pip install -e '.[train]' && .venv/bin/{command}`

## Measured accuracy

Measured right after training by the code behind `domino-hub eval vision`
(`vision/evaluate.py` documents the matching rules). Each frame is looked at as it is and in
stretched views that undo an oblique camera's foreshortening, each view also mirrored; the surest is
kept, with the tiles that only other views found surely (`vision/view.py`, `vision/detector.py`), less the doubles
read over a joint (`vision/ghosts.py`) and the boxes of another size than the tiles round them (`vision/sizes.py`);
the hub's camera, above the table, looks at each frame only as it is, once.

{metrics_table(results)}

Against the issue's targets:

{targets_markdown(results)}

""" + "\n".join(f"- {r.name}: {r.detail}" for r in results) + "\n"
    for r in results:
        text += f"\n### Half values, {r.name} (true rows, read columns)\n\n{confusion_markdown(r.tally.confusion)}\n"
    tiles_b, threads_b, ms = bench
    text += f"""
## Speed

`domino-hub bench vision` frame (2028x1520, {tiles_b} tiles), onnxruntime on {threads_b} threads, median of 30,
measured at the end of training on the same machine (a busy moment inflates it):
detect {ms['detect']:.1f} ms, read {ms['read']:.1f} ms, **total {ms['total']:.1f} ms**.
"""
    text += """
## Limits

- Trained on rendered scenes only. The real-dev photos are oblique phone shots of one set on one
  table; the project's camera looks straight down. Treat real-dev figures as a sanity check.
- Speed: `domino-hub bench vision` (2028x1520 frame, 40 tiles, onnxruntime on 2 threads).
"""
    path.write_text(text)
