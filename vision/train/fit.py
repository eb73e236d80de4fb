"""Training loops and ONNX export for both networks (torch, CPU, a fixed number of steps)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np
import torch
from torch.nn import functional as F

from vision.corners import MOVE_SCALE, PATCH_H, PATCH_W
from vision.geometry import HALF_PATCH, NUM_VALUES, READER_CHANNELS
from vision.train.augment import IN_FOCUS, SMEAR, Defocus, Smear
from vision.train.cache import SceneSample
from vision.train.detector_data import decode_frames, detector_batch
from vision.train.nets import CornerRefiner, PipReader, TileDetector
from vision.train.reader_data import reader_batch
from vision.train.refiner_data import refiner_batch

NetT = TypeVar("NetT", bound=torch.nn.Module)

Log = Callable[[str], None]


def focal_loss(logits: torch.Tensor, heat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss, normalised by the number of tile centres."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 1.0).float()
    m = mask[:, None]
    pos_loss = -torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = -torch.log(1 - p) * p**2 * (1 - heat) ** 4 * (1 - pos) * m
    return (pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1.0)


def detector_loss(out: torch.Tensor, heat, reg, regw, mask) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    hm = focal_loss(out[:, :2], heat, mask)
    w = regw[:, None]
    l1 = F.smooth_l1_loss(out[:, 2:], reg, reduction="none", beta=0.1)
    rl = (l1 * w).sum() / w.sum().clamp(min=1.0)
    return hm + rl, hm, rl


class _Batches(torch.utils.data.IterableDataset):
    """`steps` batches from make(rng), drawn from one seeded generator: the same batches in the same order
    whether they are made here or in a worker process."""

    def __init__(self, make: Callable[[np.random.Generator], tuple[np.ndarray, ...]], steps: int, seed: int) -> None:
        super().__init__()
        self.make, self.steps, self.seed = make, steps, seed

    def __iter__(self) -> Iterator[tuple[torch.Tensor, ...]]:
        rng = np.random.default_rng(self.seed)
        for _ in range(self.steps):
            yield tuple(torch.from_numpy(a) for a in self.make(rng))


def batches(make: Callable[[np.random.Generator], tuple[np.ndarray, ...]], steps: int, seed: int,
            workers: int) -> Iterator[tuple[torch.Tensor, ...]]:
    """Batches made by one worker process while the network trains on the last one.

    Making a batch (zoom, warp, camera look, targets) costs about half a training step here, so
    overlapping it with the step is the cheapest speed-up on a 2-core machine. workers=0 makes them inline.
    OpenCV's thread pool is shut while the worker is forked and running: a forked child that touches the
    parent's pool waits forever for threads it does not have.
    """
    data = _Batches(make, steps, seed)
    if not workers:
        yield from data
        return
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        yield from torch.utils.data.DataLoader(data, batch_size=None, num_workers=1, prefetch_factor=4)
    finally:
        cv2.setNumThreads(threads)


@contextmanager
def _flush_denormals() -> Iterator[None]:
    """Denormal numbers slow training on a CPU badly. The setting holds for the whole thread, so it is
    undone afterwards (hypothesis, for one, cannot draw floats while it holds)."""
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


# The pip reader's step is mostly small batch norms and ReLUs over 256 half patches, which torch.compile (it needs a
# C compiler) fuses: its steps ran in 0.19 s instead of 0.28 here, for well under a minute of compiling. Short runs,
# such as the test's single step, are not worth that minute. The detector is left as it is: compiled, its steps
# were no faster once its batch-making process shared the two cores with them.
COMPILE_FROM_STEPS = 500


def _for_training(net: torch.nn.Module, steps: int) -> torch.nn.Module:
    """The module to call while training: `net` compiled for a long run, `net` itself for a short one. Both share
    `net`'s weights, and `net` is what gets exported."""
    return torch.compile(net) if steps >= COMPILE_FROM_STEPS else net


def bf16_fast() -> bool:
    """Whether this CPU multiplies in bfloat16 natively (AVX512-BF16 or AMX): there the detector's step ran 1.8
    times faster under bf16 autocast (0.070 s against 0.128 for its convolutions); elsewhere bf16 is emulated."""
    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def _autocast(bf16: bool):
    """Mixed precision for the forward pass: activations in bfloat16, weights and their updates in float32, and
    the losses computed in float32 from the outputs."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)


def _schedule(opt: torch.optim.Optimizer, step: int, steps: int, lr: float, warmup: int = 200) -> None:
    f = min(1.0, (step + 1) / warmup) * 0.5 * (1 + np.cos(np.pi * min(step / steps, 1.0)))
    for g in opt.param_groups:
        g["lr"] = lr * max(f, 0.02)


def load_detector(path: Path) -> TileDetector:
    """A TileDetector holding the weights of an exported one (``export_detector``), for fine-tuning."""
    return _load_exported(TileDetector(), path, torch.zeros(1, 3, 64, 64))


def load_reader(path: Path) -> PipReader:
    """A PipReader holding the weights of an exported one (``export_reader``), for fine-tuning."""
    return _load_exported(PipReader(), path, torch.zeros(2, READER_CHANNELS, HALF_PATCH, HALF_PATCH))


def _load_exported(net: NetT, path: Path, probe: torch.Tensor) -> NetT:
    """``net`` given the weights of its exported ONNX graph.

    The export folds each batch norm into the convolution before it, so the norms come back as plain shifts
    (scale 1, the folded bias, zero mean, unit variance): they must stay frozen while it trains, or batch
    statistics would replace the ones folded in. Convolutions, then linear layers (Gemm), are matched in the
    order they run.
    """
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    modules = dict(net.named_modules())
    ran: list[str] = []
    hooks = [m.register_forward_hook(lambda *_, name=name: ran.append(name))
             for name, m in modules.items() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    with torch.no_grad():
        net.eval()(probe)
    for h in hooks:
        h.remove()
    for kind, op in ((torch.nn.Conv2d, "Conv"), (torch.nn.Linear, "Gemm")):
        nodes = [node for node in graph.node if node.op_type == op]
        names = [name for name in ran if isinstance(modules[name], kind)]
        if len(nodes) != len(names):
            raise ValueError(f"{path} holds {len(nodes)} {op} nodes, the {type(net).__name__} {len(names)}")
        for node, name in zip(nodes, names, strict=True):
            layer, w, b = modules[name], weights[node.input[1]], weights[node.input[2]]
            if tuple(layer.weight.shape) != w.shape:
                raise ValueError(f"{path}: {name} has weights {w.shape}, the {type(net).__name__} "
                                 f"{tuple(layer.weight.shape)}")
            with torch.no_grad():
                layer.weight.copy_(torch.tensor(w))
                if layer.bias is not None:
                    layer.bias.copy_(torch.tensor(b))
                    continue
                parent, index = name.rsplit(".", 1)
                norm = modules[f"{parent}.{int(index) + 1}"]
                norm.weight.fill_(1.0)
                norm.bias.copy_(torch.tensor(b))
                norm.running_mean.zero_()
                norm.running_var.fill_(1.0 - norm.eps)
    return net


def _train_mode(net: torch.nn.Module, frozen_norms: bool) -> None:
    net.train()
    if frozen_norms:
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.eval()


def train_detector(samples: list[SceneSample], steps: int, batch: int = 12, size: int = 256, lr: float | None = None,
                   seed: int = 0, workers: int = 1, log: Log = print, start: Path | None = None,
                   bf16: bool = False) -> TileDetector:
    """A detector trained ``steps`` steps: afresh, or fine-tuned from the exported detector at ``start``, which
    takes a tenth of the peak learning rate (``lr`` None) and a shorter warm-up. ``bf16``: mixed precision."""
    torch.manual_seed(seed)
    fresh = start is None
    lr = lr if lr is not None else 3e-3 if fresh else 3e-4
    warmup = 200 if fresh else 100
    net = TileDetector() if fresh else load_detector(start)
    net = net.to(memory_format=torch.channels_last)  # ~30% faster convolutions on CPU
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    _train_mode(net, frozen_norms=not fresh)
    t0 = time.perf_counter()
    avg = None
    with _flush_denormals():
        frames = decode_frames(samples)
        data = batches(lambda rng: detector_batch(frames, rng, batch, size), steps, seed, workers)
        for step, (x, heat, reg, regw, mask) in enumerate(data):
            _schedule(opt, step, steps, lr, warmup)
            with _autocast(bf16):
                out = net(x.contiguous(memory_format=torch.channels_last))
            loss, hm, rl = detector_loss(out.float(), heat, reg, regw, mask)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            cur = np.array([loss.item(), hm.item(), rl.item()])
            avg = cur if avg is None else 0.98 * avg + 0.02 * cur
            if step % 200 == 0 or step == steps - 1:
                log(f"  detector step {step}/{steps}  loss {avg[0]:.3f} (heat {avg[1]:.3f}, geometry {avg[2]:.3f})"
                    f"  {time.perf_counter() - t0:.0f}s")
    return net.to(memory_format=torch.contiguous_format).eval()


def _fit(run: Callable[[torch.Tensor], torch.Tensor], opt: torch.optim.Optimizer,
         make: Callable[[np.random.Generator], tuple[np.ndarray, ...]],
         score: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, list[float]]], steps: int, seed: int,
         workers: int, lr: float, bf16: bool, log: Log, report: Callable[[int, np.ndarray], str]) -> None:
    """The loop the reader and the refiner share: ``steps`` batches from ``make``, each scored in float32 by
    ``score`` (the loss, and figures to watch); the loss and those figures, averaged as they go, are logged every
    200 steps through ``report``."""
    t0 = time.perf_counter()
    avg = None
    with _flush_denormals():
        for step, (x, target) in enumerate(batches(make, steps, seed, workers)):
            _schedule(opt, step, steps, lr)
            with _autocast(bf16):
                out = run(x)
            loss, figures = score(out.float(), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            cur = np.array([loss.item(), *figures])
            avg = cur if avg is None else 0.98 * avg + 0.02 * cur
            if step % 200 == 0 or step == steps - 1:
                log(f"  {report(step, avg)}  {time.perf_counter() - t0:.0f}s")


def train_reader(context: np.ndarray, values: np.ndarray, steps: int, batch: int = 128, lr: float | None = None,
                 seed: int = 0, workers: int = 1, log: Log = print, bf16: bool = False,
                 start: Path | None = None, smear: Smear = SMEAR, defocus: Defocus = IN_FOCUS) -> PipReader:
    """A reader trained ``steps`` steps: afresh, or fine-tuned from the exported reader at ``start`` (its batch
    norms frozen), which takes a tenth of the peak learning rate (``lr`` None). ``smear``, ``defocus``: its looks'
    camera shake and lens."""
    torch.manual_seed(seed)
    fresh = start is None
    lr = lr if lr is not None else 3e-3 if fresh else 3e-4
    net = PipReader() if fresh else load_reader(start)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=5e-4)
    _train_mode(net, frozen_norms=not fresh)
    make = lambda rng: reader_batch(context, values, rng, batch, smear=smear, defocus=defocus)  # noqa: E731

    def score(logits: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, list[float]]:
        loss = F.cross_entropy(logits, target, label_smoothing=0.05)
        return loss, [(logits.argmax(1) == target).float().mean().item()]

    _fit(_for_training(net, steps), opt, make, score, steps, seed, workers, lr, bf16, log,
         lambda step, avg: f"reader step {step}/{steps}  loss {avg[0]:.3f}  train acc {avg[1]:.3f}")
    return net.eval()


def train_refiner(wide: np.ndarray, steps: int, batch: int = 128, lr: float = 2e-3, seed: int = 0, workers: int = 1,
                  log: Log = print, bf16: bool = False) -> CornerRefiner:
    """A corner refiner trained afresh ``steps`` steps on the wide patches of readable tiles."""
    torch.manual_seed(seed)
    net = CornerRefiner()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    net.train()
    make = lambda rng: refiner_batch(wide, rng, batch)  # noqa: E731

    def score(moves: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, list[float]]:
        # and the mean corner error in patch pixels, after the moves and before them
        loss = F.smooth_l1_loss(moves, target, beta=0.1)
        return loss, [(moves - target).abs().mean().item() * MOVE_SCALE, target.abs().mean().item() * MOVE_SCALE]

    _fit(_for_training(net, steps), opt, make, score, steps, seed, workers, lr, bf16, log,
         lambda step, avg: f"refiner step {step}/{steps}  loss {avg[0]:.4f}  corners off {avg[1]:.2f} px"
                           f" (the boxes' {avg[2]:.2f})")
    return net.eval()


def export_detector(net: TileDetector, path: Path) -> None:
    x = torch.zeros(1, 3, 384, 512)
    torch.onnx.export(net, x, str(path), input_names=["image"], output_names=["maps"], opset_version=17,
                      dynamic_axes={"image": {0: "n", 2: "h", 3: "w"}, "maps": {0: "n", 2: "gh", 3: "gw"}},
                      dynamo=False)


def export_reader(net: PipReader, path: Path) -> None:
    x = torch.zeros(8, READER_CHANNELS, HALF_PATCH, HALF_PATCH)
    torch.onnx.export(net, x, str(path), input_names=["halves"], output_names=["logits"], opset_version=17,
                      dynamic_axes={"halves": {0: "n"}, "logits": {0: "n"}}, dynamo=False)
    assert net.classify[-1].out_features == NUM_VALUES


def export_refiner(net: CornerRefiner, path: Path) -> None:
    x = torch.zeros(4, READER_CHANNELS, PATCH_H, PATCH_W)
    torch.onnx.export(net, x, str(path), input_names=["patches"], output_names=["moves"], opset_version=17,
                      dynamic_axes={"patches": {0: "n"}, "moves": {0: "n"}}, dynamo=False)
