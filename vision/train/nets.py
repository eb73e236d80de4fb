"""The three networks, in torch. Small on purpose: each must run on a Pi within a frame's time budget."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from vision.corners import PATCH_H, PATCH_W
from vision.geometry import DET_STRIDE, HALF_PATCH, NUM_VALUES, READER_CHANNELS


def conv_bn(cin: int, cout: int, stride: int = 1, k: int = 3, dilation: int = 1, groups: int = 1) -> nn.Sequential:
    pad = dilation * (k // 2)
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, pad, dilation=dilation, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class SepBlock(nn.Module):
    """Depthwise 3x3 + pointwise 1x1 with a residual: a wide receptive field for little arithmetic."""

    def __init__(self, ch: int, dilation: int = 1) -> None:
        super().__init__()
        self.dw = conv_bn(ch, ch, k=3, dilation=dilation, groups=ch)
        self.pw = nn.Sequential(nn.Conv2d(ch, ch, 1, bias=False), nn.BatchNorm2d(ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.pw(self.dw(x)))


class TileDetector(nn.Module):
    """CenterNet-style tile finder: a small encoder to stride 32 and a light decoder back to stride 4.

    Output channels at stride 4: 0-1 face-up / face-down centre heatmap logits, 2-3 sub-cell centre
    offset, 4-5 the long axis as (cos 2a, sin 2a) (a tile looks the same turned 180 degrees), 6-7 log
    length and log width in input pixels.
    """

    OUT = 8

    def __init__(self) -> None:
        super().__init__()
        self.s2 = conv_bn(3, 16, 2)
        self.s4 = nn.Sequential(conv_bn(16, 32, 2), SepBlock(32))
        self.s8 = nn.Sequential(conv_bn(32, 48, 2), SepBlock(48))
        self.s16 = nn.Sequential(conv_bn(48, 64, 2), SepBlock(64), SepBlock(64, 2))
        self.s32 = nn.Sequential(conv_bn(64, 96, 2), SepBlock(96), SepBlock(96, 2), SepBlock(96, 4))
        self.lat16 = nn.Conv2d(64, 96, 1)
        self.up16 = nn.Sequential(conv_bn(96, 64, k=1), SepBlock(64))
        self.lat8 = nn.Conv2d(48, 64, 1)
        self.up8 = nn.Sequential(conv_bn(64, 48, k=1), SepBlock(48))
        self.lat4 = nn.Conv2d(32, 48, 1)
        self.up4 = nn.Sequential(conv_bn(48, 32, k=1), conv_bn(32, 32))
        self.head = nn.Conv2d(32, self.OUT, 1)
        assert DET_STRIDE == 4
        nn.init.constant_(self.head.bias[:2], -2.2)  # start the heatmaps near p=0.1 (CenterNet's prior)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x4 = self.s4(self.s2(x))
        x8 = self.s8(x4)
        x16 = self.s16(x8)
        x32 = self.s32(x16)
        y = self.up16(F.interpolate(x32, scale_factor=2.0, mode="nearest") + self.lat16(x16))
        y = self.up8(F.interpolate(y, scale_factor=2.0, mode="nearest") + self.lat8(x8))
        y = self.up4(F.interpolate(y, scale_factor=2.0, mode="nearest") + self.lat4(x4))
        return self.head(y)


class PipReader(nn.Module):
    """Reads one half (square patch, divider at the bottom edge) into logits over 0..NUM_VALUES-1."""

    def __init__(self) -> None:
        super().__init__()
        assert HALF_PATCH == 32
        self.features = nn.Sequential(
            conv_bn(READER_CHANNELS, 24),  # 32
            conv_bn(24, 32, 2),  # 16
            conv_bn(32, 32),
            conv_bn(32, 64, 2),  # 8
            conv_bn(64, 64),
            conv_bn(64, 96, 2),  # 4
        )
        self.classify = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(96 * 16, 128), nn.ReLU(inplace=True),
                                      nn.Linear(128, NUM_VALUES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classify(self.features(x))


class CornerRefiner(nn.Module):
    """Reads a tile's wide patch (its box at ``vision.corners.BOX``) into the moves of its four corners (8 numbers)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(READER_CHANNELS, 16, 2),  # 56 x 28
            conv_bn(16, 32, 2),  # 28 x 14
            conv_bn(32, 32),
            conv_bn(32, 64, 2),  # 14 x 7
            conv_bn(64, 64),
            conv_bn(64, 96, 2),  # 7 x 4
            conv_bn(96, 96),
        )
        cells = -(-PATCH_H // 16) * -(-PATCH_W // 16)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(96 * cells, 128), nn.ReLU(inplace=True), nn.Linear(128, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))
