"""The synthetic table: camera frames of Mexican Train tables with exact ground truth.

``render_scene(seed, width, height, **options)`` draws one independent scene; the game in
:mod:`vision.synth.game` plays whole rounds through the rules engine and films them from a
fixed camera, and :class:`vision.synth.source.SyntheticGameSource` serves those frames as a
``FrameSource``. Nothing here imports ``hub`` or ``web``.
"""

from .scenes import SCENE_KINDS, SceneOptions, render_scene
from .truth import CameraTruth, HubTruth, PropTruth, Scene, SlotTruth, TileTruth

__all__ = [
    "SCENE_KINDS", "CameraTruth", "HubTruth", "PropTruth", "Scene", "SceneOptions", "SlotTruth", "TileTruth",
    "render_scene",
]
