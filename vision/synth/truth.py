"""What a rendered frame really shows: the ground truth every tile, slot and occluder carries.

Image coordinates follow OpenCV: pixel (row i, column j) is centred on (j, i), so a frame of
width W spans x in [-0.5, W - 0.5]. ``cv2.getPerspectiveTransform`` on a tile's corners
therefore rectifies it exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class TileTruth:
    """One tile in the frame, face up or down, seen or hidden.

    ``corners`` (4, 2) float32 are the top face's corners in image pixels. corners[0]->corners[1]
    is the short edge at the end of the half holding ``values[0]``, corners[1]->corners[2] a
    long edge, corners[2]->corners[3] the short edge at ``values[1]``'s end; they wind clockwise
    on screen (y down). On a train ``values`` is (inner, outer): the half that touches the tile
    before it comes first. A face-down tile keeps the values printed on its hidden face.
    """

    corners: np.ndarray
    values: tuple[int, int]
    face: str  # "up" | "down"
    train: str | None  # a player's name, "mexican", "slotN" in random scenes, "engine", or None
    position: int | None  # index along its train from the hub (0 = the tile in the slot)
    occluded: bool  # part of the top face is hidden by a hand, cup, phone, token or another tile
    truncated: bool  # part of the top face lies outside the frame
    visible: float = 1.0  # fraction of the top face that is seen (inside the frame and not covered)
    owner: str | None = None  # the seat whose hand this is (tiles laid out for counting)
    held: bool = False  # in a hand, above the table

    def to_json(self) -> dict[str, Any]:
        return {
            "corners": np.round(self.corners.astype(float), 3).tolist(),
            "values": list(self.values),
            "face": self.face,
            "train": self.train,
            "position": self.position,
            "occluded": self.occluded,
            "truncated": self.truncated,
            "visible": round(float(self.visible), 4),
            "owner": self.owner,
            "held": self.held,
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> TileTruth:
        return TileTruth(
            corners=np.asarray(d["corners"], np.float32).reshape(4, 2),
            values=(int(d["values"][0]), int(d["values"][1])),
            face=str(d["face"]),
            train=d.get("train"),
            position=d.get("position"),
            occluded=bool(d["occluded"]),
            truncated=bool(d["truncated"]),
            visible=float(d.get("visible", 1.0)),
            owner=d.get("owner"),
            held=bool(d.get("held", False)),
        )


@dataclass(frozen=True)
class SlotTruth:
    """One of the hub's train slots: its printed number, whose train starts there, where it points."""

    number: int  # 1..N clockwise, as printed on the hub
    train: str | None
    point: tuple[float, float]  # image px: where the slot's tile meets the engine side
    outward: tuple[float, float]  # image px: a point one tile length further out along the slot


@dataclass(frozen=True)
class HubTruth:
    center: tuple[float, float]  # image px
    radius: float  # image px along the image x axis near the centre (approximate under tilt)
    slots: tuple[SlotTruth, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "center": [round(v, 2) for v in self.center],
            "radius": round(self.radius, 2),
            "slots": [
                {"number": s.number, "train": s.train, "point": [round(v, 2) for v in s.point],
                 "outward": [round(v, 2) for v in s.outward]}
                for s in self.slots
            ],
        }


@dataclass(frozen=True)
class PropTruth:
    """Something that is not a tile: a marker, a cup, a phone, a hand. ``box`` is x0, y0, x1, y1 in image px."""

    kind: str  # "coin" | "train-token" | "cup" | "phone" | "hand"
    box: tuple[float, float, float, float]
    train: str | None = None  # the train a marker stands on

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "box": [round(v, 1) for v in self.box], "train": self.train}


@dataclass(frozen=True)
class CameraTruth:
    """The pinhole camera with radial distortion that took the frame (world units: mm on the table)."""

    matrix: tuple[tuple[float, ...], ...]  # 3x3 intrinsics (OpenCV pixel convention)
    distortion: tuple[float, float]  # k1, k2 of the radial model x_d = x (1 + k1 r^2 + k2 r^4)
    rotation: tuple[tuple[float, ...], ...]  # 3x3 world -> camera
    position: tuple[float, float, float]  # camera centre in world mm (z into the table, so negative above it)
    tilt_deg: float
    px_per_mm: float  # near the image centre, on the table plane

    def to_json(self) -> dict[str, Any]:
        return {
            "matrix": [list(r) for r in self.matrix],
            "distortion": list(self.distortion),
            "rotation": [list(r) for r in self.rotation],
            "position": list(self.position),
            "tilt_deg": self.tilt_deg,
            "px_per_mm": self.px_per_mm,
        }


@dataclass(frozen=True, eq=False)
class Scene:
    """A rendered frame and everything in it."""

    image: np.ndarray  # BGR uint8 (H, W, 3)
    tiles: tuple[TileTruth, ...]
    seed: int
    kind: str  # "table" | "hands" | "loose" | "game"
    hub: HubTruth | None = None
    props: tuple[PropTruth, ...] = ()
    camera: CameraTruth | None = None
    style: Mapping[str, Any] = field(default_factory=dict)  # what was drawn: surface, set, scheme (for reports)

    def truth_json(self) -> dict[str, Any]:
        """Everything but the pixels, as JSON-ready data."""
        h, w = self.image.shape[:2]
        return {
            "seed": self.seed,
            "kind": self.kind,
            "width": w,
            "height": h,
            "tiles": [t.to_json() for t in self.tiles],
            "hub": None if self.hub is None else self.hub.to_json(),
            "props": [p.to_json() for p in self.props],
            "camera": None if self.camera is None else self.camera.to_json(),
            "style": dict(self.style),
        }
